"""The course file: due dates, penalty per day, credit windows, extensions, points; applied
to a gradebook's raw scores, with the reason in the feedback."""

from __future__ import annotations

import datetime
import hashlib

import pytest

from lecturelib.grading.course.collect import Found, record_times
from lecturelib.grading.course.policy import outcomes, parse_course, with_late_section
from lecturelib.grading.gradebook import Gradebook
from lecturelib.grading.core.notebook import GradingError
from lecturelib.grading.core.report import GradeReport, QuestionResult

UTC = datetime.timezone.utc
DUE = datetime.datetime(2026, 10, 5, 21, 59, tzinfo=UTC)  # 23:59 in Zurich (UTC+2)

COURSE = """
timezone = "Europe/Zurich"

[assignments.per-day]
due = 2026-10-05T23:59:00
points = 10
grace_minutes = 5
penalty_per_day = 0.1
max_late_days = 3
[assignments.per-day.extensions]
"ext" = 2                          # two more days
"date" = 2026-10-06T12:00:00Z

[assignments.windows]
due = 2026-10-05T23:59:00+02:00
credit = [{until = 2026-10-06T23:59:00, percent = 80}, {until = 2026-10-08T23:59:00, percent = 50}]
[assignments.windows.extensions]
"ext" = 2026-10-06T23:59:00
"""


def after(hours: float) -> datetime.datetime:
    return DUE + datetime.timedelta(hours=hours)


@pytest.fixture(scope="module")
def course():
    return parse_course(COURSE)


@pytest.mark.parametrize("hours, student, credit", [
    (-1, "a", 1.0), (0.05, "a", 1.0),          # on time, and within the 5 minutes' grace
    (0.2, "a", 0.9), (24, "a", 0.9),           # any part of a day counts as a day
    (24.2, "a", 0.8), (72, "a", 0.7), (72.2, "a", 0.0),  # beyond max_late_days: nothing
    (47, "ext", 1.0), (49, "ext", 0.9),        # the extension moves the due date by 48 h
    (14, "date", 1.0), (14.2, "date", 0.9),    # to 12:00 UTC the next day: 14 h later
])
def test_penalty_per_day(course, hours, student, credit):
    got, reason = course.policy("per-day").credit(student, after(hours))
    # closed form: c = 1 - min(1, r * ceil((t - d - g) / day)), 0 beyond the last day
    due = course.policy("per-day").due_for(student)
    late_days = -(-((after(hours) - due - datetime.timedelta(minutes=5)) // datetime.timedelta(seconds=1))
                  // 86400)
    expected = 1.0 if late_days <= 0 else (0.0 if late_days > 3 else 1 - 0.1 * late_days)
    assert got == pytest.approx(expected) == pytest.approx(credit)
    assert bool(reason) == (credit < 1)
    if student == "ext" and credit < 1:
        assert "extended from 2026-10-05 23:59 CEST" in reason  # in the course's time zone


@pytest.mark.parametrize("hours, student, credit", [
    (0, "a", 1.0), (1, "a", 0.8), (24, "a", 0.8), (25, "a", 0.5), (72, "a", 0.5), (73, "a", 0.0),
    (24, "ext", 1.0), (25, "ext", 0.8), (96, "ext", 0.5), (97, "ext", 0.0),  # windows move by 24 h
])
def test_credit_windows(course, hours, student, credit):
    got, reason = course.policy("windows").credit(student, after(hours))
    assert got == pytest.approx(credit)
    assert ("no credit" in reason) == (credit == 0)


@pytest.mark.parametrize("text, message", [
    ("[assignments.a]\ndue = 2026-10-05T23:59:00\npenalty_per_days = 0.1", "unknown key 'penalty_per_days'"),
    ("[assignments.a]\ndue = 2026-10-05T23:59:00\npenalty_per_day = 0.1\ncredit = []", "either"),
    ("[assignments.a]\npenalty_per_day = 0.1", "needs a 'due' date"),
    ("[assignments.a]\ndue = 2026-10-05", "date and time"),
    ("[assignments.a]\ndue = 2026-10-05T23:59:00\npenalty_per_day = 2", "from 0 to 1"),
    ("[assignments.a]\ndue = 2026-10-05T23:59:00\ncredit = [{until = 2026-10-01T00:00:00, percent = 50}]",
     "end after the due date"),
    ("[assignments.a]\ndue = 2026-10-05T23:59:00\n[assignments.a.extensions]\n'x' = 2026-10-01T00:00:00",
     "earlier than the due date"),
    ("timezone = 'Mars/Olympus'", "unknown time zone"),
    ("[assignments.a]\ndue = 2026-10-05T23:59:00\npoints = 0", "positive"),
    ("due = [", "not valid TOML"),
    ("[assignments.a]\nmax_submissions = 0", "from 1 to 1000"),
    # issue 42, class 11: each of these was a traceback or an accepted absurdity
    ("[assignments.a]\ndue = 0001-01-01T00:00:00\n[assignments.a.extensions]\n'x' = 2", "between 1970"),
    ("timezone = 'Europe/Zurich'\n[assignments.a]\ndue = 0001-01-01T00:00:00", "between 1970"),
    ("[assignments.a]\ndue = 9999-12-31T23:00:00\n[assignments.a.extensions]\n'x' = 2", "between 1970"),
    ("[assignments.a]\ndue = 2026-10-05T23:59:00\ncredit = [{until = 9999-12-31T23:59:00, percent = 5}]",
     "between 1970"),
    ("[assignments.a]\ndue = 2026-10-05T23:59:00\ngrace_minutes = inf", "'grace_minutes' must be"),
    ("[assignments.a]\ndue = 2026-10-05T23:59:00\ngrace_minutes = 1e300", "'grace_minutes' must be"),
    ("[assignments.a]\ndue = 2026-10-05T23:59:00\ngrace_minutes = nan", "'grace_minutes' must be"),
    ("[assignments.a]\npoints = inf", "'points' must be"),
    ("[assignments.a]\nmax_late_days = 99999999999999999", "'max_late_days' must be"),
    ("timezone = 'America'", "unknown time zone"),
    ("timezone = '" + "A" * 5000 + "'", "unknown time zone"),
    ("a = " + "[" * 5000 + "]" * 5000, "nested too deeply"),
    ("a = " + "{b = " * 3000 + "1" + "}" * 3000, "nested too deeply"),
    # issue 49: Python's limit on reading long integers, and zone database files that are
    # not places (this machine's own setting, the POSIX rules)
    ("[assignments.a]\npoints = " + "9" * 4400, "too many digits"),
    ("timezone = 'localtime'", "unknown time zone"),
    ("timezone = 'posixrules'", "unknown time zone"),
])
def test_course_errors(text, message):
    with pytest.raises(GradingError, match=message):
        parse_course(text)


def _report(assignment, points):
    return GradeReport("x.ipynb", assignment, [QuestionResult("q1", points[0], 2, "ok"),
                                               QuestionResult("q2", points[1], 4, "ok")], [])


def test_outcomes_from_the_gradebook(course, tmp_path):
    """Raw score, penalty and final score, in notebook and LMS points; the submission time
    counts only for the notebook that was graded."""
    with Gradebook(tmp_path / "g.sqlite") as book:
        found = []
        for student, hours, points in [("on-time", -5, (2, 4)), ("late", 30, (2, 2)),
                                       ("ext", 30, (2, 4)), ("other-file", 30, (1, 4)),
                                       ("untimed", 30, (0, 4))]:
            data = f"{student} notebook".encode()
            sha = hashlib.sha256(data).hexdigest()
            book.record(student, sha, _report("per-day", points))
            if student != "untimed":
                stored = data if student != "other-file" else b"the collected one"
                found.append(Found(student, "", student, after(hours), (0, 0), False,
                                   hashlib.sha256(stored).hexdigest()))
        record_times(book, "per-day", found)
        result = outcomes(book, "per-day", course)
    assert result["on-time"].final == 6 and result["on-time"].lms_score == 10
    late = result["late"]                     # 30 h late: two started days, 20 % off
    assert (late.raw, late.penalty, late.final) == (4, pytest.approx(0.8), pytest.approx(3.2))
    assert late.lms_score == pytest.approx(round(3.2 * 10 / 6, 2))
    assert result["ext"].credit == 1.0       # extended by two days
    for student in ("other-file", "untimed"):
        assert result[student].credit == 1.0 and "no submission time" in result[student].reason
    feedback = with_late_section("# Feedback\n", late)
    assert "2 day(s) late, penalty 20%" in feedback and "final score 3.2 / 6" in feedback
    assert with_late_section(feedback, late) == feedback   # applied twice: one section


def test_readme_example_is_valid():
    """The course file shown in the instructor's guide's "The instructor's week" parses as described."""
    from pathlib import Path

    guide = (Path(__file__).parent.parent / "docs" / "instructors.md").read_text()
    block = guide.split("## The instructor's week")[1].split("```toml\n")[1].split("```")[0]
    course = parse_course("\n".join(line[2:] for line in block.splitlines()))
    policy = course.policy("01-bayes")
    assert policy.due == datetime.datetime(2026, 10, 5, 21, 59, tzinfo=UTC)  # Zurich summer time
    assert (policy.points, policy.penalty_per_day, policy.max_late_days) == (10, 0.1, 5)
    assert policy.lms_name == "Exercise 1 (123456)" and list(policy.extensions) == ["12345"]


def test_bad_course_files_are_one_line_errors_on_the_command_line(tmp_path, capsys):
    """Class 11, as a person meets it: every bad course file above, given to the commands
    that read one, is one line on standard error and exit status 2, never a traceback."""
    from lecturelib.grading.cli import main

    book = tmp_path / "g.sqlite"
    Gradebook(book).close()
    (tmp_path / "download.zip").write_bytes(b"")
    for i, (text, message) in enumerate(test_course_errors.pytestmark[0].args[1]):
        path = tmp_path / f"course{i}.toml"
        path.write_text(text)
        for argv in (["gradebook", "late", "--assignment", "a", "--course", path],
                     ["gradebook", "summary", "--assignment", "a", "--course", path],
                     ["collect", tmp_path / "download.zip", "--assignment", "a", "--output",
                      tmp_path / "out", "--course", path]):
            status = main([str(a) for a in argv] + ["--gradebook", str(book)])
            err = capsys.readouterr().err
            assert status == 2 and message in err and len(err.strip().splitlines()) == 1, (text[:80], err)

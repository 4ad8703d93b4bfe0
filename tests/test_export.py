"""Grades out for the LMS: Canvas's and Moodle's grade-import layouts read back as each LMS
documents them, and the instructor's week end to end (Canvas and Moodle zips collected,
graded in the sandbox, late policy with an extension, exported, summarised)."""

from __future__ import annotations

import csv
import datetime
import hashlib
import io
import os
import stat
import zipfile

import nbformat
import pytest

from gradingtools import break_q3, toy_solution
from lecturelib.grading.autograde import sandbox
from lecturelib.grading.cli import main
from lecturelib.grading.course.collect import Found, record_times
from lecturelib.grading.course.policy import parse_course
from lecturelib.grading.course.export import CANVAS_COLUMNS, export_grades
from lecturelib.grading.gradebook import Gradebook
from lecturelib.grading.core.notebook import GradingError
from lecturelib.grading.core.report import GradeReport, QuestionResult
from lecturelib.grading.course.roster import parse_roster
from lecturelib.grading.course.summary import histogram, summary_page

UTC = datetime.timezone.utc
ROSTER = ("id,name,sis_id,login,email,section\n"
          "101,\"Doe, Jane\",S101,jdoe,jdoe@uni.example,A\n"
          "102,\"Roe, Bob\",S102,broe,broe@uni.example,A\n"
          "103,=HYPERLINK(\"x\"),S103,evil,evil@uni.example,B\n"
          "104,\"Absent, Al\",S104,aabsent,al@uni.example,B\n")
COURSE = """
[assignments.a1]
due = 2026-10-05T23:59:00Z
points = 10
penalty_per_day = 0.25
[assignments.a1.extensions]
"102" = 3
[assignments.a2]
lms_name = "Exercise 2 (4242)"
"""


def read_canvas(text):
    """Canvas's gradebook import: the header, the "Points Possible" row, a row per student
    found by its ID column."""
    rows = list(csv.reader(io.StringIO(text)))
    header, points, students = rows[0], rows[1], rows[2:]
    assert tuple(header[:5]) == CANVAS_COLUMNS
    assert points[0].strip() == "Points Possible" and points[1:5] == ["", "", "", ""]
    possible = dict(zip(header[5:], map(float, points[5:])))
    return possible, {r[1]: dict(zip(header, r)) for r in students}


def read_moodle(text, identifier="Email address"):
    """Moodle's CSV grade import: one header row, users matched by an identifier column."""
    rows = list(csv.DictReader(io.StringIO(text)))
    assert all(r[identifier] for r in rows)
    return {r[identifier]: r for r in rows}


def _report(assignment, q1, q2):
    return GradeReport("x.ipynb", assignment, [QuestionResult("q1", q1, 2, "ok"),
                                               QuestionResult("q2", q2, 4, "ok")], [])


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    """A gradebook made by hand: two assignments; 102 hands a1 in 2 days late with a
    3-day extension, 103 one day late; 999 is not on the roster; 104 handed in nothing."""
    path = tmp_path_factory.mktemp("export") / "g.sqlite"
    due = datetime.datetime(2026, 10, 5, 23, 59, tzinfo=UTC)
    with Gradebook(path) as gb:
        found = []
        for student, hours, q in [("101", -1, (2, 4)), ("102", 47, (2, 3)), ("103", 1, (2, 4)),
                                  ("999", 0, (1, 1))]:
            data = student.encode()
            gb.record(student, hashlib.sha256(data).hexdigest(), _report("a1", *q))
            found.append(Found(student, "", student, due + datetime.timedelta(hours=hours), (0, 0),
                               False, hashlib.sha256(data).hexdigest()))
        record_times(gb, "a1", found)
        gb.record("101", "-", _report("a2", 1, 4))
    return Gradebook(path)


def test_canvas_layout(book):
    text = export_grades(book, "canvas", roster=parse_roster(ROSTER), course=parse_course(COURSE))
    possible, rows = read_canvas(text)
    assert possible == {"a1": 10, "Exercise 2 (4242)": 6}
    assert list(rows) == ["101", "102", "103", "104", "999"]      # roster order, then the rest
    assert rows["101"]["a1"] == "10" and rows["101"]["Exercise 2 (4242)"] == "5"
    assert rows["102"]["a1"] == str(round(5 / 6 * 10, 2))        # extension: no penalty
    assert rows["103"]["a1"] == "7.5"                             # one day late: 25 % off
    assert rows["104"]["a1"] == ""                                # nothing handed in: unchanged
    assert rows["101"]["SIS User ID"] == "S101" and rows["101"]["Section"] == "A"
    assert rows["103"]["Student"].startswith("'=")                # a formula neutralised
    assert rows["999"]["SIS User ID"] == ""


def test_moodle_and_csv_layouts(book):
    roster = parse_roster(ROSTER)
    rows = read_moodle(export_grades(book, "moodle", roster=roster, course=parse_course(COURSE),
                                     assignment="a1"))
    assert rows["broe@uni.example"]["ID number"] == "S102"
    assert float(rows["evil@uni.example"]["a1"]) == 7.5
    assert set(rows["jdoe@uni.example"]) == {"Full name", "ID number", "Email address", "a1"}
    with pytest.raises(GradingError, match="needs a roster"):
        export_grades(book, "moodle")
    plain = list(csv.DictReader(io.StringIO(export_grades(book, "csv"))))
    assert [r["student"] for r in plain] == ["101", "102", "103", "999"]
    assert (plain[1]["a1"], plain[2]["a1"], plain[3]["a2"]) == ("5", "6", "")  # no course: raw
    with pytest.raises(GradingError, match="no results for assignment 'zz'"):
        export_grades(book, "canvas", assignment="zz")


def test_pending_written_answers_refused(tmp_path):
    with Gradebook(tmp_path / "g.sqlite") as gb:
        gb.record("101", "-", GradeReport("x.ipynb", "a3", [
            QuestionResult("q1", 2, 2, "ok"),
            QuestionResult("w1", 0, 3, "pending", pending=True, kind="written")], []))
        with pytest.raises(GradingError, match="1 written answer"):
            export_grades(gb, "canvas")
        _, rows = read_canvas(export_grades(gb, "canvas", allow_pending=True))
        assert rows["101"]["a3"] == "2"


def test_summary_page(book):
    page = summary_page(book, "a1", roster=parse_roster(ROSTER), course=parse_course(COURSE))
    assert "4 graded; 4 on the roster, 1 of them with no submission; 1 late" in page
    assert "Absent, Al" in page and "1 day(s) late, penalty 25%" in page
    assert "<script" not in page
    assert histogram([0.0, 0.5, 0.99, 1.0]) == [1, 0, 0, 0, 0, 1, 0, 0, 0, 2]


def test_late_command_writes_the_reason(book, tmp_path, capsys):
    folder = tmp_path / "feedback"
    folder.mkdir()
    (folder / "103.md").write_text("# Feedback: a1\n\n**Score: 6 / 6**\n")
    (tmp_path / "course.toml").write_text(COURSE)
    argv = ["gradebook", "late", "--assignment", "a1", "--course", str(tmp_path / "course.toml"),
            "--gradebook", str(book.path), "--feedback", str(folder)]
    assert main(argv) == 0
    assert "103: 6 - 1.5 = 4.5 / 6: handed in 2026-10-06 00:59 UTC" in capsys.readouterr().out
    once = (folder / "103.md").read_text()
    assert once.startswith("# Feedback: a1") and "1 day(s) late, penalty 25% of the score" in once
    assert main(argv) == 0 and (folder / "103.md").read_text() == once
    assert not (folder / "101.md").exists()   # only existing feedback files are updated


def test_extensions_for_unknown_students_are_refused_unless_told(book, tmp_path, capsys):
    """Issue 42, class 12: an extension for an id neither in the gradebook nor on the roster
    (here "1O2", a typo for 102, whose real extension is missing) is listed and refused by
    every command that applies the course file, unless --allow-unknown-extensions."""
    (tmp_path / "course.toml").write_text(COURSE.replace('"102" = 3', '"1O2" = 3\n"104" = 1'))
    (tmp_path / "roster.csv").write_text(ROSTER)
    common = ["--course", tmp_path / "course.toml", "--gradebook", book.path]
    commands = [["gradebook", "late", "--assignment", "a1", "--feedback", tmp_path, "--roster",
                 tmp_path / "roster.csv"],
                ["gradebook", "export", "--format", "canvas", "--roster", tmp_path / "roster.csv",
                 "--output", tmp_path / "c.csv"],
                ["gradebook", "summary", "--assignment", "a1", "--roster", tmp_path / "roster.csv",
                 "--output", tmp_path / "s.html"]]
    for argv in commands:
        status = main([str(a) for a in argv + common])
        err = capsys.readouterr().err
        assert status == 2 and "a1: '1O2'" in err and "104" not in err, (argv, err)  # 104: on the roster
        assert len(err.strip().splitlines()) == 1
        status = main([str(a) for a in argv + common + ["--allow-unknown-extensions"]])
        err = capsys.readouterr().err
        assert status == 0 and "note: 1 extension(s)" in err and "a1: '1O2'" in err, (argv, err)
    status = main([str(a) for a in commands[0][:-2] + common])   # no roster: 104 is unknown too
    assert status == 2 and "a1: '104'" in capsys.readouterr().err


def test_cli_errors_one_line(book, tmp_path, capsys):
    (tmp_path / "course.toml").write_text("due = [")
    for argv, message in [
        (["gradebook", "export", "--format", "canvas", "--gradebook", tmp_path / "none.sqlite"],
         "no such gradebook"),
        (["gradebook", "export", "--format", "moodle", "--gradebook", book.path], "needs a roster"),
        (["gradebook", "export", "--format", "canvas", "--gradebook", book.path, "--course",
          tmp_path / "course.toml"], "not valid TOML"),
        (["gradebook", "summary", "--assignment", "zz", "--gradebook", book.path], "no results"),
        (["gradebook", "similarity", "--assignment", "a1", "--gradebook", book.path, "--solutions",
          tmp_path], "no solution notebook"),
        (["gradebook", "export", "--format", "canvas", "--gradebook", book.path, "--assignment",
          "../a1"], "invalid assignment name"),
        (["gradebook", "late", "--assignment", "a1", "--course", tmp_path / "missing.toml",
          "--gradebook", book.path], "no such course file"),
    ]:
        status = main([str(a) for a in argv])
        err = capsys.readouterr().err
        assert status == 2 and message in err and len(err.strip().splitlines()) == 1, (argv, err)


# --------------------------------------------------------------------------------------
# The instructor's week, end to end (in the sandbox)
# --------------------------------------------------------------------------------------

needs_sandbox = pytest.mark.skipif(
    not os.environ.get("CI") and sandbox.sandbox_problem() is not None,
    reason=f"no sandbox here: {sandbox.sandbox_problem()}")


def _nb(edit=None) -> bytes:
    nb = toy_solution()
    if edit:
        edit(nb.cells)
    return nbformat.writes(nb).encode()


def _entry(z, name, data, when, mode=None):
    info = zipfile.ZipInfo(name, date_time=when.timetuple()[:6])
    if mode is not None:
        info.create_system, info.external_attr = 3, mode << 16
    z.writestr(info, data)


@pytest.mark.full  # 9 sandboxed runs: about 15 s on 2 idle cores, 25 s beside other tests
@needs_sandbox
def test_instructors_week(tmp_path, capsys):
    """Canvas and Moodle zips (resubmissions, a late hand-in with an extension, a student
    not on the roster, a path escape, a link) collected, graded, penalised, exported."""
    solutions = tmp_path / "solutions"
    solutions.mkdir()
    nbformat.write(toy_solution(), solutions / "toy.ipynb")
    (tmp_path / "roster.csv").write_text(
        "id,name,sis_id,email\n11,\"Doe, Jane\",S11,jane@x.example\n12,\"Roe, Bob\",S12,bob@x.example\n"
        "13,\"Ng, Carl\",S13,carl@x.example\n14,\"Absent, Al\",S14,al@x.example\n"
        "21,Jane Doe,S21,jd@x.example\n22,Bob Roe,S22,br@x.example\n")
    (tmp_path / "course.toml").write_text(
        "[assignments.toy]\ndue = 2026-10-05T23:59:00Z\npoints = 12\npenalty_per_day = 0.5\n"
        "[assignments.toy.extensions]\n\"13\" = 2\n")
    d = datetime.datetime(2026, 10, 5, 20)
    with zipfile.ZipFile(tmp_path / "canvas.zip", "w") as z:
        _entry(z, "doejane_11_1_toy.ipynb", _nb(break_q3), d - datetime.timedelta(days=1))
        _entry(z, "doejane_11_2_toy-1.ipynb", _nb(), d)                   # the resubmission: 6/6
        _entry(z, "roebob_late_12_3_toy.ipynb", _nb(), d + datetime.timedelta(hours=10))  # late
        _entry(z, "ngcarl_late_13_4_toy.ipynb", _nb(break_q3), d + datetime.timedelta(hours=30))
        _entry(z, "strangerx_19_5_toy.ipynb", _nb(), d)                   # not on the roster
        _entry(z, "../../escape.ipynb", _nb(), d)
        _entry(z, "linker_15_6_toy.ipynb", b"../../solutions/toy.ipynb", d, stat.S_IFLNK | 0o777)
    with zipfile.ZipFile(tmp_path / "moodle.zip", "w") as z:
        _entry(z, "Jane Doe_21_assignsubmission_file_/toy.ipynb", _nb(), d)
        _entry(z, "Bob Roe_22_assignsubmission_file_/toy.ipynb", _nb(break_q3),
               d + datetime.timedelta(hours=2))

    def run(*argv):
        status = main([str(a) for a in argv])
        out = capsys.readouterr()
        return status, out.out, out.err

    for lms in ("canvas", "moodle"):
        book = tmp_path / f"{lms}.sqlite"
        status, out, err = run("collect", tmp_path / f"{lms}.zip", "--assignment", "toy", "--output",
                               tmp_path / lms, "--roster", tmp_path / "roster.csv", "--gradebook", book)
        assert status == (1 if lms == "canvas" else 0), err
        status, out, err = run("grade", tmp_path / lms, "--assignment", "toy", "--solutions",
                               solutions, "--gradebook", book, "--jobs", "2", "--timeout", "30")
        assert status == 0, out + err
        status, out, err = run("gradebook", "late", "--assignment", "toy", "--course",
                               tmp_path / "course.toml", "--roster", tmp_path / "roster.csv",
                               "--gradebook", book)
        assert status == 0, err
    canvas_out = (tmp_path / "canvas").iterdir()
    assert sorted(p.name for p in canvas_out) == ["11.ipynb", "12.ipynb", "13.ipynb", "19.ipynb"]
    assert not (tmp_path / "escape.ipynb").exists()
    feedback = (tmp_path / "feedback" / "toy" / "12.md").read_text()
    assert "1 day(s) late, penalty 50% of the score" in feedback

    status, out, err = run("gradebook", "export", "--format", "canvas", "--roster",
                           tmp_path / "roster.csv", "--course", tmp_path / "course.toml",
                           "--gradebook", tmp_path / "canvas.sqlite", "--output", tmp_path / "c.csv")
    assert status == 0 and "not on the roster" in err
    possible, rows = read_canvas((tmp_path / "c.csv").read_text())
    assert possible == {"toy": 12}
    assert rows["11"]["toy"] == "12"          # the resubmission was graded: full marks
    assert rows["12"]["toy"] == "6"           # 10 h late: one day, half the score
    assert rows["13"]["toy"] == "10"          # 30 h late with a 2-day extension: 5/6 of 12
    assert rows["14"]["toy"] == "" and rows["19"]["toy"] == "12"

    status, out, err = run("gradebook", "export", "--format", "moodle", "--roster",
                           tmp_path / "roster.csv", "--course", tmp_path / "course.toml",
                           "--gradebook", tmp_path / "moodle.sqlite", "--assignment", "toy",
                           "--output", tmp_path / "m.csv")
    assert status == 0, err
    rows = read_moodle((tmp_path / "m.csv").read_text(), "ID number")
    assert rows["S21"]["toy"] == "12" and rows["S22"]["toy"] == "10"   # on time; q3 wrong
    assert rows["S11"]["toy"] == ""                                    # a Canvas student
    status, out, err = run("gradebook", "summary", "--assignment", "toy", "--roster",
                           tmp_path / "roster.csv", "--course", tmp_path / "course.toml",
                           "--gradebook", tmp_path / "canvas.sqlite")
    page = (tmp_path / "reports" / "toy-summary.html").read_text()
    assert status == 0 and "4 graded; 6 on the roster, 3 of them with no submission" in page and "q3" in page

    # the rest of the instructor's week (docs/instructors.md): the analysis, the feedback pages for the LMS, a regrade
    status, out, err = run("gradebook", "analyze", "--assignment", "toy", "--gradebook",
                           tmp_path / "canvas.sqlite")
    assert status == 0 and "Cronbach's alpha" in out, err
    status, out, err = run("gradebook", "feedback", "--assignment", "toy", "--format", "canvas",
                           "--course", tmp_path / "course.toml", "--gradebook",
                           tmp_path / "canvas.sqlite", "--output", tmp_path / "feedback.zip")
    assert status == 0, err
    with zipfile.ZipFile(tmp_path / "feedback.zip") as z:
        assert sorted(z.namelist()) == ["doejane_11_2_feedback.html", "ngcarl_late_13_4_feedback.html",
                                        "roebob_late_12_3_feedback.html", "strangerx_19_5_feedback.html"]
        assert "late penalty 3" in z.read("roebob_late_12_3_feedback.html").decode()
    status, out, err = run("gradebook", "regrade", "--assignment", "toy", "--student", "13",
                           "--question", "q3", "--reason", "My eigenvector is right up to sign.",
                           "--by", "Instructor", "--gradebook", tmp_path / "canvas.sqlite")
    assert status == 0, err
    status, out, err = run("gradebook", "regrade", "--assignment", "toy", "--resolve", "1",
                           "--grader", "Bo Chen", "--decision", "The sign was wrong too.",
                           "--gradebook", tmp_path / "canvas.sqlite")
    assert status == 0 and "resolved" in out, err
    assert "The sign was wrong too." in (tmp_path / "feedback" / "toy" / "13.md").read_text()


def test_summary_and_late_say_what_is_pending_and_where_the_lms_disagrees(tmp_path, capsys):
    """Issue 42, class 13: the summary says that pending written answers count 0 (how many,
    whose, which question), and the summary and ``gradebook late`` list every submission
    whose Canvas late flag disagrees with the course file (either way); Moodle has none."""
    from lecturelib.grading.core.report import NO_ANSWER, PENDING

    text = "[assignments.a1]\ndue = 2026-10-05T23:59:00Z\ngrace_minutes = 10\npenalty_per_day = 0.25\n"
    (tmp_path / "course.toml").write_text(text)
    due = datetime.datetime(2026, 10, 5, 23, 59, tzinfo=UTC)
    with Gradebook(tmp_path / "g.sqlite") as gb:
        found = []
        for student, minutes, flag, layout in [
                ("201", -60, False, "canvas"),   # on time for both
                ("202", 5, True, "canvas"),      # Canvas: late; the course file's grace: on time
                ("203", 120, False, "canvas"),   # Canvas: on time; the course file: late
                ("204", 120, True, "canvas"),    # late for both
                ("205", 120, False, "moodle")]:  # Moodle writes no flag
            sha = hashlib.sha256(student.encode()).hexdigest()
            written = (QuestionResult("w1", 0, 3, NO_ANSWER, kind="written") if student == "201" else
                       QuestionResult("w1", 0, 3, PENDING, pending=True, kind="written"))
            gb.record(student, sha, GradeReport("x.ipynb", "a1", [QuestionResult("q1", 2, 2, "ok"),
                                                                  written], []))
            found.append(Found(student, "x", student, due + datetime.timedelta(minutes=minutes),
                               (0, 0), flag, sha, layout=layout))
        record_times(gb, "a1", found)
        page = summary_page(gb, "a1", course=parse_course(text))
    assert "4 written answer(s) of 4 student(s) are still pending: they count as 0" in page
    assert "<h2>Pending written answers (counted 0 above)</h2>" in page and "<li>203: w1</li>" in page
    section = page.split("late flag disagrees with the course file</h2>")[1].split("</ul>")[0]
    assert section.count("<li>") == 2
    assert "202: the LMS marks it late; the course file counts it on time" in section
    assert "203: the LMS does not mark it late; the course file does" in section
    with Gradebook(tmp_path / "g.sqlite") as gb:   # no due date: only the LMS's "late" is news
        page = summary_page(gb, "a1", course=parse_course("[assignments.a1]\npoints = 3\n"))
        listed = page.split("late flag disagrees with the course file</h2>")[1].split("</ul>")[0]
        assert listed.count("<li>") == 2 and "202: the LMS marks it late; the course file has no due" in listed
        assert "late flag disagrees" not in summary_page(gb, "a1")   # no course file: nothing to compare
    status = main(["gradebook", "late", "--assignment", "a1", "--course", str(tmp_path / "course.toml"),
                   "--gradebook", str(tmp_path / "g.sqlite"), "--feedback", str(tmp_path)])
    out = capsys.readouterr().out
    assert status == 0 and "2 where the LMS's late flag disagrees" in out
    assert "202: the LMS marks it late" in out and "203: the LMS does not mark it late" in out

"""Feedback back through the LMS (issue 43): ``gradebook feedback --format canvas|moodle``
writes one HTML page per student into a zip, under the names each LMS's bulk feedback
upload maps back to students, from downloads that ``lecturelib collect`` read.  A page
typesets math as MathML on our side and runs nothing, whatever a comment holds."""

from __future__ import annotations

import datetime
import html.parser
import zipfile

import nbformat
import pytest

from gradingtools import toy_solution
from lecturelib.grading.cli import main
from lecturelib.grading.core.notebook import GradingError
from lecturelib.grading.core.report import GradeReport, QuestionResult
from lecturelib.grading.course.collect import collect, submission_times
from lecturelib.grading.gradebook import Gradebook, manual
from test_reading import browser  # noqa: F401 -- the module's headless Chromium
from test_written import QUESTIONS

WHEN = datetime.datetime(2026, 10, 5, 20)
HOSTILE = ("<script>alert(1)</script> $\\href{javascript:alert(2)}{x}$ "
           "$\\style{position:fixed;top:0}{\\text{Already graded}}$ <img src=x onerror=alert(3)>")


def _entry(z, name, when):
    z.writestr(zipfile.ZipInfo(name, date_time=when.timetuple()[:6]), nbformat.writes(toy_solution()))


def _report(written: str) -> GradeReport:
    return GradeReport("x.ipynb", "toy", [
        QuestionResult("q1", 2, 2, "ok"), QuestionResult("q2", 3, 3, "ok"),
        QuestionResult("q3", 0, 1, "check 1: the value is not the expected one"),
        QuestionResult("q4", 0, 4, "pending", pending=True, kind="written", answer=written)], [])


@pytest.fixture(params=["canvas", "moodle"])
def collected(request, tmp_path):
    lms = request.param
    with zipfile.ZipFile(tmp_path / "download.zip", "w") as z:
        if lms == "canvas":
            _entry(z, "doejane_11_1_toy.ipynb", WHEN - datetime.timedelta(days=1))
            _entry(z, "doejane_11_2_toy-1.ipynb", WHEN)
            _entry(z, "roebob_late_12_3_toy.ipynb", WHEN + datetime.timedelta(hours=10))
        else:
            _entry(z, "Jane Doe_21_assignsubmission_file_/toy.ipynb", WHEN)
            _entry(z, "Bob Roe_22_assignsubmission_file_toy.ipynb", WHEN)
    (tmp_path / "course.toml").write_text(
        "timezone = \"Europe/Amsterdam\"\n[assignments.toy]\ndue = 2026-10-05T23:59:00Z\n"
        "points = 12\npenalty_per_day = 0.5\n")
    book = Gradebook(tmp_path / "gradebook.sqlite")
    collect(tmp_path / "download.zip", tmp_path / "out", assignment="toy", gradebook=book)
    book.store_questions("toy", QUESTIONS)
    for student, when in submission_times(book, "toy").items():
        book.record(student, when.sha256, _report("My proof of the MAP estimate."))
        manual.save_grade(book.db, "toy", student, "q4", who="Ann Lee", version=0, applied=["a"],
                          comment="Close: $\\hat q = \\frac{k+a-1}{n+a+b-2}$. " + HOSTILE)
    yield lms, book, tmp_path
    book.close()


def test_every_student_has_a_page_under_the_lms_name(collected, capsys):
    lms, book, tmp_path = collected
    status = main(["gradebook", "feedback", "--assignment", "toy", "--gradebook", str(book.path),
                   "--format", lms, "--course", str(tmp_path / "course.toml"),
                   "--output", str(tmp_path / "feedback.zip")])
    assert status == 0, capsys.readouterr().err
    with zipfile.ZipFile(tmp_path / "feedback.zip") as z:
        names = sorted(z.namelist())
        pages = {name: z.read(name).decode() for name in names}
    expected = (["doejane_11_2_feedback.html", "roebob_late_12_3_feedback.html"] if lms == "canvas"
                else ["Bob Roe_22_assignsubmission_file_feedback.html",
                      "Jane Doe_21_assignsubmission_file_feedback.html"])
    assert names == expected
    page = pages[expected[0]]
    assert "<math" in page and "<mfrac>" in page       # math typeset on our side
    assert "&#10003;" in page and "writes the log posterior" in page  # the applied item, marked
    assert "drops the exponent" in page                 # and the items not applied
    assert "in the course's grade book" in page and "12" in page
    if lms == "canvas":
        late = pages["roebob_late_12_3_feedback.html"]
        assert "late penalty 3" in late and "CEST" in late  # 10 h late: half of 6; local time


class _Attributes(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.found = []

    def handle_starttag(self, tag, attrs):
        self.found += [(tag, name) for name, _ in attrs if name in ("href", "src", "style", "id", "class")
                       or name.startswith("on")]
        if tag in ("script", "img", "a", "iframe", "object"):
            self.found.append((tag, ""))


def test_a_hostile_comment_runs_nothing_and_sets_no_attribute(collected, browser):  # noqa: F811
    lms, book, tmp_path = collected
    written, _ = __import__("lecturelib.grading.course.lmsfeedback", fromlist=["x"]).feedback_zip(
        book, "toy", lms, tmp_path / "f.zip")
    with zipfile.ZipFile(tmp_path / "f.zip") as z:
        page = z.read(written[0]).decode()
    parser = _Attributes()
    parser.feed(page)
    assert [f for f in parser.found if f != ("li", "class")] == []
    path = tmp_path / "page.html"
    path.write_text(page)
    tab = browser.new_page()
    dialogs = []
    tab.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    tab.goto(path.as_uri(), wait_until="load")
    assert dialogs == [] and tab.locator("script").count() == 0
    assert tab.locator("math").count() >= 3
    tab.close()


def test_pending_answers_and_other_layouts(tmp_path, capsys):
    with Gradebook(tmp_path / "gradebook.sqlite") as book:
        book.store_questions("toy", QUESTIONS)
        book.record("alice", "sha", _report("A proof."))
        base = ["gradebook", "feedback", "--assignment", "toy", "--gradebook", str(book.path),
                "--format", "canvas", "--output", str(tmp_path / "f.zip")]
        assert main(base) == 2 and "not graded yet" in capsys.readouterr().err
        assert main([*base, "--allow-pending"]) == 2  # an empty zip would upload nothing
        err = capsys.readouterr().err
        assert err.count("\n") == 1
        assert "no student of toy (1 in the gradebook) was collected from a canvas download" in err
        assert not (tmp_path / "f.zip").exists()
        assert main([*base[:-1], str(tmp_path / "f.txt")]) == 2


def test_every_page_name_maps_back_to_its_student_under_the_lms_rule(tmp_path):
    """Issue 49: a page name that Moodle's importer (the participant id is the second ``_``
    field) reads as another participant's stops the zip, naming the student; a full name's
    right-to-left override and other control characters never reach an entry's name."""
    with zipfile.ZipFile(tmp_path / "download.zip", "w") as z:
        _entry(z, "Jane \u202eeoD\u200f_21_assignsubmission_file_/toy.ipynb", WHEN)
        _entry(z, "Bob Roe_22_assignsubmission_file_toy.ipynb", WHEN)
    with Gradebook(tmp_path / "gradebook.sqlite") as book:
        collect(tmp_path / "download.zip", tmp_path / "out", assignment="toy", gradebook=book)
        book.store_questions("toy", QUESTIONS)
        for student, when in submission_times(book, "toy").items():
            book.record(student, when.sha256, _report("My proof."))
        feedback = __import__("lecturelib.grading.course.lmsfeedback", fromlist=["x"]).feedback_zip
        written, _ = feedback(book, "toy", "moodle", tmp_path / "f.zip", allow_pending=True)
        assert sorted(written) == ["Bob Roe_22_assignsubmission_file_feedback.html",
                                   "Jane eoD_21_assignsubmission_file_feedback.html"]
        # a name stored by an older collect, which Moodle reads as participant 21's
        book.db.execute("UPDATE submission_times SET lms_prefix=? WHERE student='22'",
                        ("X_21_assignfeedback_file_22_assignsubmission_file_",))
        book.db.commit()
        with pytest.raises(GradingError, match=r"feedback page of 22 .* Moodle files under 21"):
            feedback(book, "toy", "moodle", tmp_path / "g.zip", allow_pending=True)
        assert not (tmp_path / "g.zip").exists()


def test_the_page_holds_each_regrade_decision(collected):
    """Issue 49, item 3: the decision of a regrade request reached the Markdown feedback but
    not the LMS's page."""
    from lecturelib.grading.gradebook import regrades
    from lecturelib.grading.course.lmsfeedback import feedback_zip

    lms, book, tmp_path = collected
    student = sorted(submission_times(book, "toy"))[0]
    number = regrades.request(book.db, "toy", student, "q4", reason="I did check it.", who="Instructor")
    regrades.resolve(book.db, number, who="Bo Chen", applied=["a", "b"],
                     decision="Agreed: the maximum is checked \u202e<b>twice</b>.")
    written, _ = feedback_zip(book, "toy", lms, tmp_path / "f.zip")
    with zipfile.ZipFile(tmp_path / "f.zip") as z:
        pages = {name: z.read(name).decode() for name in written}
    mine = [page for page in pages.values() if "Agreed: the maximum is checked" in page]
    assert len(mine) == 1
    assert "q4: Agreed: the maximum is checked &lt;b&gt;twice&lt;/b&gt;." in mine[0]
    assert "\u202e" not in mine[0]

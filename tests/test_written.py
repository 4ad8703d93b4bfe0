"""Written questions, partial credit and grading by people (issue 34), without a browser.

The spec (CONTRIBUTING, "Written questions" and "Partial credit"): a written question is
never scored by a check; it is pending, or 0 "no answer" at once; a rubric grade is the
applied items' points plus an adjustment, clipped to [0, points]; several graders never
lose an update; every change is audited; the CSV counts manual points and refuses
pending answers unless told.
"""

from __future__ import annotations

import csv
import io
import json

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_raw_cell

from gradingtools import course_of, toy_solution
from lecturelib import grading
from lecturelib.grading.gradebook import manual
from lecturelib.grading.gradebook import Gradebook
from lecturelib.grading.core.notebook import MAX_ANSWER_CHARS, written_answer
from lecturelib.grading.core.report import GradeReport, QuestionResult
from lecturelib.grading.autograde.answers import Answer, Run
from lecturelib.grading.autograde.reference import Reference
from lecturelib.grading.autograde.score import score_questions

MODEL = "The log posterior is $(a-1)\\log q + (b-1)\\log(1-q)$; its derivative vanishes at the MAP."
RUBRIC = [
    {"id": "a", "points": 2, "text": "writes the log posterior and sets its derivative to zero"},
    {"id": "b", "points": 2, "text": "solves for q and checks that it is a maximum"},
    {"id": "x1", "points": -1, "text": "drops the exponent a - 1 of the prior"},
]


def written_cell(qid="q4", points=4, rubric=None, text=MODEL):
    cell = new_markdown_cell(text)
    cell.metadata["tags"] = [f"question:{qid}"]
    cell.metadata["grading"] = {"written": True, "points": points,
                                "rubric": RUBRIC if rubric is None else rubric}
    return cell


def written_toy():
    """The toy set with a written question q4 (4 points) and partial credit on q2."""
    nb = toy_solution()
    nb.cells.append(new_markdown_cell("## Question 4 (4 points, written): the MAP estimate"))
    nb.cells.append(written_cell())
    q2 = next(c for c in nb.cells if "question:q2" in c.metadata.get("tags", []))
    q2.metadata["grading"]["check_points"] = [1, 2]
    q1 = next(c for c in nb.cells if "question:q1" in c.metadata.get("tags", []))
    q1.metadata["grading"]["public"] = [{"expr": "0 <= p0 <= 1", "why": "p0 is a probability"}]
    return nb


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    return course_of(tmp_path_factory.mktemp("written"), written_toy())


# ----------------------------------------------------------------------------- the spec


def test_load_questions_reads_written_questions_and_check_points():
    questions = {q.id: q for q in grading.load_questions(written_toy())}
    q4 = questions["q4"]
    assert q4.written and q4.points == 4 and q4.checks == () and q4.model_answer == MODEL
    assert [(i.id, i.points) for i in q4.rubric] == [("a", 2), ("b", 2), ("x1", -1)]
    assert questions["q2"].check_points == (1, 2) and not questions["q2"].written
    assert questions["q1"].check_points is None


@pytest.mark.parametrize("edit, message", [
    (lambda c: c.metadata["grading"].update(points=5), "sum to 4"),
    (lambda c: c.metadata["grading"].update(rubric=[]), "'rubric'"),
    (lambda c: c.metadata["grading"].update(rubric=RUBRIC + [RUBRIC[0]]), "used twice"),
    (lambda c: c.metadata["grading"].update(rubric=[{"id": "a b", "points": 4, "text": "x"}]), "rubric item"),
    (lambda c: c.metadata["grading"].update(rubric=[{"id": "a", "points": 4}]), "rubric item"),
    (lambda c: c.metadata["grading"].update(checks=["p0"]), "only 'written'"),
    (lambda c: setattr(c, "source", "  "), "no model answer"),
    (lambda c: c.update(cell_type="code", outputs=[], execution_count=None), "Markdown cell"),
])
def test_bad_written_spec_is_refused(edit, message):
    nb = written_toy()
    edit(nb.cells[-1])
    with pytest.raises(grading.GradingError, match=message):
        grading.load_questions(nb)


@pytest.mark.parametrize("shares, message", [([1, 1], "sum to 2"), ([3], "one number per check"),
                                             ([3, 0], "positive")])
def test_bad_check_points_are_refused(shares, message):
    nb = written_toy()
    q2 = next(c for c in nb.cells if "question:q2" in c.metadata.get("tags", []))
    q2.metadata["grading"]["check_points"] = shares
    with pytest.raises(grading.GradingError, match=message):
        grading.load_questions(nb)


def test_assign_writes_a_prompt_without_model_answer_or_rubric(toy):
    text = (toy / "exercises" / "toy.ipynb").read_text(encoding="utf-8")
    assert MODEL not in text and json.dumps(MODEL)[1:-1] not in text
    assert "log posterior" not in text and "drops the exponent" not in text and "rubric" not in text
    ex = nbformat.reads(text, as_version=4)
    cell = next(c for c in ex.cells if "question:q4" in c.metadata.get("tags", []))
    assert cell.cell_type == "markdown" and cell.source == grading.ANSWER_PROMPT
    assert cell.metadata["tags"] == ["question:q4", "answer"]
    assert cell.metadata["grading"] == {"written": True, "points": 4}
    assert written_answer(ex, "q4") == ("empty", "")


def test_written_answer_states():
    nb = written_toy()
    assert written_answer(nb, "q4") == ("present", MODEL)
    assert written_answer(nb, "q9") == ("missing", "")
    nb.cells[-1].source = "x" * (MAX_ANSWER_CHARS + 5)
    state, text = written_answer(nb, "q4")
    assert state == "cut" and len(text) == MAX_ANSWER_CHARS
    nb.cells[-1].source = "\n " + grading.ANSWER_PROMPT + "\n"
    assert written_answer(nb, "q4")[0] == "empty"


def test_an_answer_written_under_the_prompt_is_the_answer():
    """A student who types the proof in new Markdown cells under the prompt (issue 43):
    those cells, up to the next cell of the exercise itself, are the answer, and the reason
    says so.  The exercise's own cells are known by their ids (the solution's, which
    ``lecturelib assign`` keeps and lists in the exercise's metadata)."""
    nb = written_toy()
    nb.cells[-1].source = grading.ANSWER_PROMPT
    nb.cells.append(new_markdown_cell("A note of the exercise after the prompt."))
    exercise = frozenset(c.id for c in nb.cells)
    at = len(nb.cells) - 1
    nb.cells[at:at] = [new_markdown_cell("Let $f(q) = \\log p(q)$."), new_markdown_cell("   "),
                       new_markdown_cell("Then $f'(q) = 0$ at the MAP.")]
    assert written_answer(nb, "q4") == ("empty", "")  # nothing says which cells are whose
    state, text = written_answer(nb, "q4", exercise)
    assert state == "below" and text == "Let $f(q) = \\log p(q)$.\n\nThen $f'(q) = 0$ at the MAP."
    prompt = next(c for c in nb.cells if "question:q4" in c.metadata.get("tags", []))
    prompt.source = "First my own line."
    assert written_answer(nb, "q4", exercise)[1].startswith("First my own line.\n\nLet $f(q)")
    reference = Reference("k", REFERENCE.raw, exercise_ids=exercise)
    result = score_questions(QUESTIONS, _run([True, True]), reference, nb)[-1]
    assert result.pending and result.answer.startswith("First my own line.")
    assert result.reason.endswith("(taken from the Markdown cells under the answer cell)")
    nb.cells.insert(at + 1, nbformat.v4.new_code_cell("x = 1"))  # a code cell ends the answer too
    assert written_answer(nb, "q4", exercise)[1].endswith("= \\log p(q)$.")


def test_lecturelib_check_reads_the_exercise_cells_from_its_metadata(toy):
    """An exercise lists its own cells, so ``lecturelib check`` sees an answer under the prompt."""
    from lecturelib.grading.core.notebook import exercise_cell_ids

    ex = nbformat.read(toy / "exercises" / "toy.ipynb", as_version=4)
    ids = exercise_cell_ids(ex)
    assert ids == {c.id for c in ex.cells}
    at = next(i for i, c in enumerate(ex.cells) if "question:q4" in c.metadata.get("tags", []))
    ex.cells.insert(at + 1, new_markdown_cell("My proof, under the prompt."))
    assert written_answer(ex, "q4", exercise_cell_ids(ex)) == ("below", "My proof, under the prompt.")


# ----------------------------------------------------------------------------- scoring


def _run(outcomes):
    """A student's run where check i of every question matches the reference iff outcomes[i]."""
    answers = {"q1": [Answer(True, 0.5)], "q2": [Answer(True, v) for v in outcomes],
               "q3": [Answer(False, error="raised an exception")]}
    return Run(answers, {}, [])


REFERENCE = Reference("k", {"q1": [0.5], "q2": [1.0, 1.0], "q3": [[1.0, 0.0]]})


@pytest.mark.parametrize("values, points", [([1.0, 1.0], 3), ([1.0, 0.0], 1), ([0.0, 1.0], 2),
                                            ([0.0, 0.0], 0)])
def test_partial_credit_adds_the_points_of_matching_checks(values, points):
    questions = grading.load_questions(written_toy())
    results = {r.id: r for r in score_questions(questions, _run(values), REFERENCE, written_toy())}
    assert results["q2"].points == points
    assert results["q2"].checks == [v == 1.0 for v in values]
    assert (results["q2"].reason == "ok") == (points == 3)
    assert results["q1"].points == 2 and results["q3"].points == 0  # all or nothing without shares


def test_written_question_is_pending_never_scored_by_a_check():
    questions = grading.load_questions(written_toy())
    nb = written_toy()
    q4 = {r.id: r for r in score_questions(questions, _run([1.0, 1.0]), REFERENCE, nb)}["q4"]
    assert q4.pending and q4.points == 0 and q4.kind == "written" and q4.answer == MODEL
    nb.cells[-1].source = grading.ANSWER_PROMPT
    q4 = {r.id: r for r in score_questions(questions, _run([1.0, 1.0]), REFERENCE, nb)}["q4"]
    assert not q4.pending and q4.points == 0 and q4.reason == "no answer"


def decoyed_toy():
    """The toy set as a student may hand it in: a Markdown cell that looks like code tagged
    for q1 before q1's code cell, a second code cell and a raw cell tagged for q1 too."""
    nb = written_toy()
    at = next(i for i, c in enumerate(nb.cells) if "question:q1" in c.metadata.get("tags", []))
    decoy = new_markdown_cell("```python\nfor i in range(3):\n    p0 = 0.0425\n```")
    second = new_code_cell("p0 = float(p0)")
    raw = new_raw_cell("p0 = 0.0425")
    for cell in (decoy, second, raw):
        cell.metadata["tags"] = ["question:q1"]
    nb.cells[at:at + 1] = [decoy, nb.cells[at], second]
    nb.cells.append(raw)
    return nb


def test_a_code_question_shows_the_code_that_ran_and_flags_other_cells():
    """Issue 42, class 8: the code shown beside the checks is every code cell tagged for the
    question (what ran), never a Markdown decoy; cells of another type are counted."""
    questions = grading.load_questions(written_toy())
    code = next(c.source for c in written_toy().cells if "question:q1" in c.metadata.get("tags", []))
    q1 = {r.id: r for r in score_questions(questions, _run([1.0, 1.0]), REFERENCE, decoyed_toy())}["q1"]
    assert q1.answer == code + "\n\np0 = float(p0)" and "range(3)" not in q1.answer
    assert "2 code cells" in q1.answer_note and "1 markdown cell, 1 raw cell" in q1.answer_note
    assert "did not run" in q1.answer_note
    honest = {r.id: r for r in score_questions(questions, _run([1.0, 1.0]), REFERENCE, written_toy())}
    assert honest["q1"].answer == code and honest["q1"].answer_note == ""
    assert honest["q4"].answer == MODEL and honest["q4"].answer_note == ""


def test_a_written_question_flags_the_cells_tagged_after_its_answer():
    """The first cell tagged for a written question is its answer; the grader is told of the
    others, which would otherwise go unseen."""
    questions = grading.load_questions(written_toy())
    nb = written_toy()
    later, code = new_markdown_cell("The second half of my proof."), new_code_cell("q = 0.5")
    for cell in (later, code):
        cell.metadata["tags"] = ["question:q4"]
    nb.cells += [later, code]
    q4 = {r.id: r for r in score_questions(questions, _run([1.0, 1.0]), REFERENCE, nb)}["q4"]
    assert q4.answer == MODEL and q4.pending
    assert "2 more cells are tagged question:q4 (1 code cell, 1 markdown cell)" in q4.answer_note


@pytest.mark.full  # the real solutions go through the same path in test_grading.py
def test_grading_the_toy_solution_and_exercise(toy):
    """End to end in the sandbox: full automatic marks with q4 pending; zero with q4 no answer."""
    full = grading.grade(toy / "solutions" / "toy.ipynb", assignment="toy",
                         solutions_dir=toy / "solutions", cell_timeout=8)
    assert full.score == full.auto_total == 6 and full.total == 10 and full.pending == ["q4"]
    assert "pending" in full.table() and '"pending": true' in json.dumps(full.as_dict())
    assert full.as_dict()["questions"][-1]["pending"] is True
    empty = grading.grade(toy / "exercises" / "toy.ipynb", assignment="toy",
                          solutions_dir=toy / "solutions", cell_timeout=8)
    assert empty.score == 0 and empty.pending == []
    assert {q.id: q.reason for q in empty.questions}["q4"] == "no answer"


# ----------------------------------------------------------------------------- manual grades


QUESTIONS = grading.load_questions(written_toy())


def report(answer: str | None, q1=2.0) -> GradeReport:
    rows = [QuestionResult("q1", q1, 2, "ok" if q1 else "check 1: the value is not the expected one",
                           checks=[bool(q1)], answer="p0 = 0.04"),
            QuestionResult("q2", 3, 3, "ok", checks=[True, True]),
            QuestionResult("q3", 1, 1, "ok", checks=[True])]
    if answer:
        rows.append(QuestionResult("q4", 0, 4, "pending", pending=True, kind="written", answer=answer))
    else:
        rows.append(QuestionResult("q4", 0, 4, "no answer", kind="written"))
    return GradeReport("x.ipynb", "toy", rows, [])


@pytest.fixture
def book(tmp_path):
    with Gradebook(tmp_path / "gradebook.sqlite") as gb:
        gb.store_questions("toy", QUESTIONS)
        gb.record("alice", "sha-a", report("My proof."))
        gb.record("bob", "sha-b", report("Another proof.", q1=0.0))
        gb.record("carol", "sha-c", report(None))
        yield gb


def test_pending_until_graded_and_the_rubric_score(book):
    assert book.pending("toy") == {("alice", "q4"), ("bob", "q4")}
    with pytest.raises(grading.GradingError, match="2 written answer"):
        book.export_csv("toy")
    state = manual.save_grade(book.db, "toy", "alice", "q4", who="ta1", version=0,
                              applied=["a", "x1"], comment="Check the exponent.")
    assert state["version"] == 1 and state["score"] == 1 and not state["pending"]
    state = manual.save_grade(book.db, "toy", "alice", "q4", who="ta1", version=1,
                              applied=["a", "b"], adjustment=1, adjustment_reason="elegant")
    assert state["score"] == 4  # 2 + 2 + 1, clipped to the question's 4 points
    state = manual.save_grade(book.db, "toy", "alice", "q4", who="ta1", version=2,
                              applied=["x1"])
    assert state["score"] == 0  # -1, clipped to 0
    assert book.pending("toy") == {("bob", "q4")}
    rows = list(csv.reader(io.StringIO(book.export_csv("toy", allow_pending=True))))
    assert rows[0] == ["student", "q1", "q2", "q3", "q4", "total"]
    assert rows[1] == ["alice", "2", "3", "1", "0", "6"] and rows[2] == ["bob", "0", "3", "1", "pending", "4"]
    assert rows[3] == ["carol", "2", "3", "1", "0", "6"]  # no answer: 0 at once, not pending


def test_a_grade_counts_only_when_a_grader_decided(book):
    """Issue 43, item 4: an item applied and removed again (the app's clicks, unconfirmed)
    leaves the answer pending, for the export's check too; saving it as it is decides, 0
    points included.  An adjustment alone is a decision."""
    state = manual.save_grade(book.db, "toy", "alice", "q4", who="ta1", version=0, applied=["a"],
                              confirmed=False)
    assert state["graded"] and not state["pending"] and state["score"] == 2
    state = manual.save_grade(book.db, "toy", "alice", "q4", who="ta1", version=1, applied=[],
                              comment="Looking again.", confirmed=False)
    assert state["pending"] and not state["graded"] and state["comment"] == "Looking again."
    assert ("alice", "q4") in book.pending("toy")
    with pytest.raises(grading.GradingError, match="2 written answer"):
        book.export_csv("toy")
    rows = {r[0]: r for r in csv.reader(io.StringIO(book.export_csv("toy", allow_pending=True)))}
    assert rows["alice"][4] == "pending"
    state = manual.save_grade(book.db, "toy", "alice", "q4", who="ta1", version=2, applied=[],
                              adjustment=1, adjustment_reason="a neat remark", confirmed=False)
    assert state["graded"] and state["score"] == 1
    state = manual.save_grade(book.db, "toy", "alice", "q4", who="ta1", version=3, applied=[])
    assert state["graded"] and state["score"] == 0 and ("alice", "q4") not in book.pending("toy")
    undecided = [e for e in manual.audit_log(book.db, "toy") if e["after"].get("decided") is False]
    assert len(undecided) == 1  # the audit says which changes decided nothing


@pytest.mark.parametrize("name", ["Zoë van Dijk", "O'Neil", "Łucja Nowak-Ó'Brien", "李小龙",
                                  "हिन्दी नाम", "ta_anna", "ann.lee@uni.example", "x" * 40])
def test_graders_names_of_any_script_are_accepted(name):
    assert manual.grader_name(name) == name and manual.check_grader(name) == name


@pytest.mark.parametrize("name", ["", " ", " Ann", "Ann ", "Ann  Lee", "x" * 41, "Ann\nLee",
                                  "Ann\u202eLee", "Ann\u200bLee", "<b>Ann</b>", "Ann;Lee", "$$",
                                  "--", None, 3])
def test_names_that_are_not_graders_names_are_refused(name):
    assert manual.grader_name(name) is None
    with pytest.raises(grading.GradingError, match="letters"):
        manual.check_grader(name)


def test_a_grader_name_in_decomposed_form_is_its_composed_form():
    assert manual.grader_name("Zoe\u0308") == "Zoë"
    with pytest.raises(grading.GradingError):  # never changed silently where it is stored
        manual.check_grader("Zoe\u0308")


def test_stale_versions_are_refused_and_nothing_is_lost(book):
    first = manual.save_grade(book.db, "toy", "bob", "q4", who="ta1", version=0, applied=["a"])
    with pytest.raises(manual.Conflict) as conflict:  # ta2 saw no grade yet
        manual.save_grade(book.db, "toy", "bob", "q4", who="ta2", version=0, applied=["b"])
    assert conflict.value.current["applied"] == ["a"] and conflict.value.current["version"] == 1
    second = manual.save_grade(book.db, "toy", "bob", "q4", who="ta2", version=first["version"],
                               applied=["a", "b"])
    with pytest.raises(manual.Conflict):
        manual.save_grade(book.db, "toy", "bob", "q4", who="ta1", version=1, applied=[])
    assert manual.grade_state(book.db, "toy", "bob", "q4")["applied"] == second["applied"] == ["a", "b"]


def test_rubric_edit_changes_every_grade_that_applied_it(book):
    manual.save_grade(book.db, "toy", "alice", "q4", who="ta1", version=0, applied=["a"])
    manual.save_grade(book.db, "toy", "bob", "q4", who="ta1", version=0, applied=["a", "b"])
    item = next(i for i in manual.rubric(book.db, "toy", "q4") if i["id"] == "a")
    manual.edit_rubric_item(book.db, "toy", "q4", "a", who="prof", version=item["version"],
                            points=1.5, text="sets the derivative of the log posterior to zero")
    assert book.scores("toy")["alice"]["q4"] == 1.5 and book.scores("toy")["bob"]["q4"] == 3.5
    with pytest.raises(manual.Conflict):
        manual.edit_rubric_item(book.db, "toy", "q4", "a", who="prof", version=item["version"],
                                points=1, text="x")
    log = manual.audit_log(book.db, "toy")
    edit = next(e for e in log if e["action"] == "rubric item a")
    assert edit["who"] == "prof" and edit["before"]["points"] == 2 and edit["after"]["points"] == 1.5


def test_override_needs_a_reason_and_is_audited(book):
    with pytest.raises(grading.GradingError, match="reason"):
        manual.save_override(book.db, "toy", "bob", "q1", who="prof", version=0, points=1, reason="")
    with pytest.raises(grading.GradingError, match="between 0 and 2"):
        manual.save_override(book.db, "toy", "bob", "q1", who="prof", version=0, points=3, reason="r")
    with pytest.raises(grading.GradingError, match="rubric"):
        manual.save_override(book.db, "toy", "bob", "q4", who="prof", version=0, points=1, reason="r")
    manual.save_override(book.db, "toy", "bob", "q1", who="prof", version=0, points=1.5,
                         reason="right idea, rounding slip")
    assert book.scores("toy")["bob"]["q1"] == 1.5
    entry = manual.audit_log(book.db, "toy")[-1]
    assert (entry["who"], entry["student"], entry["question"], entry["action"]) == ("prof", "bob", "q1", "override")
    assert entry["before"]["score"] == 0 and entry["after"]["score"] == 1.5
    assert entry["after"]["override_reason"] == "right idea, rounding slip"


@pytest.mark.parametrize("kwargs, message", [
    ({"applied": ["zz"]}, "rubric items"), ({"applied": ["a", "a"]}, "rubric items"),
    ({"applied": "a"}, "rubric items"), ({"applied": [], "adjustment": 1}, "needs a reason"),
    ({"applied": [], "adjustment": float("nan"), "adjustment_reason": "r"}, "number"),
    ({"applied": [], "comment": "x" * 6000}, "longer"), ({"applied": [], "who": "<script>"}, "grader"),
])
def test_bad_grades_are_refused(book, kwargs, message):
    kwargs = {"who": "ta1", **kwargs}
    with pytest.raises(grading.GradingError, match=message):
        manual.save_grade(book.db, "toy", "alice", "q4", version=0, **kwargs)
    assert manual.audit_log(book.db, "toy") == []


def test_a_new_answer_makes_an_old_grade_stale(book):
    manual.save_grade(book.db, "toy", "alice", "q4", who="ta1", version=0, applied=["a", "b"])
    book.record("alice", "sha-a2", report("My proof, handed in again."))
    state = manual.grade_state(book.db, "toy", "alice", "q4")
    assert state["stale"] and state["pending"] and ("alice", "q4") in book.pending("toy")
    book.record("alice", "sha-a3", report("My proof."))  # the graded text again: it counts
    assert book.scores("toy")["alice"]["q4"] == 4


def test_feedback_and_json_carry_rubric_items_and_comments(book, tmp_path):
    manual.save_grade(book.db, "toy", "alice", "q4", who="ta1", version=0, applied=["a", "x1"],
                      comment="Mind the exponent | `a - 1` <b>here</b>.")
    manual.save_override(book.db, "toy", "bob", "q1", who="prof", version=0, points=1, reason="typo")
    written = manual.write_feedback(book, "toy", tmp_path / "fb")
    assert sorted(p.name for p in written) == ["alice.md", "bob.md", "carol.md"]
    text = (tmp_path / "fb" / "alice.md").read_text()
    assert "+2: writes the log posterior" in text and "-1: drops the exponent" in text
    assert "Mind the exponent \\| 'a - 1' &lt;b>here&lt;/b>." in text and "<b>" not in text
    data = json.loads((tmp_path / "fb" / "alice.json").read_text())
    q4 = data["questions"][-1]
    assert q4["points"] == 1 and q4["pending"] is False and data["pending"] == []
    assert [i["id"] for i in q4["rubric"]] == ["a", "x1"] and q4["comment"].startswith("Mind")
    bob = json.loads((tmp_path / "fb" / "bob.json").read_text())
    assert bob["pending"] == ["q4"] and bob["score"] == 5
    assert "set by the instructor: typo" in bob["questions"][0]["reason"]
    assert "still to be graded: q4" in (tmp_path / "fb" / "bob.md").read_text()


def test_statistics_count_missed_items_and_checks(book):
    manual.save_grade(book.db, "toy", "alice", "q4", who="ta1", version=0, applied=["a", "x1"])
    manual.save_grade(book.db, "toy", "bob", "q4", who="ta1", version=0, applied=["a"])
    stats = {s["id"]: s for s in manual.statistics(book.db, "toy")}
    assert stats["q4"]["histogram"] == {0.0: 1, 1.0: 1, 2.0: 1} and stats["q4"]["pending"] == 0
    missed = dict(stats["q4"]["missed"])
    assert missed["b (+2): solves for q and checks that it is a maximum"] == 2
    assert missed["x1 (-1): drops the exponent a - 1 of the prior"] == 1
    assert "a (+2): writes the log posterior and sets its derivative to zero" not in missed
    assert stats["q1"]["missed"] == [("check 1", 1)] and stats["q2"]["missed"] == []
    assert manual.progress(book.db, "toy", "q4") == (3, 3)


def test_cli_export_refuses_pending_and_feedback_command(book, tmp_path, capsys):
    """In-process (``main``), as the console script runs it; tests/test_grading.py runs
    the command itself."""
    path = str(book.path)
    assert grading.main(["gradebook", "export", "--assignment", "toy", "--gradebook", path]) == 2
    err = capsys.readouterr().err
    assert "still pending" in err and len(err.strip().splitlines()) == 1
    assert grading.main(["gradebook", "export", "--assignment", "toy", "--gradebook", path,
                         "--allow-pending"]) == 0
    assert '"pending"' in capsys.readouterr().out
    assert grading.main(["gradebook", "feedback", "--assignment", "toy", "--gradebook", path,
                         "--output", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "carol.json").is_file()


def test_check_reports_whether_each_written_answer_is_present(toy):
    from lecturelib.grading.autograde.selfcheck import self_check

    untouched = self_check(toy / "exercises" / "toy.ipynb", cell_timeout=20, course=toy)
    assert untouched.written == {"q4": "empty"} and not untouched.passed
    assert "q4: written answer missing" in untouched.text()
    solved = self_check(toy / "solutions" / "toy.ipynb", cell_timeout=20, course=toy)
    assert solved.written == {"q4": "present"} and "q4: written answer present" in solved.text()


def test_feedback_written_later_keeps_the_graders_notes(book, tmp_path):
    """A skipped cell and the grader's notes reach the feedback that ``gradebook feedback``
    writes after rubric grading, not only the batch's own (issue 43)."""
    rep = report("My proof.")
    rep.skipped_cells.append((3, "ran longer than 10 s"))
    rep.notes.append("code cell 0 raised an exception (NameError)")
    book.record("dave", "sha-d", rep)
    manual.write_feedback(book, "toy", tmp_path)
    text = (tmp_path / "dave.md").read_text()
    assert "cell 3 of the notebook was skipped: it ran longer than 10 s" in text
    assert "code cell 0 raised an exception (NameError)" in text

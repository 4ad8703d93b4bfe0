"""Regrade requests (issue 43): recorded from the LMS, resolved by another grader than the
first with a decision, audited, and the student's feedback written again."""

from __future__ import annotations

import pytest

from lecturelib.grading.cli import main
from lecturelib.grading.core.notebook import GradingError
from lecturelib.grading.gradebook import Gradebook, manual, regrades
from test_written import QUESTIONS, report


@pytest.fixture
def book(tmp_path):
    with Gradebook(tmp_path / "gradebook.sqlite") as gb:
        gb.store_questions("toy", QUESTIONS)
        gb.record("alice", "sha-a", report("My proof."))
        gb.record("bob", "sha-b", report("Another proof.", q1=0.0))
        manual.save_grade(gb.db, "toy", "alice", "q4", who="Ann Lee", version=0, applied=["a"])
        yield gb


def test_a_request_is_resolved_by_another_grader_and_audited(book, tmp_path):
    number = regrades.request(book.db, "toy", "alice", "q4", reason="I did check the maximum.",
                              who="Instructor")
    assert [r["id"] for r in regrades.requests(book.db, "toy", open_only=True)] == [number]
    with pytest.raises(GradingError, match="another grader"):
        regrades.resolve(book.db, number, who="Ann Lee", decision="fine", applied=["a", "b"])
    state = regrades.resolve(book.db, number, who="Bo Chen", applied=["a", "b"],
                             decision="Agreed: the second derivative is there.",
                             feedback_dir=tmp_path / "feedback")
    assert state["score"] == 4 and state["applied"] == ["a", "b"]
    assert regrades.requests(book.db, "toy", open_only=True) == []
    actions = [e["action"] for e in manual.audit_log(book.db, "toy") if e["student"] == "alice"]
    assert actions == ["grade", f"regrade {number} requested", f"grade (regrade {number})",
                       f"regrade {number} resolved"]
    feedback = (tmp_path / "feedback" / "alice.md").read_text()
    assert "Agreed: the second derivative is there." in feedback and "**Score: 10 / 10**" in feedback
    with pytest.raises(GradingError, match="already resolved"):
        regrades.resolve(book.db, number, who="Bo Chen", decision="again")


def test_no_one_who_graded_the_answer_before_the_request_resolves_it(book):
    """The first grader cannot become "another grader" by changing the grade once more
    after the request (before, only the latest grader was refused), and a decision taken
    on a grade or an answer that changed since it was shown is a conflict."""
    number = regrades.request(book.db, "toy", "alice", "q4", reason="Look again.", who="Instructor")
    state = manual.grade_state(book.db, "toy", "alice", "q4")
    manual.save_grade(book.db, "toy", "alice", "q4", who="Cy Dorn", version=state["version"],
                      applied=["a", "b"])  # a change after the request: Cy may still resolve
    assert regrades.first_graders(book.db, regrades.open_request(book.db, "toy", "alice", "q4")) == {"Ann Lee"}
    with pytest.raises(GradingError, match="another grader"):
        regrades.resolve(book.db, number, who="Ann Lee", decision="mine", applied=["a"])
    with pytest.raises(manual.Conflict) as stale:
        regrades.resolve(book.db, number, who="Bo Chen", decision="b", applied=["a"],
                         version=state["version"])
    assert stale.value.why == "version"
    current = manual.grade_state(book.db, "toy", "alice", "q4")
    with pytest.raises(manual.Conflict) as handed_in:
        regrades.resolve(book.db, number, who="Bo Chen", decision="b", version=current["version"],
                         shown_sha="0" * 64)
    assert handed_in.value.why == "answer"
    assert regrades.open_request(book.db, "toy", "alice", "q4")["id"] == number  # still open
    state = regrades.resolve(book.db, number, who="Cy Dorn", decision="Kept.", version=current["version"],
                             shown_sha=manual.answer_sha(current["answer"]))
    assert state["applied"] == ["a", "b"] and regrades.open_request(book.db, "toy", "alice", "q4") is None


def test_a_code_question_is_overridden_or_kept(book):
    number = regrades.request(book.db, "toy", "bob", "q1", reason="My value is right.", who="I")
    state = regrades.resolve(book.db, number, who="Bo Chen", override=2, decision="Rounding only.")
    assert state["score"] == 2 and state["override_reason"].startswith(f"regrade {number}: ")
    kept = regrades.request(book.db, "toy", "bob", "q2", reason="More points?", who="I")
    assert regrades.resolve(book.db, kept, who="Bo Chen", decision="The grade stands.")["score"] == 3


@pytest.mark.parametrize("kwargs, message", [
    ({"reason": "  "}, "empty"), ({"reason": "x" * 3000}, "longer than"),
])
def test_bad_requests_are_refused(book, kwargs, message):
    with pytest.raises(GradingError, match=message):
        regrades.request(book.db, "toy", "alice", "q4", who="I", **kwargs)
    with pytest.raises(GradingError, match="no result"):
        regrades.request(book.db, "toy", "nobody", "q4", reason="why", who="I")


def test_the_command_records_lists_and_resolves(book, capsys, tmp_path):
    base = ["gradebook", "regrade", "--assignment", "toy", "--gradebook", str(book.path)]
    assert main([*base, "--student", "alice", "--question", "q4", "--reason", "Look again",
                 "--by", "Instructor"]) == 0
    assert "regrade request 1 recorded" in capsys.readouterr().out
    assert main([*base, "--list"]) == 0
    assert "open" in capsys.readouterr().out
    assert main([*base, "--resolve", "1", "--grader", "Bo Chen", "--decision", "Yes.",
                 "--items", "a,b", "--feedback", str(tmp_path / "fb")]) == 0
    assert "resolved: 4 points" in capsys.readouterr().out
    assert "Yes." in (tmp_path / "fb" / "alice.md").read_text()
    assert main([*base, "--student", "alice"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert main(["gradebook", "feedback", "--assignment", "toy", "--gradebook", str(book.path),
                 "--output", str(tmp_path / "again")]) == 0
    assert "Yes." in (tmp_path / "again" / "alice.md").read_text()  # feedback keeps the decision

"""A fair order, graders' shares, "next ungraded", and blind double marking with its
agreement measures (issue 43: fair and measured grading)."""

from __future__ import annotations

import json

import pytest
from sklearn.metrics import cohen_kappa_score

from lecturelib.grading.cli import main
from lecturelib.grading.core.notebook import GradingError
from lecturelib.grading.gradebook import Gradebook, allocation, manual
from lecturelib.grading.gradebook.analysis import analyze
from test_written import QUESTIONS, report

STUDENTS = [f"s{i:02d}" for i in range(30)]
GRADERS = ["Ann Lee", "Bo Chen", "Zoe Dijk"]


@pytest.fixture
def book(tmp_path):
    with Gradebook(tmp_path / "gradebook.sqlite") as gb:
        gb.store_questions("toy", QUESTIONS)
        for s in STUDENTS:
            gb.record(s, f"sha-{s}", report(f"Proof by {s}."))
        yield gb


def test_the_order_is_fixed_pseudo_random_and_differs_per_question(book, tmp_path):
    order = allocation.fair_order(book.db, "toy", "q4", STUDENTS)
    assert sorted(order) == STUDENTS and order != STUDENTS
    assert allocation.fair_order(book.db, "toy", "q4", list(reversed(STUDENTS))) == order  # input order
    assert allocation.fair_order(book.db, "toy", "q8", STUDENTS) != order
    with Gradebook(book.path) as again:  # the same after a restart
        assert allocation.fair_order(again.db, "toy", "q4", STUDENTS) == order


def test_the_order_is_keyed_by_the_gradebook(book, tmp_path):
    """With the class list alone, nobody can work out the order, the graders' shares or the
    double-marked sample: they depend on a random key of the gradebook (before, on the
    SHA-256 of assignment/question/student alone)."""
    import hashlib

    unkeyed = sorted(STUDENTS, key=lambda s: hashlib.sha256(f"order/toy/q4/{s}".encode()).hexdigest())
    orders = [allocation.fair_order(book.db, "toy", "q4", STUDENTS)]
    for i in range(3):
        with Gradebook(tmp_path / f"other{i}.sqlite") as other:
            orders.append(allocation.fair_order(other.db, "toy", "q4", STUDENTS))
    assert unkeyed not in orders and len({tuple(o) for o in orders}) == len(orders)


def test_shares_deal_the_order_round_robin(book):
    shares = allocation.shares(book.db, "toy", "q4", STUDENTS, GRADERS)
    assert sorted(sum(shares.values(), [])) == STUDENTS
    assert [len(m) for m in shares.values()] == [10, 10, 10]
    assert shares["Ann Lee"][0] == allocation.fair_order(book.db, "toy", "q4", STUDENTS)[0]
    with pytest.raises(GradingError, match="once"):
        allocation.shares(book.db, "toy", "q4", STUDENTS, ["A", "A"])


def test_next_ungraded_walks_a_graders_share_then_their_second_marks(book):
    shares = allocation.shares(book.db, "toy", "q4", STUDENTS, GRADERS)
    kwargs = {"grader": "Bo Chen", "graders": GRADERS}
    assert allocation.next_ungraded(book.db, "toy", "q4", **kwargs) == shares["Bo Chen"][0]
    for student in STUDENTS:
        first = next(g for g, mine in shares.items() if student in mine)
        manual.save_grade(book.db, "toy", student, "q4", who=first, version=0, applied=["a"])
    assert allocation.next_ungraded(book.db, "toy", "q4", **kwargs) is None
    sample = allocation.double_sample(book.db, "toy", "q4", STUDENTS, 10)
    assert len(sample) == 3 and sample == allocation.double_sample(book.db, "toy", "q4", STUDENTS, 10)
    owed = [s for s in sample if allocation.second_grader(book.db, "toy", "q4", s, STUDENTS, GRADERS) == "Bo Chen"]
    found = allocation.next_ungraded(book.db, "toy", "q4", percent=10, **kwargs)
    assert found == (owed[0] if owed else None)


def test_second_marks_are_blind_and_measured(book):
    graded = {"s00": ["a", "b"], "s01": ["a", "b"], "s02": ["a"], "s03": []}
    second = {"s00": ["a", "b"], "s01": ["a"], "s02": ["a"], "s03": []}
    for student, applied in graded.items():
        manual.save_grade(book.db, "toy", student, "q4", who="Ann Lee", version=0, applied=applied)
    with pytest.raises(GradingError, match="second comes from another grader"):
        allocation.save_second_mark(book.db, "toy", "s00", "q4", who="Ann Lee", applied=["a"])
    for student, applied in second.items():
        allocation.save_second_mark(book.db, "toy", student, "q4", who="Bo Chen", applied=applied)
    assert manual.grade_state(book.db, "toy", "s01", "q4")["score"] == 4  # no grade changed
    (d,) = allocation.disagreements(book.db, "toy")
    assert d["student"] == "s01" and d["first"]["score"] == 4 and d["second"]["score"] == 2
    (q4,) = analyze(book, "toy")["double_marking"]
    assert q4["double_marked"] == 4 and q4["same_points"] == 0.75 and q4["mean_difference"] == 0.5
    # item b: first [T, T, F, F], second [T, F, F, F]: po = 3/4, pe = 1/2, kappa = 1/2
    assert q4["item_kappa"]["b"] == pytest.approx(0.5)
    assert q4["item_kappa"]["b"] == pytest.approx(cohen_kappa_score([1, 1, 0, 0], [1, 0, 0, 0]))
    assert q4["item_kappa"]["a"] == pytest.approx(1.0) and q4["item_kappa"]["x1"] is None
    book.record("s01", "sha-new", report("A new proof."))  # handed in again: the pair is stale
    assert allocation.disagreements(book.db, "toy") == []


def _disagreeing_pair(book, student="s01", first=("a", "b"), second=("a",), adjustment=0.0):
    version = manual.grade_state(book.db, "toy", student, "q4")["version"]
    graded = manual.save_grade(book.db, "toy", student, "q4", who="Ann Lee", version=version,
                               applied=list(first), comment="Step two is fine.")
    allocation.save_second_mark(book.db, "toy", student, "q4", who="Bo Chen", applied=list(second),
                                adjustment=adjustment)
    return graded


def test_a_third_grader_resolves_a_disagreement_by_taking_the_second_mark(book):
    """The second mark becomes the grade (its items and adjustment, the comment kept), the
    pair leaves the list, the audit says who decided, and the agreement is still measured
    on the two blind marks (not on the grade the resolution made)."""
    graded = _disagreeing_pair(book, adjustment=0.5)
    (d,) = allocation.disagreements(book.db, "toy")
    assert (d["first"]["score"], d["second"]["score"]) == (4, 2.5) and d["resolved"] is None
    before = analyze(book, "toy")["double_marking"]
    for who in ("Ann Lee", "Bo Chen"):  # neither of the two who marked
        with pytest.raises(GradingError, match="third grader"):
            allocation.resolve_disagreement(book.db, "toy", "s01", "q4", who=who, keep="second")
    with pytest.raises(GradingError, match="'first'"):
        allocation.resolve_disagreement(book.db, "toy", "s01", "q4", who="Zoe Dijk", keep="both")
    sha = manual.answer_sha(graded["answer"])
    with pytest.raises(manual.Conflict) as stale:  # the page showed an older version of the grade
        allocation.resolve_disagreement(book.db, "toy", "s01", "q4", who="Zoe Dijk", keep="second",
                                        version=graded["version"] - 1, shown_sha=sha)
    assert stale.value.why == "version"
    state = allocation.resolve_disagreement(book.db, "toy", "s01", "q4", who="Zoe Dijk", keep="second",
                                            version=graded["version"], shown_sha=sha)
    assert (state["applied"], state["adjustment"], state["score"]) == (["a"], 0.5, 2.5)
    assert state["comment"] == "Step two is fine." and state["grader"] == "Zoe Dijk"
    assert "Bo Chen" in state["adjustment_reason"]
    assert allocation.disagreements(book.db, "toy") == []
    (pair,) = allocation._pairs(book.db, "toy")
    assert pair["resolved"]["by"] == "Zoe Dijk" and pair["resolved"]["kept"] == "second"
    assert pair["first"] == {"grader": "Ann Lee", "applied": ["a", "b"], "adjustment": 0.0, "score": 4}
    assert analyze(book, "toy")["double_marking"] == before
    actions = [(e["who"], e["action"]) for e in manual.audit_log(book.db, "toy")]
    assert actions[-2:] == [("Zoe Dijk", "grade (double marking)"), ("Zoe Dijk", "double marking resolved")]
    with pytest.raises(manual.Conflict) as again:  # a second resolver, from a page shown before
        allocation.resolve_disagreement(book.db, "toy", "s01", "q4", who="Cy Park", keep="first",
                                        version=state["version"], shown_sha=sha)
    assert again.value.why == "resolved"


def test_keeping_the_grade_resolves_without_changing_it_until_a_new_answer(book):
    graded = _disagreeing_pair(book)
    state = allocation.resolve_disagreement(book.db, "toy", "s01", "q4", who="Zoe Dijk", keep="first")
    assert (state["applied"], state["version"], state["grader"]) == (["a", "b"], graded["version"], "Ann Lee")
    assert allocation.disagreements(book.db, "toy") == []
    assert allocation.disagreement(book.db, "toy", "s01", "q4") is None
    with pytest.raises(GradingError, match="no disagreement"):
        allocation.resolve_disagreement(book.db, "toy", "s01", "q4", who="Zoe Dijk", keep="first")
    book.record("s01", "sha-new", report("A new proof."))  # the marks were of the old answer
    assert allocation._pairs(book.db, "toy") == []


def test_the_commands(book, capsys):
    path = str(book.path)
    base = ["--assignment", "toy", "--question", "q4", "--gradebook", path]
    assert main(["gradebook", "next", *base, "--grader", "Ann Lee", "--graders", ",".join(GRADERS)]) == 0
    assert capsys.readouterr().out.strip() == allocation.shares(book.db, "toy", "q4", STUDENTS, GRADERS)["Ann Lee"][0]
    manual.save_grade(book.db, "toy", "s05", "q4", who="Ann Lee", version=0, applied=["a"])
    assert main(["gradebook", "second-mark", *base, "--student", "s05", "--grader", "Bo Chen",
                 "--items", "a,b"]) == 0
    assert main(["gradebook", "disagreements", "--assignment", "toy", "--gradebook", path, "--json"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out[out.index("{"):])["disagreements"][0]["student"] == "s05"
    assert main(["gradebook", "next", *base, "--grader", "Nobody", "--graders", "A,B"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    for extra, message in [(["--graders", ",,"], "not a grader's name"),  # checked as serve checks them
                           (["--graders", "A,B", "--double-mark", "150"], "percentage from 0 to 100"),
                           (["--double-mark", "10"], "at least two --graders")]:
        assert main(["gradebook", "next", *base, "--grader", "A", *extra]) == 2, extra
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, (extra, err)
    resolve = ["gradebook", "disagreements", *base, "--resolve", "s05"]
    assert main([*resolve, "--keep", "second"]) == 2  # no --grader
    assert "--grader" in capsys.readouterr().err
    assert main([*resolve, "--keep", "second", "--grader", "Bo Chen"]) == 2  # he marked it
    assert "third grader" in capsys.readouterr().err
    assert main([*resolve, "--keep", "second", "--grader", "Zoe Dijk"]) == 0
    assert "second mark kept, 4 points" in capsys.readouterr().out
    assert manual.grade_state(book.db, "toy", "s05", "q4")["applied"] == ["a", "b"]
    assert main(["gradebook", "disagreements", "--assignment", "toy", "--gradebook", path]) == 0
    assert capsys.readouterr().out.strip() == "0 disagreement(s)"

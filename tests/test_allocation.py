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

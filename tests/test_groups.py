"""``lecturelib gradebook groups``: answers of a written question grouped by what they say,
split, merged and graded a group at a time (issue 43).

The class: 30 paraphrased answers of three kinds to "the MAP estimate of a coin's bias q
under a Beta(a, b) prior after k heads in n tosses": the mode (right), the posterior mean
(a common slip) and the maximum-likelihood estimate (the prior forgotten), each written in
ten ways with its final expression in different but equal forms.
"""

from __future__ import annotations

import json

import pytest

from lecturelib.grading.cli import main
from lecturelib.grading.core.report import GradeReport, QuestionResult
from lecturelib.grading.gradebook import Gradebook, groups, manual
from test_written import QUESTIONS

MODE = [r"\frac{k+a-1}{n+a+b-2}", r"(a+k-1)/(a+b+n-2)", r"\frac{a - 1 + k}{b + a + n - 2}",
        r"\frac{1-a-k}{2-a-b-n}", r"\left(k+a-1\right)/\left(n+a+b-2\right)"]
MEAN = [r"\frac{k+a}{n+a+b}", r"(a+k)/(a+b+n)", r"\frac{a+k}{b+n+a}", r"\frac{-a-k}{-n-a-b}",
        r"(k + a)/(n + b + a)"]
MLE = [r"\frac{k}{n}", r"k/n", r"\frac{2k}{2n}", r"k n^{-1}", r"\frac{k}{n}"]
OPENINGS = [
    "The log posterior is $(k+a-1)\\log q + (n-k+b-1)\\log(1-q)$. Setting its derivative to zero gives",
    "I differentiate the logarithm of the posterior density and solve for the stationary point:",
    "Taking logs, the posterior is maximised where the derivative vanishes, so",
    "We maximise $q^{k+a-1}(1-q)^{n-k+b-1}$; the first-order condition yields",
    "Maximising the posterior over $q$ (it is concave in the log), the estimate is",
]
KINDS = {"mode": MODE, "mean": MEAN, "mle": MLE}


def answer(kind: str, i: int) -> str:
    """Five wordings with five forms of the kind's final expression; answers 5 to 9 repeat
    them with other spacing (the same after normalising)."""
    text = f"{OPENINGS[i % 5]} $\\hat q = {KINDS[kind][i % 5]}$."
    return text if i < 5 else "  " + text.replace(" ", "  ")


def report(text: str) -> GradeReport:
    rows = [QuestionResult("q1", 2, 2, "ok"), QuestionResult("q2", 3, 3, "ok"),
            QuestionResult("q3", 1, 1, "ok"),
            QuestionResult("q4", 0, 4, "pending", pending=True, kind="written", answer=text)]
    return GradeReport("x.ipynb", "toy", rows, [])


@pytest.fixture
def book(tmp_path):
    with Gradebook(tmp_path / "gradebook.sqlite") as gb:
        gb.store_questions("toy", QUESTIONS)
        for kind in KINDS:
            for i in range(10):
                gb.record(f"{kind}{i}", f"sha-{kind}{i}", report(answer(kind, i)))
        yield gb


def kinds_of(result) -> list[set[str]]:
    return sorted(({s.rstrip("0123456789") for s in g["students"]} for g in result), key=sorted)


def test_thirty_paraphrased_answers_fall_into_their_three_kinds(book):
    result = groups.groups(book.db, "toy", "q4")
    assert len(result) == 3 and [len(g["students"]) for g in result] == [10, 10, 10]
    assert kinds_of(result) == [{"mean"}, {"mle"}, {"mode"}]
    assert all(g["method"] in ("same final expression", "identical") for g in result)


def test_each_pass_on_its_own():
    assert groups.normalise("**Hence** $\\hat q = \\frac{k}{n}$.") == \
        groups.normalise("hence   $$\\hat q=\\frac{k}{n}$$.")
    assert groups.final_expression("so $x = 1$ and $\\hat q = \\frac{k}{n}$.") == "\\frac{k}{n}"
    assert groups.final_expression("no math here") is None
    a, b, c = groups.canonical_forms([r"\frac{1-a}{2-a-b}", r"(a-1)/(a+b-2)", r"\frac{a}{b}"])
    assert a == b != c
    assert groups.canonical_forms([r"\frac{", None]) == [None, None]  # does not parse: no group
    pairs = groups.similar_text_pairs([
        "the estimate is the number of heads divided by the number of tosses",
        "the estimate is the number of heads over the number of tosses",
        "by symmetry of the kernel the gram matrix is positive semidefinite"])
    assert pairs == [(0, 1)]


def test_grading_a_group_grades_every_member_and_says_so(book):
    result = groups.groups(book.db, "toy", "q4")
    mode = next(g for g in result if g["students"][0].startswith("mode"))
    states = groups.grade_group(book.db, "toy", "q4", mode["group"], who="Ann Lee",
                                applied=["a", "b"], comment="Right, and well argued.")
    assert len(states) == 10 and {s["score"] for s in states} == {4}
    for student in mode["students"]:
        state = manual.grade_state(book.db, "toy", student, "q4")
        assert not state["pending"] and state["comment"] == "Right, and well argued."
    actions = {(e["student"], e["action"]) for e in manual.audit_log(book.db, "toy")}
    assert actions == {(s, f"grade (group {mode['group']})") for s in mode["students"]}
    again = next(g for g in groups.groups(book.db, "toy", "q4") if g["group"] == mode["group"])
    assert again["graded"] == 10 and again["pending"] == 0


def test_split_merge_and_a_changed_answer(book):
    result = groups.groups(book.db, "toy", "q4")
    mle = next(g for g in result if g["students"][0].startswith("mle"))
    number = groups.split(book.db, "toy", "q4", ["mle3", "mle4"])
    after = {g["group"]: g for g in groups.groups(book.db, "toy", "q4")}
    assert after[number]["students"] == ["mle3", "mle4"] and len(after[mle["group"]]["students"]) == 8
    assert groups.merge(book.db, "toy", "q4", [mle["group"], number]) == mle["group"]
    assert len({g["group"]: g for g in groups.groups(book.db, "toy", "q4")}[mle["group"]]["students"]) == 10
    book.record("mle0", "sha-new", report("I changed my mind: $\\hat q = 1/2$."))
    alone = [g for g in groups.groups(book.db, "toy", "q4") if g["students"] == ["mle0"]]
    assert alone and alone[0]["method"] == "alone"
    with pytest.raises(groups.GradingError, match="no answer"):
        groups.split(book.db, "toy", "q4", ["nobody"])


def test_the_command(book, capsys):
    path = str(book.path)
    base = ["gradebook", "groups", "--assignment", "toy", "--question", "q4", "--gradebook", path]
    assert main([*base, "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert sorted(len(g["students"]) for g in printed["groups"]) == [10, 10, 10]
    first = printed["groups"][0]["group"]
    assert main([*base, "--grade", str(first), "--items", "a", "--grader", "Bo Chen"]) == 0
    out = capsys.readouterr()
    assert "graded 10 answer(s)" in out.err and "how grouped" in out.out
    assert main([*base, "--grade", str(first)]) == 2  # no grader named
    assert "--grader" in capsys.readouterr().err
    assert main([*base[:5], "q1", *base[6:]]) == 2  # a code question
    assert capsys.readouterr().err.count("\n") == 1

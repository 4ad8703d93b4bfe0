"""The written questions as a student and a grader see them (issue 44).

- Each exercise set's opening says what the set is worth (code and written points, as the
  questions' metadata count them) and what a complete written answer contains, in general
  terms; headings say "1 point", not "1 points".
- No written question prints the answer of a code question (set 1's question 8 used to
  print the offset b that question 6 asks for).
- Rubrics: a negative item says how it combines with the positive item whose omission it
  would otherwise charge a second time; the errata of sets 2, 5 and 9 stay corrected; a model
  answer is no longer than the length the student is asked for.

The notebooks are read as JSON (no execution).
"""

from __future__ import annotations

import json
import math
import re
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
SETS = sorted(p.stem for p in (ROOT / "solutions").glob("*.ipynb"))
DEFAULT_LINES = 20  # "in 5 to 20 lines unless the question asks for more"


@lru_cache(maxsize=None)
def cells(folder: str, stem: str) -> tuple[dict, ...]:
    return tuple(json.loads((ROOT / folder / f"{stem}.ipynb").read_text(encoding="utf-8"))["cells"])


def source(cell: dict) -> str:
    return "".join(cell["source"])


def tagged(folder: str, stem: str, qid: str) -> dict:
    return next(c for c in cells(folder, stem) if f"question:{qid}" in c["metadata"].get("tags", []))


def statement(folder: str, stem: str, number: int) -> str:
    return next(source(c) for c in cells(folder, stem)
                if c["cell_type"] == "markdown" and source(c).startswith(f"## Question {number} "))


def written(stem: str) -> list[dict]:
    return [c for c in cells("solutions", stem) if c["metadata"].get("grading", {}).get("written")]


def rubric(stem: str, qid: str) -> dict[str, dict]:
    return {item["id"]: item for item in tagged("solutions", stem, qid)["metadata"]["grading"]["rubric"]}


# ------------------------------------------------------------------ what the student reads

@pytest.mark.parametrize("stem", SETS)
def test_each_set_states_its_total_and_what_a_complete_answer_holds(stem):
    intro = re.sub(r"\s+", " ", source(cells("exercises", stem)[0]))
    points = {"code": 0.0, "written": 0.0}
    for cell in cells("solutions", stem):
        spec = cell["metadata"].get("grading")
        if spec:
            points["written" if spec.get("written") else "code"] += spec["points"]
    match = re.search(r"The set is worth (\d+) points: (\d+) for the code, scored by the grader, "
                      r"and (\d+) for the written parts", intro)
    assert match, f"{stem}: the opening does not state the set's total"
    assert [int(n) for n in match.groups()] == [points["code"] + points["written"], points["code"], points["written"]]
    for phrase in ("states what it assumes", "justifies each step", "ends with the conclusion"):
        assert phrase in intro, f"{stem}: the opening does not say that a complete answer {phrase}"
    assert f"in 5 to {DEFAULT_LINES} lines" in intro
    # In general terms only: no rubric item's text reaches the student.
    exercise = json.dumps(cells("exercises", stem))
    for cell in written(stem):
        for item in cell["metadata"]["grading"]["rubric"]:
            assert json.dumps(item["text"])[1:-1] not in exercise, f"{stem}: rubric text in the exercise"


@pytest.mark.parametrize("stem", SETS)
def test_headings_count_points_in_english(stem):
    for folder in ("solutions", "exercises"):
        headings = [source(c).splitlines()[0] for c in cells(folder, stem)
                    if c["cell_type"] == "markdown" and source(c).startswith("## Question")]
        assert headings
        wrong = [h for h in headings if re.search(r"\b1 points\b", h)]
        assert not wrong, f"{folder}/{stem}: {wrong}"


def test_set1_written_question_does_not_print_the_offset_of_question_6():
    text = statement("exercises", "01-bayes", 8)
    assert "Question 6" in text and "derive $b$" in text
    # The offset's formula, -1/2 (mu1 + mu2)^T Sigma^{-1} (mu1 - mu2) + ln(pi / (1 - pi)), in any spelling.
    assert not re.search(r"\\ln\s*\\frac\{\\pi\}|\\tfrac12\(\\mu_1 \+ \\mu_2\)|b\s*=", text), text
    assert "w = \\Sigma^{-1}(\\mu_1 - \\mu_2)" in text  # the direction is given, as in question 6


SPLIT = re.compile(r"^\*Points(?: of the written part)?:\* (.+)\.$", re.M)


@pytest.mark.parametrize("stem", SETS)
def test_each_written_question_says_how_its_points_split(stem):
    """The student reads how a written question's points divide between the parts it asks
    for ("1 for part 1, 1.5 for part 2, ..."), and the amounts add up to the rubric's total;
    the parts are the question's own, not the rubric's steps (no rubric text, tested above)."""
    questions = [c for c in cells("exercises", stem)
                 if c["cell_type"] == "markdown" and source(c).startswith("## Question ")]
    for cell in written(stem):
        qid = next(t for t in cell["metadata"]["tags"] if t.startswith("question:"))[len("question:"):]
        number = int(re.match(r"q(\d+)", qid).group(1))
        text = next(source(c) for c in questions if source(c).startswith(f"## Question {number} "))
        lines = SPLIT.findall(text)
        assert len(lines) == 1, f"{stem} question {number}: no line saying how its points split"
        whole = re.fullmatch(r"all (\d+(?:\.\d+)?) for .+", lines[0])
        amounts = [float(whole.group(1))] if whole else [float(a) for a in re.findall(r"(?:^|, )(\d+(?:\.\d+)?) for ", lines[0])]
        assert amounts and math.isclose(sum(amounts), cell["metadata"]["grading"]["points"]), (stem, number, lines[0])
        if "+" in text.splitlines()[0]:  # code and written points: the line is about the written part
            assert "*Points of the written part:*" in text, (stem, number)


# ------------------------------------------------------------------------------ rubrics

# A negative item could charge the omission of a positive item a second time: in every
# set, each says whether it replaces withholding a positive item or stands on its own.
OVERLAPPING_SETS = SETS
RULE = re.compile(r"charged in place of withholding item (\w+)|no positive item covers this: charged on its own")


@pytest.mark.parametrize("stem", OVERLAPPING_SETS)
def test_negative_items_say_how_they_combine_with_the_positive_ones(stem):
    checked = 0
    for cell in written(stem):
        items = {i["id"]: i for i in cell["metadata"]["grading"]["rubric"]}
        for item in items.values():
            if item["points"] >= 0:
                continue
            rule = RULE.search(item["text"])
            assert rule, f"{stem} {cell['metadata']['tags'][0]} {item['id']}: says nothing of the positive items"
            if rule.group(1):
                assert items.get(rule.group(1), {}).get("points", 0) > 0, f"{stem} {item['id']}: no item {rule.group(1)}"
            checked += 1
    assert checked >= 4


def test_set2_q9_accepts_the_correct_limit():
    """As mu grows, p_mu concentrates on the outcomes with the largest value, so beta(mu)
    tends to their average, which is that value: x1 must not penalise it."""
    values = np.array([1.0, 2.0, 5.0, 5.0])
    for mu in (20.0, 40.0):
        p = np.exp(mu * (values - values.max()))
        p /= p.sum()
        assert math.isclose(p @ values, values[values == values.max()].mean(), rel_tol=1e-6)
    x1 = rubric("02-maxent", "q9")["x1"]["text"]
    assert "uses the average over the outcomes with the largest value" not in x1
    assert "correct limit" in x1


def test_set5_q8_x2_does_not_charge_the_expansion_proof_its_note_accepts():
    items = rubric("05-spectral", "q8")
    assert "an expansion proof alone earns a, b and c" in items["c"]["text"]
    x2 = items["x2"]["text"]
    assert "not charged to an expansion proof" in x2 and "Lagrange proof" in x2


def test_set9_model_answer_corrects_the_notes_last_step():
    """The notes end the balls argument with 1/2^l = 2^{-eps m/2}; only l >= eps m/2 is
    known, so the step is an inequality (strict for l > eps m/2)."""
    m, eps = 40, 0.1
    l_values = [l for l in range(1, m + 1) if l >= eps * m / 2]
    assert all(2.0**-l <= 2.0 ** (-eps * m / 2) for l in l_values)
    assert any(2.0**-l < 2.0 ** (-eps * m / 2) for l in l_values)
    answer = source(tagged("solutions", "09-double-sampling", "q7"))
    flat = re.sub(r"\s+", " ", answer)
    assert "1/2^l = 2^{-\\varepsilon m/2}$; the last \"$=$\" must be \"$\\le$\"" in flat, flat[-400:]
    assert "not the equality the notes print" not in flat  # the first step is printed as <= in the notes


def answer_lines(text: str) -> int:
    """Lines of a written answer as read: each non-blank line of prose, and each row of a display."""
    count, inside = 0, False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped == "$$":
            inside = not inside
            count += inside
            continue
        if inside:
            count += stripped.count("\\\\")
        elif stripped:
            count += 1
    return count


def test_answer_lines_counts_prose_and_display_rows():
    assert answer_lines("One.\n\n$$\na = b\n$$\n\nTwo\nthree.") == 4
    assert answer_lines("$$\n\\begin{aligned}\na &= b\\\\\nc &= d\n\\end{aligned}\n$$") == 2


def stated_length(stem: str, qid: str) -> int:
    number = re.match(r"q(\d+)", qid).group(1)
    own = re.search(r"about (\d+) lines", statement("solutions", stem, int(number)))
    return int(own.group(1)) if own else DEFAULT_LINES


@pytest.mark.parametrize("stem", SETS)
def test_model_answers_fit_the_length_the_student_is_asked_for(stem):
    too_long = []
    for cell in written(stem):
        qid = cell["metadata"]["tags"][0].split(":", 1)[1]
        lines, allowed = answer_lines(source(cell)), stated_length(stem, qid)
        if lines > allowed:
            too_long.append(f"{qid}: {lines} lines, asked for at most {allowed}")
    assert not too_long, f"{stem}: {too_long}"

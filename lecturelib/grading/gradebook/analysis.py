"""Item and grader analysis of one assignment: ``lecturelib gradebook analyze``.

Per question: how many answers count (a *pending* answer, which nobody has graded yet, is
left out everywhere rather than counted as 0, so the analysis is useful before the written
grading is done), the mean and standard deviation of its points, the mean points in each
quintile of the class (students ranked by their total), and the discrimination, the
corrected item-total correlation

.. math:: r_j = \\operatorname{corr}\\Bigl(x_{\\cdot j},\\ \\sum_{k \\ne j} x_{\\cdot k}\\Bigr),

the Pearson correlation over students between the question's points and the sum of the
other questions' points.  A question that separates strong from weak students has a
clearly positive :math:`r_j`; one near 0 or negative measures something else (or its
checks are wrong).  For the set, Cronbach's alpha

.. math:: \\alpha = \\frac{k}{k - 1}\\Bigl(1 - \\frac{\\sum_j s_j^2}{s_T^2}\\Bigr)

over the students with no pending answer (:math:`s_j^2` the variance of question
:math:`j`, :math:`s_T^2` that of the total, both with :math:`n - 1`).  Per grader: the
answers graded and the mean share of points given, against the other graders' mean share
on the same questions.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.notebook import GradingError
from ..core.report import plain
from . import allocation, manual

QUINTILES = 5
MIN_STUDENTS = 3  # a correlation or a variance over fewer says nothing


def _mean_sd(values: list[float]) -> tuple[float | None, float | None]:
    if not values:
        return None, None
    sd = float(np.std(values, ddof=1)) if len(values) > 1 else None
    return float(np.mean(values)), sd


def _correlation(x: list[float], y: list[float]) -> float | None:
    """Pearson's r, or ``None`` when it is undefined (too few pairs, a constant side)."""
    if len(x) < MIN_STUDENTS or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    return float(np.corrcoef(x, y)[0, 1])


def score_matrix(rows: list[dict], question_ids: list[str]):
    """Students (sorted), and their points: a students × questions array with NaN where
    the answer is pending."""
    students = sorted({r["student"] for r in rows})
    index = {s: i for i, s in enumerate(students)}
    column = {q: j for j, q in enumerate(question_ids)}
    points = np.full((len(students), len(question_ids)), np.nan)
    for r in rows:
        if not r["pending"] and r["question"] in column:
            points[index[r["student"]], column[r["question"]]] = r["points"]
    return students, points


def quintile_groups(totals: np.ndarray) -> list[np.ndarray]:
    """Student indices in :data:`QUINTILES` groups of (nearly) equal size, weakest first;
    students with equal totals are kept in the same order each time (stable sort)."""
    order = np.argsort(totals, kind="stable")
    return [group for group in np.array_split(order, QUINTILES)]


def cronbach_alpha(points: np.ndarray) -> float | None:
    """Alpha over the rows with no NaN (``None`` with fewer than two questions or
    :data:`MIN_STUDENTS` complete rows, or a total with no variance)."""
    complete = points[~np.isnan(points).any(axis=1)]
    k = points.shape[1]
    if k < 2 or len(complete) < MIN_STUDENTS:
        return None
    total_variance = complete.sum(axis=1).var(ddof=1)
    if total_variance == 0:
        return None
    return float(k / (k - 1) * (1 - complete.var(axis=0, ddof=1).sum() / total_variance))


def question_statistics(qid: str, j: int, points: np.ndarray, groups, maximum: float) -> dict:
    answered = ~np.isnan(points[:, j])
    mine = points[answered, j]
    others = np.nansum(np.delete(points, j, axis=1), axis=1)[answered]
    mean, sd = _mean_sd(mine.tolist())
    quintiles = []
    for group in groups:
        values = points[group, j]
        values = values[~np.isnan(values)]
        quintiles.append(float(values.mean()) if len(values) else None)
    return {"id": qid, "max": maximum, "answers": int(answered.sum()),
            "pending": int((~answered).sum()), "mean": mean, "sd": sd,
            "quintile_means": quintiles,
            "discrimination": _correlation(mine.tolist(), others.tolist())}


def grader_statistics(rows: list[dict]) -> list[dict]:
    """Per grader: answers graded, their mean share of the points, and the other graders'
    mean share on the same questions (``None`` where nobody else graded them)."""
    graded = [r for r in rows if r.get("grader") and not r["pending"] and r["max"] > 0]
    out = []
    for name in sorted({r["grader"] for r in graded}):
        mine = [r for r in graded if r["grader"] == name]
        questions = {r["question"] for r in mine}
        theirs = [r for r in graded if r["grader"] != name and r["question"] in questions]
        out.append({"grader": name, "answers": len(mine),
                    "share": float(np.mean([r["points"] / r["max"] for r in mine])),
                    "others_share": float(np.mean([r["points"] / r["max"] for r in theirs]))
                    if theirs else None})
    return out


def analyze(book, assignment: str) -> dict:
    """The item and grader analysis of ``assignment`` in gradebook ``book``:
    ``{"assignment", "students", "questions": [{"id", "max", "answers", "pending", "mean",
    "sd", "quintile_means", "discrimination"}], "alpha", "alpha_students", "graders",
    "double_marking"}`` (:func:`.allocation.agreement`)."""
    questions = manual.questions(book.db, assignment)
    if not questions:
        raise GradingError(f"the gradebook has no results of assignment {assignment!r}")
    ids = [q["id"] for q in questions]
    rows = manual.effective_results(book.db, assignment)
    students, points = score_matrix(rows, ids)
    groups = quintile_groups(np.nansum(points, axis=1))
    stats = [question_statistics(q["id"], j, points, groups, q["points"])
             for j, q in enumerate(questions)]
    return {"assignment": assignment, "students": len(students), "questions": stats,
            "alpha": cronbach_alpha(points),
            "alpha_students": int((~np.isnan(points).any(axis=1)).sum()),
            "graders": grader_statistics(rows),
            "double_marking": allocation.agreement(book.db, assignment)}


def _cell(value, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.{digits}f}"


def analysis_table(result: dict) -> str:
    """The analysis as plain text: one row per question, then alpha and the graders."""
    lines = [f"{result['assignment']}: {result['students']} students",
             f"{'question':<10} {'max':>5} {'answers':>7} {'pending':>7} {'mean':>6} {'sd':>6} "
             f"{'discr.':>6}  quintile means (weakest to strongest)"]
    for q in result["questions"]:
        quintiles = " ".join(_cell(m) for m in q["quintile_means"])
        lines.append(f"{q['id']:<10} {q['max']:>5g} {q['answers']:>7} {q['pending']:>7} "
                     f"{_cell(q['mean']):>6} {_cell(q['sd']):>6} {_cell(q['discrimination']):>6}  "
                     f"{quintiles}")
    lines.append(f"Cronbach's alpha: {_cell(result['alpha'])} "
                 f"(over the {result['alpha_students']} students with no pending answer)")
    for g in result["graders"]:
        lines.append(f"grader {plain(g['grader'], 60)}: {g['answers']} answers, mean share "
                     f"{_cell(g['share'])} against {_cell(g['others_share'])} by the others")
    for d in result["double_marking"]:
        kappas = ", ".join(f"{item} {_cell(k)}" for item, k in d["item_kappa"].items())
        lines.append(f"double marking of {d['question']}: {d['double_marked']} answers, same "
                     f"points in {_cell(100 * d['same_points'], 0)}%, mean difference "
                     f"{_cell(d['mean_difference'])}; Cohen's kappa per item: {kappas}")
    return "\n".join(lines) + "\n"

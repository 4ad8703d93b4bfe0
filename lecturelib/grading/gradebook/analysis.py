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

import io
import math
from pathlib import Path

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


WEAK_DISCRIMINATION = 0.2  # a common rule of thumb: below it, read the question again
PLOT_FORMATS = (".png", ".svg", ".pdf")


def analysis_figure(book, assignment: str):
    """The analysis as a picture (``gradebook analyze --plot``): on the left each question's
    points as a share of its maximum (a dot per score given, its area and label the number
    of answers with that score, a bar at the mean; pending answers left out), on the right
    its discrimination as a bar, with a line at :data:`WEAK_DISCRIMINATION`.  A Matplotlib
    ``Figure`` (no pyplot, no display)."""
    from matplotlib.figure import Figure

    result = analyze(book, assignment)
    questions = manual.questions(book.db, assignment)
    _, points = score_matrix(manual.effective_results(book.db, assignment), [q["id"] for q in questions])
    labels = [q["id"] for q in questions]
    shares = [points[~np.isnan(points[:, j]), j] / q["points"] if q["points"] else np.array([])
              for j, q in enumerate(questions)]
    rows = np.arange(len(questions))
    figure = Figure(figsize=(9, 0.45 * len(questions) + 1.6), layout="constrained")
    spread, discrimination = figure.subplots(1, 2, sharey=True, width_ratios=(3, 2))
    biggest = max((np.unique(v, return_counts=True)[1].max() for v in shares if len(v)), default=1)
    for row, values in zip(rows, shares):
        if not len(values):
            continue
        distinct, counts = np.unique(values, return_counts=True)
        spread.scatter(distinct, np.full(len(distinct), row), s=20 + 380 * counts / biggest,
                       color="tab:blue", alpha=0.6, linewidths=0)
        for x, count in zip(distinct, counts):
            spread.annotate(str(count), (x, row), xytext=(0, 12), textcoords="offset points",
                            ha="center", fontsize=7, color="0.3")
        spread.plot([values.mean()] * 2, [row - 0.3, row + 0.3], color="black", linewidth=1.5)
    spread.set(yticks=rows, yticklabels=labels, xlim=(-0.05, 1.05), xlabel="points / maximum (dots: answers with that score; bar: mean)",
               title="Score distribution")
    spread.invert_yaxis()
    values = [q["discrimination"] if q["discrimination"] is not None else np.nan
              for q in result["questions"]]
    discrimination.barh(rows, values, height=0.5,
                        color=["tab:red" if v < WEAK_DISCRIMINATION else "tab:blue" for v in np.nan_to_num(values)])
    discrimination.axvline(WEAK_DISCRIMINATION, color="0.4", linestyle="--", linewidth=1)
    discrimination.axvline(0, color="0.2", linewidth=0.8)
    lowest = min([0.0, *(v for v in values if np.isfinite(v))])  # none defined before grading
    discrimination.set(xlim=(min(-0.2, lowest - 0.05), 1), xlabel="discrimination $r_j$",
                       title="Discrimination (corrected item-total)")
    alpha = "not defined yet" if result["alpha"] is None else f"{result['alpha']:.2f}"
    figure.suptitle(f"{assignment}: {result['students']} students, Cronbach's alpha {alpha}")
    return figure


def save_analysis_figure(book, assignment: str, path) -> None:
    """Write :func:`analysis_figure` to ``path`` (PNG, SVG or PDF, by its suffix)."""
    from ..core.report import write_atomic

    path = Path(path)
    if path.suffix.lower() not in PLOT_FORMATS:
        raise GradingError(f"--plot writes {', '.join(PLOT_FORMATS)} files, not {plain(path.suffix, 20) or 'a file without suffix'}")
    buffer = io.BytesIO()
    analysis_figure(book, assignment).savefig(buffer, format=path.suffix[1:].lower(), dpi=120)
    write_atomic(path, buffer.getvalue())

"""``lecturelib gradebook analyze``: item and grader analysis, against an independent
computation of the same statistics with pandas and scipy (issue 43).

A class of 40 with three code questions (one with partial credit) and a written question
that two teaching assistants grade in part: the rest stays pending, and pending answers
are left out of every statistic, not counted as 0.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from lecturelib.grading.cli import main
from lecturelib.grading.core.report import GradeReport, QuestionResult
from lecturelib.grading.gradebook import Gradebook, manual
from lecturelib.grading.gradebook.analysis import analyze, cronbach_alpha
from test_written import QUESTIONS

N = 40
GRADERS = {"ta1": ["a", "b"], "ta2": ["a"]}  # ta2 gives less for the same kind of answer


def class_report(rng, i: int) -> GradeReport:
    ability = i / N
    q1 = float(rng.choice([0, 1, 2], p=[0.5 - ability / 3, 0.3, 0.2 + ability / 3]))
    rows = [QuestionResult("q1", q1, 2, "ok", checks=[q1 > 0, q1 > 1], answer="p0 = 0.04"),
            QuestionResult("q2", 3.0 * (rng.random() < 0.3 + 0.6 * ability), 3, "ok"),
            QuestionResult("q3", 1.0 * (rng.random() < 0.5), 1, "ok"),
            QuestionResult("q4", 0, 4, "pending", pending=True, kind="written",
                           answer=f"Proof number {i}.")]
    return GradeReport(f"s{i:02d}.ipynb", "toy", rows, [])


@pytest.fixture
def graded_class(tmp_path):
    rng = np.random.default_rng(7)
    with Gradebook(tmp_path / "gradebook.sqlite") as book:
        book.store_questions("toy", QUESTIONS)
        for i in range(N):
            book.record(f"s{i:02d}", f"sha{i}", class_report(rng, i))
        for i in range(0, N, 3):  # a third of the proofs stays pending
            who = "ta1" if i % 2 else "ta2"
            applied = GRADERS[who][: 1 + (i % 5 > 1)]
            manual.save_grade(book.db, "toy", f"s{i:02d}", "q4", who=who, version=0, applied=applied)
        for i in range(1, N, 3):
            manual.save_grade(book.db, "toy", f"s{i:02d}", "q4", who="ta1", version=0,
                              applied=["a", "b"] if i > N / 2 else ["a"])
        yield book


def independent(book) -> tuple[pd.DataFrame, dict]:
    """The statistics computed another way: a pandas table with NaN for pending answers."""
    rows = manual.effective_results(book.db, "toy")
    table = pd.DataFrame(rows).assign(points=lambda d: d.points.where(~d.pending))
    wide = table.pivot(index="student", columns="question", values="points")[["q1", "q2", "q3", "q4"]]
    out = {}
    order = wide.sum(axis=1, skipna=True).rank(method="first").astype(int) - 1
    for q in wide.columns:
        mine = wide[q].dropna()
        rest = wide.drop(columns=q).sum(axis=1, skipna=True)[mine.index]
        quintiles = [wide[q][order[order // (N // 5) == g].index].mean() for g in range(5)]
        out[q] = {"answers": len(mine), "mean": mine.mean(), "sd": mine.std(ddof=1),
                  "discrimination": stats.pearsonr(mine, rest).statistic, "quintiles": quintiles}
    complete = wide.dropna().to_numpy()
    covariance = np.cov(complete, rowvar=False)
    k = complete.shape[1]
    out["alpha"] = k / (k - 1) * (1 - np.trace(covariance) / covariance.sum())
    out["alpha_students"] = len(complete)
    return table, out


def test_the_analysis_matches_pandas_and_scipy(graded_class):
    result = analyze(graded_class, "toy")
    table, expected = independent(graded_class)
    assert result["students"] == N
    for q in result["questions"]:
        want = expected[q["id"]]
        assert q["answers"] == want["answers"] and q["pending"] == N - want["answers"]
        assert q["mean"] == pytest.approx(want["mean"]) and q["sd"] == pytest.approx(want["sd"])
        assert q["discrimination"] == pytest.approx(want["discrimination"])
        assert q["quintile_means"] == pytest.approx(want["quintiles"])
    assert result["alpha"] == pytest.approx(expected["alpha"])
    assert result["alpha_students"] == expected["alpha_students"] == 2 * N // 3 + 1


def test_pending_answers_are_left_out_not_counted_as_zero(graded_class):
    q4 = analyze(graded_class, "toy")["questions"][3]
    graded = [r["points"] for r in manual.effective_results(graded_class.db, "toy", "q4")
              if not r["pending"]]
    assert q4["answers"] == len(graded) < N and q4["mean"] == pytest.approx(np.mean(graded))
    assert q4["mean"] > np.sum(graded) / N  # what counting pending answers as 0 would give


def test_graders_are_compared_on_the_same_questions(graded_class):
    graders = {g["grader"]: g for g in analyze(graded_class, "toy")["graders"]}
    rows = [r for r in manual.effective_results(graded_class.db, "toy", "q4") if r["grader"]]
    for name, other in (("ta1", "ta2"), ("ta2", "ta1")):
        mine = [r["points"] / 4 for r in rows if r["grader"] == name]
        theirs = [r["points"] / 4 for r in rows if r["grader"] == other]
        assert graders[name]["answers"] == len(mine)
        assert graders[name]["share"] == pytest.approx(np.mean(mine))
        assert graders[name]["others_share"] == pytest.approx(np.mean(theirs))
    assert graders["ta2"]["share"] < graders["ta1"]["share"]


def test_alpha_needs_variance_and_complete_rows():
    assert cronbach_alpha(np.array([[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]])) is None
    assert cronbach_alpha(np.array([[1.0, np.nan], [0.0, 1.0]])) is None
    # by hand: item variances 1/3 + 1/4 + 1/4 = 5/6, total variance 5/3, alpha = 3/2 (1 - 1/2)
    items = np.array([[1.0, 1, 1], [0, 0, 0], [1, 1, 0], [0, 1, 0]])
    assert cronbach_alpha(items) == pytest.approx(0.75)


def test_the_command_prints_the_same_analysis_as_json_and_as_a_table(graded_class, capsys):
    path = str(graded_class.path)
    assert main(["gradebook", "analyze", "--assignment", "toy", "--gradebook", path, "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(json.dumps(analyze(graded_class, "toy")))
    assert {"id", "mean", "sd", "discrimination"} <= set(printed["questions"][0])
    assert main(["gradebook", "analyze", "--assignment", "toy", "--gradebook", path]) == 0
    table = capsys.readouterr().out
    assert "Cronbach's alpha" in table and "grader ta1" in table
    assert main(["gradebook", "analyze", "--assignment", "nothere", "--gradebook", path]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_the_plot_draws_what_the_analysis_computed(graded_class, tmp_path, capsys):
    """``analyze --plot``: the discrimination bars are the analysis's values (checked above
    against scipy), the dots of each question are its graded answers' shares of the
    maximum (pending ones left out), and the file is the format its suffix names."""
    from lecturelib.grading.gradebook.analysis import analysis_figure

    _, expected = independent(graded_class)
    figure = analysis_figure(graded_class, "toy")
    spread, bars = figure.axes
    assert [t.get_text() for t in spread.get_yticklabels()] == ["q1", "q2", "q3", "q4"]
    widths = [p.get_width() for p in bars.patches]
    assert widths == pytest.approx([expected[q]["discrimination"] for q in ("q1", "q2", "q3", "q4")])
    maxima = {"q1": 2, "q2": 3, "q3": 1, "q4": 4}
    counts = {}  # (question row, share) -> the number the label shows
    for label in spread.texts:
        counts[round(label.xy[1]), round(float(label.xy[0]), 6)] = int(label.get_text())
    for row, q in enumerate(("q1", "q2", "q3", "q4")):
        graded = [r["points"] / maxima[q] for r in manual.effective_results(graded_class.db, "toy", q)
                  if not r["pending"]]
        shares, numbers = np.unique(graded, return_counts=True)
        assert {k[1]: n for k, n in counts.items() if k[0] == row} == dict(zip(np.round(shares, 6), numbers))
        assert sum(numbers) == expected[q]["answers"]
        (mean,) = [line for line in spread.lines if np.allclose(line.get_ydata(), [row - 0.3, row + 0.3])]
        assert mean.get_xdata()[0] == pytest.approx(np.mean(graded))
    path = str(graded_class.path)
    for name, magic in (("a.png", b"\x89PNG"), ("a.svg", b"<?xml"), ("a.pdf", b"%PDF")):
        assert main(["gradebook", "analyze", "--assignment", "toy", "--gradebook", path,
                     "--plot", str(tmp_path / name)]) == 0
        assert (tmp_path / name).read_bytes().startswith(magic)
    capsys.readouterr()
    assert main(["gradebook", "analyze", "--assignment", "toy", "--gradebook", path,
                 "--plot", str(tmp_path / "a.gif")]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and ".gif" in error and not (tmp_path / "a.gif").exists()


@pytest.mark.filterwarnings("error")
def test_the_plot_of_a_class_too_small_for_any_discrimination_warns_nothing(tmp_path):
    """Two students: no question's discrimination is defined yet; the plot draws without
    the NumPy warning it printed (All-NaN axis) and without bars."""
    from lecturelib.grading.gradebook.analysis import analysis_figure

    rng = np.random.default_rng(0)
    with Gradebook(tmp_path / "gradebook.sqlite") as book:
        book.store_questions("toy", QUESTIONS)
        for i in range(2):
            book.record(f"s{i:02d}", f"sha{i}", class_report(rng, i))
        assert all(q["discrimination"] is None for q in analyze(book, "toy")["questions"])
        _, bars = analysis_figure(book, "toy").axes
        assert bars.get_xlim() == (-0.2, 1)

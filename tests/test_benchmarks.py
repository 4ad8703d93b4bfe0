"""The benchmark harness (benchmarks/run.py): one real measurement per side, and the report
that states exactly the gaps in the results it is given."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "benchmarks" / "run.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module                      # dataclasses look the module up
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop(spec.name, None)


def _row(method, n, t_lib, t_ref, mb_lib=1.0, mb_ref=1.0, q_lib=1.0, q_ref=1.0):
    return {"method": method, "reference": "scikit-learn", "n": n, "quality_name": "q",
            "lib": {"time": t_lib, "peak_mb": mb_lib, "quality": {"q": q_lib}},
            "ref": {"time": t_ref, "peak_mb": mb_ref, "quality": {"q": q_ref}},
            "time_ratio": t_lib / t_ref, "memory_ratio": max(mb_lib, 1.0) / max(mb_ref, 1.0)}


def test_notes_list_exactly_the_measured_gaps(bench):
    results = [
        _row("KMeans", 2000, 0.0031, 0.0019),                     # 1.63x > 1.5x: missed
        _row("KMeans", 8000, 0.014, 0.016, mb_lib=3.1, mb_ref=0.5),
        _row("PCA", 2000, 0.002, 0.002),                          # met, no gap
        _row("GaussianMixture", 2000, 0.02, 0.01),                # 2x > 1.5x, no cause recorded
        _row("IncompleteCholesky", 1000, 0.1, 0.1, q_lib=2.4, q_ref=1.0),
        {"method": "SVC", "reference": "libsvm", "n": 1000, "quality_name": "q", "error": "boom"},
    ]
    text = "\n".join(bench.notes(results))
    assert "`KMeans` (n = 2,000: 1.63x against 1.5x, 3.1 ms against 1.9 ms)" in text
    assert "`GaussianMixture` (n = 2,000: 2.00x against 1.5x" in text
    assert bench.NO_CAUSE in text.split("`GaussianMixture`")[1].splitlines()[0]
    assert "`PCA` (" not in text
    assert "`KMeans` (n = 8,000: 3.1 MB against 0.5 MB)" in text
    assert "`IncompleteCholesky` (n = 1,000: 140.0%)" in text
    assert "SVC" not in text                                      # an error row is not a gap


def test_notes_when_everything_is_met(bench):
    text = "\n".join(bench.notes([_row("PCA", 2000, 0.002, 0.002), _row("LDA", 2000, 0.001, 0.002)]))
    assert "Every time target is met at every size in this run." in text
    assert "Every method matches its reference's quality" in text
    assert "Targets missed" not in text and "Memory above 2x" not in text


def test_report_is_written_from_the_results(bench, tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "HERE", tmp_path)
    results = [_row("KMeans", 2000, 0.0031, 0.0019)]
    notebooks = [{"notebook": "01-bayes", "seconds": 4.0}, {"notebook": "02-maxent", "seconds": 5.0}]
    bench.write_report(results, notebooks, bench.machine(), 1)
    report = (tmp_path / "RESULTS.md").read_text()
    assert "| KMeans | scikit-learn | 2000 | 0.003 | 0.002 | 1.63 |" in report
    assert "≤ 1.5x: missed" in report
    assert "| **all** | **9.0** |" in report
    stored = json.loads((tmp_path / "results.json").read_text())
    assert stored["results"] == results and stored["threads"] == 1
    assert stored["targets"] == bench.TARGETS           # the Performance appendix reads them here


@pytest.mark.full  # two worker processes (4 s): in make test-all
def test_one_measurement_per_side_agrees_on_quality(bench):
    lib = bench.measure("KMeans", "lecturelib", 1000, 1, 1)
    ref = bench.measure("KMeans", "reference", 1000, 1, 1)
    assert "error" not in lib and "error" not in ref
    assert lib["quality"]["inertia"] == pytest.approx(ref["quality"]["inertia"], rel=1e-6)
    assert lib["time"] > 0 and ref["time"] > 0 and len(lib["times"]) >= 1


def test_svc_linear_note_states_the_steps_of_both_solvers(bench):
    """The counts the note quotes, from fresh fits; a count may move by a few steps where
    another processor rounds a kernel value differently."""
    import re

    from sklearn.model_selection import train_test_split

    from lecturelib.svm import SVC

    def fit(kind, solver):
        X, y = bench.make_data(kind, 1000)
        Xtr, _, ytr, _ = train_test_split(X, y, test_size=0.25, random_state=0)
        return SVC(C=1e4, kernel="linear", tol=1e-3, solver=solver).fit(Xtr, ytr)

    note = " ".join(bench.SVC_LINEAR_NOTE.split())
    smo_steps = int(re.search(r"needs ([\d,]+) steps here", note).group(1).replace(",", ""))
    ipm_iterations = int(re.search(r"tol = 1e-3 in (\d+) iterations", note).group(1))
    assert fit("svm-separable", "smo").n_iter_ == pytest.approx(smo_steps, rel=0.05)
    overlapping = fit("svm", "interior-point")
    assert overlapping.solver_ == "interior-point"
    assert overlapping.n_iter_ == pytest.approx(ipm_iterations, abs=2)


# ----------------------------------------------------------------------------- svm_solvers.py


@pytest.fixture(scope="module")
def solvers():
    spec = importlib.util.spec_from_file_location("bench_svm_solvers", ROOT / "benchmarks" / "svm_solvers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_svm_solvers_table_shows_todays_auto_rule(solvers):
    import numpy as np

    from lecturelib.svm import SVC

    stored = json.loads((ROOT / "benchmarks" / "svm_solvers.json").read_text(encoding="utf-8"))
    for r in stored["rows"]:
        assert SVC(kernel="linear")._resolve_solver(np.empty((r["n"], r["d"]))) == r["auto"], r
    assert solvers.summary(stored["rows"]) in (ROOT / "benchmarks" / "SVM_SOLVERS.md").read_text(
        encoding="utf-8")


def test_svm_solvers_measures_both_solvers_on_one_case(solvers):
    row = solvers.measure("separable", 100, 20, repeats=1)
    assert row["auto"] == "interior-point" and row["smo_steps"] > row["ipm_iterations"] > 0
    assert row["ratio"] == pytest.approx(row["ipm_seconds"] / row["smo_seconds"])
    assert abs(row["objective_difference"]) < 1e-3


def test_svm_solvers_summary_names_the_slower_cases(solvers):
    rows = [{"regime": "separable", "n": 250, "d": 200, "ratio": 1.75,
             "warned": {"smo": False, "interior-point": False}},
            {"regime": "overlap", "n": 100, "d": 5, "ratio": 0.01,
             "warned": {"smo": True, "interior-point": False}}]
    text = solvers.summary(rows)
    assert "from 0.010 to 1.75 times" in text and "slower in 1 of them (separable, n = 250, d = 200: 1.75)" in text
    assert "SMO stops at its cap in 1 cases" in text

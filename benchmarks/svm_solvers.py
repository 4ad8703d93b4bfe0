"""Where SVC's interior-point solver overtakes SMO: ``python benchmarks/svm_solvers.py``.

Both solvers of :class:`lecturelib.svm.SVC` with a linear kernel fit the same data at the
same ``tol`` (1e-3, the default), on scikit-learn's ``make_classification`` in two regimes:

- ``overlap``: C = 1, class_sep = 1 and 5% of the labels flipped (a soft margin with many
  multipliers at C);
- ``separable``: C = 1e4, class_sep = 2 and no flipped labels (nearly a hard margin, the
  case of ``SVC-linear-C1e4`` in ``benchmarks/run.py``).

For n training points in {100, 250, 500, 1000, 2000} and d features in {5, 20, 100, 200},
each fit is timed as the best of ``--repeats`` runs in one process with one BLAS thread,
and the table gives the ratio interior-point / SMO (below 1: the interior point is
faster), both dual objectives' relative difference, and the solver ``solver="auto"``
takes.  The rule of "auto" (the interior point when its Newton systems are at most
200 x 200: at most 200 features, or at most 200 points) is read off this table.
Results go to ``benchmarks/svm_solvers.json`` and ``benchmarks/SVM_SOLVERS.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from lecturelib.svm import SVC  # noqa: E402

REGIMES = {"overlap": {"C": 1.0, "class_sep": 1.0, "flip_y": 0.05},
           "separable": {"C": 1e4, "class_sep": 2.0, "flip_y": 0.0}}
SIZES = (100, 250, 500, 1000, 2000)
FEATURES = (5, 20, 100, 200)


def data(regime, n, d):
    settings = REGIMES[regime]
    return make_classification(n_samples=n, n_features=d, n_informative=min(d, 8),
                               n_redundant=0, flip_y=settings["flip_y"],
                               class_sep=settings["class_sep"], random_state=0)


def best_fit(X, y, C, solver, repeats):
    """The fitted model, its best time over ``repeats`` runs and whether it warned."""
    best, warned = np.inf, False
    for _ in range(repeats):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            start = time.perf_counter()
            model = SVC(C=C, kernel="linear", solver=solver).fit(X, y)
            best = min(best, time.perf_counter() - start)
        warned = warned or any(issubclass(w.category, ConvergenceWarning) for w in caught)
    return model, best, warned


def measure(regime, n, d, repeats):
    X, y = data(regime, n, d)
    C = REGIMES[regime]["C"]
    ipm, ipm_time, ipm_warned = best_fit(X, y, C, "interior-point", repeats)
    smo, smo_time, smo_warned = best_fit(X, y, C, "smo", repeats)
    return {"regime": regime, "n": n, "d": d, "C": C,
            "smo_seconds": smo_time, "ipm_seconds": ipm_time, "ratio": ipm_time / smo_time,
            "smo_steps": smo.n_iter_, "ipm_iterations": ipm.n_iter_,
            "objective_difference": (ipm.dual_objective_ - smo.dual_objective_)
            / abs(smo.dual_objective_),
            "warned": {"smo": smo_warned, "interior-point": ipm_warned},
            "auto": SVC(C=C, kernel="linear")._resolve_solver(X)}


def summary(rows) -> str:
    """One sentence on the whole table: the range of the ratio and where SMO is faster."""
    ratios = [r["ratio"] for r in rows]
    slower = [r for r in rows if r["ratio"] > 1]
    where = "; ".join(f"{r['regime']}, n = {r['n']}, d = {r['d']}: {r['ratio']:.2f}" for r in slower)
    capped = sum(r["warned"]["smo"] for r in rows)
    return (f"Over the {len(rows)} cases the interior point takes from {min(ratios):.3f} to "
            f"{max(ratios):.2f} times SMO's time; it is slower in {len(slower)} of them"
            + (f" ({where})" if slower else "") + f". SMO stops at its cap in {capped} cases, "
            f"the interior point in {sum(r['warned']['interior-point'] for r in rows)}.")


def markdown(rows, meta):
    lines = ["# SVC with a linear kernel: interior point against SMO", "",
             f"Measured {meta['date']} on {meta['machine']} (one BLAS thread, best of "
             f"{meta['repeats']} fits each) by `python benchmarks/svm_solvers.py`. "
             "Ratio: the interior point's time over SMO's (below 1: the interior point is "
             "faster). Objective: the relative difference of the two dual objectives at "
             "tol = 1e-3. A warning (cap) means a solver stopped at its iteration cap.", "",
             summary(rows), ""]
    for regime, settings in REGIMES.items():
        lines += [f"## {regime}: C = {settings['C']:g}, class_sep = {settings['class_sep']:g}, "
                  f"flip_y = {settings['flip_y']:g}", "",
                  "| n | d | SMO (ms) | steps | interior point (ms) | iterations | ratio | "
                  "objective | auto |",
                  "|---:|---:|---:|---:|---:|---:|---:|---:|:---|"]
        for r in (r for r in rows if r["regime"] == regime):
            smo_cap, ipm_cap = (" (cap)" if r["warned"][side] else ""
                                for side in ("smo", "interior-point"))
            lines.append(f"| {r['n']} | {r['d']} | {1e3 * r['smo_seconds']:.1f}{smo_cap} | "
                         f"{r['smo_steps']} | {1e3 * r['ipm_seconds']:.1f}{ipm_cap} | "
                         f"{r['ipm_iterations']} | {r['ratio']:.2f} | "
                         f"{r['objective_difference']:+.1e} | {r['auto']} |")
        lines.append("")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", default=str(HERE / "svm_solvers.json"))
    parser.add_argument("--markdown", default=str(HERE / "SVM_SOLVERS.md"))
    parser.add_argument("--report-only", action="store_true",
                        help="rewrite the markdown from the stored JSON without measuring")
    args = parser.parse_args(argv)
    if args.report_only:
        stored = json.loads(Path(args.json).read_text(encoding="utf-8"))
        Path(args.markdown).write_text(markdown(stored["rows"], stored["meta"]) + "\n",
                                       encoding="utf-8")
        return 0
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    rows = []
    for regime in REGIMES:
        for d in FEATURES:
            for n in SIZES:
                with threadpool_limits(limits=1):
                    rows.append(measure(regime, n, d, args.repeats))
                r = rows[-1]
                print(f"{regime:9s} n={n:5d} d={d:3d}  smo {1e3 * r['smo_seconds']:8.1f} ms  "
                      f"ipm {1e3 * r['ipm_seconds']:7.1f} ms  ratio {r['ratio']:.2f}  "
                      f"auto {r['auto']}", flush=True)
    meta = {"date": time.strftime("%Y-%m-%d"), "repeats": args.repeats,
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
                       f"{platform.python_version()}, NumPy {np.__version__}",
            "load_average": os.getloadavg()}
    Path(args.json).write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n",
                               encoding="utf-8")
    Path(args.markdown).write_text(markdown(rows, meta) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

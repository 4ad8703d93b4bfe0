"""Helpers of the determinism tests: fingerprints of fitted estimators, notebook re-runs.

Run as a script (``python tests/determinism.py``) it prints a JSON object mapping each
estimator to a SHA-256 of everything it learned; the tests compare these fingerprints
within one process and across two fresh interpreters.  ``python tests/determinism.py
chapter12`` prints the Table 1 errors that chapter 12 prints, recomputed on the first
split of each data set, instead; the tests compare them across BLAS settings.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.utils import get_tags

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from test_estimator_checks import PARAMS, estimator_classes  # noqa: E402


def data():
    X, y = make_blobs(n_samples=60, centers=3, n_features=4, random_state=3)
    return X, y


# Estimators whose fit does not take (X, y) or (X,): "module.Class" -> (X, y) -> fit args.
FIT_ARGS = {
    "em.MultinomialMixture": lambda X, y: (np.abs(X),),  # counts must be non-negative
}


def fit_args(key, estimator, X, y):
    if key in FIT_ARGS:
        return FIT_ARGS[key](X, y)
    if get_tags(estimator).target_tags.required:  # supervised: classifiers, metric learners
        return (X, y)
    return (X,)


def fingerprint(estimator) -> str:
    h = hashlib.sha256()
    for name in sorted(vars(estimator)):
        if not name.endswith("_") or name.startswith("_"):
            continue
        value = getattr(estimator, name)
        h.update(name.encode())
        try:
            arr = np.asarray(value)
        except Exception:  # noqa: BLE001 - non-array attributes are hashed by their repr
            h.update(repr(value).encode())
            continue
        if arr.dtype == object:
            h.update(repr(value).encode())
        else:
            h.update(np.ascontiguousarray(arr).tobytes())
    return h.hexdigest()


def randomised_estimators():
    """Every estimator class that takes a ``random_state``."""
    out = {}
    for key, cls in sorted(estimator_classes().items()):
        if "random_state" in inspect.signature(cls.__init__).parameters:
            out[key] = cls
    return out


def fingerprints(seed=0) -> dict[str, str]:
    X, y = data()
    out = {}
    for key, cls in randomised_estimators().items():
        est = cls(**{**PARAMS.get(key, {}), "random_state": seed})
        est.fit(*fit_args(key, est, X, y))
        out[key] = fingerprint(est)
    return out


# Every stored notebook output is reproduced under other BLAS settings: two threads, and
# another CPU's kernels.  Another CPU runs other BLAS kernels, which round differently, so
# a printed number that hangs on the last bits of a matrix product passes here and fails
# on the next machine.  The OpenBLAS builds bundled with NumPy and SciPy can be told to
# use another CPU's kernels; Prescott's (SSE3: no AVX, no FMA) run on every x86-64 machine.
# OpenBLAS's idle threads spin for 2^28 cycles before they sleep; beside another xdist
# worker on two cores that made chapters 10 and 11 take 200 s instead of 30.  A short spin
# (2^4 cycles) changes how threads wait, not how the work is split, so not a digit.
TWO_THREADS_ENV = {**os.environ, "OMP_NUM_THREADS": "2", "OPENBLAS_NUM_THREADS": "2",
                   "MKL_NUM_THREADS": "2", "OPENBLAS_THREAD_TIMEOUT": "4"}
FOREIGN_BLAS_ENV = {**os.environ, "OPENBLAS_CORETYPE": "Prescott"}
on_x86_64 = pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"),
                               reason="OpenBLAS core types are x86-64 names")
# Another machine at once: its CPU's kernels (x86-64) and two BLAS threads (another split
# of the work).  One re-run of every notebook with both instead of one with each: a number
# that depends on either changes under both (they round differently; their effects would
# have to cancel to the printed digit), and the suite saves a full re-run of the book.
OTHER_MACHINE_ENV = ({**TWO_THREADS_ENV, "OPENBLAS_CORETYPE": "Prescott"}
                     if platform.machine() in ("x86_64", "AMD64") else TWO_THREADS_ENV)
# Every solver stopping ten times closer to its optimum (``LECTURELIB_TOLERANCE_FACTOR``,
# read by ``lecturelib/_tolerance.py``; the notebooks' own cvxpy calls are tightened by
# ``tests/tolerance_site/sitecustomize.py``): see ``tests/test_tolerance.py``.
TOLERANCE_VAR, TOLERANCE_FACTOR = "LECTURELIB_TOLERANCE_FACTOR", "0.1"


def with_tighter_tolerances(env: dict) -> dict:
    """``env`` with every tolerance ten times tighter, for a fresh process."""
    site = str(ROOT / "tests" / "tolerance_site")
    return {**env, TOLERANCE_VAR: TOLERANCE_FACTOR,
            "PYTHONPATH": os.pathsep.join([site, *filter(None, [env.get("PYTHONPATH")])])}


NOTEBOOKS = sorted((ROOT / "chapters").glob("*.ipynb")) + sorted((ROOT / "solutions").glob("*.ipynb"))


def notebook_id(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def nbval(notebook: Path, env: dict) -> subprocess.CompletedProcess:
    """nbval of one notebook in a fresh process with the given environment."""
    env = {k: v for k, v in env.items() if k != "MPLBACKEND"}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval", "--nbval-current-env",
         "--nbval-sanitize-with", str(ROOT / "nbval_sanitize.cfg"), str(notebook)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900,
    )


def table1_module():
    """``benchmarks/table1.py`` (the protocol behind chapter 12's Table 1), imported."""
    spec = importlib.util.spec_from_file_location("table1", ROOT / "benchmarks" / "table1.py")
    table1 = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(table1)
    return table1


# Chapter 12's data sets whose first split is re-run as on another machine: iris and wine
# (5 s each).  Cancer's (50 s, 70 under another CPU's kernels) is left out of the suite; its
# baselines' first splits and LMNN's first split are recomputed by tests/test_table1_benchmark.py.
OTHER_MACHINE_DATA = ("Iris", "Wine")


def chapter12_first_splits() -> dict:
    """Every method's LOO and test error on split 0 of chapter 12's iris and wine: the
    protocol of ``benchmarks/table1.py``, which made the table the chapter prints."""
    table1 = table1_module()
    return {name: {method: list(errors[:2])
                   for method, errors in table1.paper_split(*table1.load(name), 0)[0].items()}
            for name in OTHER_MACHINE_DATA}


if __name__ == "__main__":
    if sys.argv[1:] not in ([], ["chapter12"]):
        sys.exit(f"usage: python tests/determinism.py [chapter12], not {' '.join(sys.argv[1:])!r}")
    print(json.dumps(chapter12_first_splits() if sys.argv[1:] else fingerprints()))

"""Determinism: same random_state, same result, in one process and across two; and every
stored notebook output reproduced with two BLAS threads as well as with one, and with
another CPU's BLAS kernels."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from determinism import fingerprints, randomised_estimators

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "chapters").glob("*.ipynb")) + sorted((ROOT / "solutions").glob("*.ipynb"))


def test_same_random_state_same_result_in_one_process():
    first, second = fingerprints(0), fingerprints(0)
    assert first == second
    assert set(first) == set(randomised_estimators())


def fresh_interpreter_fingerprints(hashseed: str) -> dict:
    env = {**os.environ, "PYTHONHASHSEED": hashseed}
    out = subprocess.run([sys.executable, str(ROOT / "tests" / "determinism.py")], env=env,
                         capture_output=True, text=True, check=True, timeout=600)
    return json.loads(out.stdout)


def test_same_random_state_same_result_across_processes():
    here = fingerprints(0)
    assert fresh_interpreter_fingerprints("1") == here
    assert fresh_interpreter_fingerprints("2") == here


def test_different_random_state_is_not_ignored():
    """At least the estimators whose result depends on the seed must see it."""
    a, b = fingerprints(0), fingerprints(1)
    differing = {k for k in a if a[k] != b[k]}
    seed_dependent = {k for k in a if k.split(".")[0] in ("em", "clustering")}
    assert seed_dependent <= differing, sorted(seed_dependent - differing)


def _nbval(notebook, env):
    env = dict(env)
    env.pop("MPLBACKEND", None)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval", "--nbval-current-env",
         "--nbval-sanitize-with", str(ROOT / "nbval_sanitize.cfg"), str(notebook)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900,
    )


@pytest.mark.slow
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[f"{p.parent.name}/{p.name}" for p in NOTEBOOKS])
def test_notebook_outputs_reproduced_with_two_threads(notebook):
    env = {**os.environ, "OMP_NUM_THREADS": "2", "OPENBLAS_NUM_THREADS": "2", "MKL_NUM_THREADS": "2"}
    proc = _nbval(notebook, env)
    assert proc.returncode == 0, proc.stdout[-4000:]


# Another CPU runs other BLAS kernels, which round differently, so a printed number that
# hangs on the last bits of a matrix product passes here and fails on the next machine.
# The OpenBLAS builds bundled with NumPy and SciPy can be told to use another CPU's
# kernels; Prescott's (SSE3: no AVX, no FMA) run on every x86-64 machine.
FOREIGN_BLAS_ENV = {**os.environ, "OPENBLAS_CORETYPE": "Prescott"}
on_x86_64 = pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"),
                               reason="OpenBLAS core types are x86-64 names")


def _blas_cores(env) -> list[str]:
    probe = "import numpy, scipy.linalg; scipy.linalg.eigh(numpy.eye(3))"
    out = subprocess.run([sys.executable, "-c", probe], env={**env, "OPENBLAS_VERBOSE": "2"},
                         capture_output=True, text=True, check=True, timeout=120)
    return [line for line in (out.stdout + out.stderr).splitlines() if line.startswith("Core:")]


@on_x86_64
def test_foreign_blas_kernels_are_really_selected():
    native_env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    native, foreign = _blas_cores(native_env), _blas_cores(FOREIGN_BLAS_ENV)
    assert len(foreign) == 2, foreign                     # NumPy's and SciPy's OpenBLAS
    assert not set(foreign) & set(native), (native, foreign)


@pytest.mark.slow
@on_x86_64
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[f"{p.parent.name}/{p.name}" for p in NOTEBOOKS])
def test_notebook_outputs_reproduced_with_another_cpus_blas_kernels(notebook):
    proc = _nbval(notebook, FOREIGN_BLAS_ENV)
    assert proc.returncode == 0, proc.stdout[-4000:]

"""Every stored notebook output reproduced on "another machine" whose solvers stop closer
to their optimum: two BLAS threads, on x86-64 another CPU's BLAS kernels (OpenBLAS's
Prescott kernels: SSE3, no AVX, no FMA), and every solver's tolerance ten times tighter
(``tests/test_tolerance.py``), all at once.

No printed number may depend on the rounding of one machine or on how close a solver
happened to stop.  One re-run of every notebook with all three instead of one with each:
a number that hangs on any of them changes under all of them (they perturb it
differently; their effects would have to cancel to the printed digit), and the suite saves
two full re-runs of the book.  To tell which one moved a number, run each alone (see
CONTRIBUTING, "Print only what does not hang on rounding").
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from determinism import (FOREIGN_BLAS_ENV, NOTEBOOKS, OTHER_MACHINE_ENV, nbval, notebook_id, on_x86_64,
                         with_tighter_tolerances)


def blas_cores(env) -> list[str]:
    probe = "import numpy, scipy.linalg; scipy.linalg.eigh(numpy.eye(3))"
    out = subprocess.run([sys.executable, "-c", probe], env={**env, "OPENBLAS_VERBOSE": "2"},
                         capture_output=True, text=True, check=True, timeout=120)
    return [line for line in (out.stdout + out.stderr).splitlines() if line.startswith("Core:")]


@on_x86_64
def test_foreign_blas_kernels_are_really_selected():
    native_env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    native, foreign = blas_cores(native_env), blas_cores(FOREIGN_BLAS_ENV)
    assert len(foreign) == 2, foreign                     # NumPy's and SciPy's OpenBLAS
    assert not set(foreign) & set(native), (native, foreign)


# The chapters.  The solutions, the exercise sets answered, are checked by plain nbval in
# make test-all as in make test, and their answers by the grader in every set's grading.
CHAPTERS = [p for p in NOTEBOOKS if p.parent.name == "chapters"]


@pytest.mark.full
@pytest.mark.parametrize("notebook", CHAPTERS, ids=[notebook_id(p) for p in CHAPTERS])
def test_notebook_outputs_reproduced_on_another_machine_with_tighter_tolerances(notebook):
    """Two BLAS threads, on x86-64 another CPU's kernels (see OTHER_MACHINE_ENV), and
    every tolerance ten times tighter."""
    proc = nbval(notebook, with_tighter_tolerances(OTHER_MACHINE_ENV))
    assert proc.returncode == 0, proc.stdout[-4000:]

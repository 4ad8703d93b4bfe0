"""Every stored notebook output reproduced on "another machine": two BLAS threads and,
on x86-64, another CPU's BLAS kernels (OpenBLAS's Prescott kernels: SSE3, no AVX, no
FMA), so that no printed number depends on the rounding of one machine.  A file of its
own, so that its notebook runs and the tolerance re-runs can go to different workers."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from determinism import FOREIGN_BLAS_ENV, NOTEBOOKS, OTHER_MACHINE_ENV, nbval, notebook_id, on_x86_64


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


@pytest.mark.full
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[notebook_id(p) for p in NOTEBOOKS])
def test_notebook_outputs_reproduced_on_another_machine(notebook):
    """Two BLAS threads and, on x86-64, another CPU's kernels (see OTHER_MACHINE_ENV)."""
    proc = nbval(notebook, OTHER_MACHINE_ENV)
    assert proc.returncode == 0, proc.stdout[-4000:]

"""Execute notebooks in place and store their outputs (one BLAS thread, fixed env).

Usage: python tools/execute_notebooks.py NOTEBOOK [NOTEBOOK ...]

The book is rendered from the stored outputs and `make test` re-runs every notebook
under nbval, so a stored output that a clean kernel does not reproduce fails the tests.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"
os.environ.pop("MPLBACKEND", None)
os.environ["PYTHONHASHSEED"] = "0"

import nbformat  # noqa: E402
from nbclient import NotebookClient  # noqa: E402


def _run(path: Path, timeout: int):
    nb = nbformat.read(path, as_version=4)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    client = NotebookClient(
        nb, kernel_name="python3", timeout=timeout, allow_errors=False,
        resources={"metadata": {"path": str(path.parent)}}, record_timing=False,
    )
    start = time.perf_counter()
    client.execute()
    return nb, time.perf_counter() - start


def execute(path: Path, timeout: int = 300) -> float:
    """Execute ``path`` in place (outputs stored); return the seconds it took."""
    nb, elapsed = _run(path, timeout)
    nbformat.write(nb, path)
    return elapsed


def run_copy(path: Path, timeout: int = 300) -> float:
    """Execute ``path`` without writing it back; return the seconds it took."""
    return _run(path, timeout)[1]


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    for name in argv:
        path = Path(name)
        elapsed = execute(path)
        print(f"{path}: executed in {elapsed:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

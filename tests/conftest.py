"""Shared test setup: one BLAS thread, a headless matplotlib, and the rendered books."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

ROOT = Path(__file__).resolve().parent.parent
JUPYTER_BOOK = Path(sys.executable).with_name("jupyter-book")
# Where the test books are built; another folder lets two test runs on one checkout
# (two people, or two sessions) build their books without overwriting each other's.
BUILD_ROOT = Path(os.environ.get("LECTURELIB_TEST_BUILD", ROOT / "_build")).resolve()


def _build(kind: str) -> Path:
    """Build one edition into ``<BUILD_ROOT>/test-<kind>`` once per test run.  Each xdist worker
    has its own session, so two workers may ask for the same edition: a lock makes the
    second wait, and a stamp with the run's id lets it take the first one's build."""
    out = BUILD_ROOT / f"test-{kind}"
    html = out / "_build" / "html"
    stamp = out / "built-by-run"
    run_id = os.environ.get("PYTEST_XDIST_TESTRUNUID", f"pid-{os.getpid()}")
    out.parent.mkdir(exist_ok=True)
    with open(out.parent / f"test-{kind}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)                # released when the file closes
        if stamp.is_file() and stamp.read_text() == run_id and (html / "index.html").is_file():
            return html
        subprocess.run(["rm", "-rf", str(out)], check=True)
        cmd = [str(JUPYTER_BOOK), "build", str(ROOT), "-W", "-n", "--keep-going", "--path-output", str(out)]
        if kind == "instructor":
            cfg = BUILD_ROOT / "test-instructor-config"
            subprocess.run([sys.executable, str(ROOT / "tools" / "bookconfig.py"), "instructor", str(cfg)],
                           check=True)
            cmd += ["--config", str(cfg / "_config.yml"), "--toc", str(cfg / "_toc.yml")]
        env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
        if proc.returncode != 0 or not (html / "index.html").is_file():
            tail = (proc.stdout + proc.stderr)[-6000:]
            pytest.fail(f"{kind} book build failed (rc {proc.returncode}):\n{tail}")
        stamp.write_text(run_id)
    return html


@pytest.fixture(scope="session")
def student_html() -> Path:
    """The student book, built from clean with warnings as errors."""
    return _build("student")


@pytest.fixture(scope="session")
def instructor_html() -> Path:
    """The instructor book (solutions shown), built like the student book."""
    return _build("instructor")


# The slowest test files first, as measured by `make test-all` on 2 cores (whole files, each
# at least about a minute of a worker's time).  xdist hands out whole files (--dist loadfile)
# in collection order (--no-loadscope-reorder, see the Makefile), so a long file that started
# last would keep one worker busy while the others have nothing left.  test_reading builds
# the student and instructor books that test_book and test_apparatus then take as they are.
SLOW_FILES_FIRST = ("test_reading.py", "test_another_machine.py", "test_release.py", "test_pdf.py",
                    "test_determinism.py", "test_book.py", "test_webapp.py", "test_grading.py",
                    "test_sandbox.py", "test_batch.py", "test_public_checks.py", "test_table1_benchmark.py",
                    "test_time_limits.py", "test_metric.py", "test_install.py")


def pytest_collection_modifyitems(session, config, items):
    """Run the slowest files first (a stable sort: the order within a file is kept)."""
    rank = {name: i for i, name in enumerate(SLOW_FILES_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))

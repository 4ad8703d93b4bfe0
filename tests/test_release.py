"""``make release``: the student edition holds no solution and works on its own.

The edition is written by ``make release`` as the README spells it, then unpacked from its
zip into a clean folder, where its own commands set it up (a new ``.venv`` from the pinned
requirements) and ``lecturelib check``, ``make book`` and ``make lab`` run.
"""

from __future__ import annotations

import filecmp
import subprocess
import zipfile
from pathlib import Path

import pytest

from solutiontext import leaks_in
from test_lab import ENV, free_port, start_lab, stop_lab, wait_for_server

ROOT = Path(__file__).resolve().parent.parent
NAME = "ml-theory-course"

pytestmark = pytest.mark.full


def run(cmd, cwd, timeout=1200):
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=ENV)


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("release")
    proc = run(["make", "release", f"RELEASE={out}"], ROOT)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    return out


def files_under(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}


def test_release_holds_the_course_without_solutions(release):
    folder = release / NAME
    names = files_under(folder)
    for notebook in (ROOT / "chapters").glob("*.ipynb"):
        assert f"chapters/{notebook.name}" in names
    for notebook in (ROOT / "exercises").glob("*.ipynb"):
        assert f"exercises/{notebook.name}" in names
    for name in ("README.md", "Makefile", "requirements.txt", "pyproject.toml", "_config.yml", "_toc.yml",
                 "book/index.html", "lecturelib/__init__.py", "lecturelib/checks.py"):
        assert name in names, name
    for forbidden in ("solutions/", "tests/", "tools/", ".ci/", "CONTRIBUTING.md"):
        assert not any(n.startswith(forbidden) for n in names), forbidden
    # of the benchmarks, only the stored results that appendix B and chapter 12 print
    assert {n for n in names if n.startswith("benchmarks/")} == {
        "benchmarks/results.json", "benchmarks/table1.json"}
    makefile = (folder / "Makefile").read_text()
    assert "\nbook:" in makefile and "\nlab:" in makefile and "\ntest:" not in makefile


def test_release_has_no_solution_text_in_any_file(release):
    folder = release / NAME
    # lecturelib is public: it implements the course's algorithms, and a few of its lines
    # are also lines of an answer (the exercises forbid importing the module that answers
    # them).  It must be the library itself, file for file, and nothing else.
    library = filecmp.dircmp(ROOT / "lecturelib", folder / "lecturelib", ignore=["__pycache__"])
    assert not (library.left_only or library.right_only or library.diff_files)
    leaked = [leak for leak in leaks_in(folder) if not leak[0].startswith("lecturelib/")]
    assert not leaked, f"solution text in the release (file, source, line): {leaked[:3]}"


def test_release_zip_is_the_folder(release):
    folder = release / NAME
    with zipfile.ZipFile(release / f"{NAME}.zip") as archive:
        members = {n[len(NAME) + 1:] for n in archive.namelist() if not n.endswith("/")}
        assert members == files_under(folder)
        for name in ("README.md", "exercises/01-bayes.ipynb", "book/index.html"):
            assert archive.read(f"{NAME}/{name}") == (folder / name).read_bytes()


@pytest.fixture(scope="module")
def unpacked(release, tmp_path_factory) -> Path:
    """The zip unpacked into a clean folder and set up with its own ``make venv``."""
    where = tmp_path_factory.mktemp("student")
    with zipfile.ZipFile(release / f"{NAME}.zip") as archive:
        archive.extractall(where)
    course = where / NAME
    proc = run(["make", "venv"], course)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    return course


def test_release_check_runs_and_grading_is_refused(unpacked):
    proc = run([".venv/bin/lecturelib", "check", "exercises/07-pac.ipynb"], unpacked, timeout=600)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "q1: 0 of" in proc.stdout and "FAIL" in proc.stdout
    graded = run([".venv/bin/lecturelib", "grade", "exercises/07-pac.ipynb", "--assignment", "07-pac"], unpacked)
    assert graded.returncode == 2
    assert "instructor command" in graded.stderr and "lecturelib check" in graded.stderr
    assert "Traceback" not in graded.stderr and len(graded.stderr.strip().splitlines()) == 1


def test_release_builds_its_book(unpacked):
    proc = run(["make", "book"], unpacked)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    html = unpacked / "_build" / "html"
    assert (html / "chapters" / "01-bayes.html").is_file() and (html / "howto.html").is_file()
    assert not [leak for leak in leaks_in(html)], "the release's own book shows solution text"


def test_release_starts_jupyterlab(unpacked, tmp_path):
    port, log = free_port(), tmp_path / "lab.log"
    opts = "--no-browser --IdentityProvider.token=release"
    proc = start_lab(["make", "lab", f"LAB_PORT={port}", f"LAB_OPTS={opts}"], unpacked, log)
    try:
        wait_for_server(f"http://127.0.0.1:{port}/api/contents/exercises?token=release", proc, log)
    finally:
        stop_lab(proc)

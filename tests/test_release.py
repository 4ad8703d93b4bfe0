"""``make release``: the student edition holds no solution and works on its own.

The edition is written by ``make release`` (shipping the student book the book tests built,
``BOOK_HTML``, rather than building it again), then unpacked from its
zip into a clean folder, where its own commands set it up (a new ``.venv`` from the pinned
requirements) and ``lecturelib check``, ``make book`` and ``make lab`` run (all ``full``).

The release is built from the committed state: ``tools/release.py`` run on a temporary
clone with an answered exercise, a JupyterLab checkpoint or a stale exercise planted in
it refuses or leaves the planted file out (fast: no book is built).
"""

from __future__ import annotations

import filecmp
import importlib.util
import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from solutiontext import leaks_in
from test_lab import ENV, free_port, start_lab, stop_lab, wait_for_server

ROOT = Path(__file__).resolve().parent.parent
NAME = "ml-theory-course"



def run(cmd, cwd, timeout=1200, env=ENV):
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


# pip byte-compiles every module it installs (about a minute of CPU for the course's
# packages); the release's commands import a small part, which Python compiles and caches
# when it first imports it (none of them runs Python with -B, as the grader's sandbox does).
# pip reads a --no-... option's variable inverted: PIP_NO_COMPILE=0 is --no-compile.
NO_COMPILE = {**ENV, "PIP_NO_COMPILE": "0"}


@pytest.fixture(scope="module")
def release(tmp_path_factory, student_html) -> Path:
    """``make release``, shipping the student book the other tests built and read (``make
    release`` alone runs ``make book`` first, which is that build; the unpacked edition's
    own ``make book`` is tested below)."""
    out = tmp_path_factory.mktemp("release")
    proc = run(["make", "release", f"RELEASE={out}", f"BOOK_HTML={student_html}"], ROOT)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    return out


def files_under(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}


@pytest.mark.full
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
    for forbidden in ("solutions/", "tests/", "tools/", ".ci/", "CONTRIBUTING.md",
                      "lecturelib/grading/webapp/"):  # the instructors' grading app
        assert not any(n.startswith(forbidden) for n in names), forbidden
    # of the benchmarks, only the stored results that appendix B and chapter 12 print
    assert {n for n in names if n.startswith("benchmarks/")} == {
        "benchmarks/results.json", "benchmarks/table1.json"}
    makefile = (folder / "Makefile").read_text()
    assert "\nbook:" in makefile and "\nlab:" in makefile and "\ntest:" not in makefile


@pytest.mark.full
def test_release_has_no_solution_text_in_any_file(release):
    folder = release / NAME
    # lecturelib is public: it implements the course's algorithms, and a few of its lines
    # are also lines of an answer (the exercises forbid importing the module that answers
    # them).  It must be the library itself, file for file, and nothing else.
    library = filecmp.dircmp(ROOT / "lecturelib", folder / "lecturelib", ignore=["__pycache__"])
    assert not (library.left_only or library.right_only or library.diff_files)
    leaked = [leak for leak in leaks_in(folder) if not leak[0].startswith("lecturelib/")]
    assert not leaked, f"solution text in the release (file, source, line): {leaked[:3]}"


@pytest.mark.full
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
    proc = run(["make", "venv"], course, env=NO_COMPILE)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    return course


@pytest.mark.full
def test_release_check_runs_and_grading_is_refused(unpacked):
    proc = run([".venv/bin/lecturelib", "check", "exercises/07-pac.ipynb"], unpacked, timeout=600)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "q1: 0 of" in proc.stdout and "FAIL" in proc.stdout
    graded = run([".venv/bin/lecturelib", "grade", "exercises/07-pac.ipynb", "--assignment", "07-pac"], unpacked)
    assert graded.returncode == 2
    assert "instructor command" in graded.stderr and "lecturelib check" in graded.stderr
    assert "Traceback" not in graded.stderr and len(graded.stderr.strip().splitlines()) == 1
    (unpacked / "gradebook.sqlite").write_bytes(b"")
    served = run([".venv/bin/lecturelib", "gradebook", "serve", "--gradebook", "gradebook.sqlite"], unpacked)
    assert served.returncode == 2 and "not part of this edition" in served.stderr
    assert "Traceback" not in served.stderr


@pytest.mark.full
def test_release_builds_its_book(unpacked):
    proc = run(["make", "book"], unpacked)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    html = unpacked / "_build" / "html"
    assert (html / "chapters" / "01-bayes.html").is_file() and (html / "howto.html").is_file()
    assert not [leak for leak in leaks_in(html)], "the release's own book shows solution text"


@pytest.mark.full
def test_release_starts_jupyterlab(unpacked, tmp_path):
    port, log = free_port(), tmp_path / "lab.log"
    opts = "--no-browser --IdentityProvider.token=release"
    proc = start_lab(["make", "lab", f"LAB_PORT={port}", f"LAB_OPTS={opts}"], unpacked, log)
    try:
        wait_for_server(f"http://127.0.0.1:{port}/api/contents/exercises?token=release", proc, log)
    finally:
        stop_lab(proc)


# ------------------------------------------------------------------ from the committed state


@pytest.fixture()
def clone(tmp_path):
    """A clone of the course's committed state and ``tools/release.py`` pointed at it."""
    where = tmp_path / "course"
    proc = subprocess.run(["git", "clone", "--quiet", "--no-checkout", str(ROOT), str(where)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    paths = [".gitignore", "README.md", "Makefile", "course.mk", "requirements.txt", "pyproject.toml", "_config.yml",
             "_toc.yml", "intro.md", "howto.md", "notation.md", "bibliography.md", "genindex.md",
             "references.bib", "benchmarks/results.json", "benchmarks/table1.json", "lecturelib",
             "exercises", "solutions", "reference", "_static", "chapters", "tools"]
    proc = subprocess.run(["git", "-C", str(where), "checkout", "--quiet", "HEAD", "--", *paths],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    spec = importlib.util.spec_from_file_location("release_under_test", ROOT / "tools" / "release.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.ROOT = where
    html = tmp_path / "html"
    html.mkdir()
    (html / "index.html").write_text("<html></html>")
    return module, where, html


def answer(path: Path):
    path.write_text(path.read_text().replace("raise NotImplementedError", "return 42"))


def test_release_refuses_a_working_tree_that_differs_from_the_commit(clone, tmp_path):
    release, course, html = clone
    answer(course / "exercises" / "01-bayes.ipynb")
    checkpoints = course / "exercises" / ".ipynb_checkpoints"
    checkpoints.mkdir()
    (checkpoints / "01-bayes-checkpoint.ipynb").write_bytes((course / "exercises" / "01-bayes.ipynb").read_bytes())
    (course / "exercises" / "scratch.ipynb").write_text("{}")
    with pytest.raises(SystemExit) as refused:
        release.write_release(tmp_path / "out", html)
    message = str(refused.value)
    assert message.startswith("release: ") and "\n" not in message
    assert "exercises/01-bayes.ipynb" in message and "exercises/scratch.ipynb" in message
    assert not (tmp_path / "out" / f"{NAME}.zip").exists()

    # the checkpoint alone (ignored by git) is refused too: the book is built from the working tree
    subprocess.run(["git", "-C", str(course), "checkout", "--quiet", "HEAD", "--", "exercises"], check=True)
    os.unlink(course / "exercises" / "scratch.ipynb")
    with pytest.raises(SystemExit) as refused:
        release.write_release(tmp_path / "out", html)
    message = str(refused.value)
    assert message.startswith("release: ") and "\n" not in message
    assert "exercises/.ipynb_checkpoints" in message

    shutil.rmtree(checkpoints)
    folder = release.write_release(tmp_path / "out", html)
    with zipfile.ZipFile(tmp_path / "out" / f"{NAME}.zip") as archive:
        assert not [n for n in archive.namelist() if ".ipynb_checkpoints" in n]
        assert f"{NAME}/exercises/01-bayes.ipynb" in archive.namelist()
    assert (folder / "exercises" / "01-bayes.ipynb").read_bytes() == (
        course / "exercises" / "01-bayes.ipynb").read_bytes()


def make_release(course: Path, out: Path):
    """``make release`` as the README spells it, in ``course``, with this checkout's .venv
    (``-o``: never rebuilt there)."""
    return run(["make", "-o", ".venv/.installed", "release", f"BIN={ROOT / '.venv' / 'bin'}",
                f"RELEASE={out}"], course, timeout=300)


@pytest.mark.parametrize("planted", ["answered exercise", "checkpoint"])
def test_make_release_refuses_in_one_line_before_building_anything(clone, tmp_path, planted):
    release, course, html = clone
    exercise = course / "exercises" / "01-bayes.ipynb"
    if planted == "checkpoint":
        (course / "exercises" / ".ipynb_checkpoints").mkdir()
        shutil.copy(exercise, course / "exercises" / ".ipynb_checkpoints" / "01-bayes-checkpoint.ipynb")
    else:
        answer(exercise)
    proc = make_release(course, tmp_path / "out")
    assert proc.returncode != 0
    refusals = [line for line in proc.stderr.splitlines() if line.startswith("release: ")]
    assert len(refusals) == 1, proc.stderr
    assert ("exercises/01-bayes.ipynb" if planted != "checkpoint" else "exercises/.ipynb_checkpoints") in refusals[0]
    assert "Traceback" not in proc.stderr and "jupyter-book" not in proc.stdout
    assert not (course / "_build").exists() and not (tmp_path / "out").exists()


def test_release_refuses_committed_exercises_that_assign_would_not_write(clone, tmp_path):
    release, course, html = clone
    answer(course / "exercises" / "02-maxent.ipynb")
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    subprocess.run(["git", "-C", str(course), "commit", "--quiet", "-m", "answered",
                    "--", "exercises/02-maxent.ipynb"], check=True, env=env)
    with pytest.raises(SystemExit) as refused:
        release.write_release(tmp_path / "out", html)
    message = str(refused.value)
    assert "exercises/02-maxent.ipynb" in message and "lecturelib assign" in message

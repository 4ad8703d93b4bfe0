"""The installable parts: ``pip install lecturelib`` is the library a reader needs to run the
chapters, and the ``lecturelib`` command names the extra it is missing.

The everyday tier checks the package's metadata and the command's one-line refusal; the
full tier (``make test-all``) installs the package without extras into a new virtual
environment, as a reader would, imports every module a chapter uses and runs chapter 1.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from lecturelib.grading.cli import missing_extra_message

ROOT = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def requirement_names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=!\[ ;]", r, maxsplit=1)[0].lower() for r in requirements}


def chapter_imports() -> tuple[set[str], set[str]]:
    """The top-level packages and the ``lecturelib`` modules the chapters import."""
    packages, modules = set(), set()
    for path in sorted((ROOT / "chapters").glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] != "code":
                continue
            for node in ast.walk(ast.parse("".join(cell["source"]))):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module:
                    names = [node.module]
                    if node.module == "lecturelib":
                        modules |= {alias.name for alias in node.names}
                else:
                    continue
                packages |= {name.split(".")[0] for name in names}
                modules |= {name.split(".")[1] for name in names if name.startswith("lecturelib.")}
    return packages, modules


# PyPI names of the packages the chapters import, where they differ from the import name.
DISTRIBUTION = {"sklearn": "scikit-learn"}


def test_the_core_install_brings_what_the_chapters_import_and_nothing_for_grading():
    core = requirement_names(PROJECT["dependencies"])
    packages, _ = chapter_imports()
    third_party = {p for p in packages if p not in sys.stdlib_module_names and p != "lecturelib"}
    assert {DISTRIBUTION.get(p, p) for p in third_party} <= core
    extras = PROJECT["optional-dependencies"]
    assert set(extras) >= {"grading", "book", "test"}
    for heavy in ("tornado", "distributed", "nbclient", "jupyter-book", "pytest"):
        assert heavy not in core, heavy
    assert {"tornado", "nbclient", "distributed"} <= requirement_names(extras["grading"])
    assert "jupyter-book" in requirement_names(extras["book"])


def test_every_pinned_requirement_belongs_to_the_core_or_an_extra():
    pinned = {line.split("==")[0].lower() for line in (ROOT / "requirements.txt").read_text().splitlines()
              if "==" in line and not line.startswith("#")}
    declared = requirement_names(PROJECT["dependencies"])
    for requirements in PROJECT["optional-dependencies"].values():
        declared |= requirement_names(requirements)
    # pinned only because another package needs them at a tested version
    transitive = {"docutils", "myst-parser", "sphinx-book-theme", "pydata-sphinx-theme", "execnet",
                  "clarabel", "scs", "mpmath", "jsonschema"}
    assert pinned - declared - transitive == set()


def test_the_command_names_the_missing_extra_in_one_line():
    line = missing_extra_message("tornado.web")
    assert "\n" not in line and "pip install 'lecturelib[grading]'" in line and "tornado" in line
    assert "lecturelib[book]" in missing_extra_message("sphinx.application")


def _install_core(tmp_path: Path) -> Path:
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "lecturelib", source / "lecturelib",
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    # --no-compile: Python compiles (and caches) the modules the test imports, not all of them
    proc = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                           "--no-compile", str(source)], capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return python


def _stored_prints(notebook: Path) -> list[str]:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return ["".join(out["text"]) for cell in cells if cell["cell_type"] == "code"
            for out in cell.get("outputs", []) if out.get("output_type") == "stream"
            and out.get("name") == "stdout"]


@pytest.mark.full
def test_pip_install_without_extras_imports_every_chapter_module_and_runs_chapter_one(tmp_path):
    python = _install_core(tmp_path)
    env = {**os.environ, "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "PYTHONPATH": ""}
    _, modules = chapter_imports()
    assert len(modules) >= 10
    probe = ("import importlib, sys\n"
             f"for name in {sorted(modules)!r}:\n"
             "    importlib.import_module('lecturelib.' + name)\n"
             "for extra in ('tornado', 'nbclient', 'sphinx', 'pytest', 'distributed'):\n"
             "    assert importlib.util.find_spec(extra) is None, extra\n"
             "import lecturelib; print(lecturelib.__file__)\n")
    proc = subprocess.run([str(python), "-c", probe], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert str(tmp_path / "venv") in proc.stdout  # the installed copy, not this checkout

    chapter = ROOT / "chapters" / "01-bayes.ipynb"
    cells = json.loads(chapter.read_text(encoding="utf-8"))["cells"]
    script = "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    (tmp_path / "chapter1.py").write_text(script, encoding="utf-8")
    proc = subprocess.run([str(python), "chapter1.py"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for printed in _stored_prints(chapter):
        assert printed in proc.stdout, printed

    # the command is installed, and without the grading extra it says so in one line
    proc = subprocess.run([str(python.parent / "lecturelib"), "grade", "x.ipynb", "--assignment", "01-bayes"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "pip install 'lecturelib[grading]'" in proc.stderr, proc.stderr

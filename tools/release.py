"""Write the student edition of the course: a folder and a zip, with no solution anywhere.

Usage: python tools/release.py OUTDIR [BOOK]   (``make release``; run after ``make book``)
       python tools/release.py --check         (every refusal below, before the book is built)

BOOK is the rendered student book to ship (default ``_build/html``, where ``make book``
writes it; ``make release BOOK_HTML=DIR`` ships a book built elsewhere, as the tests do).

The edition holds the chapters (as the student book offers them: the solutions of their
short exercises folded, those a graded set asks again removed), the exercise notebooks,
``lecturelib``, the pinned requirements, the student targets of the Makefile
(``course.mk``), the book's sources (with the pages of the library reference), the
rendered student book (``book/``) and a README made of the course README's "For
students" section.  It never holds ``solutions/``, the tests,
the benchmark scripts or the instructor's tools; of ``benchmarks/`` it holds only the two
result files that pages print (appendix B and chapter 12 read them).

It is built from the committed state (``git archive HEAD``), never from the working tree,
and refused, with one line, when a shipped path has uncommitted changes, untracked
files or JupyterLab checkpoints (an exercise tried in JupyterLab, say), or when the committed ``exercises/`` is not
what ``lecturelib assign`` writes from the committed ``solutions/``.  Files git ignores
(``.ipynb_checkpoints/``, ``__pycache__/``) are never shipped.
"""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from lecturelib.book.edition import readme_section, withheld_solutions, write_student_notebook
from lecturelib.grading.core.exercise import assign
from lecturelib.grading.core.notebook import GradingError

ROOT = Path(__file__).resolve().parent.parent

NAME = "ml-theory-course"
COPIED = ["requirements.txt", "pyproject.toml", "_config.yml", "_toc.yml", "intro.md", "howto.md",
          "notation.md", "bibliography.md", "genindex.md", "references.bib"]
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
# Stored benchmark results that pages print: appendix B (results.json), chapter 12 (table1.json).
PRINTED_RESULTS = ["benchmarks/results.json", "benchmarks/table1.json"]
FOLDERS = ["lecturelib", "exercises", "reference", "_static", "chapters"]
# What the edition is made of (solutions/ only to check exercises/; it is never shipped).
SOURCES = [*COPIED, "course.mk", "README.md", *PRINTED_RESULTS, *FOLDERS, "solutions"]


def _git(root: Path, *args) -> bytes:
    proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True)
    if proc.returncode != 0:
        reason = proc.stderr.decode(errors="replace").strip().splitlines()
        raise SystemExit(f"release: git {args[0]} failed in {root}: {reason[-1] if reason else proc.returncode}"
                         " (the release is built from the committed state of a git checkout)")
    return proc.stdout


def _listed(paths, limit=8) -> str:
    paths = sorted(paths)
    more = f" and {len(paths) - limit} more" if len(paths) > limit else ""
    return ", ".join(paths[:limit]) + more


def check_working_tree(root: Path) -> None:
    """Refuse (``SystemExit``, one line) a working tree that differs from the commit in a
    shipped path, or holds JupyterLab checkpoints there: the book is built from the working
    tree, so it would not be the commit's book (``make release`` calls this first)."""
    status = _git(root, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", *SOURCES)
    changed = [entry[3:].decode(errors="replace") for entry in status.split(b"\0") if entry[2:3] == b" "]
    if changed:
        raise SystemExit(f"release: uncommitted changes or untracked files in shipped paths "
                         f"(commit or remove them; the release is the commit): {_listed(changed)}")
    checkpoints = [path.relative_to(root).as_posix() for folder in FOLDERS
                   for path in (root / folder).rglob(".ipynb_checkpoints") if path.is_dir()]
    if checkpoints:
        raise SystemExit(f"release: JupyterLab checkpoints in shipped folders (copies of notebooks "
                         f"worked on in this checkout; remove them): {_listed(checkpoints)}")


def committed_sources(root: Path, into: Path) -> Path:
    """The committed state of :data:`SOURCES` unpacked in ``into``; refused (``SystemExit``,
    one line) by :func:`check_working_tree`, or when exercises/ is stale."""
    check_working_tree(root)
    archive = _git(root, "archive", "--format=tar", "HEAD", "--", *SOURCES)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    solutions = sorted((into / "solutions").glob("*.ipynb"))
    stale = [f"exercises/{p.name}" for p in assign(solutions, into / "exercises", check=True)]
    made = {p.name for p in solutions}
    stale += [f"exercises/{p.name}" for p in (into / "exercises").glob("*.ipynb") if p.name not in made]
    if stale:
        raise SystemExit(f"release: the committed exercises/ is not what `lecturelib assign` writes "
                         f"from solutions/ (run make assign and commit): {_listed(stale)}")
    return into


def student_readme(readme: str) -> str:
    title = readme.splitlines()[0].lstrip("# ").strip()
    return (f"# {title}: student edition\n\n"
            "This is the student edition of the course: the chapters, the exercise sets, the\n"
            "`lecturelib` library and the book (already rendered in `book/index.html`), without\n"
            "the solutions.\n\n"
            f"{readme_section(readme, 'For students')}\n")


GRADING_APP = "lecturelib/grading/webapp"  # the instructors' grading app: never shipped


def drop_grading_app(target: Path) -> None:
    """Remove the grading web app and its package from the edition (``lecturelib gradebook
    serve`` then says the app is not part of this edition)."""
    shutil.rmtree(target / GRADING_APP)
    pyproject = target / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    package = '"' + GRADING_APP.replace("/", ".") + '"'
    text = text.replace(", " + package + "]", "]")
    text = re.sub(r"^" + re.escape(package) + r" = \[[^\]]*\]\n", "", text, flags=re.M)
    # a package-data table left empty goes too
    text = re.sub(r"\n\[tool\.setuptools\.package-data\]\n(?=\n|\[|\Z)", "\n", text)
    if package in text:
        raise SystemExit(f"release: cannot remove {package} from pyproject.toml (its form changed)")
    pyproject.write_text(text, encoding="utf-8")


def write_release(out: Path, html: Path) -> Path:
    """Write ``out/NAME`` and ``out/NAME.zip`` from the committed state; return the folder."""
    if not (html / "index.html").is_file():
        raise SystemExit(f"release: no student book in {html} (run make book first)")
    with tempfile.TemporaryDirectory(prefix="release-sources-") as scratch:
        return _write(committed_sources(ROOT, Path(scratch)), out, html)


def _write(src: Path, out: Path, html: Path) -> Path:
    target = out / NAME
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    for name in COPIED:
        shutil.copy2(src / name, target / name)
    shutil.copy2(src / "course.mk", target / "Makefile")
    (target / "benchmarks").mkdir()
    for name in PRINTED_RESULTS:
        shutil.copy2(src / name, target / name)
    (target / "README.md").write_text(student_readme((src / "README.md").read_text(encoding="utf-8")),
                                      encoding="utf-8")
    for folder in ("lecturelib", "exercises", "reference", "_static"):
        shutil.copytree(src / folder, target / folder, ignore=IGNORED)
    drop_grading_app(target)
    withheld = withheld_solutions(src / "_config.yml")  # as the student book does
    for chapter in sorted((src / "chapters").glob("*.ipynb")):
        write_student_notebook(chapter, target / "chapters" / chapter.name, withheld)
    shutil.copytree(html, target / "book", ignore=shutil.ignore_patterns(".buildinfo"))
    archive = shutil.make_archive(str(out / NAME), "zip", root_dir=out, base_dir=NAME)
    print(f"student edition: {target}/ and {archive}")
    return target


def check_only() -> None:
    """``--check``: every refusal of the release, before anything is built."""
    with tempfile.TemporaryDirectory(prefix="release-check-") as scratch:
        committed_sources(ROOT, Path(scratch))


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        raise SystemExit(__doc__)
    try:
        if sys.argv[1] == "--check":
            check_only()
            raise SystemExit(0)
        write_release(Path(sys.argv[1]), Path(sys.argv[2]) if len(sys.argv) == 3 else ROOT / "_build" / "html")
    except GradingError as exc:
        raise SystemExit(f"release: {exc}") from None

"""Write the student edition of the course: a folder and a zip, with no solution anywhere.

Usage: python tools/release.py OUTDIR      (``make release``; run after ``make book``)

The edition holds the chapters (their ``{solution}`` blocks removed), the exercise
notebooks, ``lecturelib``, the pinned requirements, the student targets of the Makefile
(``course.mk``), the book's sources (with the pages of the library reference), the rendered student book (``book/``) and a README made
of the course README's "For students" section.  It never holds ``solutions/``, the tests,
the benchmark scripts or the instructor's tools; of ``benchmarks/`` it holds only the two
result files that pages print (appendix B and chapter 12 read them).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from lecturelib.grading.edition import readme_section, write_student_notebook
from lecturelib.grading.notebook import GradingError

ROOT = Path(__file__).resolve().parent.parent

NAME = "ml-theory-course"
COPIED = ["requirements.txt", "pyproject.toml", "_config.yml", "_toc.yml", "intro.md", "howto.md",
          "notation.md", "bibliography.md", "genindex.md", "references.bib"]
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
# Stored benchmark results that pages print: appendix B (results.json), chapter 12 (table1.json).
PRINTED_RESULTS = ["benchmarks/results.json", "benchmarks/table1.json"]


def student_readme(readme: str) -> str:
    title = readme.splitlines()[0].lstrip("# ").strip()
    return (f"# {title}: student edition\n\n"
            "This is the student edition of the course: the chapters, the exercise sets, the\n"
            "`lecturelib` library and the book (already rendered in `book/index.html`), without\n"
            "the solutions.\n\n"
            f"{readme_section(readme, 'For students')}\n")


def write_release(out: Path, html: Path) -> Path:
    """Write ``out/NAME`` and ``out/NAME.zip``; return the folder."""
    if not (html / "index.html").is_file():
        raise SystemExit(f"release: no student book in {html} (run make book first)")
    target = out / NAME
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    for name in COPIED:
        shutil.copy2(ROOT / name, target / name)
    shutil.copy2(ROOT / "course.mk", target / "Makefile")
    (target / "benchmarks").mkdir()
    for name in PRINTED_RESULTS:
        shutil.copy2(ROOT / name, target / name)
    (target / "README.md").write_text(student_readme((ROOT / "README.md").read_text(encoding="utf-8")),
                                      encoding="utf-8")
    shutil.copytree(ROOT / "lecturelib", target / "lecturelib", ignore=IGNORED)
    shutil.copytree(ROOT / "exercises", target / "exercises", ignore=IGNORED)
    shutil.copytree(ROOT / "reference", target / "reference", ignore=IGNORED)
    shutil.copytree(ROOT / "_static", target / "_static", ignore=IGNORED)
    for chapter in sorted((ROOT / "chapters").glob("*.ipynb")):
        write_student_notebook(chapter, target / "chapters" / chapter.name)
    shutil.copytree(html, target / "book", ignore=shutil.ignore_patterns(".buildinfo"))
    archive = shutil.make_archive(str(out / NAME), "zip", root_dir=out, base_dir=NAME)
    print(f"student edition: {target}/ and {archive}")
    return target


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    try:
        write_release(Path(sys.argv[1]), ROOT / "_build" / "html")
    except GradingError as exc:
        raise SystemExit(f"release: {exc}") from None

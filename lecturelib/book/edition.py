"""The student edition: notebooks without solutions, for the book's downloads and the release.

Two kinds of solution text exist in the course: the answer code of ``solutions/`` (which
``lecturelib assign`` already removes from ``exercises/``), and the ``{solution}`` blocks of
the chapters' short exercises (MyST directives that the student book hides with
``hide_solutions``).  :func:`student_notebook` removes the second kind, so that a chapter
downloaded from the student book or shipped in ``make release`` holds what its page shows.

Loaded by the book as a Sphinx extension (``extra_extensions`` in ``_config.yml``).  The
chapters' short exercises are not graded, so the book shows their ``{solution}`` blocks in
both editions (as closed dropdowns) and the chapters' downloads keep them, as their pages
do.  In the student edition (``lecturelib_edition: student``, the default; the instructor
configuration of ``tools/bookconfig.py`` sets ``instructor``) every notebook the book
offers for download (``_sources/``) is checked once the build is done: one that holds
answer code of ``solutions/`` fails the build.  An in-chapter exercise that a graded
exercise set asks again (``lecturelib_graded_in_chapter``, a list of exercise labels in
``_config.yml``) keeps its solution out of the student edition: off its page, out of the
PDF and out of its chapter's download.  The release (``make release``) ships the chapters
as the student book offers them: with their ``{solution}`` blocks but those of the
withheld exercises (:func:`student_notebook`, :func:`withheld_solutions`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
from docutils import nodes

from ..grading.core.notebook import BEGIN, GradingError

SOLUTION_OPENING = re.compile(r"^(?P<fence>`{3,}|:{3,})\{solution\}")


def strip_solution_blocks(markdown: str, targets=None) -> str:
    """``markdown`` without its ``{solution}`` directives (opening fence to closing fence).

    With ``targets`` (a set of exercise labels), only the solutions of those exercises are
    removed.  A fence closes at the first line made only of at least as many of the same
    fence characters (CommonMark's rule; an inner code block's opening line has an info
    string and does not close it).
    """
    out, fence = [], None
    for line in markdown.split("\n"):
        if fence is None:
            match = SOLUTION_OPENING.match(line)
            if match and (targets is None or line[match.end():].strip() in targets):
                fence = match.group("fence")
                continue
            out.append(line)
        elif set(line.strip()) == {fence[0]} and len(line.strip()) >= len(fence):
            fence = None
    if fence is not None:
        raise GradingError("a {solution} block is never closed")
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip("\n")


def student_notebook(nb, withheld=None) -> nbformat.NotebookNode:
    """A copy of ``nb`` without the ``{solution}`` blocks of the ``withheld`` exercises (a
    set of labels; ``None``: every block) in its Markdown cells.

    Refuses a notebook that still holds answer code (a ``# BEGIN SOLUTION`` line): that is
    a solution notebook, which has no student version but its exercise.
    """
    nb = nbformat.from_dict(json.loads(json.dumps(nb)))
    for cell in nb.cells:
        if cell.cell_type == "code" and any(line.strip() == BEGIN for line in cell.source.splitlines()):
            raise GradingError("the notebook holds answer code: publish its exercise notebook instead")
        if cell.cell_type == "markdown" and "{solution}" in cell.source:
            cell.source = strip_solution_blocks(cell.source, withheld)
    return nb


def withheld_solutions(config: Path) -> set[str]:
    """The exercise labels of ``lecturelib_graded_in_chapter`` in a book's ``_config.yml``:
    in-chapter exercises that a graded set asks again, whose solutions the student
    edition withholds."""
    import yaml

    data = yaml.safe_load(Path(config).read_text(encoding="utf-8")) or {}
    labels = (data.get("sphinx") or {}).get("config", {}).get("lecturelib_graded_in_chapter", [])
    if not (isinstance(labels, list) and all(isinstance(x, str) for x in labels)):
        raise GradingError(f"{config}: lecturelib_graded_in_chapter must be a list of exercise labels")
    return set(labels)


def readme_section(readme: str, title: str) -> str:
    """The body of a README's ``## title`` section (up to the next ``## `` heading).

    The student edition's README is the course README's "For students" section.
    """
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", readme, re.M | re.S)
    if match is None:
        raise GradingError(f"the README has no '## {title}' section")
    return match.group(1).strip("\n")


def write_student_notebook(source: Path, target: Path, withheld=None) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    nb = nbformat.read(source, as_version=4)
    target.write_text(nbformat.writes(student_notebook(nb, withheld)) + "\n", encoding="utf-8")


# --------------------------------------------------------------------------------------
# Sphinx: the book's notebook downloads
# --------------------------------------------------------------------------------------


EDITIONS = ("student", "instructor")


def holds_answer_code(nb) -> bool:
    """Whether a notebook holds answer code of ``solutions/`` (a ``# BEGIN SOLUTION`` line)."""
    return any(cell.cell_type == "code" and any(line.strip() == BEGIN for line in cell.source.splitlines())
               for cell in nb.cells)


def _student_edition(app) -> bool:
    if app.config.lecturelib_edition not in EDITIONS:
        raise GradingError(f"lecturelib_edition must be one of {EDITIONS}")
    return app.config.lecturelib_edition == "student"


def _withhold_graded_solutions(app, doctree, docname) -> None:
    """In the student edition, drop the solutions of ``lecturelib_graded_in_chapter`` exercises."""
    withheld = set(app.config.lecturelib_graded_in_chapter)
    if not withheld or not _student_edition(app):
        return
    for node in list(doctree.findall(nodes.Element)):
        if type(node).__name__ == "solution_node" and node.get("target_label") in withheld:
            node.parent.remove(node)


def _check_downloads(app, exception) -> None:
    """The student edition's downloads: no answer code, no withheld solution (see the module)."""
    if exception is not None or app.builder.format != "html" or not _student_edition(app):
        return
    withheld = set(app.config.lecturelib_graded_in_chapter)
    sources = Path(app.outdir) / "_sources"
    for path in sorted(sources.rglob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        if holds_answer_code(nb):
            raise GradingError(f"the student book offers answer code for download: {path.relative_to(sources)}")
        if withheld and any(c.cell_type == "markdown" and "{solution}" in c.source for c in nb.cells):
            for cell in nb.cells:
                if cell.cell_type == "markdown" and "{solution}" in cell.source:
                    cell.source = strip_solution_blocks(cell.source, withheld)
            path.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")


def setup(app):
    app.add_config_value("lecturelib_edition", "student", "env")
    app.add_config_value("lecturelib_graded_in_chapter", [], "env")
    app.connect("doctree-resolved", _withhold_graded_solutions)
    app.connect("build-finished", _check_downloads)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

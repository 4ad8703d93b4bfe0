"""The student edition: notebooks without solutions, for the book's downloads and the release.

Two kinds of solution text exist in the course: the answer code of ``solutions/`` (which
``lecturelib assign`` already removes from ``exercises/``), and the ``{solution}`` blocks of
the chapters' short exercises (MyST directives that the student book hides with
``hide_solutions``).  :func:`student_notebook` removes the second kind, so that a chapter
downloaded from the student book or shipped in ``make release`` holds what its page shows.

Loaded by the book as a Sphinx extension (``extra_extensions`` in ``_config.yml``): with
``hide_solutions`` set, every notebook the book offers for download (``_sources/``) is
replaced by its student version once the build is done.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat

from .notebook import BEGIN, GradingError

SOLUTION_OPENING = re.compile(r"^(?P<fence>`{3,}|:{3,})\{solution\}")


def strip_solution_blocks(markdown: str) -> str:
    """``markdown`` without its ``{solution}`` directives (opening fence to closing fence).

    A fence closes at the first line made only of at least as many of the same fence
    characters (CommonMark's rule; an inner code block's opening line has an info string
    and does not close it).
    """
    out, fence = [], None
    for line in markdown.split("\n"):
        if fence is None:
            match = SOLUTION_OPENING.match(line)
            if match:
                fence = match.group("fence")
                continue
            out.append(line)
        elif set(line.strip()) == {fence[0]} and len(line.strip()) >= len(fence):
            fence = None
    if fence is not None:
        raise GradingError("a {solution} block is never closed")
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip("\n")


def student_notebook(nb) -> nbformat.NotebookNode:
    """A copy of ``nb`` with every ``{solution}`` block removed from its Markdown cells.

    Refuses a notebook that still holds answer code (a ``# BEGIN SOLUTION`` line): that is
    a solution notebook, which has no student version but its exercise.
    """
    nb = nbformat.from_dict(json.loads(json.dumps(nb)))
    for cell in nb.cells:
        if cell.cell_type == "code" and any(line.strip() == BEGIN for line in cell.source.splitlines()):
            raise GradingError("the notebook holds answer code: publish its exercise notebook instead")
        if cell.cell_type == "markdown" and "{solution}" in cell.source:
            cell.source = strip_solution_blocks(cell.source)
    return nb


def readme_section(readme: str, title: str) -> str:
    """The body of a README's ``## title`` section (up to the next ``## `` heading).

    The student edition's README is the course README's "For students" section.
    """
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", readme, re.M | re.S)
    if match is None:
        raise GradingError(f"the README has no '## {title}' section")
    return match.group(1).strip("\n")


def write_student_notebook(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    nb = nbformat.read(source, as_version=4)
    target.write_text(nbformat.writes(student_notebook(nb)) + "\n", encoding="utf-8")


# --------------------------------------------------------------------------------------
# Sphinx: the book's notebook downloads
# --------------------------------------------------------------------------------------


def _replace_downloads(app, exception) -> None:
    if exception is not None or app.builder.format != "html" or not getattr(app.config, "hide_solutions", False):
        return
    sources = Path(app.outdir) / "_sources"
    for path in sorted(sources.rglob("*.ipynb")):
        write_student_notebook(path, path)


def setup(app):
    app.connect("build-finished", _replace_downloads)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

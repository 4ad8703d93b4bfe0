"""What counts as solution text, and finding it in any file a student may get.

Solution text is what the student edition must not hold: (1) the answer code of
``solutions/`` (between the solution markers), (2) the Markdown cells of ``solutions/``
tagged ``solution``, (3) the ``{solution}`` blocks of the chapters' short exercises that a
graded set asks again (``lecturelib_graded_in_chapter`` in ``_config.yml``; the other
short exercises are not graded and show their solutions folded), and (4) the model
answers and rubric items of the written questions (CONTRIBUTING, "Written questions").
A line counts when it is distinctive (25 characters or more, not a comment) and does not
also appear in the public text (the chapters without their solution blocks and the
generated exercises): ``rng = np.random.default_rng(seed)`` gives nothing away.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from html import unescape
from pathlib import Path

from lecturelib.book.edition import SOLUTION_OPENING, strip_solution_blocks, withheld_solutions

ROOT = Path(__file__).resolve().parent.parent
MIN_CHARS = 25


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _source(cell) -> str:
    return "".join(cell["source"])


def answer_code_lines(path: Path) -> list[str]:
    """Distinctive lines of the answer code (between the solution markers)."""
    lines, inside = [], False
    for cell in _cells(path):
        if cell["cell_type"] != "code":
            continue
        for line in _source(cell).splitlines():
            if line.strip() == "# BEGIN SOLUTION":
                inside = True
            elif line.strip() == "# END SOLUTION":
                inside = False
            elif inside and len(line.strip()) >= MIN_CHARS and not line.strip().startswith("#"):
                lines.append(line.strip())
    return lines


def solution_block_lines(markdown: str, targets=None) -> list[str]:
    """Distinctive lines inside the ``{solution}`` blocks of a Markdown text (of the
    exercises labelled ``targets`` only, when given)."""
    kept = set(strip_solution_blocks(markdown, targets).splitlines())
    return [line.strip() for line in markdown.splitlines()
            if line not in kept and len(line.strip()) >= MIN_CHARS and not SOLUTION_OPENING.match(line)]


def _notebooks(folder: str) -> list[Path]:
    return sorted((ROOT / folder).glob("*.ipynb"))


@lru_cache(maxsize=None)
def public_text() -> str:
    parts = []
    for path in _notebooks("chapters") + _notebooks("exercises"):
        parts += [strip_solution_blocks(_source(c)) if c["cell_type"] == "markdown" else _source(c)
                  for c in _cells(path)]
    return "\n".join(parts)


@lru_cache(maxsize=None)
def solution_lines() -> tuple[tuple[str, str], ...]:
    """(where, line) for every distinctive line of solution text in the course."""
    found = []
    for path in _notebooks("solutions"):
        found += [(path.stem, line) for line in answer_code_lines(path)]
        for cell in _cells(path):
            if cell["cell_type"] == "markdown" and "solution" in cell["metadata"].get("tags", []):
                found += [(path.stem, ln.strip()) for ln in _source(cell).splitlines() if len(ln.strip()) >= MIN_CHARS]
            spec = cell["metadata"].get("grading")
            if cell["cell_type"] == "markdown" and isinstance(spec, dict) and spec.get("written"):
                found += [(path.stem, ln.strip()) for ln in _source(cell).splitlines() if len(ln.strip()) >= MIN_CHARS]
                found += [(path.stem, item["text"].strip()) for item in spec.get("rubric", [])
                          if len(item["text"].strip()) >= MIN_CHARS]
    withheld = withheld_solutions(ROOT / "_config.yml")
    for path in _notebooks("chapters"):
        for cell in _cells(path):
            if cell["cell_type"] == "markdown" and withheld:
                found += [(f"chapters/{path.stem}", line)
                          for line in solution_block_lines(_source(cell), withheld)]
    public = public_text()
    return tuple((where, line) for where, line in found if line not in public)


def readable_text(path: Path) -> str:
    """The text a reader or a program gets from ``path``: pages without markup, notebooks' cells."""
    raw = path.read_bytes().decode("utf-8", errors="ignore")
    if path.suffix == ".html":
        return unescape(re.sub(r"<[^>]+>", "", raw))
    if path.suffix == ".ipynb":
        nb = json.loads(raw)
        texts = [_source(c) for c in nb.get("cells", [])]
        texts += [json.dumps(c.get("metadata", {})) for c in nb.get("cells", [])]
        texts += ["".join(o.get("text", "")) for c in nb.get("cells", []) for o in c.get("outputs", [])]
        return "\n".join(texts) + "\n" + json.dumps(nb.get("metadata", {}))
    return raw


def leaks_in(folder: Path) -> list[tuple[str, str, str]]:
    """(file, where, line) for every solution line found in any file under ``folder``."""
    lines = solution_lines()
    found = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        text = readable_text(path)
        found += [(str(path.relative_to(folder)), where, line) for where, line in lines if line in text]
        if "# BEGIN SOLUTION" in text and path.suffix in (".ipynb", ".html", ".md", ".txt"):
            found.append((str(path.relative_to(folder)), "marker", "# BEGIN SOLUTION"))
    return found

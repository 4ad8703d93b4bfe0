"""The chapters' pages, as ``_toc.yml`` lists them.

A chapter is one notebook, or (chapters 5, 10 and 11) several: the chapter's first page,
whose title carries the chapter's number, lists its later pages under ``sections:``.  The
book numbers the figures, tables, equations and theorems of all its pages as one chapter
(``lecturelib.book.rendering.chapter_of``).  Tests that read the chapters as files use
``CHAPTER_FILES`` (every page); tests about a chapter as a whole use ``CHAPTERS`` (first
pages) and ``pages_of``.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def _chapter_entries():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    for part in toc.get("parts", []):
        for entry in part.get("chapters", []):
            if entry.get("file", "").startswith("chapters/"):
                yield entry


def _later(entry):
    for section in entry.get("sections", []):
        yield ROOT / f"{section['file']}.ipynb"
        yield from _later(section)


#: {first page: [first page, later pages...]} in reading order
PAGES = {ROOT / f"{entry['file']}.ipynb": [ROOT / f"{entry['file']}.ipynb", *_later(entry)]
         for entry in _chapter_entries()}
CHAPTERS = sorted(PAGES)
CHAPTER_FILES = sorted(page for pages in PAGES.values() for page in pages)
FIRST_PAGE = {page: first for first, pages in PAGES.items() for page in pages}


def pages_of(path: Path) -> list[Path]:
    """Every page of the chapter ``path`` belongs to, in reading order."""
    return PAGES[FIRST_PAGE[path]]


def is_later_page(path: Path) -> bool:
    return FIRST_PAGE[path] != path


def chapter_prefix(path: Path) -> str:
    """``chapters/05-spectral.ipynb`` -> ``ch05``; a later page has its chapter's."""
    return "ch" + FIRST_PAGE.get(path, path).stem.split("-")[0]


@lru_cache(maxsize=None)
def chapter_notebook(name: str) -> dict:
    """The chapter whose first page is ``chapters/<name>``, its pages' cells joined in order."""
    cells = []
    for page in pages_of(ROOT / "chapters" / name):
        cells += json.loads(page.read_text(encoding="utf-8"))["cells"]
    return {"cells": cells}

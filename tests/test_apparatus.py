"""The apparatus of a textbook: numbering per chapter, bibliography, index, search, corrections.

- Theorems, definitions, examples and numbered equations carry their chapter's number
  ("Theorem 4.2", "(4.3)", "Theorem A.1"), taken from the chapter title's own number; a
  chapter over several pages (chapter 10) numbers on from page to page.
- Every bibliography entry has a DOI or a URL and is cited somewhere in the book.
- The general index is in the navigation (Back matter) and linked from the intro, and has
  entries for the chapters' terms, not only for the library reference.
- The search page shows a text snippet under each hit, also for a book opened from disk,
  cut around the hit, with its formulas as plain text ("d < ∞": no holes where math was, no
  dollars or backslashes); each page is listed once; in the student book no snippet holds
  text of the graded exercises' solutions.  The index holds prose, not the code of notebook
  cells, and ranks the chapters first, the glossary pages after them: a search for
  "kernel", "VC dimension", "EM algorithm" or "margin" lists the chapter about it first.
- Every correction is one kind of box: ```{admonition} Correction to the notes``` with the
  option ``:class: correction`` (styled in ``_static/book.css``).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from html import unescape
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from docutils import nodes

from lecturelib.book.rendering import (SEARCH_SUMMARIES, _number_per_chapter, aligned_cells, article_text,
                                       chapter_number, math_text, numeric_columns, print_number)
from chapterpages import CHAPTER_FILES, FIRST_PAGE, PAGES, is_later_page
from test_book import EDITIONS, toc_files
from test_reading import browser  # noqa: F401  (the fixture: one headless Chromium for this module)

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = CHAPTER_FILES  # every page of every chapter
CAPTION_NUMBER = re.compile(r'<span class="caption-number">(\w+) ([0-9A-Z][0-9A-Z.]*) </span>')
EQUATION_NUMBER = re.compile(r'<span class="eqno">\(([^)<]*)\)')


def markdown_cells(path: Path) -> list[str]:
    return ["".join(c["source"]) for c in json.loads(path.read_text(encoding="utf-8"))["cells"]
            if c["cell_type"] == "markdown"]


def chapter_title(path: Path) -> str:
    first = markdown_cells(path)[0]
    return next(line for line in first.splitlines() if line.startswith("# "))[2:]


# ------------------------------------------------------------------ numbering per chapter

def test_chapter_number_is_read_from_the_title():
    assert chapter_number("4. Support vector machines") == "4"
    assert chapter_number("12. Metric learning") == "12"
    assert chapter_number("A. Constrained optimisation") == "A"
    assert chapter_number("Notation") is None
    assert chapter_number("3D geometry") is None


def test_every_chapter_title_carries_its_number():
    for path in CHAPTERS:
        number = chapter_number(chapter_title(path))
        if is_later_page(path):  # it continues its chapter: no number of its own
            assert number is None, f"{path.name}: title {chapter_title(path)!r}"
        else:
            assert number == path.stem.split("-")[0].lstrip("0"), f"{path.name}: title {chapter_title(path)!r}"
    assert any(len(pages) > 1 for pages in PAGES.values()), "no chapter over several pages"


def page_number(path: Path) -> str:
    """The number of the chapter the page ``path`` belongs to."""
    return chapter_number(chapter_title(FIRST_PAGE[path]))


def test_numbers_restart_in_every_chapter():
    """The hook renumbers Sphinx's book-wide counts page by page, prefixed with the chapter."""
    env = SimpleNamespace(
        titles={"chapters/04-svm": nodes.title(text="4. Support vector machines"),
                "chapters/A-optimisation": nodes.title(text="A. Constrained optimisation"),
                "notation": nodes.title(text="Notation")},
        toc_fignumbers={"chapters/04-svm": {"theorem": {"t1": (7,), "t2": (8,)}, "displaymath": {"e1": (3,)}},
                        "chapters/A-optimisation": {"theorem": {"t3": (30,)}},
                        "notation": {"table": {"x": (5,), "y": (6,)}}},
        toctree_includes={"intro": ["chapters/04-svm", "chapters/A-optimisation", "notation"]})
    changed = _number_per_chapter(None, env)
    assert env.toc_fignumbers["chapters/04-svm"] == {"theorem": {"t1": (4, 1), "t2": (4, 2)},
                                                     "displaymath": {"e1": (4, 1)}}
    assert env.toc_fignumbers["chapters/A-optimisation"] == {"theorem": {"t3": ("A", 1)}}
    assert env.toc_fignumbers["notation"] == {"table": {"x": (1,), "y": (2,)}}
    assert sorted(changed) == sorted(env.toc_fignumbers)


def test_numbers_run_on_over_the_pages_of_a_chapter():
    """A page without a number in its title, listed in a chapter page's toctree (its
    ``sections:``), continues that chapter's numbers; the next chapter starts again."""
    env = SimpleNamespace(
        titles={"intro": nodes.title(text="Book"),
                "ch10": nodes.title(text="10. Subspaces"),
                "ch10-b": nodes.title(text="Kernel CCA"),
                "ch10-c": nodes.title(text="SVM-2K"),
                "ch11": nodes.title(text="11. Hyperbolic PCA"),
                "notation": nodes.title(text="Notation")},
        # Sphinx's book-wide counts, and the pages in a dict order that is not the book's
        toc_fignumbers={"ch10-c": {"figure": {"f4": (9,)}, "table": {"t3": (4,)}},
                        "ch10": {"figure": {"f1": (5,), "f2": (6,)}, "theorem": {"a": (2,)}},
                        "ch10-b": {"figure": {"f3": (8,)}, "theorem": {"b": (3,)}},
                        "ch11": {"figure": {"g1": (10,)}},
                        "notation": {"table": {"x": (5,)}}},
        toctree_includes={"intro": ["ch10", "ch11", "notation"], "ch10": ["ch10-b", "ch10-c"]})
    _number_per_chapter(None, env)
    numbers = env.toc_fignumbers
    assert numbers["ch10"] == {"figure": {"f1": (10, 1), "f2": (10, 2)}, "theorem": {"a": (10, 1)}}
    assert numbers["ch10-b"] == {"figure": {"f3": (10, 3)}, "theorem": {"b": (10, 2)}}
    assert numbers["ch10-c"] == {"figure": {"f4": (10, 4)}, "table": {"t3": (10, 1)}}
    assert numbers["ch11"] == {"figure": {"g1": (11, 1)}}
    assert numbers["notation"] == {"table": {"x": (1,)}}


def small_book_over_two_pages(folder: Path) -> None:
    """Chapter 4 over two pages, listed as the book lists chapter 10's (``_toc.yml``'s
    ``sections:``, read by sphinx-external-toc as in Jupyter Book)."""
    (folder / "conf.py").write_text(
        'extensions = ["myst_parser", "sphinx_external_toc", "sphinx.ext.autodoc", "sphinx_proof", '
        '"lecturelib.book.rendering"]\nmyst_enable_extensions = ["dollarmath", "amsmath"]\n'
        'external_toc_path = "_toc.yml"\nroot_doc = "index"\nnumfig = True\n')
    (folder / "_toc.yml").write_text(
        "format: jb-book\nroot: index\nchapters:\n  - file: four\n    sections:\n"
        "      - file: four-more\n  - file: five\n")
    (folder / "index.md").write_text("# Book\n\nTwo chapters.\n")
    (folder / "four.md").write_text(
        "# 4. Kernels\n\n## Gram matrices\n\n$$ a = b $$ (four-a)\n\n"
        "```{table} First.\n:name: four-tab\n\n| x |\n|---|\n| 1 |\n```\n\n"
        "```{prf:theorem} T\n:label: four-thm\n\nx\n```\n")
    (folder / "four-more.md").write_text(
        "# More kernels\n\n```{only} html\nThe chapter continues.\n```\n\n## Mercer\n\n"
        "$$ c = d $$ (four-c)\n\n```{table} Second.\n:name: four-more-tab\n\n| y |\n|---|\n| 2 |\n```\n\n"
        "See {eq}`four-a`, {numref}`four-tab` and {prf:ref}`four-thm`.\n\n"
        "```{prf:theorem} U\n:label: four-more-thm\n\ny\n```\n\n## Summary\n\nz\n")
    (folder / "five.md").write_text("# 5. Clustering\n\n$$ e = f $$ (five-e)\n")


def test_a_chapter_over_two_pages_numbers_on_in_the_html(tmp_path):
    small_book_over_two_pages(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-q", "-W", "-b", "html", str(tmp_path),
                           str(tmp_path / "out")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    four, more, five = ((tmp_path / "out" / f"{page}.html").read_text(encoding="utf-8")
                        for page in ("four", "four-more", "five"))
    assert EQUATION_NUMBER.findall(four) == ["4.1"] and EQUATION_NUMBER.findall(more) == ["4.2"]
    assert EQUATION_NUMBER.findall(five) == ["5.1"]
    assert CAPTION_NUMBER.findall(four) == [("Table", "4.1"), ("Theorem", "4.1")]
    assert CAPTION_NUMBER.findall(more) == [("Table", "4.2"), ("Theorem", "4.2")]
    # references from the later page to the first page's items
    assert re.search(r'href="four\.html#[^"]*four-a">\(4\.1\)</a>', more)
    assert re.search(r'href="four\.html#four-tab"[^>]*>.*?Table 4\.1', more, re.S)
    assert re.search(r'href="four\.html#four-thm">Theorem 4\.1</a>', more)
    # the later page carries its chapter's number: heading, browser title, links to it
    assert re.search(r"<h1>4 More kernels", more) and "<title>4 More kernels" in more
    assert re.search(r'href="four-more\.html">4 More kernels</a>', four)
    assert re.search(r"<h1>4\. Kernels", four) and "4 4" not in four + more


def test_a_chapter_over_two_pages_is_one_chapter_in_the_latex(tmp_path):
    """The later page's sections are the chapter's sections, its numbers are not reset,
    and its title, which only opens the page in the HTML book, is left out."""
    small_book_over_two_pages(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-q", "-W", "-b", "latex", str(tmp_path),
                           str(tmp_path / "out")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    tex = next((tmp_path / "out").glob("*.tex")).read_text(encoding="utf-8")
    body = tex[tex.index(r"\chapter{4. Kernels}"):tex.index(r"\chapter{5. Clustering}")]
    assert re.findall(r"\\(section|subsection)\{([^}]*)\}", body) == [
        ("section", "Gram matrices"), ("section", "Mercer"), ("section", "Summary")]
    assert "More kernels" not in body and "The chapter continues" not in body
    chapter5 = body.index(r"\setcounter{secnumdepth}{-1}\setcounter{chapter}{5}")
    later = body[body.index(r"\section{Mercer}"):chapter5]
    assert r"\setcounter{table}{0}" not in later and r"\setcounter{equation}{0}" not in later
    assert r"\setcounter{secnumdepth}" not in later  # its sections are numbered too
    assert r"\setcounter{table}{0}" in body[chapter5:]
    assert r"\ref{\detokenize{four:four-tab}}" in later  # the reference reaches the first page
    assert "{Theorem 4.2 (U)}" in later and "{Theorem 4.1 (T)}" in body
    # a theorem is never split across pages (framed.sty does not split a minipage)
    for title in ("Theorem 4.1 (T)", "Theorem 4.2 (U)"):
        assert re.search(r"\\begin\{minipage\}\{\\linewidth\}\s*\\label\{[^}]*\}\s*"
                         rf"\\begin\{{sphinxadmonition\}}\{{note\}}\{{{re.escape(title)}\}}"
                         r"[^$]*?\\end\{sphinxadmonition\}\s*\\end\{minipage\}", body), title


def test_numeric_columns_of_a_table_are_recognised():
    rows = [["breast cancer", "50", "−0.204", "0.893 (0.022)", "59.4 ± 3.9", "52 / 10", "1.0e-02", "0.1, 0.2"],
            ["", "100", "-0.227", "0.724 (0.031)", "60.3 ± 2.8", "44", "2.4e-07", "0.3, 0.4"]]
    assert numeric_columns(rows) == [False, True, True, True, True, True, True, False]
    assert numeric_columns([["", "x"], ["", "1"]]) == [False, False]   # an empty column is not numeric


def test_numbers_are_printed_with_a_minus_and_powers_of_ten():
    assert print_number("-0.629571") == "\u22120.629571"
    assert print_number("1.268e+30") == "1.268\\(\\times 10^{30}\\)"
    assert print_number("6.8e-05") == "6.8\\(\\times 10^{-5}\\)"
    assert print_number("59.4 ± 3.9") == "59.4 ± 3.9"


def test_numbers_are_aligned_on_the_decimal_point():
    """Right-aligned cells whose parts after the integer digits all take the widest one's width."""
    cells = aligned_cells(["-0.5", "12.25", "3", ""])
    widest = "\\hphantom{\\vbox{\\hbox{.25}\\hbox{.5}}}"
    assert cells == ["\u22120\\rlap{.5}" + widest, "12\\rlap{.25}" + widest, "3\\rlap{}" + widest, ""]
    assert aligned_cells(["4", "32"]) == ["4", "32"]   # integers only: right alignment is enough


def test_a_small_book_numbers_equations_and_theorems_per_chapter(tmp_path):
    """Labelled equations and theorems of a two-chapter book, and the references to them."""
    (tmp_path / "conf.py").write_text(
        'extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx_proof", "lecturelib.book.rendering"]\n'
        'myst_enable_extensions = ["dollarmath", "amsmath"]\nroot_doc = "index"\n')
    (tmp_path / "index.md").write_text("# Book\n\n```{toctree}\nfour\nappendix\n```\n")
    (tmp_path / "four.md").write_text(
        "# 4. Kernels\n\n$$ a = b $$ (four-a)\n\n$$ c = d $$ (four-c)\n\n"
        "See {eq}`four-c` and {prf:ref}`four-thm`.\n\n```{prf:theorem} T\n:label: four-thm\n\nx\n```\n")
    (tmp_path / "appendix.md").write_text(
        "# A. Optimisation\n\n$$ e = f $$ (app-e)\n\n```{prf:theorem} U\n:label: app-thm\n\ny\n```\n")
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-q", "-b", "html", str(tmp_path), str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    four = (tmp_path / "out" / "four.html").read_text(encoding="utf-8")
    appendix = (tmp_path / "out" / "appendix.html").read_text(encoding="utf-8")
    assert EQUATION_NUMBER.findall(four) == ["4.1", "4.2"] and EQUATION_NUMBER.findall(appendix) == ["A.1"]
    assert CAPTION_NUMBER.findall(four) == [("Theorem", "4.1")] and CAPTION_NUMBER.findall(appendix) == [("Theorem", "A.1")]
    assert re.search(r'href="#[^"]*four-c">\(4\.2\)</a>', four) and re.search(r'href="#four-thm">Theorem 4\.1</a>', four)


def test_a_chapter_over_several_pages_numbers_on_from_page_to_page(student_html):
    """Chapter 10's pages: each kind's numbers run 10.1, 10.2, ... through all of them, in
    reading order, and every later page has numbered items of its own."""
    chapters = [pages for pages in PAGES.values() if len(pages) > 1]
    assert chapters
    for pages in chapters:
        number = page_number(pages[0])
        found: dict[str, list[str]] = {}
        for path in pages:
            page = (student_html / "chapters" / f"{path.stem}.html").read_text(encoding="utf-8")
            items = CAPTION_NUMBER.findall(page) + [("Equation", n) for n in EQUATION_NUMBER.findall(page)]
            assert items, f"{path.stem}: nothing numbered"
            for kind, n in items:
                found.setdefault(kind, []).append(n)
        for kind, numbers in found.items():
            expected = [f"{number}.{i}" for i in range(1, len(numbers) + 1)]
            assert numbers == expected, f"{kind}s of chapter {number}: {numbers}"
        assert {"Figure", "Table", "Theorem"} <= set(found)


@pytest.mark.parametrize("edition", EDITIONS)
def test_theorems_and_equations_are_numbered_per_chapter(edition, request):
    html = request.getfixturevalue(f"{edition}_html")
    wrong, seen = [], {}
    for path in CHAPTERS:
        number = page_number(path)
        page = (html / "chapters" / f"{path.stem}.html").read_text(encoding="utf-8")
        numbers = [f"{kind} {n}" for kind, n in CAPTION_NUMBER.findall(page)]
        numbers += [f"equation ({n})" for n in EQUATION_NUMBER.findall(page)]
        seen[path.stem] = numbers
        wrong += [f"{path.stem}: {n}" for n in numbers if not n.split(" ", 1)[1].strip("()").startswith(f"{number}.")]
    assert not wrong, f"{edition} book: numbers without their chapter's prefix: {wrong}"
    assert any(n.startswith("Theorem 4.") for n in seen["04-svm"]), seen["04-svm"]
    assert any(n.startswith("Theorem A.") for n in seen["A-optimisation"]), seen["A-optimisation"]
    # A reference reads as its target is numbered: "Theorem 11.2", never a number of the book.
    hpca = (html / "chapters" / "11-hpca.html").read_text(encoding="utf-8")
    links = [unescape(re.sub(r"<[^>]+>", "", m)).strip() for m in
             re.findall(r'<a class="reference internal" href="#ch11-thm-[^"]*"[^>]*>(.*?)</a>', hpca, re.S)]
    assert links and all(re.match(r"Theorem 11\.\d+\b", t) for t in links), links
    unprefixed = []
    for path in CHAPTERS:
        page = (html / "chapters" / f"{path.stem}.html").read_text(encoding="utf-8")
        for text in re.findall(r'<a class="reference internal"[^>]*>(.*?)</a>', page, re.S):
            text = unescape(re.sub(r"<[^>]+>", "", text)).strip()
            match = re.match(r"(Theorem|Definition|Lemma|Proposition|Corollary|Example|Exercise) ([^\s,;:()]+)", text)
            if match and not re.fullmatch(r"([0-9]+|[A-Z])\.\d+", match.group(2).rstrip(".")):
                unprefixed.append(f"{path.stem}: {text}")
    assert not unprefixed, f"{edition} book: references without a chapter number: {unprefixed}"


THEORY_CHAPTERS = [first for first in PAGES if first.stem[:2] in {"08", "09", "10", "11", "12"}]
DISPLAY = re.compile(r"^\$\$[ \t]*\n(.*?)^\$\$[ \t]*(?:\(([\w-]+)\))?[ \t]*$", re.M | re.S)
# "the program above", "the bound below": words that point at a display by position
POINTER = re.compile(r"\b(?:program|programme|problem|supremum|function|weight|display|equation|"
                     r"inequality|formula|bound|identity)\s+(?:above|below)"
                     r"(?=\s*[,.;:)]|\s+(?:uses|is|gives|says|shows|for|with|and)\b)")


def chapter_markdown(first: Path) -> str:
    return "\n\n".join(cell for page in PAGES[first] for cell in markdown_cells(page))


def test_theory_chapters_number_the_displays_they_refer_to():
    """Chapters 8-12 label their displays as chapters 1-7 do (`$$ ... $$ (label)`), refer
    to them with {eq}, and never point at a display as "the program above"."""
    assert len(THEORY_CHAPTERS) == 5
    for first in THEORY_CHAPTERS:
        text = chapter_markdown(first)
        labels = [m.group(2) for m in DISPLAY.finditer(text) if m.group(2)]
        referenced = set(re.findall(r"\{eq\}`([^`]+)`", text))
        assert len(labels) >= 4, f"{first.stem}: {len(labels)} numbered displays"
        assert len(set(labels)) == len(labels)
        assert all(label.startswith(f"ch{first.stem[:2]}-eq-") for label in labels), labels
        assert not set(labels) - referenced, f"{first.stem}: numbered, never referred to: {set(labels) - referenced}"
        assert referenced <= set(labels), f"{first.stem}: refers to {referenced - set(labels)}"
        assert not POINTER.findall(text), f"{first.stem}: {POINTER.findall(text)}"
    ch10 = chapter_markdown(ROOT / "chapters" / "10-subspace.ipynb")
    ch12 = chapter_markdown(ROOT / "chapters" / "12-metric.ipynb")
    assert "$$ (ch10-eq-svm2k)" in ch10 and "$$ (ch12-eq-menn-sdp)" in ch12
    # Theorem 10.x's proof links to the Rademacher bound it uses, now a numbered theorem
    assert ":label: ch10-thm-rademacher" in ch10 and "$$ (ch10-eq-rademacher)" in ch10
    proof = ch10[ch10.index(":label: ch10-thm-disagreement"):]
    proof = proof[proof.index("```{prf:proof}"):]
    proof = proof[:proof.index("\n```")]
    assert "{prf:ref}`ch10-thm-rademacher`" in proof and "the kernel-PCA section" not in proof


ONLY_HTML = re.compile(r"^(`{3,})\{only\} html[ \t]*\n.*?^\1[ \t]*$", re.M | re.S)


def printed_text(cell: dict) -> list[str]:
    """What a chapter cell puts in the PDF as prose: Markdown (without its ``{only} html``
    blocks), figure captions and the Markdown tables code cells print."""
    texts = ["".join(cell["source"])] if cell["cell_type"] == "markdown" else []
    texts.append(cell["metadata"].get("mystnb", {}).get("figure", {}).get("caption", ""))
    texts += ["".join(o["data"]["text/markdown"]) for o in cell.get("outputs", [])
              if "text/markdown" in o.get("data", {})]
    return [ONLY_HTML.sub("", text) for text in texts]


def test_the_printed_chapters_do_not_speak_of_web_pages():
    """A chapter over several pages says so in the HTML book only ("The next page, ...");
    the PDF, where those pages are sections of one chapter, has its own wording."""
    found = []
    for path in CHAPTERS:
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            for text in printed_text(cell):
                found += [f"{path.stem}: ...{text[max(0, m.start() - 60):m.end() + 20]}..."
                          for m in re.finditer(r"\bpages?\b", text, re.I)]
    assert not found, "\n".join(found)
    assert ONLY_HTML.sub("", "a\n```{only} html\nThe next page.\n```\nb") == "a\n\nb"


def test_the_test_suite_is_introduced_before_a_chapter_leans_on_it():
    """Chapters 10-12 say "the library's test suite" and link to where the preface
    introduces it, not "the tests" as if the reader knew which."""
    assert "(test-suite)=" in (ROOT / "intro.md").read_text(encoding="utf-8")
    for stem in ("10-subspace", "11-hpca", "12-metric"):
        text = chapter_markdown(ROOT / "chapters" / f"{stem}.ipynb")
        assert not re.findall(r"\b(?:the|its) tests\b", text, re.I), stem
        first = text.index("test suite")
        assert text[first - 30:first + 30].count("{ref}`test suite <test-suite>`") == 1, stem


def test_chapter_4_has_an_exercises_section_and_7_1_says_it_is_graded():
    svm = chapter_markdown(ROOT / "chapters" / "04-svm.ipynb")
    exercises = svm[svm.index("\n## Exercises\n"):]
    assert ":label: ch04-ex-dimension" in exercises and svm.count("{exercise}") == exercises.count("{exercise}")
    assert svm.index("\n## Summary") < svm.index("\n## Exercises\n")
    pac = chapter_markdown(ROOT / "chapters" / "07-pac.ipynb")
    interval = pac[pac.index(":label: ch07-ex-interval"):]
    interval = interval[:interval.index("```")]
    assert "question 6" in interval and "`exercises/07-pac.ipynb`" in interval
    graded = json.loads((ROOT / "solutions" / "07-pac.ipynb").read_text(encoding="utf-8"))
    headings = ["".join(c["source"]).splitlines()[0] for c in graded["cells"] if c["cell_type"] == "markdown"]
    assert any(h.startswith("## Question 6") and "interval" in h for h in headings)
    assert "ch07-ex-interval" in (ROOT / "_config.yml").read_text(encoding="utf-8")  # withheld


def test_labels_are_spelled_one_way():
    """SVM-2K, L $\to$ R, $8 \times 8$; no code names (kcca_SVM) in a table or a legend."""
    for path in CHAPTERS:
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            shown = printed_text(cell) + ["".join(cell["source"])] * (cell["cell_type"] == "code")
            for text in shown:
                for wrong in ("8x8", "SVM-2k", "kcca_SVM\"", "SVM-2K_j\"", "L->R", "R->L", "| kcca_SVM", "| SVM-2K_j"):
                    assert wrong not in text, f"{path.stem}: {wrong}"


# ------------------------------------------------------------------------- bibliography

def bib_entries() -> dict[str, dict[str, str]]:
    """Key -> lower-cased field names with their values, read with pybtex (what the book uses)."""
    from pybtex.database import parse_file
    data = parse_file(str(ROOT / "references.bib"))
    return {key: {k.lower(): v for k, v in entry.fields.items()} for key, entry in data.entries.items()}


def book_sources() -> dict[str, str]:
    """The text of every page of the book's table of contents (notebooks: Markdown cells)."""
    files = toc_files()
    texts = {}
    for name in files:
        for suffix in (".md", ".ipynb"):
            path = ROOT / f"{name}{suffix}"
            if path.is_file():
                texts[name] = ("\n".join(markdown_cells(path)) if suffix == ".ipynb"
                               else path.read_text(encoding="utf-8"))
    return texts


def cited_keys() -> set[str]:
    keys = set()
    for text in book_sources().values():
        for group in re.findall(r"\{cite(?::[\w-]+)?\}`([^`]+)`", text):
            keys.update(k.strip() for k in group.split(","))
    return keys


def unpublished(fields) -> bool:
    """Lecture slides handed to the course: they have no DOI and no public address."""
    return "slides" in fields.get("howpublished", "").lower()


def test_every_bibliography_entry_has_a_doi_or_url():
    missing = [key for key, fields in bib_entries().items()
               if not (fields.get("doi") or fields.get("url") or unpublished(fields))]
    assert not missing, f"references.bib entries without doi or url: {missing}"
    for key, fields in bib_entries().items():
        if "doi" in fields:
            assert re.fullmatch(r"10\.\d{4,9}/\S+", fields["doi"]), f"{key}: doi {fields['doi']!r}"
        if "url" in fields:
            assert re.fullmatch(r"https?://\S+", fields["url"]), f"{key}: url {fields['url']!r}"


def test_every_bibliography_entry_is_cited():
    entries, cited = set(bib_entries()), cited_keys()
    assert cited, "no {cite} role found: the citation pattern no longer matches the sources"
    unknown = sorted(cited - entries)
    assert not unknown, f"cited but not in references.bib: {unknown}"
    uncited = sorted(entries - cited)
    assert not uncited, f"in references.bib but cited nowhere in the book: {uncited}"


# ---------------------------------------------------------------------------- the index

def index_links(html: Path, page: str = "genindex.html") -> list[str]:
    """The link of every entry of an index page."""
    text = (html / page).read_text(encoding="utf-8")
    table = "".join(re.findall(r'<table\b[^>]*class="indextable[^"]*".*?</table>', text, re.S))
    return re.findall(r'<a href="([^"]+)"', table)


def index_targets(html: Path, page: str = "genindex.html") -> list[str]:
    """The page of every entry of an index page."""
    return [href.split("#")[0] for href in index_links(html, page)]


def test_index_links_are_split_by_where_they_point():
    from lecturelib.book.rendering import index_links as split

    entries = [("K", [("kernel PCA", ([(False, "chapters/05.html#i1"), (False, "reference/spectral.html#k")],
                                      [], None)),
                      ("KernelPCA (class)", ([(False, "reference/spectral.html#KernelPCA")],
                                             [("fit()", [(False, "reference/spectral.html#fit")])], None))]),
               ("Z", [("zeta", ([], [("sub", [(True, "chapters/07.html#z")])], None))])]
    in_text = split(entries, lambda uri: not uri.startswith("reference/"))
    assert in_text == [("K", [("kernel PCA", ([(False, "chapters/05.html#i1")], [], None))]),
                       ("Z", [("zeta", ([], [("sub", [(True, "chapters/07.html#z")])], None))])]
    api = split(entries, lambda uri: uri.startswith("reference/"))
    assert [name for _, group in api for name, _ in group] == ["kernel PCA", "KernelPCA (class)"]
    assert api[0][1][1][1][1] == [("fit()", [(False, "reference/spectral.html#fit")])]


@pytest.mark.parametrize("edition", EDITIONS)
def test_general_index_is_reachable_and_has_entries(edition, request):
    html = request.getfixturevalue(f"{edition}_html")
    intro = (html / "intro.html").read_text(encoding="utf-8")
    assert re.search(r'<a class="reference internal" href="genindex.html">', intro), "the intro does not link the index"
    nav = re.search(r'<nav class="[^"]*bd-docs-nav[^"]*".*?</nav>', intro, re.S)
    assert nav and 'href="genindex.html"' in nav.group(0), "the index is not in the navigation"
    targets = index_targets(html)
    assert len(targets) > 50, f"{edition} book: the index has {len(targets)} entries"
    assert "notation.html" in targets
    # the book's index holds the text's concepts; the API is indexed in the reference
    api = [t for t in targets if t.startswith("reference/")]
    assert not api, f"{edition} book: the general index lists API names: {api[:5]}"
    page = (html / "genindex.html").read_text(encoding="utf-8")
    assert 'href="reference/api-index.html"' in page, "the general index does not say where the API is"


@pytest.mark.parametrize("edition", EDITIONS)
def test_the_api_has_its_own_index_in_the_reference(edition, request):
    """As the PDF's reference volume has its own index: every entry links into the
    reference, every link reaches its anchor, and the index is in the reference's part of
    the navigation and points back to the book's index."""
    html = request.getfixturevalue(f"{edition}_html")
    page = (html / "reference" / "api-index.html").read_text(encoding="utf-8")
    links = index_links(html, "reference/api-index.html")
    assert len(links) > 100, f"{edition} book: the API index has {len(links)} entries"
    assert all(not link.startswith(("../", "http")) for link in links), [l for l in links if "/" in l][:5]
    for link in links:
        target, _, anchor = link.partition("#")
        text = (html / "reference" / target).read_text(encoding="utf-8")
        assert f'id="{anchor}"' in text, f"{link}: no such anchor"
    names = re.sub(r"<[^>]+>", " ", page)
    for name in ("gram_matrix()", "KernelPCA", "result_table()", "lecturelib.subspace"):
        assert name in names, f"{name} is not in the index of the API"
    assert 'href="../genindex.html"' in page, "the API index does not point to the book's index"
    nav = re.search(r'<nav class="[^"]*bd-docs-nav[^"]*".*?</nav>', page, re.S)
    assert nav and '<a class="current reference internal" href="#">Index of the API</a>' in nav.group(0)
    kernels = (html / "reference" / "kernels.html").read_text(encoding="utf-8")
    assert '<a class="reference internal" href="api-index.html">Index of the API</a>' in kernels
    concepts = set(index_targets(html))
    assert concepts and not concepts & {f"reference/{t}" for t in index_targets(html, "reference/api-index.html")}


def test_every_chapter_has_index_entries(student_html):
    targets = set(index_targets(student_html))
    missing = [c.stem for c in CHAPTERS if f"chapters/{c.stem}.html" not in targets]
    assert not missing, f"chapters with no entry in the general index: {missing}"


# ------------------------------------------------------------------------------- search

def test_article_text_keeps_sections_and_drops_markup():
    page = ('<html><body><nav>menu</nav><article class="bd-article" role="main">'
            '<section id="one"><h1>Title<a class="headerlink" href="#one">#</a></h1>'
            '<p>First <em>word</em>.</p><script>var x = 1;</script><p>Second &amp; last</p>'
            '<section class="x" id="two"><p>Inner</p></section></section></article></body></html>')
    assert article_text(page) == ('<section id="one">Title First word. Second &amp; last '
                                  '<section id="two">Inner </section></section>')
    assert article_text("<html>no article</html>") == ""


def test_article_text_shows_formulas_as_text_and_drops_cell_code():
    page = ('<article class="bd-article"><section id="a"><p>With <span class="math notranslate nohighlight">'
            '\\(m\\)</span> samples with <span class="math notranslate nohighlight">\\(n\\)</span> features:</p>'
            '<div class="math notranslate nohighlight" id="equation-x"><span class="eqno">(5.1)'
            '<a class="headerlink" href="#equation-x">#</a></span>\\[\n a &lt; \\hat b\n\\]</div>'
            '<div class="cell docutils container"><div class="cell_input docutils container">\n'
            '<div class="highlight-ipython3 notranslate"><div class="highlight"><pre><span></span>'
            '<span class="kn">from</span> lecturelib <span class="kn">import</span> kernels\n</pre></div>\n</div>\n</div>'
            '<div class="cell_output docutils container"><div class="output stream highlight-myst-ansi notranslate">'
            '<div class="highlight"><pre><span></span>0.25\n</pre></div></div></div></div></section></article>')
    assert article_text(page) == '<section id="a">With m samples with n features: a &lt; b̂ 0.25 </section>'


@pytest.mark.parametrize("tex, text", [
    (r"d < \infty", "d < ∞"),
    (r"\hat R_\gamma(P, c, S) \le 1", "R̂_γ(P, c, S) ≤ 1"),
    (r"\ln\binom mk + \ln(2/\delta)", "ln C(m, k) + ln (2/δ)"),
    (r"\tfrac12\|w\|^2", "1/2‖w‖^2"),
    (r"x \in \mathbb R^n", "x ∈ ℝ^n"),
    (r"\operatorname{tr}K - \mathrm{unknown}\foo{y}", "tr K - unknowny"),
])
def test_search_snippets_show_formulas_as_text(tex, text):
    """A snippet reads a formula as text, with no dollar and no backslash (issue 51)."""
    assert math_text(tex) == text
    assert "$" not in math_text(r"\$5 \text{ and } \\") and "\\" not in math_text(r"a \\ b \, c")


def test_the_search_scorer_is_read_from_the_book_folder(tmp_path):
    """Sphinx 7.4 opens html_search_scorer relative to the working directory; the extension
    makes it relative to the book, so a build started elsewhere uses the book's scorer."""
    book, elsewhere = tmp_path / "book", tmp_path / "elsewhere"
    (book / "_static").mkdir(parents=True)
    elsewhere.mkdir()
    (book / "conf.py").write_text('extensions = ["sphinx.ext.autodoc", "lecturelib.book.rendering"]\nroot_doc = "index"\n'
                                  'html_search_scorer = "_static/scorer.js"\n')
    (book / "_static" / "scorer.js").write_text("var Scorer = {score: (r) => r[4]}; // the book's scorer\n")
    (book / "index.rst").write_text("Kernels\n=======\n\nText.\n")
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-q", "-b", "html", str(book), str(book / "out")],
                          capture_output=True, text=True, timeout=300, cwd=elsewhere)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "the book's scorer" in (book / "out" / "_static" / "language_data.js").read_text(encoding="utf-8")


def test_the_search_indexes_prose_and_the_texts_index_entries_as_main():
    from sphinx import addnodes

    from lecturelib.book.rendering import searchable
    document = nodes.document(None, None)
    cell = nodes.container(nb_element="cell_code")
    cell += nodes.container("", nodes.literal_block("", "import kernels"), nb_element="cell_code_source")
    cell += nodes.container("", nodes.literal_block("", "0.25"), nb_element="cell_code_output")
    term = addnodes.index(entries=[("single", "kernel", "index-1", "", None)])
    api = addnodes.index(entries=[("single", "rbf_kernel() (in module k)", "k.rbf_kernel", "", None)])
    document += [term, nodes.paragraph("", "A kernel is an inner product."), cell, api, addnodes.desc()]
    indexed = searchable(document)
    assert "import kernels" not in indexed.astext() and "0.25" in indexed.astext() and "A kernel" in indexed.astext()
    entries = [node["entries"][0][3] for node in indexed.findall(addnodes.index)]
    assert entries == ["main", ""], "the text's entry is main, autodoc's is left alone"
    assert "import kernels" in document.astext() and term["entries"][0][3] == "", "the page itself is unchanged"


def summaries(html: Path) -> dict[str, str]:
    """Docname -> the text the search page cuts its snippets from (markup removed)."""
    script = (html / "_static" / SEARCH_SUMMARIES).read_text(encoding="utf-8")
    data = json.loads(re.search(r"const pages = (\{.*?\});\n", script, re.S).group(1))
    return {doc: unescape(re.sub(r"<[^>]+>", " ", text)) for doc, text in data.items()}


def graded_solution_lines() -> list[str]:
    """Lines of solution text the student edition must not hold (see tests/solutiontext.py)."""
    from solutiontext import solution_lines
    return [line for _, line in solution_lines()]


def solution_fragments(text: str, width: int = 40) -> list[str]:
    """Pieces of ``text`` (``width`` characters) that are graded solution text and not public text."""
    from solutiontext import public_text
    lines, public = graded_solution_lines(), public_text()
    found = []
    for start in range(0, max(len(text) - width, 0) + 1, 10):
        piece = text[start:start + width]
        if len(piece.strip()) >= 25 and any(piece in line for line in lines) and piece not in public:
            found.append(piece)
    return found


def test_search_summaries_cover_every_page_and_hold_no_solution(student_html):
    texts = summaries(student_html)
    pages = {p.relative_to(student_html).with_suffix("").as_posix() for p in student_html.rglob("*.html")
             if not {"_static", "_sources"}.intersection(p.parts)}
    assert {"intro", "chapters/01-bayes", "exercises/01-bayes"} <= set(texts)
    assert not set(texts) - pages, "summaries of pages the book does not have"
    assert "Bayes" in texts["chapters/01-bayes"]
    lines = graded_solution_lines()
    leaked = [(doc, line) for doc, text in texts.items() for line in lines if line in text]
    assert not leaked, f"graded solution text in the search summaries: {leaked[:3]}"
    # Formulas are plain text: no MathJax delimiters, and no dollar or backslash in a chapter.
    tex = [doc for doc, text in texts.items() if re.search(r"\\[()\[\]]", text)]
    assert not tex, f"MathJax delimiters in the search summaries of {tex[:5]}"
    raw = [doc for doc, text in texts.items() if doc.startswith("chapters/") and re.search(r"[$\\]", text)]
    assert not raw, f"raw TeX in the search summaries of {raw[:5]}"
    assert "m samples with n features" in texts["exercises/05-spectral"], "a hole where a formula was"
    assert "from lecturelib import" not in texts["chapters/06-clustering"], "cell code in the summaries"


def search_hits(browser, html: Path, query: str) -> list[dict]:
    """Type ``query`` into the search page; the hits, each with its title and snippet."""
    tab = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        tab.goto((html / "search.html").as_uri(), wait_until="load")
        box = tab.locator('.bd-search-container form.bd-search input[name="q"]').first
        box.fill(query)
        box.press("Enter")
        tab.wait_for_function("() => /Search finished|did not match/.test("
                              "document.querySelector('#search-results')?.textContent || '')", timeout=60_000)
        # Snippets arrive after the list; wait until every hit without a description has one.
        try:
            tab.wait_for_function("() => [...document.querySelectorAll('ul.search > li')]"
                                  ".every(li => li.querySelector('span') || li.querySelector('p.context'))",
                                  timeout=10_000)
        except Exception:  # the assertion below names the hits without a snippet
            pass
        return tab.evaluate("""() => [...document.querySelectorAll('ul.search > li')].map(li => ({
            title: li.querySelector('a').textContent,
            href: li.querySelector('a').getAttribute('href'),
            described: !!li.querySelector(':scope > span'),
            snippet: (li.querySelector('p.context') || {}).textContent || ''}))""")
    finally:
        tab.close()


def solution_queries(count: int = 4) -> list[str]:
    """Words taken from graded solution lines: a search for them is where a leak would show."""
    words = []
    for line in graded_solution_lines():
        candidates = [w for w in re.findall(r"[A-Za-z]{7,}", line) if w.lower() not in {w.lower() for w in words}]
        if candidates:
            words.append(max(candidates, key=len))
        if len(words) == count:
            break
    return words


@pytest.mark.full
@pytest.mark.browser
@pytest.mark.parametrize("edition", ["student", "instructor"])
def test_search_shows_snippets_without_solutions(edition, request, browser):
    html = request.getfixturevalue(f"{edition}_html")
    queries = ["posterior", "kernel", "shattered"] + (solution_queries() if edition == "student" else [])
    for query in queries:
        hits = search_hits(browser, html, query)
        if query in ("posterior", "kernel", "shattered"):
            assert hits, f"{edition} book: no hit for {query!r}"
        bare = [h["href"] for h in hits if not h["described"] and not h["snippet"].strip()]
        assert not bare, f"{edition} book, {query!r}: hits without a snippet: {bare[:5]}"
        if query in ("posterior", "kernel", "shattered"):
            # Each page once, at its best hit; the snippet shows the hit, without raw TeX.
            pages = [h["href"].split("#")[0] for h in hits]
            assert len(set(pages)) == len(pages), f"{edition} book, {query!r}: a page listed twice: {pages}"
            shown = [h["snippet"] for h in hits if h["snippet"].strip()]
            stem = query[:6]  # Sphinx searches for stems: "shattered" finds "shattering"
            missed = [snippet for snippet in shown if stem not in snippet.lower()]
            assert len(missed) <= 0.2 * len(shown), f"{edition} book, {query!r}: snippets without the hit: {missed[:3]}"
            assert not [snippet for snippet in shown if re.search(r"\\[()\[\]]|\$\$", snippet)], "raw TeX in a snippet"
        if edition == "student":
            leaks = [(h["href"], piece) for h in hits for piece in solution_fragments(h["snippet"])]
            assert not leaks, f"student book, {query!r}: solution text in search snippets: {leaks[:3]}"


# The chapter about each term (issue 51): it comes first, its snippet reads as text.
ABOUT = {"kernel": "chapters/04-svm.html", "VC dimension": "chapters/08-vc.html",
         "EM algorithm": "chapters/03-em.html", "margin": "chapters/04-svm.html"}


@pytest.mark.full
@pytest.mark.browser
def test_search_ranks_the_chapter_that_explains_an_idea_first(student_html, browser):
    """Typed into the search page, each term of ``ABOUT`` lists the chapter about it first,
    with a snippet free of dollars and backslashes; the glossary pages (notation) come after
    every chapter; the snippets show prose (no import lines) and formulas as text, not holes."""
    for term, chapter in ABOUT.items():
        hits = search_hits(browser, student_html, term)
        pages = [h["href"].split("#")[0] for h in hits]
        assert pages and pages[0] == chapter, (term, [h["title"] for h in hits[:8]])
        assert not re.search(r"[$\\]", hits[0]["snippet"]), (term, hits[0]["snippet"])
        chapters = [i for i, page in enumerate(pages) if page.startswith("chapters/")]
        if "notation.html" in pages:
            assert pages.index("notation.html") > max(chapters), (term, pages[:10])
        if term == "kernel":  # the chapters that import lecturelib.kernels: prose, not code
            assert not [h for h in hits if re.search(r"\bimport\b", h["snippet"])], "import lines in the snippets"
    hits = search_hits(browser, student_html, "samples")
    snippet = next(h["snippet"] for h in hits if h["href"].startswith("exercises/05-spectral.html"))
    assert "m samples with n features" in snippet, snippet


# ------------------------------------------------------------------------ corrections

DIRECTIVE = re.compile(r"^(?P<fence>`{3,}|:{3,})\{(?P<name>[\w:-]+)\}[ \t]*(?P<arg>.*)$")
OPTION = re.compile(r"^:(?P<key>[\w-]+):[ \t]*(?P<value>.*)$")


def directives(markdown: str):
    """(name, argument, options, first body line) of every fenced MyST directive."""
    lines = markdown.splitlines()
    for i, line in enumerate(lines):
        match = DIRECTIVE.match(line.strip())
        if not match:
            continue
        options, j = {}, i + 1
        while j < len(lines) and OPTION.match(lines[j].strip()):
            option = OPTION.match(lines[j].strip())
            options[option["key"]] = option["value"]
            j += 1
        body = next((ln.strip() for ln in lines[j:] if ln.strip()), "")
        yield match["name"], match["arg"].strip(), options, body


def test_directive_parser_reads_title_and_class():
    text = "```{admonition} Correction to the notes\n:class: correction\n\nThe bound is 3.\n```"
    assert list(directives(text)) == [("admonition", "Correction to the notes",
                                       {"class": "correction"}, "The bound is 3.")]


def test_every_correction_box_has_one_style():
    wrong = []
    for path in CHAPTERS:
        for name, arg, options, body in directives("\n".join(markdown_cells(path))):
            classes = options.get("class", "").split()
            is_correction = arg.startswith("Correction") or re.match(r"\**Correction", body)
            if name == "admonition" and arg.startswith("Correction"):
                if classes != ["correction"]:
                    wrong.append(f"{path.stem}: {{admonition}} {arg!r} has class {classes or 'none'}, not correction")
            elif is_correction:
                wrong.append(f"{path.stem}: a correction written as {{{name}}} {arg!r}")
            elif "correction" in classes:
                wrong.append(f"{path.stem}: class correction on {{{name}}} {arg!r}, not titled Correction ...")
    assert not wrong, "correction boxes must be ```{admonition} Correction to the ...``` + :class: correction:\n" + \
        "\n".join(wrong)


def test_correction_style_is_defined():
    css = (ROOT / "_static" / "book.css").read_text(encoding="utf-8")
    assert re.search(r"\.admonition\.correction\s*>\s*\.admonition-title", css)
    assert re.search(r"\.correction[^{]*\{[^}]*border-color", css)


# ------------------------------------------------------------------ notation and intro

def test_notation_appendix_is_listed_linked_and_covers_the_chapters():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    appendices = next(p for p in toc["parts"] if p.get("caption") == "Appendices")
    assert {"file": "notation"} in appendices["chapters"], "notation.md is not under Appendices"
    notation = (ROOT / "notation.md").read_text(encoding="utf-8")
    assert notation.startswith("(notation)=\n# Notation"), "the page needs the label (notation)= and its title"
    assert "{ref}`notation`" in (ROOT / "intro.md").read_text(encoding="utf-8"), "the intro does not link it"
    linked = set(re.findall(r"\{doc\}`[^`<]*<(chapters/[^>]+)>`", notation))
    missing = [first.stem for first, pages in PAGES.items() if first.stem != "B-performance"
               and not any(f"chapters/{page.stem}" in linked for page in pages)]
    assert not missing, f"the notation page names no symbol from: {missing}"


def test_intro_numbers_each_chapter_once(student_html):
    """The intro's chapter list is a bullet list of titles that carry their own numbers."""
    intro = (student_html / "intro.html").read_text(encoding="utf-8")
    items = re.findall(r'<li><p><a class="reference internal" href="chapters/([^"]+)\.html">'
                       r'<span class="doc">([^<]*)</span>', intro)
    assert len(items) >= 12, items
    for stem, title in items:
        assert title.startswith(f"{chapter_number(title)}. "), title
        assert re.match(rf"0?{chapter_number(title)}-", stem), (stem, title)
    opening = re.search(rf'<(ul|ol)\b[^>]*>\s*<li><p><a class="reference internal" href="chapters/{items[0][0]}\.html"',
                        intro)
    assert opening and opening.group(1) == "ul", "the chapter list is numbered twice (an ordered list)"


# ------------------------------------------------- labels, alt text, page rewrites (unit tests)

def test_author_year_labels_decode_latex_and_follow_the_citation_style():
    from pybtex.database import parse_string

    from lecturelib.book.rendering import author_year_label
    bib = parse_string(r"""
        @article{a, author = {Bj\"orck, \AA{}ke and Golub, Gene H.}, title = {T}, year = {1973}}
        @article{b, author = {von Luxburg, Ulrike}, title = {T}, year = {2007}}
        @book{c, author = {Hastie, T. and Tibshirani, R. and Friedman, J.}, title = {T}, year = {2009}}
        @book{d, editor = {Platt, John}, title = {T}, year = {1999}}
        @misc{e, title = {No author}, year = {2000}}""", "bibtex")
    labels = {key: author_year_label(entry) for key, entry in bib.entries.items() if key != "e"}
    assert labels == {"a": "Björck and Golub, 1973", "b": "von Luxburg, 2007",
                      "c": "Hastie et al., 2009", "d": "Platt, 1999"}
    with pytest.raises(ValueError, match="'e' has no author"):
        author_year_label(bib.entries["e"])


def test_a_figure_without_alt_text_gets_its_caption():
    from lecturelib.book.rendering import caption_alt_text
    figure = nodes.figure("", nodes.image(uri="_images/x.png", alt="_images/x.png"),
                          nodes.image(uri="y.png", alt="Two curves"), nodes.caption("", "The bound lies above."))
    caption_alt_text(figure)
    assert [image["alt"] for image in figure.findall(nodes.image)] == ["The bound lies above.", "Two curves"]


def test_pages_download_notebooks_and_name_their_toggles():
    from lecturelib.book.rendering import rewrite_page
    page = ('<a href="../_sources/chapters/01-bayes.ipynb" target="_blank"\n   class="btn">'
            '<details><summary><span class="toctree-toggle" role="presentation"><i></i></span></summary>'
            '<div role="list" class="citation-list"><div class="citation" id="id1" role="doc-biblioentry">')
    out = rewrite_page(page)
    assert '<div class="citation" id="id1" role="listitem">' in out
    assert '01-bayes.ipynb" download\n' in out and "_blank" not in out
    assert '<summary aria-label="Show or hide the sections">' in out


def test_withheld_solutions_are_the_only_ones_removed():
    from lecturelib.book.edition import strip_solution_blocks
    text = "Q\n\n```{solution} ex-a\nA\n```\n\n````{solution} ex-b\nB\n```python\nx\n```\n````\nend"
    assert strip_solution_blocks(text, {"ex-b"}) == "Q\n\n```{solution} ex-a\nA\n```\n\nend"
    assert strip_solution_blocks(text) == "Q\n\nend"

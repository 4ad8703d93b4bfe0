"""Every page of both books, read in headless Chromium at 1280 px and at 400 px (a phone).

Each page of the student and of the instructor build is opened once; the folded parts
(solution dropdowns, hidden code cells, ``<details>``) are opened, as a reader may, and the
page is measured at 1280 px, then at 400 px.  The column is the content box of the page's
article.  The test fails, naming the page, the section and the element, on:

at both widths
    - ``equation``: a display equation wider than its column (its typeset width exceeds
      the box it is shown in, or the box runs out of the column);
    - ``figure``: an image that runs out of its column;
    - ``table``: a table wider than its column;
    - ``cut off``: any other content that sticks out of the column, or is clipped by a box
      that hides its overflow (inline math too wide for a line, a long word or link);
    - ``mathjax``: a MathJax error, or math that MathJax left as TeX source;

at 1280 px only
    - ``squeezed figure``: an image shown narrower than its natural width (its fonts
      shrink with it);
    - ``code line`` / ``output line``: a code or output block (``<pre>``) whose lines need
      horizontal scrolling (``scrollWidth > clientWidth``); the message gives how many
      lines are longer than the block shows.

At 400 px a display equation, or a table, wider than the column may instead sit in its
own horizontally scrollable box (CSS ``overflow-x: auto`` on the box that holds it: the
theme's ``div.math``, and ``mjx-container[display]`` in ``_static/book.css``; the theme's
table container), provided that box stays inside the column: the reader scrolls the
equation, nothing is cut off.  Code and output blocks scroll at 400 px and are not
checked there.  Nothing here is made to pass by styling: code does not wrap, and images
and equations are not scaled down at 1280 px.

One browser serves both books, one tab every page.  Needs Chromium and Playwright (the
``playwright`` package of requirements.txt, driving the system Chromium); without them
the test is skipped, except when ``CI`` is set, where it fails.

The apparatus of a book, read from the stored notebooks (fast, everyday tier), for every
chapter and appendix in ``APPARATUS_CHAPTERS``:

- every figure a code cell shows has a caption and a name (``mystnb.figure`` in the
  cell's metadata), so the build numbers it ("Figure 4.2"); names are unique in the book
  and start with the chapter's prefix; the text never points at "the figure below";
- every ``{numref}`` names a figure or table that exists, and every ``{eq}`` a labelled,
  hence numbered, display equation;
- no code cell the reader sees (not ``hide-input``) formats a table by hand: padded
  f-string fields (``{x:8.3f}``, ``{name:<12}``), ``str.ljust``/``rjust``/``center``, or
  ``%``/``format`` fields with a width; nor does its output look like an ASCII table
  (three or more lines whose columns line up on runs of spaces);
- code lines the reader sees fit the column (at most 77 characters);
- every in-chapter exercise has a title that starts with its kind: "Computation: ",
  "Derivation: " or "Proof: ".
"""

from __future__ import annotations

import ast
import json
import os
import re
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from test_book import launched_chromium, same_page

ROOT = Path(__file__).resolve().parent.parent

WIDE, NARROW = 1280, 400
HEIGHT = 900
SKIPPED_FOLDERS = {"_static", "_sources", "_images", "_downloads"}

# Runs in the page.  Returns a list of {kind, where, detail}.
MEASURE = r"""
({wide}) => {
  const out = [];
  const article = document.querySelector('article.bd-article') || document.querySelector('[role="main"]');
  if (!article) return [{kind: 'layout', where: '', detail: 'the page has no article'}];
  const acs = getComputedStyle(article);
  const abox = article.getBoundingClientRect();
  const colLeft = abox.left + parseFloat(acs.paddingLeft);
  const colRight = abox.right - parseFloat(acs.paddingRight);
  const TOL = 1;
  const text = e => (e.textContent || '').replace(/\s+/g, ' ').trim().slice(0, 70);
  const where = e => { const s = e.closest('section[id]'); return s ? '#' + s.id : ''; };
  const add = (kind, e, detail) => out.push({kind, where: where(e), detail: `${detail}: ${text(e)}`});
  const shown = e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  const scrolls = e => ['auto', 'scroll'].includes(getComputedStyle(e).overflowX);
  // The nearest ancestor (below the article) that scrolls horizontally, if any.
  const scrollBox = e => {
    for (let a = e.parentElement; a && a !== article; a = a.parentElement) if (scrolls(a)) return a;
    return null;
  };
  const inColumn = r => r.left >= colLeft - TOL && r.right <= colRight + TOL;

  // The part of an element's box that can be seen: inside every ancestor (below the
  // article) that clips or scrolls its overflow.
  const seen = e => {
    const r = e.getBoundingClientRect();
    let left = r.left, right = r.left + (e.clientWidth || r.width);
    for (let a = e.parentElement; a && a !== article; a = a.parentElement) {
      if (getComputedStyle(a).overflowX === 'visible') continue;
      const b = a.getBoundingClientRect();
      left = Math.max(left, b.left); right = Math.min(right, b.right);
    }
    return {left, right, width: right - left, whole: r};
  };

  // Display equations: the typeset math must fit the part of its box that can be seen.
  article.querySelectorAll('mjx-container[display="true"]').forEach(e => {
    if (!shown(e)) return;
    const math = e.querySelector('mjx-math') || e.firstElementChild;
    const width = math ? math.getBoundingClientRect().width : 0;
    const view = seen(e);
    const tooWide = width > view.width + TOL || !inColumn(view.whole);
    if (!tooWide) return;
    if (!wide) {
      const holder = scrolls(e) ? e : scrollBox(e);
      if (holder) {
        const hv = seen(holder), hr = holder.getBoundingClientRect();
        if (inColumn(hr) && hv.width >= hr.width - TOL) return;  // scrolls in its own box
      }
    }
    add('equation', e, `${Math.round(width)} px of math, ${Math.round(view.width)} px to show it`);
  });

  // Figures.
  article.querySelectorAll('img').forEach(e => {
    if (!shown(e)) return;
    const src = (e.getAttribute('src') || '').split('/').pop();
    if (!inColumn(e.getBoundingClientRect()))
      out.push({kind: 'figure', where: where(e), detail: `${src} runs out of the column`});
    if (wide && e.naturalWidth > e.clientWidth + TOL)
      out.push({kind: 'squeezed figure', where: where(e),
                detail: `${src}: ${e.naturalWidth} px wide, shown at ${e.clientWidth} px`});
  });

  // Tables.
  article.querySelectorAll('table').forEach(e => {
    if (!shown(e)) return;
    const r = e.getBoundingClientRect();
    if (r.width <= colRight - colLeft + TOL && inColumn(r)) return;
    if (!wide) {
      const holder = scrollBox(e);
      if (holder && inColumn(holder.getBoundingClientRect())) return;
    }
    add('table', e, `${Math.round(r.width)} px wide in a ${Math.round(colRight - colLeft)} px column`);
  });

  // Code and output lines that need horizontal scrolling (at 1280 px).
  if (wide) article.querySelectorAll('pre').forEach(e => {
    if (!shown(e) || e.scrollWidth <= e.clientWidth + TOL) return;
    const probe = document.createElement('span');
    probe.textContent = 'x'.repeat(100);
    e.appendChild(probe);
    const charWidth = probe.getBoundingClientRect().width / 100;
    probe.remove();
    const cs = getComputedStyle(e);
    const visible = Math.floor((e.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight)) / charWidth);
    const lines = e.textContent.split('\n');
    const long = lines.filter(l => l.length > visible);
    const longest = Math.max(...lines.map(l => l.length));
    const kind = e.closest('.cell_output, .output') ? 'output line' : 'code line';
    add(kind, e, `${long.length} line(s) longer than the ${visible} characters shown (longest ${longest})`);
  });

  // MathJax errors, and math left as TeX.
  article.querySelectorAll('mjx-merror').forEach(e =>
    add('mathjax', e, `MathJax error ${e.getAttribute('data-mjx-error') || ''}`));
  if (wide) article.querySelectorAll('.math').forEach(e => {
    if (!e.querySelector('mjx-container') && !e.closest('mjx-container') && /\\[\[(]|\$/.test(e.textContent))
      add('mathjax', e, 'not typeset');
  });

  // Anything else that sticks out of the column or is cut off by a box that hides it.
  // Boxes that scroll are not entered: what they hold can be reached by scrolling (the
  // checks above judge equations, tables and code in them).
  const visit = (e, clip) => {
    for (const child of e.children) {
      const tag = child.tagName.toLowerCase();
      // Judged above: display equations, figures, tables.  Inside MathJax's output only
      // the whole formula counts (its glyph boxes overhang each other by design).
      if (['script', 'style', 'img', 'table'].includes(tag) || (tag.startsWith('mjx-') && tag !== 'mjx-container')) continue;
      if (tag === 'mjx-container' && child.getAttribute('display') === 'true') continue;
      const cs = getComputedStyle(child);
      if (cs.display === 'none' || cs.visibility === 'hidden') continue;
      const r = child.getBoundingClientRect();
      if (r.width > 0 && r.height > 0) {
        const bound = clip || {left: colLeft, right: colRight};
        if (r.left < bound.left - TOL || r.right > bound.right + TOL) {
          const how = clip ? 'cut off by its box' : 'sticks out of the column';
          add('cut off', child, `<${tag}> ${how} (${Math.round(r.left)}..${Math.round(r.right)} px, ` +
              `room ${Math.round(bound.left)}..${Math.round(bound.right)} px)`);
          continue;
        }
      }
      if (['auto', 'scroll'].includes(cs.overflowX) || tag === 'mjx-container') continue;
      const clips = ['hidden', 'clip'].includes(cs.overflowX);
      visit(child, clips && r.width > 0 ? {left: r.left, right: r.right} : clip);
    }
  };
  visit(article, null);
  return out;
}
"""

# Open what a reader can open: solution dropdowns (sphinx-togglebutton), folded cells and
# other <details>.
UNFOLD = r"""
() => {
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  document.querySelectorAll('.toggle-hidden').forEach(e => e.classList.remove('toggle-hidden'));
  document.querySelectorAll('button.toggle-button-hidden').forEach(e => e.classList.remove('toggle-button-hidden'));
}
"""

MATHJAX_READY = "() => !window.MathJax || (window.MathJax.startup && window.MathJax.startup.promise)"
SETTLE = "() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))"


def book_pages(html: Path) -> list[Path]:
    """Every HTML page of a built book (not the theme's or the downloads' files)."""
    return sorted(p for p in html.rglob("*.html")
                  if not SKIPPED_FOLDERS.intersection(p.relative_to(html).parts))


@pytest.fixture(scope="module")
def browser():
    with launched_chromium() as chrome:
        yield chrome


def measure_book(browser, html: Path, skip=lambda page: False) -> dict[str, list[str]]:
    """Page (relative path) -> one line per defect, ``"1280px figure #section: ..."``."""
    found: dict[str, list[str]] = {}
    tab = browser.new_page(viewport={"width": WIDE, "height": HEIGHT})
    try:
        for path in book_pages(html):
            name = path.relative_to(html).as_posix()
            if skip(name):
                continue
            tab.set_viewport_size({"width": WIDE, "height": HEIGHT})
            tab.goto(path.as_uri(), wait_until="load")
            tab.wait_for_function(MATHJAX_READY, timeout=60_000)
            tab.evaluate("() => window.MathJax && MathJax.startup ? MathJax.startup.promise : null")
            tab.evaluate(UNFOLD)
            tab.evaluate(SETTLE)
            lines = []
            for width in (WIDE, NARROW):
                if width != WIDE:
                    tab.set_viewport_size({"width": width, "height": HEIGHT})
                    tab.evaluate(SETTLE)
                for item in tab.evaluate(MEASURE, {"wide": width == WIDE}):
                    lines.append(f"{width}px {item['kind']} {item['where']}: {item['detail']}")
            if lines:
                found[name] = lines
    finally:
        tab.close()
    return found


def kind_of(line: str) -> str:
    """``"1280px code line #x: ..."`` -> ``"code line (1280px)"``."""
    width, rest = line.split(" ", 1)
    return f"{rest.split(' #', 1)[0].split(':', 1)[0].strip()} ({width})"


def summary(found: dict[str, list[str]]) -> str:
    """One line per page with its defects counted by kind, then every defect."""
    heads = [f"{page}: " + ", ".join(f"{kind} {n}" for kind, n in sorted(Counter(map(kind_of, lines)).items()))
             for page, lines in sorted(found.items())]
    details = [f"{page} {line}" for page, lines in sorted(found.items()) for line in lines]
    shown = details[:400] + ([f"... and {len(details) - 400} more"] if len(details) > 400 else [])
    return "\n".join(heads + ["", *shown])


@pytest.mark.full
@pytest.mark.browser
@pytest.mark.parametrize("edition", ["student", "instructor"])
def test_every_page_reads_at_1280_and_400_px(edition, request, browser):
    """Of the instructor edition, the pages whose article differs from the student
    edition's (the same article with the same stylesheets lays out the same)."""
    html = request.getfixturevalue(f"{edition}_html")
    pages = book_pages(html)
    assert len(pages) > 20 and any(p.name == "intro.html" for p in pages), f"{edition} book: pages missing"
    skip = lambda page: False  # noqa: E731
    if edition == "instructor":
        student = request.getfixturevalue("student_html")
        skip = lambda page: same_page(html, student, page)  # noqa: E731
        assert any(not skip(p.relative_to(html).as_posix()) for p in pages), "no instructor page differs"
    found = measure_book(browser, html, skip)
    assert not found, (f"{edition} book: {len(found)} of {len(pages)} pages have reading defects\n"
                       + summary(found))



PHONE = 390  # px: a common phone's viewport (issue 51)
CAPTIONS_CUT = r"""
() => {
  const cut = [];
  document.querySelectorAll('article table > caption').forEach(c => {
    const box = c.closest('.pst-scrollable-table-container') || c.closest('table');
    const b = box.getBoundingClientRect(), r = c.getBoundingClientRect();
    if (r.width > 0 && (r.left < b.left - 1 || r.right > b.right + 1))
      cut.push(`${c.textContent.trim().slice(0, 40)}: ${Math.round(r.left)}..${Math.round(r.right)} px` +
               ` in a box of ${Math.round(b.left)}..${Math.round(b.right)} px`);
  });
  return cut;
}
"""


@pytest.mark.full
@pytest.mark.browser
def test_no_table_caption_is_cut_on_a_phone(student_html, browser):
    """At 390 px a table wider than the column scrolls in its box; its caption stays inside
    the box, before and after the table is scrolled, and no chapter page is wider than the
    screen (chapter 10's last page was 417 px wide)."""
    tab = browser.new_page(viewport={"width": PHONE, "height": 800})
    found, wide, scrolled_tables = {}, {}, 0
    try:
        for path in sorted((student_html / "chapters").glob("*.html")):
            tab.goto(path.as_uri(), wait_until="load")
            tab.wait_for_function(MATHJAX_READY)
            tab.evaluate(SETTLE)
            cut = tab.evaluate(CAPTIONS_CUT)
            scrolled_tables += tab.evaluate("() => [...document.querySelectorAll('.pst-scrollable-table-container')]"
                                            ".filter(b => b.scrollWidth > b.clientWidth + 1)"
                                            ".map(b => { b.scrollLeft = b.scrollWidth; return b; }).length")
            tab.evaluate(SETTLE)
            cut += [f"scrolled: {c}" for c in tab.evaluate(CAPTIONS_CUT)]
            if cut:
                found[path.name] = cut
            width = tab.evaluate("() => document.documentElement.scrollWidth")
            if width > PHONE:
                wide[path.name] = width
    finally:
        tab.close()
    assert scrolled_tables >= 10, "the test should see tables that scroll at this width"
    assert not found, "table captions cut at 390 px:\n" + "\n".join(f"{p}: {c}" for p, cs in found.items() for c in cs)
    assert not wide, f"pages wider than a {PHONE} px screen: {wide}"


# ---------------------------------------------------------------------------------------
# The apparatus of a book, read from the stored notebooks.

# Chapters and appendices whose figures, equations and tables have been brought to the
# book's apparatus (issue 35).  The list grows: a chapter is added when it is done, and
# then every assertion below holds for it.  At the end it is every notebook of chapters/.
APPARATUS_CHAPTERS = [
    "01-bayes",
    "02-maxent",
    "03-em",
    "04-svm",
    "05-spectral",
    "05-spectral-lda-cca",
    "06-clustering",
    "07-pac",
    "A-optimisation",
    "08-vc",
    "09-double-sampling",
    "10-subspace",
    "10-subspace-sparse-cca",
    "10-subspace-svm2k",
    "10-subspace-rademacher",
    "11-hpca",
    "11-hpca-transfer",
    "12-metric",
    "B-performance",
]

CHAPTER_NOTEBOOKS = sorted((ROOT / "chapters").glob("*.ipynb"))
CODE_COLUMN = 77  # characters of a code line the 688-px column shows (measured above)

ROLE = re.compile(r"\{(numref|eq|ref)\}`([^`]*)`")
EQUATION_LABEL = re.compile(r"\$\$\s*\(([A-Za-z0-9_-]+)\)")
TABLE_NAME = re.compile(r"^:name:\s*(\S+)", re.M)
POINTING = re.compile(r"\b(figure|plot|graph|panel|picture|table) (below|above)\b"
                      r"|\b(below|above) (figure|plot|graph)\b", re.I)


def prefix_of(path: Path) -> str:
    """``chapters/05-spectral.ipynb`` -> ``ch05-``; ``A-optimisation`` -> ``chA-``."""
    return "ch" + path.stem.split("-", 1)[0] + "-"


@cache
def notebook(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def cells(path: Path, kind: str):
    return [(i, c, "".join(c["source"])) for i, c in enumerate(notebook(path)["cells"])
            if c["cell_type"] == kind]


def images(cell) -> int:
    return sum("image/png" in o.get("data", {}) for o in cell.get("outputs", []))


def folded(cell) -> bool:
    """The reader does not see the cell's code (folded, or the cell is removed)."""
    tags = cell["metadata"].get("tags", [])
    return bool({"hide-input", "remove-input", "remove-cell"} & set(tags))


def shown_images(cell) -> int:
    tags = cell["metadata"].get("tags", [])
    return 0 if {"remove-output", "remove-cell"} & set(tags) else images(cell)


def figure_names(path: Path) -> list[str]:
    names = []
    for _, cell, source in cells(path, "code"):
        name = cell["metadata"].get("mystnb", {}).get("figure", {}).get("name")
        if name:
            names.append(name)
    for _, _, source in cells(path, "markdown"):
        names += re.findall(r"```\{glue:figure\}[^\n]*\n(?:[^\n]*\n)*?:name:\s*(\S+)", source)
    return names


def table_names(path: Path) -> list[str]:
    """Names of the tables in the Markdown and of those code cells show (a MyST table
    directive in a text/markdown output, tests/test_tables.py)."""
    found = []
    for _, _, source in cells(path, "markdown"):
        for block in re.findall(r"```\{table\}.*?```", source, re.S):
            found += TABLE_NAME.findall(block)
    for _, cell, _ in cells(path, "code"):
        for out in cell.get("outputs", []):
            shown = "".join(out.get("data", {}).get("text/markdown", ""))
            if shown.startswith("```{table}"):
                found += TABLE_NAME.findall(shown)
    return found


def equation_labels(path: Path) -> list[str]:
    found = []
    for _, _, source in cells(path, "markdown"):
        found += EQUATION_LABEL.findall(source)
        found += re.findall(r"```\{math\}[^\n]*\n:label:\s*(\S+)", source)
    return found


def book_names() -> tuple[Counter, set, set]:
    figures = Counter(n for p in CHAPTER_NOTEBOOKS for n in figure_names(p) + table_names(p))
    equations = {n for p in CHAPTER_NOTEBOOKS for n in equation_labels(p)}
    return figures, equations, set(figures)


def padded_fields(source: str) -> list[str]:
    """Hand-padded table fields in Python code: format specs with a width, ljust/rjust/center,
    ``%8.3f``-style fields.  Code that does not parse is read line by line by regex."""
    found = []
    width = re.compile(r"^(.?[<>^=])?[+\- ]?#?0?(\d+)")
    try:
        tree = ast.parse(source)
    except SyntaxError:
        tree = None
    if tree is not None:
        for node in ast.walk(tree):
            if isinstance(node, ast.FormattedValue) and isinstance(node.format_spec, ast.JoinedStr):
                spec = "".join(v.value for v in node.format_spec.values
                               if isinstance(v, ast.Constant) and isinstance(v.value, str))
                if width.match(spec) and spec.split(".")[0].lstrip("<>^=+- #0,_"):
                    found.append(f"{{...:{spec}}}")
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr in {"ljust", "rjust", "center"}):
                found.append(f".{node.func.attr}(...)")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                found += [f"'{m}'" for m in re.findall(r"%-?\d+(?:\.\d+)?[sdfegi]", node.value)]
                found += [f"'{m}'" for m in re.findall(r"\{[^{}:]*:[<>^]?\d+[^{}]*\}", node.value)]
    return found


def ascii_table(text: str) -> bool:
    """Three or more consecutive lines whose columns line up: each has two or more gaps
    of at least two spaces between words, and some gap ends at the same place in all of
    them.  Numpy arrays (lines starting with ``[``) are not tables."""
    lines = [line.rstrip() for line in text.splitlines()]

    def column_starts(line):
        if not line.strip() or line.lstrip().startswith(("[", "(")):
            return None
        starts = {m.end() for m in re.finditer(r"\S {2,}(?=\S)", line)}
        return starts if len(starts) >= 2 else None

    run = []
    for line in lines + [""]:
        starts = column_starts(line)
        if starts is not None:
            run.append(starts)
            continue
        if len(run) >= 3 and set.intersection(*run):
            return True
        run = []
    return False


def output_text(cell) -> str:
    parts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            parts.append("".join(out.get("text", "")))
        elif not {"text/html", "text/markdown"} & set(out.get("data", {})):
            # an HTML or Markdown output is what the book shows (a rendered table)
            parts.append("".join(out.get("data", {}).get("text/plain", "")))
    return "\n".join(parts)


APPARATUS = pytest.mark.parametrize(
    "path", [ROOT / "chapters" / f"{stem}.ipynb" for stem in APPARATUS_CHAPTERS],
    ids=APPARATUS_CHAPTERS)


def test_apparatus_chapters_exist():
    stems = {p.stem for p in CHAPTER_NOTEBOOKS}
    assert set(APPARATUS_CHAPTERS) <= stems, set(APPARATUS_CHAPTERS) - stems


@APPARATUS
def test_every_figure_is_numbered_and_captioned(path):
    prefix = prefix_of(path)
    faults = []
    for index, cell, _ in cells(path, "code"):
        shown = shown_images(cell)
        if not shown:
            continue
        figure = cell["metadata"].get("mystnb", {}).get("figure", {})
        caption, name = figure.get("caption", "").strip(), figure.get("name", "")
        if shown > 1:
            faults.append(f"cell {index} shows {shown} images (a captioned figure is one image)")
        if len(caption.split()) < 6:
            faults.append(f"cell {index}: no caption that says what to see ({caption!r})")
        if not name.startswith(prefix + "fig-"):
            faults.append(f"cell {index}: figure name {name!r} does not start with {prefix}fig-")
    for index, _, source in cells(path, "markdown"):
        faults += [f"markdown cell {index} points at '{m.group(0)}' instead of {{numref}}"
                   for m in POINTING.finditer(source)]
    assert not faults, f"{path.name}:\n" + "\n".join(faults)


def test_figure_and_table_names_are_unique_in_the_book():
    figures, _, _ = book_names()
    assert not [n for n, k in figures.items() if k > 1]


@APPARATUS
def test_every_reference_has_a_numbered_target(path):
    _, equations, targets = book_names()
    faults = []
    for index, _, source in cells(path, "markdown"):
        for role, target in ROLE.findall(source):
            label = target.split("<")[-1].rstrip(">").strip()
            if role == "eq" and label not in equations:
                faults.append(f"cell {index}: {{eq}}`{label}` names no labelled equation")
            if role == "numref" and label not in targets:
                faults.append(f"cell {index}: {{numref}}`{label}` names no figure or table")
    assert not faults, f"{path.name}:\n" + "\n".join(faults)


@APPARATUS
def test_no_visible_cell_prints_a_hand_padded_table(path):
    faults = []
    for index, cell, source in cells(path, "code"):
        if folded(cell):
            continue
        padded = padded_fields(source)
        if padded:
            faults.append(f"cell {index} pads fields by hand: {padded[:3]}")
        if ascii_table(output_text(cell)):
            faults.append(f"cell {index} prints an ASCII table")
        long = [line for line in source.splitlines() if len(line) > CODE_COLUMN]
        if long:
            faults.append(f"cell {index}: {len(long)} code line(s) longer than {CODE_COLUMN}")
    assert not faults, f"{path.name}:\n" + "\n".join(faults)


EXERCISE = re.compile(r"^```\{exercise\}(.*)$", re.M)
KINDS = ("Computation: ", "Derivation: ", "Proof: ")


@APPARATUS
def test_every_exercise_says_its_kind(path):
    titles = [t.strip() for _, _, source in cells(path, "markdown")
              for t in EXERCISE.findall(source)]
    untold = [t or "(no title)" for t in titles if not t.startswith(KINDS)]
    assert not untold, (f"{path.name}: exercises whose title does not start with "
                        f"{' / '.join(KINDS)}: {untold}")


@pytest.mark.parametrize("source, expected", [
    ('print(f"{name:10s} {x:8.3f}")', 2), ('print(f"{x:.3f}, {y:,.0f} {z!r}")', 0),
    ('print(name.ljust(12), "%-8s|%6.2f" % (a, b))', 3), ('print("{:>9}".format(v))', 1),
    ('print(f"{v:>{w}}")', 0), ('print(f"{t:2d}")', 1),
])
def test_padding_detector(source, expected):
    assert len(padded_fields(source)) == expected


@pytest.mark.parametrize("text, expected", [
    ("bin        x1 x2\nMAP        h1 h1\nML         h1 h2\n0/1 risk   h1 h1\n", False),
    ("C    margin    SVs\n0.1  0.5000    12\n1.0  0.2500     8\n10   0.1250     5\n", True),
    ("[[1.  0.5   0.25]\n [0.  1.    0.5 ]\n [0.  0.    1.  ]]\n", False),
    ("P(+)   = 0.0395\nP(C|+) = 0.2481\n", False),
])
def test_ascii_table_detector(text, expected):
    assert ascii_table(text) is expected

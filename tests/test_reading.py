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
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from test_book import chromium

pytestmark = [pytest.mark.full, pytest.mark.browser]

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
    """One headless Chromium (the system's, driven by Playwright) for the whole module."""
    executable = chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("playwright is required when CI is set (it is in requirements.txt)")
        pytest.skip("playwright is not installed")
    with sync_playwright() as p:
        chrome = p.chromium.launch(executable_path=executable,
                                   args=["--no-sandbox", "--disable-gpu", "--disable-quic",
                                         "--no-first-run", "--disable-background-networking"])
        yield chrome
        chrome.close()


def measure_book(browser, html: Path) -> dict[str, list[str]]:
    """Page (relative path) -> one line per defect, ``"1280px figure #section: ..."``."""
    found: dict[str, list[str]] = {}
    tab = browser.new_page(viewport={"width": WIDE, "height": HEIGHT})
    try:
        for path in book_pages(html):
            name = path.relative_to(html).as_posix()
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


@pytest.mark.parametrize("edition", ["student", "instructor"])
def test_every_page_reads_at_1280_and_400_px(edition, request, browser):
    html = request.getfixturevalue(f"{edition}_html")
    pages = book_pages(html)
    assert len(pages) > 20 and any(p.name == "intro.html" for p in pages), f"{edition} book: pages missing"
    found = measure_book(browser, html)
    assert not found, (f"{edition} book: {len(found)} of {len(pages)} pages have reading defects\n"
                       + summary(found))

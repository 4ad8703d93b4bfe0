"""The rendered book: builds cleanly, works offline, and the student edition has no solutions."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
import yaml
from html import unescape

from solutiontext import answer_code_lines, leaks_in

# The student edition is the everyday tier's one book build; the instructor's is make test-all's.
EDITIONS = ["student", pytest.param("instructor", marks=pytest.mark.full)]
ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))


def toc_files():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    found = [toc["root"]]

    def walk(node):
        if isinstance(node, dict):
            if "file" in node:
                found.append(node["file"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(toc.get("parts", []))
    return found


def html_raw(html: Path) -> str:
    return "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in html.rglob("*.html"))


def html_text(html: Path) -> str:
    """The visible text of every page (tags stripped, so highlighted code reads as code)."""
    return unescape(re.sub(r"<[^>]+>", "", html_raw(html)))


def chapters_with_solution_blocks():
    return [c for c in CHAPTERS if "```{solution}" in c.read_text(encoding="utf-8")
            or "{solution}" in c.read_text(encoding="utf-8")]


def test_toc_lists_every_chapter_and_exercise_set():
    files = toc_files()
    for chapter in CHAPTERS:
        assert f"chapters/{chapter.stem}" in files, f"{chapter.name} is not in _toc.yml"
    for solution in SOLUTIONS:
        assert f"exercises/{solution.stem}" in files, f"exercises/{solution.name} is not in _toc.yml"
    assert not any(f.startswith("solutions/") for f in files), "the student TOC must not list solutions"


def test_requirements_pin_jupyter_book_1():
    reqs = (ROOT / "requirements.txt").read_text()
    assert re.search(r"^jupyter-book==1\.", reqs, re.M)
    unpinned = [ln for ln in reqs.splitlines() if ln.strip() and not ln.startswith("#") and "==" not in ln]
    assert not unpinned, f"unpinned requirements: {unpinned}"


def test_student_book_builds_offline(student_html):
    assert (student_html / "index.html").is_file()
    for chapter in CHAPTERS:
        assert (student_html / "chapters" / f"{chapter.stem}.html").is_file()
    mathjax = student_html / "_static" / "mathjax" / "tex-chtml.js"
    assert mathjax.is_file(), "MathJax is not bundled: math would need the network"
    page = (student_html / "intro.html").read_text(encoding="utf-8")
    assert "cdn.jsdelivr.net" not in page and "mathjax/tex-chtml.js" in page
    assert (student_html / "searchindex.js").is_file()


def test_student_book_has_no_solutions(student_html):
    assert 'class="solution' not in html_raw(student_html), "a {solution} block survived"
    leaked = leaks_in(student_html)
    assert not leaked, f"solution text in the student book (file, source, line): {leaked[:3]}"


def download_link(page: Path) -> Path:
    """The notebook a page's download button offers, resolved to the file in the build."""
    links = re.findall(r'href="([^"]*_sources/[^"]+\.ipynb)"', page.read_text(encoding="utf-8"))
    assert links, f"{page.name} offers no notebook for download"
    return (page.parent / links[0]).resolve()


def test_student_book_offers_every_notebook_without_solutions(student_html):
    pages = [f"chapters/{c.stem}" for c in CHAPTERS] + [f"exercises/{s.stem}" for s in SOLUTIONS]
    for page in pages:
        target = download_link(student_html / f"{page}.html")
        assert target.is_file() and target.name == f"{Path(page).name}.ipynb", target
        nb = json.loads(target.read_text(encoding="utf-8"))
        source = "\n".join("".join(c["source"]) for c in nb["cells"])
        assert "{solution}" not in source and "# BEGIN SOLUTION" not in source, page
        if page.startswith("exercises/"):
            assert nb["metadata"]["lecturelib"]["public_checks"], f"{page}: the download has no public checks"


@pytest.mark.full
def test_instructor_book_shows_solutions(instructor_html):
    text = html_text(instructor_html)
    for solution in SOLUTIONS:
        assert (instructor_html / "solutions" / f"{solution.stem}.html").is_file()
        lines = answer_code_lines(solution)
        assert lines and any(line in text for line in lines), f"{solution.stem}: solution code not shown"
        offered = json.loads(download_link(instructor_html / "solutions" / f"{solution.stem}.html").read_text())
        assert any("# BEGIN SOLUTION" in "".join(c["source"]) for c in offered["cells"]), solution.stem
    if chapters_with_solution_blocks():
        assert 'class="solution' in html_raw(instructor_html)


# ------------------------------------------------------------------ the lecturelib reference

def reference_entries():
    """(module, name) of every public name the reference documents."""
    import importlib
    from test_docstring_examples import MODULES, public_names
    return [(m, n) for m in MODULES for n in public_names(importlib.import_module(f"lecturelib.{m}"))]


@pytest.mark.parametrize("edition", EDITIONS)
def test_book_contains_the_lecturelib_reference(edition, request):
    html = request.getfixturevalue(f"{edition}_html")
    missing = []
    for module, name in reference_entries() + [("grading", n) for n in ("assign", "grade", "main")]:
        page = (html / "reference" / f"{module}.html").read_text(encoding="utf-8")
        if f'id="lecturelib.{module}.{name}"' not in page:
            missing.append(f"{module}.{name}")
    assert not missing, f"{edition} book: no reference entry for {missing}"
    page = (html / "reference" / "bayes.html").read_text(encoding="utf-8")
    assert page.count(">Examples<") >= 8 and "&gt;&gt;&gt;" in page, "the entries show no examples"
    assert "set_fit_request" not in html_raw(html / "reference"), "scikit-learn's routing methods leaked in"
    chapter = (html / "chapters" / "01-bayes.html").read_text(encoding="utf-8")
    assert re.search(r'href="\.\./reference/bayes\.html#lecturelib\.bayes\.JointTable"', chapter), \
        "chapter 1 does not link to the reference"


# ----------------------------------------------------------------------- headless browser

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--virtual-time-budget=15000",
]


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("CI"):
        pytest.fail("headless chromium is required when CI is set (apt-get install chromium)")
    pytest.skip("chromium is not installed (the CI installs it)")


def rendered_dom(page: Path) -> str:
    browser = chromium()
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run(
            [browser, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
            capture_output=True, text=True, timeout=180,
        )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


@pytest.mark.browser
@pytest.mark.parametrize("page", ["intro"] + [f"chapters/{c.stem}" for c in CHAPTERS[:1]])
def test_browser_typesets_math_and_shows_figures(student_html, page):
    dom = rendered_dom(student_html / f"{page}.html")
    assert dom.count("<mjx-container") > 0, f"{page}: no typeset math (MathJax did not run offline)"
    assert "\\[" not in re.sub(r"<(script|style)[^>]*>.*?</\1>", "", dom, flags=re.S)
    if page.startswith("chapters/"):
        nb = json.loads((ROOT / f"{page}.ipynb").read_text())
        figures = sum(1 for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])
                      if "image/png" in o.get("data", {}))
        images = re.findall(r'<img[^>]+src="([^"]+\.png)"', dom)
        assert len(images) >= figures > 0, f"{page}: {len(images)} images shown, {figures} figures stored"
        for src in images:
            assert (student_html / page).parent.joinpath(src).resolve().is_file(), src

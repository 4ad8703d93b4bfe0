"""The printable edition: ``make pdf`` renders the student book to one PDF, read back with pdftotext.

The PDF is built once for this file (``make pdf`` into a folder of its own) and its text is
checked: every chapter's title, a sample of the numbers the chapters print, no undefined
reference (LaTeX prints "??" for one) and no solution text.  Needs XeLaTeX, latexmk, the
FreeFont fonts and poppler-utils (the README's set-up; ``.ci/run`` installs them): without
them the tests skip, except when ``CI`` is set, where they fail.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from solutiontext import MIN_CHARS, solution_lines

pytestmark = pytest.mark.full
ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))
EXERCISES = sorted((ROOT / "exercises").glob("*.ipynb"))
TOOLS = {"xelatex": "texlive-xetex", "latexmk": "latexmk", "pdftotext": "poppler-utils"}
# Sphinx ends a code line it wraps at a space with a visible space (␣) and starts the
# continuation with a hook arrow, which pdftotext reads as "," and "→"; LaTeX hyphenates prose.
WRAP_MARK = re.compile("\u2423?\n,?[\u21aa\u2192]")


def require_tools() -> None:
    missing = [f"{tool} ({package})" for tool, package in TOOLS.items() if shutil.which(tool) is None]
    fonts = subprocess.run(["fc-list", "FreeSerif"], capture_output=True, text=True).stdout if shutil.which("fc-list") else ""
    if not fonts.strip():
        missing.append("the FreeSerif font (fonts-freefont-otf)")
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"the PDF tests need {', '.join(missing)} when CI is set (.ci/run installs them)")
        pytest.skip(f"not installed: {', '.join(missing)} (see the README's set-up)")


# LECTURELIB_TEST_BUILD: see tests/conftest.py.
PDF_DIR = Path(os.environ.get("LECTURELIB_TEST_BUILD", ROOT / "_build")).resolve() / "test-pdf"


@pytest.fixture(scope="module")
def pdf_text() -> str:
    """The text of the student PDF, built from clean by ``make pdf``."""
    require_tools()
    out = PDF_DIR
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    proc = subprocess.run(["make", "pdf", f"PDF_DIR={out}"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=1800)
    pdf = out / "book.pdf"
    if proc.returncode != 0 or not pdf.is_file():
        pytest.fail(f"make pdf failed (rc {proc.returncode}):\n{(proc.stdout + proc.stderr)[-6000:]}")
    text = subprocess.run(["pdftotext", "-enc", "UTF-8", str(pdf), "-"], capture_output=True, text=True,
                          check=True).stdout
    assert len(text) > 100_000, "the PDF holds almost no text"
    return text


def flat(text: str) -> str:
    """Text without wrap marks, whitespace or hyphens: what survives line breaking."""
    return re.sub(r"[\s\-\u00ad]+", "", WRAP_MARK.sub("", text))


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def title_of(path: Path) -> str:
    first = "".join(cells(path)[0]["source"]).splitlines()[0]
    assert first.startswith("# "), f"{path.name}: the first cell does not start with the title"
    return first[2:].strip()


def printed_numbers(path: Path, per_chapter: int = 4) -> list[str]:
    """The first few decimals a chapter prints on short output lines (which never wrap)."""
    found = []
    for cell in cells(path):
        for output in cell.get("outputs", []):
            if output.get("output_type") != "stream" or output.get("name") != "stdout":
                continue
            for line in "".join(output["text"]).splitlines():
                if len(line) <= 70:
                    found += [n for n in re.findall(r"(?<![\w.])-?\d+\.\d{3,}(?![\w.])", line) if n not in found]
    return found[:per_chapter]


def test_pdf_has_every_chapter_title(pdf_text):
    text = flat(pdf_text)
    titles = [title_of(p) for p in CHAPTERS + EXERCISES] + ["The lecturelib reference", "Bibliography"]
    missing = [t for t in titles if flat(t) not in text]
    assert not missing, f"chapter titles missing from the PDF: {missing}"


def test_pdf_shows_the_numbers_the_chapters_print(pdf_text):
    text = flat(pdf_text)
    sample = {p.stem: printed_numbers(p) for p in CHAPTERS}
    assert sum(len(v) for v in sample.values()) >= 30, f"too small a sample of printed numbers: {sample}"
    missing = {chapter: [n for n in numbers if flat(n) not in text] for chapter, numbers in sample.items()}
    missing = {k: v for k, v in missing.items() if v}
    assert not missing, f"printed numbers missing from the PDF: {missing}"


def test_pdf_has_no_undefined_references(pdf_text):
    lines = [line for line in pdf_text.splitlines() if "??" in line]
    assert not lines, f"undefined references ('??') in the PDF: {lines[:5]}"


def test_pdf_has_every_character(pdf_text):
    """XeLaTeX only warns when a font lacks a glyph, and the character is left out."""
    log = (PDF_DIR / "_build" / "latex" / "book.log").read_text(encoding="utf-8", errors="replace")
    missing = sorted(set(re.findall(r"Missing character: There is no (.+?) in font", log)))
    assert not missing, f"characters the PDF's fonts do not have (left out of the PDF): {missing}"


FOLDING_TAGS = {"hide-input", "hide-cell", "remove-input", "remove-cell"}


def code_lines(folded: bool) -> list[str]:
    """Distinctive code lines of the chapters' cells that the HTML book folds (or shows)."""
    lines = []
    for p in CHAPTERS:
        for c in cells(p):
            if c["cell_type"] != "code" or bool(FOLDING_TAGS & set(c["metadata"].get("tags", []))) != folded:
                continue
            lines += [line.strip() for line in "".join(c["source"]).splitlines()
                      if len(line.strip()) >= MIN_CHARS and not line.strip().startswith("#")]
    return lines


def only_in(lines: list[str], elsewhere: list[str]) -> list[str]:
    """The lines of ``lines`` that no line of ``elsewhere`` contains (after flattening)."""
    other = "\n".join(flat(line) for line in elsewhere)
    return [line for line in lines if flat(line) not in other]


def test_pdf_has_no_graded_solutions(pdf_text):
    text = flat(pdf_text)
    leaked = [(where, line) for where, line in solution_lines()
              if not where.startswith("chapters/") and flat(line) in text]
    assert not leaked, f"graded solution text in the student PDF (source, line): {leaked[:3]}"
    # The same comparison finds the code of the chapters that is shown, so it would find a leak.
    public = code_lines(folded=False)
    found = sum(flat(line) in text for line in public)
    assert public and found >= 0.95 * len(public), f"only {found} of {len(public)} chapter code lines found"


def test_pdf_prints_no_folded_code(pdf_text):
    """The plotting code the HTML book folds away (hide-input, hide-cell) is not printed."""
    text = flat(pdf_text)
    # Lines that the shown code, the exercises or the reference (lecturelib's signatures and
    # examples) also print are not evidence either way.
    printed_elsewhere = code_lines(folded=False) + [
        line for p in EXERCISES for c in cells(p) for line in "".join(c["source"]).splitlines()]
    printed_elsewhere += [line for p in (ROOT / "lecturelib").rglob("*.py")
                          for line in p.read_text(encoding="utf-8").splitlines()]
    folded = only_in(code_lines(folded=True), printed_elsewhere)
    assert len(folded) > 100, f"only {len(folded)} folded code lines to look for"
    printed = [line for line in folded if flat(line) in text]
    assert not printed, f"{len(printed)} of {len(folded)} folded code lines are in the PDF: {printed[:3]}"


def test_pdf_has_one_bibliography_and_a_preface(pdf_text):
    """The contents (LaTeX's book.toc) list a Preface, then the parts, and one Bibliography."""
    toc = (PDF_DIR / "_build" / "latex" / "book.toc").read_text(encoding="utf-8")
    chapters = re.findall(r"\\contentsline \{chapter\}\{(.*?)\}\{", toc)
    assert chapters.count("Bibliography") == 1, f"the contents list Bibliography {chapters.count('Bibliography')} times"
    assert chapters[0] == "Preface" and chapters.count("Preface") == 1, chapters[:5]
    intro = (ROOT / "intro.md").read_text(encoding="utf-8")
    sections = re.findall(r"^## (.+)$", intro, re.M)
    assert sections and not set(sections) & set(chapters), "an intro section is a chapter of the PDF"
    assert "Proof Index" not in chapters, "the PDF lists the proofs' labels as an index"
    # Sphinx dates the title page "Nov 26, 2026" (today_fmt) unless told not to.
    first_page = pdf_text.split("\f", 1)[0]
    assert not re.search(r"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\w* \d{1,2}, \d{4}", first_page), first_page
    # The entries start with author-year labels, as the text cites them ("Shashua, 2009").
    assert re.search(r"^Shashua, 2009\. Amnon Shashua", pdf_text, re.M), "no author-year label in the bibliography"
    assert re.search(r"^Björck and Golub, 1973\. ", pdf_text, re.M), "the label of Björck and Golub is garbled"


def test_pdf_numbers_figures_and_tables_per_chapter(pdf_text):
    """Captions read "Figure 4.2", "Table 10.1": each chapter's own number, counted from 1
    without gaps (not a count through the whole book, nor the 100-based counters that
    keep the appendices' anchors apart)."""
    chapters = {title_of(path).split(".")[0] for path in CHAPTERS}
    for kind in ("Figure", "Table"):
        seen: dict[str, set[int]] = {}
        for chapter, index in re.findall(rf"^{kind} ([0-9A-Z]+)\.(\d+)\s*:", pdf_text, re.M):
            seen.setdefault(chapter, set()).add(int(index))
        assert set(seen) <= chapters, f"{kind} numbers of no chapter: {sorted(set(seen) - chapters)}"
        gaps = {c: sorted(n) for c, n in seen.items() if n != set(range(1, max(n) + 1))}
        assert not gaps, f"{kind} numbers with gaps: {gaps}"
        if kind == "Figure":
            assert len(seen) >= 12, f"figure captions found in only {sorted(seen)}"

"""The printable edition: ``make pdf`` renders the student book to one PDF and the library
reference to another, read back with pdftotext.

The PDFs are built once for this file (``make pdf`` into a folder of its own) and their
text is checked: every chapter's title, a sample of the numbers the chapters print, no
undefined reference (LaTeX prints "??" for one) and no solution text; numbered sections,
chapters that open with their text rather than their imports, no box wider than the
page, and an index of the book's concepts set in roman (the API names are indexed in the
reference volume).  Needs XeLaTeX, latexmk, the
FreeFont fonts and poppler-utils (the README's set-up; ``.ci/run`` installs them): without
them the tests skip, except when ``CI`` is set, where they fail.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from chapterpages import CHAPTER_FILES, PAGES, is_later_page
from lecturelib.book.rendering import chapter_number, is_setup_code
from solutiontext import MIN_CHARS, solution_lines

pytestmark = pytest.mark.full
ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = CHAPTER_FILES  # every page of every chapter
FIRST_PAGES = sorted(PAGES)  # a chapter's first page has its title and number
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


LATEX = PDF_DIR / "_build" / "latex"


def text_of(pdf: Path, *pages: int) -> str:
    first_last = ["-f", str(pages[0]), "-l", str(pages[-1])] if pages else []
    return subprocess.run(["pdftotext", "-enc", "UTF-8", *first_last, str(pdf), "-"], capture_output=True,
                          text=True, check=True).stdout


@pytest.fixture(scope="module")
def pdf_text() -> str:
    """The text of the student PDF, built from clean by ``make pdf``."""
    require_tools()
    out = PDF_DIR
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    proc = subprocess.run(["make", "pdf", f"PDF_DIR={out}"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=1800)
    pdf = out / "book.pdf"
    if proc.returncode != 0 or not pdf.is_file() or not (out / "reference.pdf").is_file():
        pytest.fail(f"make pdf failed (rc {proc.returncode}):\n{(proc.stdout + proc.stderr)[-6000:]}")
    text = text_of(pdf)
    assert len(text) > 100_000, "the PDF holds almost no text"
    return text


@pytest.fixture(scope="module")
def reference_text(pdf_text) -> str:
    """The text of the library reference's volume, built by the same ``make pdf``."""
    text = text_of(PDF_DIR / "reference.pdf")
    assert len(text) > 50_000, "the reference volume holds almost no text"
    return text


def flat(text: str) -> str:
    """Text without wrap marks, whitespace or hyphens: what survives line breaking (with
    LaTeX's curly apostrophes straight)."""
    return re.sub(r"[\s\-\u00ad]+", "", WRAP_MARK.sub("", text)).replace("\u2019", "'")


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


def section_titles(path: Path) -> list[str]:
    return [line[3:].strip() for source in (
        "".join(c["source"]) for c in cells(path) if c["cell_type"] == "markdown")
        for line in source.splitlines() if line.startswith("## ")]


def test_pdf_has_every_chapter_title(pdf_text, reference_text):
    text = flat(pdf_text)
    titles = [title_of(p) for p in FIRST_PAGES + EXERCISES] + ["Bibliography"]
    # a chapter's later pages (chapter 10's) continue it: their sections are its sections
    titles += [t for p in CHAPTERS if is_later_page(p) for t in section_titles(p)]
    missing = [t for t in titles if flat(t) not in text]
    assert not missing, f"chapter titles missing from the PDF: {missing}"
    # The library reference is its own volume, with a page per module.
    modules = [re.sub(r"[`*]", "", path.read_text(encoding="utf-8").splitlines()[0][2:])
               for path in sorted((ROOT / "reference").glob("*.md"))
               if path.stem not in ("index", "api-index")]  # the index of the API: HTML only
    reference = flat(reference_text)
    assert len(modules) > 10 and not [t for t in modules if flat(t) not in reference], modules
    assert "The lecturelib reference" in reference_text.split("\f", 1)[0], "the reference volume's title page"
    toc = (LATEX / "book.toc").read_text(encoding="utf-8")
    assert "lecturelib.bayes" not in toc and "lecturelib reference" not in toc, "the reference is inside the book"


def test_pdf_numbers_the_sections_of_each_chapter():
    """The contents read "1.1 Joint tables and Bayes' rule": each numbered chapter's sections
    are numbered from 1 under its number; the chapter headings are not numbered a second time."""
    toc = (LATEX / "book.toc").read_text(encoding="utf-8")
    entries = re.findall(r"\\contentsline \{(chapter|section)\}\{(.*?)\}\{[^{}]*\}\{[^{}]*\}%", toc)
    assert entries, "no entries read from book.toc"
    chapters = {title_of(path): chapter_number(title_of(path)) for path in FIRST_PAGES}
    current, numbers, wrong = None, {}, []
    for kind, text in entries:
        if kind == "chapter":
            if "\\numberline" in text:
                wrong.append(f"chapter numbered by LaTeX: {text}")
            current = chapter_number(text)
            continue
        number = re.match(r"\\numberline \{([^}]*)\}", text)
        if current is None:
            if number:
                wrong.append(f"section of an unnumbered chapter numbered: {text}")
            continue
        numbers.setdefault(current, []).append(number.group(1) if number else None)
    assert not wrong, wrong[:5]
    assert set(numbers) == set(chapters.values()), f"chapters without sections in the contents: {set(chapters.values()) - set(numbers)}"
    for chapter, seen in numbers.items():
        assert seen == [f"{chapter}.{i}" for i in range(1, len(seen) + 1)], f"chapter {chapter}: {seen}"
    # a chapter over several pages is one chapter: every page's sections, numbered on
    for first, pages in PAGES.items():
        if len(pages) > 1:
            sections = [t for page in pages for t in section_titles(page)]
            # (LaTeX's curly apostrophes straight: "Fisher's linear discriminant")
            listed = [re.sub(r"\\numberline \{[^}]*\}", "", text).replace(r"\sphinxhyphen {}", "-")
                      .replace("\u2019", "'") for kind, text in entries if kind == "section"]
            assert [t for t in sections if t in listed] == sections, f"{first.stem}: {sections}"


def setup_cells() -> list[str]:
    return ["".join(c["source"]) for p in CHAPTERS for c in cells(p)
            if c["cell_type"] == "code" and is_setup_code("".join(c["source"]))]


def test_setup_cells_are_recognised():
    assert is_setup_code("import numpy as np\n\nfrom lecturelib import bayes\nnp.set_printoptions(precision=4)\n")
    assert not is_setup_code("import numpy as np\nX = np.ones(3)\n")
    assert not is_setup_code("")
    first = [next(c for c in cells(p) if c["cell_type"] == "code") for p in FIRST_PAGES]
    assert all(is_setup_code("".join(c["source"])) for c in first), "a chapter's first cell is not read as its imports"


def test_no_chapter_opens_with_its_imports(pdf_text):
    """The chapters' cells of imports and printing options are not printed (43 lines in all)."""
    shown = code_lines(folded=False) + [line for p in EXERCISES for c in cells(p)
                                        for line in "".join(c["source"]).splitlines()]
    lines = [line.strip() for source in setup_cells() for line in source.splitlines() if line.strip()]
    distinctive = only_in(sorted(set(lines)), shown)
    assert len(distinctive) > 10, distinctive
    text = flat(pdf_text)
    printed = [line for line in distinctive if flat(line) in text]
    assert not printed, f"import lines of the chapters in the PDF: {printed[:5]}"


OVERFULL = re.compile(r"^Overfull \\[hv]box \((\d+(?:\.\d+)?)pt too (?:wide|high)\).*$", re.M)


def test_overfull_boxes_are_read_from_the_log():
    log = ("Overfull \\hbox (21.3pt too wide) in paragraph at lines 10--12\n"
           "Overfull \\vbox (5.7pt too high) has occurred while \\output is active\n"
           "Underfull \\hbox (badness 10000) in paragraph at lines 3--4\n"
           "Overfull \\vbox (0.2pt too high) detected at line 40\n")
    assert [float(m.group(1)) for m in OVERFULL.finditer(log)] == [21.3, 5.7, 0.2]


@pytest.mark.parametrize("volume", ["book", "reference"])
def test_pdf_has_no_box_wider_than_the_page(pdf_text, volume):
    """No line, table or equation sticks out of the type area by more than 5 pt (the
    notation tables did by up to 21 pt, their formulas in a column too narrow), and no
    page is more than 5 pt too tall (one was 5.7 pt: an overfull vbox)."""
    log = (LATEX / f"{volume}.log").read_text(encoding="utf-8", errors="replace")
    wide = [m.group(0) for m in OVERFULL.finditer(log) if float(m.group(1)) > 5]
    assert not wide, f"{volume}.pdf: {len(wide)} overfull boxes beyond 5 pt: {wide[:5]}"


def index_pages(pdf: Path) -> list[int]:
    """The pages of the general index, the last chapter of a volume."""
    pages = int(re.search(r"^Pages:\s+(\d+)", subprocess.run(["pdfinfo", str(pdf)], capture_output=True,
                                                              text=True, check=True).stdout, re.M).group(1))
    found = []
    for page in range(pages, 0, -1):
        found.append(page)
        # its first page opens with the heading (pdftotext reads "INDEX"); the others carry
        # "Index" in their foot line only
        if re.match(r"\s*Index\s*\n", text_of(pdf, page), re.I):
            break
    return sorted(found)


def fonts_on(pdf: Path, pages: list[int]) -> str:
    return subprocess.run(["pdffonts", "-f", str(pages[0]), "-l", str(pages[-1]), str(pdf)], capture_output=True,
                          text=True, check=True).stdout


def test_book_index_holds_concepts_in_roman_and_the_reference_the_api(pdf_text, reference_text):
    book = (LATEX / "book.ind").read_text(encoding="utf-8")
    api = (LATEX / "reference.ind").read_text(encoding="utf-8")
    assert "notation" in book and "in module" not in book, "API entries in the book's index"
    # the API names the chapters mention only point to the reference volume
    assert all("\\see{" in item for item in re.split(r"\n\s*\\(?:sub)*item\b", book) if "lecturelib." in item), \
        "API pages in the book's index"
    assert "in module lecturelib" in api, "the reference's index has no API names"
    pages = index_pages(PDF_DIR / "book.pdf")
    assert len(pages) < 15, pages
    fonts = fonts_on(PDF_DIR / "book.pdf", pages)
    assert "FreeSerif" in fonts and "Mono" not in fonts, f"the book's index is not set in roman:\n{fonts}"
    assert "Mono" in fonts_on(PDF_DIR / "reference.pdf", index_pages(PDF_DIR / "reference.pdf"))


def test_pdf_shows_the_numbers_the_chapters_print(pdf_text):
    text = flat(pdf_text)
    sample = {p.stem: printed_numbers(p) for p in CHAPTERS}
    assert sum(len(v) for v in sample.values()) >= 30, f"too small a sample of printed numbers: {sample}"
    missing = {chapter: [n for n in numbers if flat(n) not in text] for chapter, numbers in sample.items()}
    missing = {k: v for k, v in missing.items() if v}
    assert not missing, f"printed numbers missing from the PDF: {missing}"


def test_pdf_has_no_undefined_references(pdf_text, reference_text):
    for volume, text in (("book", pdf_text), ("reference", reference_text)):
        lines = [line for line in text.splitlines() if "??" in line]
        assert not lines, f"undefined references ('??') in {volume}.pdf: {lines[:5]}"
        log = (LATEX / f"{volume}.log").read_text(encoding="utf-8", errors="replace")
        undefined = re.findall(r"(?:Hyper reference|Reference) `[^']*' on page \d+ undefined", log)
        assert not undefined, f"{volume}.pdf: links to nothing: {undefined[:5]}"


def test_pdf_has_every_character(pdf_text):
    """XeLaTeX only warns when a font lacks a glyph, and the character is left out."""
    log = (LATEX / "book.log").read_text(encoding="utf-8", errors="replace")
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
            if is_setup_code("".join(c["source"])):  # the imports, left out of print
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
    toc = (LATEX / "book.toc").read_text(encoding="utf-8")
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
    chapters = {title_of(path).split(".")[0] for path in FIRST_PAGES}
    for kind in ("Figure", "Table"):
        seen: dict[str, set[int]] = {}
        for chapter, index in re.findall(rf"^{kind} ([0-9A-Z]+)\.(\d+)\s*:", pdf_text, re.M):
            seen.setdefault(chapter, set()).add(int(index))
        assert set(seen) <= chapters, f"{kind} numbers of no chapter: {sorted(set(seen) - chapters)}"
        gaps = {c: sorted(n) for c, n in seen.items() if n != set(range(1, max(n) + 1))}
        assert not gaps, f"{kind} numbers with gaps: {gaps}"
        if kind == "Figure":
            assert len(seen) >= 12, f"figure captions found in only {sorted(seen)}"


# ------------------------------------------------------------------- tables set for print

_TABLE_ENV = re.compile(r"\\begin\{(tabulary|tabular|longtable)\}(?:\{\\linewidth\})?(?:\[t\])?"
                        r"(\{(?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*\})(.*?)\\end\{\1\}", re.S)
# A number as LaTeX sets it: a sign (a hyphen, Sphinx's \sphinxhyphen{}, a minus U+2212 or a
# math minus), digits, decimals, an exponent (e+30 or \times 10^{30}), a percent sign; a
# cell may add its spread "(0.022)" or "± 3.9", or a second count "/ 10".
_SIGN = r"(?:-|\\sphinxhyphen\{\}|\u2212|\+)"
_NUM = (rf"{_SIGN}?\d+(?:\.\d+)?(?:e{_SIGN}?\d+|\s*\\\(\s*\\times\s*10\^\{{?-?\d+\}}?\s*\\\))?%?")
_NUMERIC_CELL = re.compile(rf"^(?:{_NUM}(?:\s*\(\s*{_NUM}\s*\)|\s*±\s*{_NUM}|\s*/\s*{_NUM})?"
                           rf"|\\\(\s*10\^\{{-?\d+\}}\s*\\\))$")
_HYPHEN_MINUS = re.compile(rf"(?:^|[\s(±/{{])(?:-|\\sphinxhyphen\{{\}})\d|e(?:-|\\sphinxhyphen\{{\}})\d")


def without_macro(text: str, name: str, keep: bool) -> str:
    """``text`` without each ``\\name{...}`` (braces matched), keeping its argument or not."""
    out, i = [], 0
    while (start := text.find(f"\\{name}{{", i)) >= 0:
        depth, j = 0, start + len(name) + 1
        for j in range(start + len(name) + 1, len(text)):
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            if depth == 0:
                break
        out += [text[i:start], text[start + len(name) + 2:j] if keep else ""]
        i = j + 1
    return "".join(out) + text[i:]


def split_top_level(text: str, separator: str) -> list[str]:
    """``text`` split at ``separator`` outside braces (``&`` between cells, ``\\\\`` between rows)."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        if text.startswith(separator, i) and depth == 0 and not (separator == "&" and text[i - 1:i] == "\\"):
            parts.append(text[start:i])
            i += len(separator)
            start = i
            continue
        if text[i] == "\\":
            i += 2
            continue
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    return parts + [text[start:]]


def table_cell(tex: str) -> str:
    for name in ("hphantom", "phantom"):
        tex = without_macro(tex, name, keep=False)
    tex = without_macro(tex, "rlap", keep=True)
    tex = re.sub(r"\\(sphinxAtStartPar|sphinxstyletheadfamily|sphinxhline|sphinxtableatstartofbodyhook"
                 r"|addlinespace|sphinxfixclines\{\d+\})\b", "", tex)
    return " ".join(tex.split())


def latex_tables(tex: str) -> list[tuple[list[str], list[list[str]]]]:
    """Each table of a LaTeX document: its column specifiers and its body's cells."""
    found = []
    for match in _TABLE_ENV.finditer(tex):
        spec = re.sub(r"[<>]\{(?:[^{}]|\{[^{}]*\})*\}|\|", "", match.group(2)[1:-1])
        columns = re.findall(r"\\[XY]\{[^}]*\}(?:\{[^}]*\})?|p\{[^}]*\}|[lrcLRCJT]", spec)
        body = match.group(3).split("\\sphinxmidrule", 1)[-1].split("\\sphinxbottomrule")[0]
        body = re.sub(r"\\endfirsthead.*?\\endlastfoot", "", body, flags=re.S)
        rows = [[table_cell(c) for c in split_top_level(row, "&")] for row in split_top_level(body, "\\\\")]
        found.append((columns, [row for row in rows if any(row)]))
    return found


def numeric_column_faults(tex: str) -> tuple[int, list[str], list[str]]:
    """(numeric columns, those not right-aligned, cells with a hyphen for a minus)."""
    count, left, hyphens = 0, [], []
    for columns, rows in latex_tables(tex):
        for j in range(max((len(row) for row in rows), default=0)):
            column = [row[j] for row in rows if j < len(row) and row[j]]
            if not column or not all(_NUMERIC_CELL.match(cell) for cell in column):
                continue
            count += 1
            if j >= len(columns) or columns[j] not in ("r", "R"):
                left.append(f"{columns[j] if j < len(columns) else '?'}: {column[:3]}")
            # (a minus in math, \(10^{-1}\), is a minus)
            hyphens += [cell for cell in column if _HYPHEN_MINUS.search(re.sub(r"\\\(.*?\\\)", "", cell))]
    return count, left, hyphens


def test_numeric_cells_are_read_from_the_latex():
    tex = ("\\begin{tabulary}{\\linewidth}[t]{TTRR}\n\\sphinxtoprule\nh&a&b&c\\\\\n\\sphinxmidrule\n"
           "\\sphinxAtStartPar\nx&\\sphinxAtStartPar\n\\sphinxhyphen{}0.6296&"
           "\u22121\\rlap{.5 (1.9)}\\hphantom{\\vbox{\\hbox{.5 (1.9)}}}&1\\rlap{.268\\(\\times 10^{30}\\)}\\\\\n"
           "\\sphinxAtStartPar\ny&2.0&-3&\\sphinxAtStartPar\n4\\\\\n\\sphinxbottomrule\n\\end{tabulary}")
    count, left, hyphens = numeric_column_faults(tex)
    assert count == 3 and len(left) == 1 and hyphens == ["\\sphinxhyphen{}0.6296", "-3"], (count, left, hyphens)


def test_numeric_columns_are_right_aligned_with_a_true_minus(pdf_text):
    """Every column of numbers in the PDF's tables is right-aligned (on the decimal point: the
    part after the integer digits is set in the width of the column's widest) and its
    negative numbers have a minus sign, not a hyphen (228 columns were left-aligned and 37
    cells had a hyphen)."""
    tex = (LATEX / "book.tex").read_text(encoding="utf-8")
    count, left, hyphens = numeric_column_faults(tex)
    assert count > 150, f"only {count} numeric columns found in book.tex"
    assert not left, f"{len(left)} numeric columns not right-aligned: {left[:5]}"
    assert not hyphens, f"{len(hyphens)} numbers with a hyphen for a minus: {hyphens[:5]}"
    cells = {cell for _, rows in latex_tables(tex) for row in rows for cell in row}
    assert "1.268\\(\\times 10^{30}\\)" in cells and "1.268e+30" not in tex, "Table 8.1 prints e-notation"
    assert "\\sphinxthistablewithcolorrowsstyle" not in tex, "table rows are shaded"


# ------------------------------------------------------------------------- white space

def destinations(pdf: Path) -> list[tuple[int, str]]:
    out = subprocess.run(["pdfinfo", "-dests", str(pdf)], capture_output=True, text=True, check=True).stdout
    return [(int(page), name) for page, name in re.findall(r'^\s*(\d+) \[.*?\] "(.*)"$', out, re.M)]


GAP_PT = 30     # a white band taller than this (2.5 lines; the space around a heading is less) is empty
DPI = 72


def empty_fractions(pdf: Path, openings: set[int]) -> list[float]:
    """For each page, the fraction of the text area (A4 less the 1 in margins: the header and
    the page number are outside it) taken by white bands taller than ``GAP_PT``, read from the
    page rendered by pdftoppm.  On a chapter's or part's first page (``openings``) the band
    above the title and the title itself are the opening, not empty space."""
    import numpy as np
    from PIL import Image

    fractions = []
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["pdftoppm", "-r", str(DPI), "-gray", str(pdf), f"{tmp}/p"], check=True)
        for number, image in enumerate(sorted(Path(tmp).glob("p-*.pgm"), key=lambda p: int(p.stem[2:])), 1):
            pixels = np.asarray(Image.open(image))
            body = pixels[DPI:pixels.shape[0] - DPI]
            ink = list((body < 200).any(axis=1))
            if number in openings and any(ink):   # skip the title and the white under it
                first = ink.index(True)
                after = ink.index(False, first) if False in ink[first:] else len(ink)
                nxt = ink.index(True, after) if True in ink[after:] else len(ink)
                ink = ink[nxt:]
            empty = run = 0
            for has_ink in ink + [True]:
                if has_ink:
                    empty += run if run > GAP_PT * DPI / 72 else 0
                    run = 0
                else:
                    run += 1
            fractions.append(empty / len(body))
    return fractions


def emptiest_pages(pdf: Path) -> list[tuple[int, float]]:
    """The pages more than a third empty that do not end a chapter or a part (nor open a
    part, nor are blank pages before a chapter), with their empty fraction."""
    dests = destinations(pdf)
    parts = {page for page, name in dests if name.startswith("part.")}
    openings = {page for page, name in dests if name.startswith("chapter")} | parts
    openings.add(index_pages(pdf)[0])
    fractions = empty_fractions(pdf, openings)
    body_start = min(page for page, name in dests if name == "page.1")
    found = []
    for page, empty in enumerate(fractions, 1):
        blank = empty > 0.99
        following = page + 1
        while following <= len(fractions) and fractions[following - 1] > 0.99:
            following += 1
        ends = following in openings or following > len(fractions)
        if page >= body_start and page not in parts and not blank and not ends and empty > 1 / 3:
            found.append((page, round(empty, 2)))
    return found


def test_few_pages_are_left_partly_empty(pdf_text):
    """At most 5 pages of the book are more than a third empty other than at the end of a
    chapter or a part (17 were, mostly before a figure pinned to its place: figures and
    captioned tables float now)."""
    pages = emptiest_pages(PDF_DIR / "book.pdf")
    assert len(pages) <= 5, f"{len(pages)} pages more than a third empty (page, fraction): {pages}"


# ----------------------------------------------------------------------- small matters

def test_bibliography_has_no_footnote_repeating_a_doi(pdf_text):
    """A DOI shows its address once (34 entries added a footnote repeating it)."""
    tex = (LATEX / "book.tex").read_text(encoding="utf-8")
    footnotes = re.findall(r"\\begin\{footnote\}.*?\\end\{footnote\}", tex, re.S)
    repeated = [f for f in footnotes if "https://doi.org/" in f]
    assert not repeated, f"{len(repeated)} footnotes repeat a DOI: {repeated[:2]}"
    assert len(re.findall(r"https://doi\.org/10\.", flat(pdf_text))) >= 30, "the DOIs are missing"


def test_the_library_name_is_never_hyphenated(pdf_text, reference_text):
    """No "lecture- lib.hpca" (the reference's index broke the name 25 times).  pdftotext
    joins a word hyphenated at a line's end unless it keeps the layout."""
    for volume in ("book", "reference"):
        text = subprocess.run(["pdftotext", "-layout", "-enc", "UTF-8", str(PDF_DIR / f"{volume}.pdf"), "-"],
                              capture_output=True, text=True, check=True).stdout
        broken = re.findall(r"\blecture-(?=\s)", text)  # ("lec-ture" is the word lecture)
        assert not broken, f"{volume}.pdf hyphenates lecturelib {len(broken)} times"


def test_each_chapter_ends_with_one_line_on_its_exercises(pdf_text):
    """The notebook reader's paragraphs on the graded exercise set (86 words, a command line)
    are one line in print, pointing to the set in the Exercises part."""
    sources = [p for p in CHAPTERS if any("graded exercise set for this chapter is the notebook"
                                          in "".join(c["source"]) for c in cells(p))]
    assert len(sources) >= 12, sources
    text = flat(pdf_text)
    assert flat("runs the whole notebook and all of them") not in text
    assert text.count(flat("The graded exercises of this chapter:")) == len(sources)
    assert flat("The graded exercises of this chapter: Exercises 8: the VC dimension, page") in text


def test_the_preface_and_the_index_name_the_reference_volume(pdf_text):
    preface = pdf_text.split("How the book is organised", 1)[-1].split("Exercises, and how to use", 1)[0]
    assert "reference.pdf" in preface, "the preface does not name the reference volume"
    book = (LATEX / "book.ind").read_text(encoding="utf-8")
    # "\item \spxentry{lecturelib.svm.SVC}, \hyperindexformat{\see{The lecturelib reference (reference.pdf)}}{45}"
    items = re.split(r"\n\s*\\(?:sub)*item\b", book)
    api = [item for item in items if "lecturelib." in item]
    assert len(api) >= 40, f"only {len(api)} API names in the book's index"
    assert all("\\see{The lecturelib reference (reference.pdf)}" in item for item in api), api[:3]

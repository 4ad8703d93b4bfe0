"""Tables and captions (issue 44): every table of the chapters and appendices is numbered
("Table 10.3"), captioned and can be referred to with {numref}; captions write math as
math, not as ASCII.

A table is either a Markdown table inside a ```{table}``` directive, or the output of a
code cell that shows a `plotting.result_table` given a ``name``:
a ``text/markdown`` output holding the same directive, which MyST-NB parses as MyST
(the notebook's metadata sets ``render_markdown_format: myst``), so that the HTML book and
the PDF both get a real, numbered table (CONTRIBUTING, "Figures, tables and equations").

The source checks read the notebooks as JSON and run in well under a second; the HTML
check reads the student book (the ``student_html`` fixture).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))

TABLE_DIRECTIVE = re.compile(r"```\{table\} *([^\n]*)\n((?::[^\n]*\n)*)")
PIPE_TABLE = re.compile(r"^\|[ :-]*-{3}", re.M)

GREEK = (r"alpha|beta|gamma|delta|eps|epsilon|eta|theta|kappa|lambda|mu|nu|rho|sigma|tau|"
         r"phi|chi|psi|omega|Phi|Pi|Sigma|Lambda|Gamma|Delta")
ASCII_MATH = [
    (rf"\b({GREEK})\b", "a Greek letter spelt out"),
    # (a name such as the lecture's kcca_SVM is not a subscript)
    (r"\b[A-Za-z]+_(?![A-Z]{2})[-A-Za-z0-9{(]", "a subscript written with _"),
    (r"[A-Za-z0-9)]\^[-A-Za-z0-9{(]", "a power written with ^"),
    (r"\bsqrt\b|√", "a square root in text"),
    (r"<=|>=|!=|->", "a relation in ASCII"),
    (r"\b\d+(\.\d+)?e[-+]?\d+\b", "a number in e-notation"),
    (r"(?<![(\w'-])[b-zB-HJ-Z](?![)\w'-])", "a variable in plain letters"),
]


def notebook(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def chapter_prefix(path: Path) -> str:
    return "ch" + path.stem.split("-")[0]


def output_tables(cell: dict) -> list[str]:
    """The MyST table directives among a code cell's text/markdown outputs."""
    found = []
    for out in cell.get("outputs", []):
        text = "".join(out.get("data", {}).get("text/markdown", ""))
        if text.startswith("```{table}"):
            found.append(text)
    return found


def without_math(text: str) -> str:
    """``text`` with its $...$ / $$...$$ math and its {role}`...` spans removed."""
    text = re.sub(r"\$\$.*?\$\$", " ", text, flags=re.S)
    text = re.sub(r"\$[^$]*\$", " ", text)
    return re.sub(r"\{[a-z:-]+\}`[^`]*`", " ", text)


def ascii_math(text: str) -> list[str]:
    """What in ``text`` (outside its math) is math written in ASCII."""
    plain = without_math(text)
    return [why for pattern, why in ASCII_MATH if re.search(pattern, plain)]


def captions(path: Path):
    """(where, caption) for every figure and table caption of a chapter."""
    for i, cell in enumerate(notebook(path)["cells"]):
        source = "".join(cell["source"])
        figure = cell["metadata"].get("mystnb", {}).get("figure", {})
        if "caption" in figure:
            yield f"cell {i} figure", figure["caption"]
        if cell["cell_type"] == "markdown":
            for match in TABLE_DIRECTIVE.finditer(source):
                yield f"cell {i} table", match.group(1)
            for match in re.finditer(r"```\{glue:figure\}[^\n]*\n((?::[^\n]*\n)*)\n?(.*?)```",
                                     source, re.S):
                yield f"cell {i} figure", match.group(2)
        for table in output_tables(cell):
            yield f"cell {i} table", TABLE_DIRECTIVE.match(table).group(1)


# ------------------------------------------------------------------ the checks' own test

def test_ascii_math_is_recognised_and_math_is_not():
    assert ascii_math("Balanced risk for five weights eta_-1.")
    assert ascii_math("The SVM with C = 10^4.")
    assert ascii_math("The dual objective at min mu.")
    assert ascii_math("for four average rolls beta")
    assert ascii_math("the error against the sample size m")
    assert not ascii_math(r"Balanced risk for five weights $\eta_{-1}$.")
    assert not ascii_math(r"The SVM with $C = 10^4$ on (a) and (b), in 2-D.")
    assert not ascii_math(r"See {numref}`ch10-fig-x`: the bound at $m = 100$.")
    assert not ascii_math("AP of pSVM and kcca_SVM")
    assert ascii_math("the mean of C_bar")


# ------------------------------------------------------------------ source checks

@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_table_is_a_named_table_directive(path):
    nb = notebook(path)
    prefix = chapter_prefix(path)
    problems, names = [], []
    for i, cell in enumerate(nb["cells"]):
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            blocks = list(TABLE_DIRECTIVE.finditer(source))
            pipes = len(PIPE_TABLE.findall(source))
            if pipes != len(blocks):
                problems.append(f"cell {i}: {pipes} Markdown tables, {len(blocks)} table directives")
        else:
            for out in cell.get("outputs", []):
                html = "".join(out.get("data", {}).get("text/html", ""))
                if "<table" in html:
                    problems.append(f"cell {i}: an HTML table output (not numbered); "
                                    "give its result_table a name")
            blocks = [TABLE_DIRECTIVE.match(t) for t in output_tables(cell)]
        for block in blocks:
            caption, options = block.group(1).strip(), block.group(2)
            name = re.search(r":name: *(\S+)", options)
            if not caption:
                problems.append(f"cell {i}: a table without a caption")
            if not name:
                problems.append(f"cell {i}: a table without :name:")
            elif not name.group(1).startswith(f"{prefix}-tab-"):
                problems.append(f"cell {i}: table name {name.group(1)} lacks {prefix}-tab-")
            else:
                names.append(name.group(1))
    assert not problems, f"{path.name}: " + "; ".join(problems)
    assert len(names) == len(set(names)), f"{path.name}: a table name used twice"
    if any(output_tables(c) for c in nb["cells"]):
        assert nb["metadata"].get("mystnb", {}).get("render_markdown_format") == "myst", \
            f"{path.name}: table outputs need the notebook's mystnb render_markdown_format: myst"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_computed_tables_come_from_the_library(path):
    """A computed table is `plotting.result_table(..., name=...)`, the cell's last
    expression: no chapter writes MyST tables with a helper of its own."""
    for i, cell in enumerate(notebook(path)["cells"]):
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        assert "{table}" not in source, f"{path.name} cell {i}: writes a MyST table itself"
        if output_tables(cell):
            assert "plotting.result_table(" in source and "name=" in source, \
                f"{path.name} cell {i}: a table output not made by plotting.result_table"
            assert [o["output_type"] for o in cell["outputs"]][-1] == "execute_result", \
                f"{path.name} cell {i}: the table is not the cell's last expression"


def test_table_names_are_unique_in_the_book():
    seen = {}
    for path in CHAPTERS:
        text = path.read_text(encoding="utf-8")
        for name in set(re.findall(r":name: (ch[0-9A-Z]+-tab-[a-z0-9-]+)", text)):
            assert name not in seen, f"{name} in {seen.get(name)} and {path.name}"
            seen[name] = path.name
    assert len(seen) >= 66


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_captions_write_math_as_math(path):
    bad = [f"{where}: {', '.join(why)}: {caption[:70]!r}"
           for where, caption in captions(path) if (why := ascii_math(caption))]
    assert not bad, f"{path.name}: captions with ASCII math:\n" + "\n".join(bad)


def table_headers(path: Path):
    """(where, heading) for every column heading of the chapter's tables."""
    for i, cell in enumerate(notebook(path)["cells"]):
        source = "".join(cell["source"])
        blocks = (re.findall(r"```\{table\}[^\n]*\n(?::[^\n]*\n)*\n?(\|[^\n]*)", source)
                  if cell["cell_type"] == "markdown" else
                  [re.search(r"^\|[^\n]*", t, re.M).group(0) for t in output_tables(cell)])
        for header in blocks:
            for heading in re.split(r"(?<!\\)\|", header)[1:-1]:
                yield f"cell {i}", heading.strip()


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_table_headings_write_math_as_math(path):
    bad = [f"{where}: {', '.join(why)}: {heading!r}"
           for where, heading in table_headers(path) if (why := ascii_math(heading))]
    assert not bad, f"{path.name}: table headings with ASCII math:\n" + "\n".join(bad)


def test_no_math_in_a_table_cell_uses_a_bare_bar():
    """Inside a Markdown table a ``|`` must be escaped, and MyST's math keeps the
    backslash: ``$|C|$`` in a cell would typeset as a double bar. Cells write
    ``\\lvert``/``\\rvert`` or ``\\mid`` instead."""
    for path in CHAPTERS:
        for cell in notebook(path)["cells"]:
            for table in output_tables(cell):
                rows = [line for line in table.splitlines() if line.startswith("|")]
                for row in rows:
                    for math in re.findall(r"\$[^$]*\$", row):
                        assert "\\|" not in math, f"{path.name}: {math}"


# ------------------------------------------------------------------ the rendered book

def test_every_table_in_the_html_has_its_number_and_caption(student_html):
    missing, counted = [], 0
    for path in CHAPTERS:
        page = (student_html / "chapters" / f"{path.stem}.html").read_text(encoding="utf-8")
        article = page[page.index("<main"):page.index("</main>")]
        number = chapter_prefix(path)[2:].lstrip("0")
        for table in re.findall(r"<table\b.*?</table>", article, re.S):
            counted += 1
            caption = re.search(r'<caption><span class="caption-number">Table '
                                rf'{number}\.(\d+) </span><span class="caption-text">(.+?)</span>',
                                table, re.S)
            if not caption or not re.sub(r"<[^>]+>", "", caption.group(2)).strip():
                text = re.sub(r"<[^>]+>|\s+", " ", table)
                missing.append(f"{path.stem}: {text[:80]}")
    assert counted >= 66
    assert not missing, "tables without a number and caption:\n" + "\n".join(missing)

"""Display math must survive Markdown: no line inside $$ ... $$ may read as a list item.

Markdown is parsed before the math is typeset.  A line inside a display equation that
starts with `+`, `-` or `*` followed by a space, or with a number and `.` or `)`, is a
list marker to a Markdown parser that does not know the `$$` block (the notebook
interface, a converter, a `$$` that landed inside a paragraph), and the equation is torn
into a bullet list.  Exercises 10, question 3 was garbled this way.  Keep the operator
at the end of the previous line instead, or break the equation with `aligned` and start
the continued line with `&`.
"""

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(
    path.relative_to(ROOT).as_posix()
    for folder in ("chapters", "solutions", "exercises")
    for path in (ROOT / folder).glob("*.ipynb")
)

# A list marker: up to any indentation, then -, + or * (or 1. / 1)) and a space or the end.
LIST_MARKER = re.compile(r"^\s*(?:[-+*]|\d{1,9}[.)])(?:\s|$)")
FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})\s*(\S*)")



def list_like_lines_in_display_math(text):
    """The lines inside ``$$`` blocks of Markdown ``text`` that parse as list items.

    Returns ``(line number, line)`` pairs, numbered from 1.  Code fences are skipped;
    the bodies of MyST directives (```` ```{prf:theorem} ````) are Markdown and are read.
    """
    found, in_math, fences = [], False, []  # fences: open (marker, is_code) pairs
    for number, line in enumerate(text.split("\n"), start=1):
        fence = FENCE.match(line)
        if fence and not in_math:
            marker, info = fence.groups()
            top = fences[-1] if fences else None
            closes = (
                top is not None
                and not info
                and marker[0] == top[0][0]
                and len(marker) >= len(top[0])
            )
            if closes:
                fences.pop()
            elif top is None or not top[1]:
                is_code = not info.startswith("{") or info.startswith("{code")
                fences.append((marker, is_code))
            continue
        if fences and fences[-1][1]:
            continue
        if in_math and LIST_MARKER.match(line):
            found.append((number, line))
        if line.count("$$") % 2 == 1:
            in_math = not in_math
    return found


def test_the_check_finds_the_defect():
    garbled = "Text\n\n$$\na + b\n+ c\n- d\n* e\n2. f\n$$\n\n+ a real bullet\n"
    assert [n for n, _ in list_like_lines_in_display_math(garbled)] == [5, 6, 7, 8]
    repaired = "$$\n\\begin{aligned}\n&a + b +\n  c \\\\\n&\\quad - d\n\\end{aligned}\n$$\n"
    assert list_like_lines_in_display_math(repaired) == []
    fenced = "```python\n$$\n+ x\n```\n"
    assert list_like_lines_in_display_math(fenced) == []
    theorem = "```{prf:theorem}\n:label: t\n\n$$\na\n+ b\n$$\n```\n"
    assert [n for n, _ in list_like_lines_in_display_math(theorem)] == [6]


@pytest.mark.parametrize("notebook", NOTEBOOKS)
def test_no_list_marker_inside_display_math(notebook):
    nb = nbformat.read(ROOT / notebook, as_version=4)
    problems = [
        f"cell {index}, line {number}: {line.strip()[:60]}"
        for index, cell in enumerate(nb.cells)
        if cell.cell_type == "markdown"
        for number, line in list_like_lines_in_display_math(cell.source)
    ]
    assert not problems, (
        f"{notebook}: a line inside $$ ... $$ starts like a Markdown list item "
        "(move the operator to the end of the previous line):\n" + "\n".join(problems)
    )

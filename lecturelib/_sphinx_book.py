"""Sphinx extension for the book: the library reference and the PDF's parts (not part of the library).

The appendix "The lecturelib reference" is generated from the docstrings by autodoc and
numpydoc.  A few things of a scikit-learn-style library do not survive that as written, and
this extension handles them while the docstrings are read, without changing the source:

- scikit-learn attaches generated ``set_fit_request``/``set_score_request`` methods to every
  estimator whose ``fit`` or ``score`` takes extra arguments; they are scikit-learn's
  metadata-routing API, not the course's, and are left out of the reference.
- In reStructuredText a word ending in ``_`` (``n_iter_``, the scikit-learn name of a fitted
  attribute) is a link, and ``|entry|`` is a substitution.  Outside inline literals, roles
  and math blocks such words are escaped so that they read as written, the way numpydoc
  already escapes them in parameter names.  A line indented under a plain paragraph of a
  module docstring (a wrapped line of a hand-aligned list) is joined to it.
- A docstring's pointer to its chapter ("See the chapter ...") written after an
  ``Attributes`` or ``Returns`` list would be read by numpydoc as one more entry of the
  list; it is moved up to the end of the description, where the reader looks for it.

In the PDF (the LaTeX builder), each captioned part of ``_toc.yml`` (Chapters, Appendices,
Exercises, ...) starts with a ``\\part`` page, as the HTML book's sidebar groups them.

Loaded by the book's ``_config.yml`` (``extra_extensions``).
"""

from __future__ import annotations

import re

from docutils import nodes
from sphinx import addnodes
from sphinx.util.texescape import escape as tex_escape

# The text outside ``...``, `...` and :role:`...`: literal parts are kept as they are.
_LITERAL = re.compile(r"(:[\w:+-]+:`[^`]*`|``.+?``|`[^`]*`)")
_TRAILING_UNDERSCORE = re.compile(r"(?<![\w\\])([A-Za-z][A-Za-z0-9_]*?)_(?![\w`])")
_BARS = re.compile(r"\|(\w[\w-]*)\|")
_PARAMETER = re.compile(r"^\s*\*{0,2}\w+(, \*{0,2}\w+)*$")
_REQUEST_METHOD = re.compile(r"^set_\w+_request$")


def escape_text(line: str) -> str:
    """``line`` with trailing underscores and ``|word|`` escaped outside literals and roles."""
    parts = _LITERAL.split(line)
    for i in range(0, len(parts), 2):  # the even parts are outside literals
        parts[i] = _BARS.sub(r"\\|\1\\|", _TRAILING_UNDERSCORE.sub(r"\1\\_", parts[i]))
    return "".join(parts)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def escape_docstring(lines: list[str], *, join_wrapped: bool = False) -> list[str]:
    """Escape every prose line of a docstring; skip directive bodies and literal blocks."""
    out: list[str] = []
    block_indent = None  # indentation of the directive or ``::`` paragraph being skipped
    in_doctest = False
    for line in lines:
        stripped = line.strip()
        if in_doctest and not stripped:
            in_doctest = False
        if block_indent is not None:
            if stripped and _indent(line) <= block_indent:
                block_indent = None
            else:
                out.append(line)
                continue
        if stripped.startswith(">>>") or in_doctest:
            in_doctest = True
            out.append(line)
            continue
        if (join_wrapped and out and out[-1].strip() and stripped and _indent(line) > _indent(out[-1])
                and not out[-1].rstrip().endswith("::") and not out[-1].lstrip().startswith("..")):
            out[-1] = out[-1].rstrip() + " " + escape_text(stripped)
            continue
        if stripped.startswith(".. ") or stripped.endswith("::"):
            block_indent = _indent(line)
            out.append(line if stripped.startswith(".. ") else escape_text(line))
            continue
        name, sep, kind = line.partition(" : ")
        if sep and _PARAMETER.match(name):  # numpydoc escapes the names itself
            out.append(name + sep + escape_text(kind))
        else:
            out.append(escape_text(line))
    return out


_SECTION_UNDERLINE = re.compile(r"^\s*-{3,}\s*$")


def chapter_pointer_first(lines: list[str]) -> list[str]:
    """Move "See the chapter ..." paragraphs that follow the first numpydoc section before it."""
    headers = [i for i in range(1, len(lines)) if _SECTION_UNDERLINE.match(lines[i]) and lines[i - 1].strip()]
    if not headers:
        return lines
    first = headers[0] - 1
    base = _indent(lines[first])
    kept, moved, i = lines[:first], [], first
    while i < len(lines):
        line = lines[i]
        starts = (line.strip().startswith("See the chapter") and _indent(line) == base
                  and (i == 0 or not lines[i - 1].strip()))
        if not starts:
            kept.append(line)
            i += 1
            continue
        paragraph = []
        while i < len(lines) and lines[i].strip():
            paragraph.append(lines[i])
            i += 1
        moved += paragraph + [""]
    if not moved:
        return lines
    head = kept[:first]
    while head and not head[-1].strip():
        head.pop()
    return head + [""] + moved + kept[first:]


def _process_docstring(app, what, name, obj, options, lines):
    lines[:] = escape_docstring(chapter_pointer_first(lines), join_wrapped=(what == "module"))


def _skip_member(app, what, name, obj, skip, options):
    if _REQUEST_METHOD.match(name):
        return True
    return None


def _parts_for_latex(app, doctree):
    """Before each captioned toctree of the root document, a LaTeX ``\\part`` of that caption."""
    if app.builder.name != "latex" or app.env.docname != app.config.root_doc:
        return
    for toctree in list(doctree.findall(addnodes.toctree)):
        caption = toctree.get("caption")
        if not caption:
            continue
        anchor = toctree.parent if isinstance(toctree.parent, nodes.compound) else toctree
        part = nodes.raw("", f"\\part{{{tex_escape(caption)}}}\n", format="latex")
        anchor.parent.insert(anchor.parent.index(anchor), part)


def setup(app):
    app.connect("doctree-read", _parts_for_latex)
    # Before numpydoc (priority 500), which turns the sections into reST of its own.
    app.connect("autodoc-process-docstring", _process_docstring, priority=400)
    app.connect("autodoc-skip-member", _skip_member)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

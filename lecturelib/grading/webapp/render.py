"""A student's answer as safe HTML: Markdown (markdown-it-py) with the math left for
MathJax, then sanitised (nh3) so that nothing a student wrote can run in the grader's browser.

Defence in depth, each layer enough on its own for script:

1. markdown-it renders with raw HTML *off* (a ``<script>`` in an answer is shown as text)
   and at most :data:`MAX_NESTING` levels of nested blocks; the input is cut at
   :data:`MAX_RENDERED_CHARS` characters;
2. nh3 (the Ammonia sanitiser) keeps only a small list of tags, no attribute but ``href``
   and ``title`` on links (``http``, ``https`` and ``mailto`` only, ``rel="noopener
   noreferrer nofollow"``) and the class ``math`` on the math wrappers;
3. the app's Content-Security-Policy allows scripts from its own static files only.

Math (``$...$``, ``$$...$$``, as in the notebooks) is wrapped as ``\\(...\\)`` and
``\\[...\\]`` in elements of class ``math``, the only ones MathJax typesets; its TeX input
is configured with small ``maxMacros`` and ``maxBuffer`` (``static/mathjax-config.js``),
so a macro bomb ends in an error message, not a frozen page.
"""

from __future__ import annotations

import html

import nh3
from markdown_it import MarkdownIt
from mdit_py_plugins.dollarmath import dollarmath_plugin

MAX_RENDERED_CHARS = 50_000  # a 15-line proof is a few thousand; markdown-it takes about 1 s for 50 000 of list items
MAX_NESTING = 20
TAGS = {"p", "br", "hr", "em", "strong", "code", "pre", "blockquote", "ul", "ol", "li",
        "h1", "h2", "h3", "h4", "h5", "h6", "a", "span", "div", "table", "thead", "tbody",
        "tr", "th", "td", "del"}
ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}}
CLASSES = {"span": {"math"}, "div": {"math"}, "pre": {"plain"}}
SCHEMES = {"http", "https", "mailto"}


def _math(content: str, options: dict) -> str:
    """The inside of the plugin's ``<span class="math inline">`` or ``<div class="math block">``."""
    if options.get("display_mode"):
        return f"\\[{html.escape(content)}\\]"
    return f"\\({html.escape(content)}\\)"


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "maxNesting": MAX_NESTING, "linkify": False})
    md.enable("table").enable("strikethrough")
    return md.use(dollarmath_plugin, renderer=_math, allow_space=True, allow_digits=True)


_MD = _parser()


def sanitise(fragment: str) -> str:
    """``fragment`` with only the allowed tags, attributes, classes and link schemes."""
    return nh3.clean(fragment, tags=TAGS, attributes=ATTRIBUTES, allowed_classes=CLASSES,
                     url_schemes=SCHEMES, link_rel="noopener noreferrer nofollow",
                     strip_comments=True)


def render_answer(text: str) -> tuple[str, str]:
    """Safe HTML of a Markdown answer, and a note for the grader ("" when there is none):
    the answer was cut at :data:`MAX_RENDERED_CHARS`, or nests deeper than
    :data:`MAX_NESTING` levels, in which case it is shown as plain text, in full."""
    text = text if isinstance(text, str) else ""
    notes = []
    if len(text) > MAX_RENDERED_CHARS:
        text = text[:MAX_RENDERED_CHARS]
        notes.append(f"only the first {MAX_RENDERED_CHARS} characters are shown")
    tokens = _MD.parse(text)
    if any(t.level >= MAX_NESTING - 1 for t in tokens) or (text.strip() and not tokens):
        notes.append(f"the answer nests deeper than {MAX_NESTING} levels: shown as plain text")
        return f"<pre class=\"plain\">{html.escape(text)}</pre>", "; ".join(notes)
    return sanitise(_MD.renderer.render(tokens, _MD.options, {})), "; ".join(notes)

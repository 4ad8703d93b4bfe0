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

Theorems, definitions, examples, numbered equations (everything Sphinx numbers through
``numfig``) are numbered per chapter: "Theorem 4.2", equation "(4.3)", "Theorem A.1" in
appendix A.  The chapter's number is the one its title carries ("4. Support vector
machines", "A. Constrained optimisation"), so the book needs no numbered toctree (which
would number the titles a second time).  A long chapter may run over several pages: its
first page carries the number, the later pages are listed under it in ``_toc.yml``
(``sections:``) with titles of their own, and the numbers run on from page to page
("Figure 10.7" on the second page after "Figure 10.6" on the first); in the HTML book a
later page's title carries its chapter's number too ("10 SVM-2K"), and in the PDF the later
pages' sections are the chapter's sections.  Any other page whose title has no number
numbers its items from 1 on its own.

The HTML book has two indexes, as the PDF has one per volume: the general index
(``genindex``) holds the chapters' terms, and a page of the library reference
(``lecturelib_api_index``) the names of the API, each pointing to the other.

The search index holds the pages' prose, not the code of their notebook cells, and a
scorer (``_static/search_scorer.js``, ``html_search_scorer``) ranks the chapters above the
library reference and the exercises, so that a search for an idea finds the chapter that
explains it first.  The search page shows a snippet of text under each hit.  Sphinx's search page fetches
every hit's page to cut the snippet from it, which browsers refuse for pages opened from
disk (``file://``, the offline book; Sphinx issues 9156 and 10407), so the hits came without
snippets.  At the end of an HTML build the text of every page's article (the page as
built: in the student book without its solutions) is written to
``_static/search-summaries.js``, which only the search page loads; it answers the search
page's requests for those pages from that text, so no page is fetched at all.

In the PDF (the LaTeX builder), each captioned part of ``_toc.yml`` (Chapters, Appendices,
Exercises, ...) starts with a ``\\part`` page, as the HTML book's sidebar groups them, and
the ``genindex`` page (the HTML book's general index, listed under Back matter) is left out:
it is empty in the source, and LaTeX prints its own index.  A correction box (an
admonition with the class ``correction``; in the HTML book styled by ``_static/book.css``)
is drawn in the same rust colour in the PDF.  LaTeX numbers labelled equations itself;
the chapter titles are unnumbered there (``secnumdepth`` -1), so each chapter's file
starts the equation counter afresh under its own number: "(4.3)", "(A.1)", as in the HTML.

The printed book leaves out what the HTML book folds away: the code of a cell tagged
``hide-input`` or ``hide-cell`` (the plotting code of the figures) is dropped from the
LaTeX document, its outputs stay; so is a cell of imports and printing options only (each
chapter's first cell).  The chapters' sections are numbered ("4.1 The margin"): LaTeX
numbers sections, not the chapter headings, whose titles carry their numbers.  The
library reference is a volume of its own (``reference.pdf``, ``latex_documents`` in
``_config.yml``) with its own index of the API, set in typewriter; the book's index
holds the text's concepts, set in roman, and its links into the reference are plain
text (one PDF cannot link into another).  The intro's sections form one unnumbered "Preface"
ahead of Part I instead of three unnumbered chapters; LaTeX's bibliography is the book's
one Bibliography chapter (the page ``bibliography.md`` only places it); a proof is set as
text starting with an italic *Proof.* and ending with a square, not as an untitled box.

Tables and figures are set for print: a column of numbers is right-aligned on the decimal
point, with a true minus and powers of ten for e-notation; the rules are booktabs' without
shading, a group of rows (its label shown once) is set off by a little space; a figure or
captioned table outside any box floats (``htbp``), a long uncaptioned table (the notation)
breaks across pages.  A chapter's closing paragraphs on its graded exercise set become one
line pointing to the set's page; a DOI is shown once, without a footnote repeating it; the
API names the chapters mention go into the book's index pointing to the reference volume.

The bibliography's labels are author-year ("Shashua, 2009", "Hastie et al., 2009",
"Björck and Golub, 1973"), as the text cites: the pybtex style ``lecturelib`` (the
``unsrt`` formatting, sorted by author and year, labels by :class:`AuthorYearLabels`).

Accessibility and the browser: a figure's image without alt text (Sphinx would write its
file name) gets the figure's caption as alt text; an in-chapter exercise's solution is a
closed dropdown (sphinx-togglebutton folds ``.admonition.dropdown``), in both editions;
a script sphinx-thebe adds once per build is written once per page (it was declared
twice, a console error); the download button of a page downloads the notebook instead of
opening its JSON in a new tab; the sidebar's section toggles have a name for screen
readers, and the bibliography's entries are the items of its list (ARIA).  The search snippets are cut from the text, its
formulas as plain text ("d < ∞", no dollars or backslashes), around the first word of the query
found, and a page that
matches several times is listed once, where it ranks highest.

Loaded by the book's ``_config.yml`` (``extra_extensions``).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from html import escape, unescape
from pathlib import Path

from docutils import nodes
from markupsafe import Markup
from pylatexenc import latexwalker, macrospec
from pylatexenc.latex2text import LatexNodes2Text, MacroTextSpec, get_default_latex_context_db
from sphinx import addnodes
from sphinx.transforms.post_transforms import SphinxPostTransform
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


# ---------------------------------------------------------------- search-result snippets

SEARCH_SUMMARIES = "search-summaries.js"
_ARTICLE = re.compile(r'<article\b[^>]*class="bd-article"[^>]*>(.*)</article>', re.S)
_DROPPED = re.compile(r'<(script|style)\b.*?</\1>|<a\b[^>]*class="headerlink"[^>]*>.*?</a>'
                      r'|<span\b[^>]*class="eqno"[^>]*>.*?</span>', re.S)
_MATH = re.compile(r'<(span|div)\b[^>]*class="math[^"]*"[^>]*>(.*?)</\1>', re.S)
_MATH_DELIMITERS = (("\\(", "\\)"), ("\\[", "\\]"))
# The code of a notebook cell (its input); the outputs stay.
_CELL_CODE = re.compile(r'(<div\b[^>]*class="cell_input[^"]*"[^>]*>\s*<div\b[^>]*>\s*<div class="highlight"><pre>)'
                        r'.*?(</pre>)', re.S)
_SECTION_OPEN = re.compile(r'<section\b[^>]*?\bid="([^"]*)"[^>]*>')
_BLOCK_END = re.compile(r"</(p|div|li|dt|dd|tr|td|th|h[1-6]|pre|table|figure|blockquote)>|<br\s*/?>")
_TAG = re.compile(r"<(?!section id=|/section>)[^>]*>")

_SUMMARIES_JS = """\
/* The search page's snippets, for a book opened from disk (written by lecturelib.book.rendering).
   Sphinx's searchtools.js fetches each hit's page to cut a snippet from it; browsers refuse
   fetch() for file:// pages.  Requests for the book's own pages are answered from the text
   of each page's article below (sections kept, so a hit's anchor finds its section). */
(() => {
  const pages = %s;
  const fetchPage = window.fetch.bind(window);
  window.fetch = (resource, init) => {
    const root = document.documentElement.dataset.content_root || "";
    const suffix = DOCUMENTATION_OPTIONS.FILE_SUFFIX;
    if (typeof resource === "string" && resource.startsWith(root) && resource.endsWith(suffix)) {
      const doc = resource.slice(root.length, resource.length - suffix.length);
      if (Object.prototype.hasOwnProperty.call(pages, doc)) {
        const html = '<div role="main">' + pages[doc] + "</div>";
        return Promise.resolve(new Response(html, {headers: {"Content-Type": "text/html"}}));
      }
    }
    return fetchPage(resource, init);
  };
  // The snippet starts at the first word of the query the text contains (Sphinx looks for
  // the stems, which the text often lacks: "entropi", "theori"), and each page is listed
  // once, at its first hit in Sphinx's order (results are shown from the end of the list).
  // This file loads before searchtools.js: Search is patched once the page is parsed,
  // before searchtools' own DOMContentLoaded listener runs the query.
  document.addEventListener("DOMContentLoaded", () => {
  Search.makeSearchSummary = (htmlText, keywords, anchor) => {
    const text = Search.htmlToText(htmlText, anchor);
    if (text === "") return null;
    const query = new URLSearchParams(window.location.search).get("q") || "";
    const words = query.toLowerCase().split(/\\s+/).filter((w) => w && !w.startsWith("-"));
    const lower = text.toLowerCase();
    const hits = [...words, ...keywords].map((w) => lower.indexOf(w.toLowerCase())).filter((i) => i > -1);
    const start = hits.length ? Math.max(Math.min(...hits) - 80, 0) : 0;
    const summary = document.createElement("p");
    summary.classList.add("context");
    summary.textContent = (start > 0 ? "..." : "") + text.substr(start, 240).trim()
      + (start + 240 < text.length ? "..." : "");
    return summary;
  };
  const perform = Search._performSearch;
  Search._performSearch = (...args) => {
    const results = perform(...args);
    const shown = new Map();
    for (const result of results) shown.set(result[0], result);  // the last one is shown first
    return results.filter((result) => shown.get(result[0]) === result);
  };
  });
})();
"""


# LaTeX that pylatexenc's default tables miss: two-argument \binom, \operatorname, the
# spacing of named functions, and the double bar (its \| is read as a line break).
_WALKER_MACROS = [macrospec.MacroSpec("binom", "{{"), macrospec.MacroSpec("operatorname", "{")]
_TEXT_MACROS = [MacroTextSpec("binom", simplify_repl="C(%s, %s)"),
                MacroTextSpec("operatorname", simplify_repl="%s "),
                *(MacroTextSpec(name, simplify_repl=f"{name} ")
                  for name in ("ln", "log", "exp", "det", "min", "max", "sup", "inf", "Pr", "tr"))]
_DIGIT_FRACTION = re.compile(r"\\[dt]?frac\s*(\d)\s*(\d)")
_DOUBLE_BAR = re.compile(r"\\\||\\[lr]Vert\b")
_RELATION = re.compile(r"\s*([≤≥≠≈∈∉⊂⊆⊇→↦⇒⇔≽≼∼])\s*")


@lru_cache(maxsize=1)
def _latex_to_text():
    walker = latexwalker.get_default_latex_context_db()
    walker.add_context_category("lecturelib", prepend=True, macros=_WALKER_MACROS)
    text = get_default_latex_context_db()
    text.add_context_category("lecturelib", prepend=True, macros=_TEXT_MACROS)
    return walker, LatexNodes2Text(latex_context=text, math_mode="text")


def math_text(tex: str) -> str:
    """A formula as plain text a search snippet can show: ``d < \\infty`` reads "d < ∞",
    ``\\hat R_\\gamma`` "R̂_γ", ``\\binom mk`` "C(m, k)"; no dollar and no backslash is left.
    Sub- and superscripts keep their ``_`` and ``^``."""
    walker, converter = _latex_to_text()
    tex = _DOUBLE_BAR.sub("‖", _DIGIT_FRACTION.sub(r"\\frac{\1}{\2}", tex))
    nodes, _, _ = latexwalker.LatexWalker(tex, latex_context=walker, tolerant_parsing=True).get_latex_nodes()
    text = converter.nodelist_to_text(nodes).replace("\\", " ").replace("$", "")
    return _RELATION.sub(r" \1 ", " ".join(text.split())).strip()


def math_snippet(match: re.Match) -> str:
    """A formula of a built page (MathJax's markup, HTML-escaped TeX) as escaped plain text
    (:func:`math_text`): a snippet reads "m samples with n features", without holes."""
    tex = unescape(_TAG.sub("", match.group(2))).strip()
    for opening, closing in _MATH_DELIMITERS:
        if tex.startswith(opening) and tex.endswith(closing):
            tex = tex[len(opening):-len(closing)]
    text = escape(math_text(tex), quote=False)
    return f" {text} " if match.group(1) == "div" else text


def article_text(page_html: str) -> str:
    """The text of a built page's article as minimal HTML: ``<section id>`` tags and text.

    Entities stay escaped (the result is HTML); tags other than sections are dropped, with
    a space where a block ends so that words of adjacent blocks do not run together.
    Formulas become plain text (:func:`math_snippet`); the code of notebook cells
    is left out (a snippet shows the prose around a hit).
    """
    match = _ARTICLE.search(page_html)
    if not match:
        return ""
    body = _CELL_CODE.sub(r"\1\2", _DROPPED.sub("", match.group(1)))
    body = _MATH.sub(math_snippet, body)
    body = _SECTION_OPEN.sub(lambda m: f'<section id="{m.group(1)}">', body)
    body = _TAG.sub("", _BLOCK_END.sub(" ", body))
    return re.sub(r"\s+", " ", body).strip()


def _search_summaries(app, exception):
    """Write the article text of every page for the search page (see the module docstring)."""
    if exception is not None or app.builder.format != "html" or not app.config.html_show_search_summary:
        return
    outdir = Path(app.outdir)
    pages = {}
    for docname in sorted(app.env.found_docs):
        page = outdir / f"{docname}{app.builder.out_suffix}"
        if page.is_file():
            pages[docname] = article_text(page.read_text(encoding="utf-8"))
    data = json.dumps(pages, ensure_ascii=True, sort_keys=True).replace("</", "<\\/")
    (outdir / "_static").mkdir(exist_ok=True)
    (outdir / "_static" / SEARCH_SUMMARIES).write_text(_SUMMARIES_JS % data, encoding="utf-8")


def searchable(doctree: nodes.document) -> nodes.document:
    """What the search indexes of a page: a copy of ``doctree`` without the code of its
    notebook cells (their outputs stay), in which the text's index entries are main entries.

    Each ``{index}`` entry of the book marks where the text defines a term (CONTRIBUTING),
    but MyST writes it as an ordinary entry, which Sphinx's search lists after every other
    hit ("arbitrary cross-references"); as a main entry it is ranked by its score like the
    rest.  The entries autodoc writes for the library's objects are left as they are.
    """
    copy = doctree.deepcopy()
    for node in list(copy.findall(nodes.container)):
        if node.get("nb_element") == "cell_code_source":
            node.parent.remove(node)
    for node in copy.findall(addnodes.index):
        following = node.next_node(descend=False, siblings=True)
        if isinstance(following, addnodes.desc):
            continue
        node["entries"] = [(kind, value, target, main or "main", key)
                           for kind, value, target, main, key in node["entries"]]
    return copy


def _index_prose_not_code(app):
    """The search index holds each page's text without its code cells: a search for "kernel"
    finds the chapters that explain kernels, not every notebook that imports them.  (The
    library's names are still found: the reference's entries are indexed as objects.)"""
    if app.builder.format != "html" or not hasattr(app.builder, "index_page"):
        return
    index_page = app.builder.index_page

    def index_prose(pagename, doctree, title):
        index_page(pagename, searchable(doctree), title)

    app.builder.index_page = index_prose


def _scorer_from_the_book(app, config):
    """``html_search_scorer`` is read relative to the book's folder, as Sphinx documents it
    (Sphinx 7.4 opens it relative to the working directory)."""
    if config.html_search_scorer and not Path(config.html_search_scorer).is_absolute():
        config.html_search_scorer = str(Path(app.srcdir) / config.html_search_scorer)


def _summaries_on_search_page(app, pagename, templatename, context, doctree):
    if pagename == "search" and app.builder.format == "html":
        app.add_js_file(SEARCH_SUMMARIES)  # on this page only (called from html-page-context)


def _not_in_the_book(config) -> set[str]:
    """Pages of the HTML book that the printed book leaves out: the general index (LaTeX
    prints its own) and the start of every other volume (the library reference)."""
    return {"genindex", *(volume[0] for volume in config.lecturelib_latex_volumes)}


def _html_only_pages_out_of_print(app, doctree):
    """In the PDF, no toctree lists a page that only the HTML book has (``genindex``, the
    index of the API): LaTeX prints each volume's index itself."""
    if app.builder.name != "latex":
        return
    html_only = {"genindex", app.config.lecturelib_api_index}
    for toctree in doctree.findall(addnodes.toctree):
        toctree["entries"] = [(title, ref) for title, ref in toctree["entries"] if ref not in html_only]
        toctree["includefiles"] = [ref for ref in toctree.get("includefiles", []) if ref not in html_only]


# ------------------------------------------------------------------- the HTML book's indexes

def volume_pages(env, config) -> set[str]:
    """The pages of the other volumes (the library reference): each volume's first page
    (``lecturelib_latex_volumes``) and every page below it in the toctree."""
    found: set[str] = set()
    stack = [volume[0] for volume in config.lecturelib_latex_volumes]
    while stack:
        page = stack.pop()
        if page not in found:
            found.add(page)
            stack += env.toctree_includes.get(page, [])
    return found


def index_links(entries, keep):
    """Sphinx's index entries (``genindexentries``: letters, each with its entries and their
    links and sub-entries) with the links for which ``keep(uri)`` holds; an entry left
    without a link, and a letter left without an entry, are dropped."""
    out = []
    for letter, group in entries:
        kept = []
        for name, (links, subitems, category) in group:
            links = [(main, uri) for main, uri in links if keep(uri)]
            subitems = [(sub, [(main, uri) for main, uri in sublinks if keep(uri)])
                        for sub, sublinks in subitems]
            subitems = [(sub, sublinks) for sub, sublinks in subitems if sublinks]
            if links or subitems:
                kept.append((name, (links, subitems, category)))
        if kept:
            out.append((letter, kept))
    return out


def _page_of_link(builder, uri: str) -> str:
    """``reference/kernels.html#lecturelib.kernels.gram_matrix`` -> ``reference/kernels``
    (a link of the general index, relative to the book's root)."""
    target = uri.split("#", 1)[0]
    suffix = builder.link_suffix
    return target[:-len(suffix)] if suffix and target.endswith(suffix) else target


def _index_of_concepts(app, pagename, templatename, context, doctree):
    """The general index (``genindex``) holds the book's concepts: its links into the
    library reference go to the index of the API (``lecturelib_api_index``), as the PDF
    indexes the API in the reference's volume."""
    api_index = app.config.lecturelib_api_index
    if pagename != "genindex" or "genindexentries" not in context or not api_index:
        return None
    api = volume_pages(app.env, app.config)
    context["genindexentries"] = index_links(
        context["genindexentries"], lambda uri: _page_of_link(app.builder, uri) not in api)
    context["index_title"] = "Index"
    context["index_note"] = Markup(
        "The terms of the chapters. The names of the library (its modules, functions, "
        f'classes and their members) are in the <a href="{context["pathto"](api_index)}">'
        "index of the lecturelib reference</a>.")
    return "lecturelib-index.html"


def _index_of_the_api(app):
    """The index of the API (``lecturelib_api_index``, a page of the library reference): the
    general index's entries that link into the reference."""
    page = app.config.lecturelib_api_index
    if not page or app.builder.format != "html":
        return []
    from sphinx.environment.adapters.indexentries import IndexEntries

    api = volume_pages(app.env, app.config)
    entries = index_links(IndexEntries(app.env).create_index(app.builder),
                          lambda uri: _page_of_link(app.builder, uri) in api)

    def from_the_page(uri):  # the links are relative to the root (genindex), not to the page
        target, sep, anchor = uri.partition("#")
        return app.builder.get_relative_uri(page, _page_of_link(app.builder, target)) + sep + anchor

    entries = [(letter, [(name, ([(main, from_the_page(uri)) for main, uri in links],
                                 [(sub, [(main, from_the_page(uri)) for main, uri in sublinks])
                                  for sub, sublinks in subitems], category))
                         for name, (links, subitems, category) in group])
               for letter, group in entries]
    genindex = app.builder.get_relative_uri(page, "genindex")
    context = {"genindexentries": entries, "index_title": "Index of the lecturelib API",
               "index_note": Markup(
                   "The modules, functions, classes and members of the library, with the pages "
                   "of this reference that document them. The terms of the chapters are in the "
                   f'book\'s <a href="{genindex}">general index</a>.')}
    return [(page, context, "lecturelib-index.html")]


def _index_templates(app, config):
    """The template of the two indexes (``templates/lecturelib-index.html``)."""
    config.templates_path.append(str(Path(__file__).parent / "templates"))


def _add_latex_volumes(app, env):
    """The other volumes (``lecturelib_latex_volumes``) join ``latex_documents`` once the pages
    are read: jupyter-book 1 rewrites a one-entry list after Sphinx starts, and fails on more."""
    if app.builder.name != "latex":
        return
    documents = list(app.config.latex_documents)
    for volume in app.config.lecturelib_latex_volumes:
        if all(document[1] != volume[1] for document in documents):
            documents.append(tuple(volume))
    app.config.latex_documents = documents


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
        left_out = _not_in_the_book(app.config)
        toctree["entries"] = [(title, ref) for title, ref in toctree["entries"] if ref not in left_out]
        toctree["includefiles"] = [ref for ref in toctree.get("includefiles", []) if ref not in left_out]
    # The book's index holds the text's concepts (the reference volume indexes the API in
    # typewriter); Sphinx sets every index entry in typewriter.
    doctree.insert(0, nodes.raw("", "\\gdef\\sphinxstyleindexentry#1{#1}\n", format="latex"))


# "4. Support vector machines" -> "4"; "A. Constrained optimisation" -> "A".
_TITLE_NUMBER = re.compile(r"^\s*(\d+|[A-Z])\.\s")


def chapter_number(title: str) -> str | None:
    """The number a chapter title starts with ("12", "A"), or None for an unnumbered page."""
    match = _TITLE_NUMBER.match(title)
    return match.group(1) if match else None


def _toctree_parents(env) -> dict[str, str]:
    """Each page's parent: the page whose toctree lists it (``_toc.yml``'s ``sections:``)."""
    parents = {}
    for parent, children in env.toctree_includes.items():
        for child in children:
            parents.setdefault(child, parent)
    return parents


def chapter_of(env, docname, parents=None):
    """(first page, number) of the chapter page ``docname`` belongs to, or (None, None).

    A page whose title starts with a number ("10. Subspace methods") opens that chapter.
    A page without one that ``_toc.yml`` lists among the ``sections:`` of a chapter's page
    (chapter 10's later pages) continues that chapter: its figures, tables, equations
    and theorems are numbered on from the pages before it ("Figure 10.7" after "10.6").
    """
    parents = _toctree_parents(env) if parents is None else parents
    page, seen = docname, set()
    while page is not None and page not in seen:
        seen.add(page)
        title = env.titles.get(page)
        number = chapter_number(title.astext()) if title is not None else None
        if number is not None:
            return page, number
        page = parents.get(page)
    return None, None


def _chapter_number_of(env, docname):
    """The number of the chapter page ``docname`` belongs to (its own title's), or None."""
    return chapter_of(env, docname)[1]


def is_later_page(env, docname, parents=None) -> bool:
    """True for a page that continues a chapter begun on an earlier page."""
    first, _ = chapter_of(env, docname, parents)
    return first is not None and first != docname


def chapter_pages(env, first) -> list[str]:
    """The pages of the chapter that opens on ``first``, in reading order (the toctree's)."""
    pages = [first]
    for child in env.toctree_includes.get(first, []):
        if is_later_page(env, child):
            pages += chapter_pages(env, child)
    return pages


def _number_per_chapter(app, env):
    """Renumber what Sphinx numbered through the whole book, chapter by chapter.

    Sphinx's toctree collector (``env-get-updated``, run before this listener) counts each
    kind (theorem, equation, figure, ...) through the book when the toctree is not
    numbered.  Here each chapter's items of each kind are counted again from 1, in the
    order Sphinx found them, page after page of the chapter (a chapter may run over
    several pages, see `chapter_of`), and prefixed with the chapter number; a page outside
    the chapters counts its own from 1.  Every consumer (sphinx-proof's titles and
    ``{prf:ref}``, equation numbers, ``{numref}``, the LaTeX builder) reads these numbers
    from ``env.toc_fignumbers``.
    """
    parents = _toctree_parents(env)
    groups: dict[str, list[str]] = {}
    for docname in env.toc_fignumbers:
        first, _ = chapter_of(env, docname, parents)
        groups.setdefault(first or docname, []).append(docname)
    changed = []
    for first, pages in groups.items():
        number = _chapter_number_of(env, first)
        prefix = () if number is None else (int(number) if number.isdigit() else number,)
        order = chapter_pages(env, first) if number is not None else [first]
        pages.sort(key=lambda page: (order.index(page) if page in order else len(order), page))
        counts: dict[str, int] = {}
        for docname in pages:
            kinds = env.toc_fignumbers[docname]
            renumbered = {}
            for kind, ids in kinds.items():
                start = counts.get(kind, 0)
                renumbered[kind] = {node_id: (*prefix, start + i)
                                    for i, node_id in enumerate(ids, start=1)}
                counts[kind] = start + len(ids)
            if renumbered != kinds:
                env.toc_fignumbers[docname] = renumbered
                changed.append(docname)
    return changed


def number_continued_title(title: nodes.Element, number: str) -> None:
    """Put chapter ``number`` before the text of ``title`` ("SVM-2K" -> "10 SVM-2K"), once."""
    prefix = f"{number} "
    if not title.astext().startswith(prefix):
        title.insert(0, nodes.Text(prefix))


def _later_pages_carry_their_number(app, env):
    """In the HTML book a page that continues a chapter shows the chapter's number before
    its title, as the chapter's first page does ("10 SVM-2K" under "10. Subspace methods"):
    in the sidebar, the browser's title, the previous/next links and a ``{doc}`` link's
    text.  (Its heading gets it in ``_later_page_headings_for_html``.)  The title keeps no
    full stop after the number, so `chapter_number` still reads the page as a later page.
    The PDF's later pages are sections of their chapter and keep their titles unchanged."""
    if app.builder.format != "html":
        return []
    parents = _toctree_parents(env)
    for docname in list(env.titles):
        if not is_later_page(env, docname, parents):
            continue
        number = _chapter_number_of(env, docname)
        number_continued_title(env.titles[docname], number)
        number_continued_title(env.longtitles[docname], number)
        toc = env.tocs.get(docname)
        entry = next(toc.findall(nodes.reference), None) if toc is not None else None
        if entry is not None:
            number_continued_title(entry, number)
    return []


def _later_page_headings_for_html(app, doctree, docname):
    """The heading of a page that continues a chapter carries the chapter's number (see
    `_later_pages_carry_their_number`)."""
    if app.builder.format != "html" or not is_later_page(app.env, docname):
        return
    section = next(iter(doctree.findall(nodes.section)), None)
    if section is not None and isinstance(section[0], nodes.title):
        number_continued_title(section[0], _chapter_number_of(app.env, docname))


# The colours of _static/book.css, for the note-style box LaTeX draws for an admonition.
_CORRECTION_LATEX = ("\\begingroup\\sphinxsetup{"
                     "div.note_border-TeXcolor={RGB}{164,70,31},"
                     "div.note_background-TeXcolor={RGB}{251,238,230},"
                     "div.note_title-background-TeXcolor={RGB}{246,214,196},"
                     "div.note_title-foreground-TeXcolor={RGB}{164,70,31}}\n")


def _corrections_for_latex(app, doctree, docname):
    """In the PDF, draw every admonition of class ``correction`` in the correction colours."""
    if app.builder.name != "latex":
        return
    for box in list(doctree.findall(nodes.admonition)):
        if "correction" in box.get("classes", []):
            parent = box.parent
            at = parent.index(box)
            parent.insert(at + 1, nodes.raw("", "\\endgroup\n", format="latex"))
            parent.insert(at, nodes.raw("", _CORRECTION_LATEX, format="latex"))


LATEX_NUMBERED = ("equation", "figure", "table")  # what the PDF numbers per chapter (sections too)


def _equation_numbers_for_latex(app, doctree, docname):
    """In the PDF, number each chapter's equations, figures and tables with its own number
    ("4.3", "A.1")."""
    if app.builder.name != "latex":
        return
    parents = _toctree_parents(app.env)
    for start in list(doctree.findall(addnodes.start_of_file)):
        if is_later_page(app.env, start.get("docname"), parents):
            continue  # its chapter's numbers run on (see _later_pages_into_their_chapter)
        number = _chapter_number_of(app.env, start.get("docname"))
        # The chapter heading itself is never numbered by LaTeX (its title has the number).
        tex = "\\setcounter{secnumdepth}{-1}"
        if number is None:
            tex += "".join(f"\\setcounter{{{c}}}{{0}}\\renewcommand{{\\the{c}}}{{\\arabic{{{c}}}}}"
                           for c in LATEX_NUMBERED) + "\n"
        else:
            # A distinct chapter counter per chapter keeps hyperref's anchors apart; the
            # counters are reset by hand, since setting the chapter counter does not.
            counter = int(number) if number.isdigit() else 100 + ord(number) - ord("A")
            tex += f"\\setcounter{{chapter}}{{{counter}}}" + "".join(
                f"\\setcounter{{{c}}}{{0}}\\renewcommand{{\\the{c}}}{{{number}.\\arabic{{{c}}}}}"
                for c in LATEX_NUMBERED + ("section",)) + "\n"
            _number_sections_after_title(start)
        start.insert(0, nodes.raw("", tex, format="latex"))


def _number_sections_after_title(start):
    """After a numbered chapter's heading, its sections are numbered ("4.1 The margin")."""
    chapter = next((child for child in start.children if isinstance(child, nodes.section)), None)
    title = chapter.next_node(nodes.title) if chapter is not None else None
    if title is not None:
        chapter.insert(chapter.index(title) + 1, nodes.raw("", "\\setcounter{secnumdepth}{1}\n", format="latex"))


# ------------------------------------------------------------------------ the printed book

# What a chapter's first cell holds besides imports: printing options and the figure style.
_SETUP_LINE = re.compile(r"^(import \S|from \S+ import \S|np\.set_printoptions\(|pd\.set_option\("
                         r"|sklearn\.set_config\(|plotting\.use_book_style\(\)|#)")


def is_setup_code(source: str) -> bool:
    """True for a cell of imports and printing options only (a chapter's first cell)."""
    lines = [line.strip() for line in source.splitlines() if line.strip()]
    return bool(lines) and all(_SETUP_LINE.match(line) for line in lines)


def _folded_code_out_of_print(app, doctree, docname):
    """In the PDF, drop the code of every cell the HTML book folds (``hide-input``, ``hide-cell``),
    and a chapter's opening cell when it only imports and sets printing options (the
    printed chapter starts with its text, not with forty lines of imports)."""
    if app.builder.name != "latex":
        return
    for cell in list(doctree.findall(nodes.container)):
        if cell.get("nb_element") != "cell_code":
            continue
        sources = [child for child in cell.children if child.get("nb_element") == "cell_code_source"]
        if cell.get("hide_mode") in ("input", "input+output", "all"):
            for child in sources:
                cell.remove(child)
        elif sources and is_setup_code(sources[0].astext()):
            cell.remove(sources[0])
        if not cell.children:
            cell.parent.remove(cell)


def _later_pages_into_their_chapter(app, doctree, docname):
    """In the PDF, a chapter that runs over several pages is one chapter.

    A later page of a chapter (chapter 10's) is included where its chapter's page lists
    it, one level below the chapter's title, so its sections would be subsections under
    a section of the page's title.  Its sections become the chapter's sections instead,
    numbered on ("10.5" after "10.4").  The page's title stays only where the page has
    text of its own before its first section (chapter 10's page "SVM-2K" is one
    section); a page whose opening is only for the HTML book (``{only} html``) loses it.
    Run after the folded code is dropped, so a folded set-up cell does not count as text.
    """
    if app.builder.name != "latex":
        return
    parents = _toctree_parents(app.env)
    for start in list(doctree.findall(addnodes.start_of_file)):
        if not is_later_page(app.env, start.get("docname"), parents):
            continue
        top = next((child for child in start.children if isinstance(child, nodes.section)), None)
        if top is None:
            continue
        sections = [child for child in top.children if isinstance(child, nodes.section)]
        # sphinx-proof finds a theorem's page (for its number) as the nearest section above
        # it with the page's title among its names: the sections keep the page's title
        title = app.env.titles[start["docname"]].astext().lower()
        for section in sections:
            top.remove(section)
            section["names"].append(title)
        quiet = (nodes.title, nodes.target, addnodes.index, nodes.comment)
        if any(not isinstance(child, quiet) for child in top.children):
            start.insert(start.index(top) + 1, sections)
            continue
        body = [child for child in top.children if not isinstance(child, nodes.title)]
        if sections:  # the page's anchors go to its first section
            sections[0]["ids"] = top["ids"] + sections[0]["ids"]
        top.replace_self(body + sections)


def _links_within_the_volume(app, doctree, docname):
    """In a PDF, a link to a page of the other volume (the book's links to the library
    reference) becomes its text: LaTeX cannot link from one PDF into another."""
    if app.builder.name != "latex":
        return
    for ref in list(doctree.findall(nodes.reference)):
        uri = ref.get("refuri", "")
        if uri.startswith("%") and uri[1:].split("#")[0] not in app.builder.docnames:
            ref.replace_self(ref.children)


class ApiNamesInTheIndex(SphinxPostTransform):
    """In a PDF, each name of the API that the text mentions (``{py:func}`` and the like)
    and that another volume documents (the library reference) goes into the volume's index
    once, pointing to that volume: "lecturelib.svm.SVC, see The lecturelib reference
    (reference.pdf)".  Sphinx cannot link into another PDF and sets such a name as plain code.
    Runs before the references are resolved (which drops the cross-references)."""

    default_priority = 5
    formats = ("latex",)

    def run(self, **kwargs):
        volumes = self.config.lecturelib_latex_volumes
        docnames = getattr(self.app.builder, "docnames", None)
        if not volumes or not docnames:
            return
        pointer = f"{volumes[0][2]} ({Path(volumes[0][1]).stem}.pdf)"
        objects = self.env.get_domain("py").objects
        seen = set()
        for xref in list(self.document.findall(addnodes.pending_xref)):
            target = xref.get("reftarget", "")
            found = objects.get(target) if xref.get("refdomain") == "py" else None
            if found is None or found.docname in docnames or target in seen:
                continue
            seen.add(target)
            entry = addnodes.index(entries=[("see", f"{target}; {pointer}", "", "", None)], inline=True)
            xref.parent.insert(xref.parent.index(xref) + 1, entry)


def _preface_for_latex(app, doctree):
    """In the PDF, the root page's sections become one unnumbered chapter, the Preface.

    LaTeX takes the root page's title as the book's title; its sections would each be a
    chapter of their own, unnumbered and ahead of Part I.  They become starred sections
    of a "Preface" chapter listed in the contents.
    """
    if app.builder.name != "latex" or app.env.docname != app.config.root_doc:
        return
    top = next(iter(doctree.findall(nodes.section)), None)
    if top is None:
        return
    for section in [c for c in top.children if isinstance(c, nodes.section)]:
        title = section.next_node(nodes.title)
        heading = nodes.raw("", f"\\section*{{{tex_escape(title.astext())}}}\n", format="latex")
        body = [c for c in section.children if c is not title]
        section.replace_self([heading, *body])
    opening = nodes.raw("", "\\chapter*{Preface}\\addcontentsline{toc}{chapter}{Preface}"
                            "\\markboth{Preface}{Preface}\n", format="latex")
    title = top.next_node(nodes.title)
    top.insert(top.index(title) + 1 if title is not None else 0, opening)


def _proofs_for_latex(app, doctree, docname):
    """In the PDF, a proof is text: an italic "Proof." and a closing square, not an untitled box."""
    if app.builder.name != "latex":
        return
    for box in list(doctree.findall(nodes.admonition)):
        if "proof" not in box.get("classes", []) or box.next_node(nodes.title) is not None:
            continue
        body = list(box.children)
        first = body[0] if body and isinstance(body[0], nodes.paragraph) else None
        if first is not None and first.children and isinstance(first[0], nodes.Text):
            head, sep, rest = first[0].astext().partition(". ")
            if sep and head in ("Proof", "Sketch of proof"):
                first.replace(first[0], nodes.emphasis("", f"{head}."))
                first.insert(1, nodes.Text(" " + rest))
        if body and isinstance(body[-1], nodes.paragraph):
            body[-1] += nodes.raw("", "\\hfill$\\square$", format="latex")
        box.replace_self(body)


# Around a theorem, definition or example box in the PDF: a minipage, which framed.sty
# does not split.
_WHOLE_BOX = ("\\par\\noindent\\begin{minipage}{\\linewidth}\n", "\\end{minipage}\\par\n")


def _statements_whole_for_latex(app, doctree, docname):
    """In the PDF, a theorem, definition, example... (a box of sphinx-proof) is never split
    across two pages: it goes whole onto the next page when it does not fit.  framed.sty,
    which splits Sphinx's boxes, split a definition ending in a display with its bottom
    edge 5.7 pt below the type area and an empty slice of frame on the next page, and a
    theorem ending in a display 11 pt below (overfull vboxes).  The statements are short;
    a proof is text, not a box (`_proofs_for_latex`)."""
    if app.builder.name != "latex":
        return
    from sphinx_proof.nodes import NODE_TYPES, unenumerable_node

    statements = (*NODE_TYPES.values(), unenumerable_node)
    for box in list(doctree.findall(lambda n: isinstance(n, statements))):
        parent, at = box.parent, box.parent.index(box)
        parent.insert(at + 1, nodes.raw("", _WHOLE_BOX[1], format="latex"))
        parent.insert(at, nodes.raw("", _WHOLE_BOX[0], format="latex"))


# ------------------------------------------------------------------ tables and floats in print

# A number as the chapters print it: sign, digits, decimals, an exponent ("1.268e+30"), a
# percent sign.  A cell is numeric when it is such a number, optionally followed by its
# spread ("0.893 (0.022)", "59.4 ± 3.9") or a second count ("52 / 10").
_NUMBER = r"[-\u2212+]?\d+(?:\.\d+)?(?:e[-\u2212+]?\d+)?%?"
_NUMERIC_CELL = re.compile(rf"^{_NUMBER}(?:\s*\(\s*{_NUMBER}\s*\)|\s*±\s*{_NUMBER}|\s*/\s*{_NUMBER})?$")
_POWER_OF_TEN = re.compile(r"^10\^\{?-?\d+\}?$")  # a formula 10^{k}
_E_NOTATION = re.compile(r"(\d(?:\.\d+)?)e([-\u2212+]?)0*(\d+)")
_LONG_TABLE_ROWS = 12
_FLOAT_SAFE = (nodes.section, nodes.document, nodes.container, nodes.compound, addnodes.start_of_file)


def numeric_cell(text: str) -> bool:
    """True for a table cell that holds a number (with its spread or a second count)."""
    return bool(_NUMERIC_CELL.match(text.strip()) or _POWER_OF_TEN.match(text.strip()))


def numeric_columns(rows: list[list[str]]) -> list[bool]:
    """For each column of the body ``rows`` (cell texts): whether every non-empty cell is a
    number and at least one is."""
    width = max((len(row) for row in rows), default=0)
    found = []
    for j in range(width):
        column = [row[j].strip() for row in rows if j < len(row) and row[j].strip()]
        found.append(bool(column) and all(numeric_cell(cell) for cell in column))
    return found


def print_number(text: str) -> str:
    """A numeric cell as LaTeX for print: a true minus (U+2212) for the hyphen, and
    ``1.268e+30`` as ``1.268\\times10^{30}``."""
    def power(match):
        sign = "-" if match.group(2) and match.group(2) != "+" else ""
        return f"{match.group(1)}\\(\\times 10^{{{sign}{match.group(3)}}}\\)"

    tex = tex_escape(text.strip(), latex_engine="xelatex")
    tex = re.sub(r"\\sphinxhyphen\{\}|-", "\u2212", tex)
    return _E_NOTATION.sub(power, tex)


def decimal_split(text: str) -> tuple[str, str]:
    """A numeric cell split where its first number's integer part ends: ``("−0", ".6296")``,
    ``("86", ".5 (1.9)")``, ``("32", "")``."""
    match = re.match(r"^([-\u2212+]?\d+)(.*)$", text.strip())
    return (match.group(1), match.group(2)) if match else (text.strip(), "")


def aligned_cells(cells: list[str]) -> list[str]:
    """The cells of a numeric column as LaTeX, aligned on the decimal point in a right-aligned
    column: each cell's part after the integer digits takes the width of the widest such part
    (``\\rlap`` + ``\\hphantom``), so the units digits of every cell line up."""
    parts = [decimal_split(cell) for cell in cells]
    tails = sorted({print_number(tail) for _, tail in parts if tail.strip()})
    out = []
    for cell, (head, tail) in zip(cells, parts):
        if not cell.strip():
            out.append("")
        elif not tails:
            out.append(print_number(head))
        else:
            widest = "".join(f"\\hbox{{{t}}}" for t in tails)
            out.append(f"{print_number(head)}\\rlap{{{print_number(tail)}}}\\hphantom{{\\vbox{{{widest}}}}}")
    return out


def _float_safe(node) -> bool:
    """True when nothing around ``node`` is a box (an admonition, a theorem, a table, a
    footnote...): only there can LaTeX let it float."""
    parent = node.parent
    while parent is not None:
        if not isinstance(parent, _FLOAT_SAFE):
            return False
        parent = parent.parent
    return True


def _entry_text(entry) -> str | None:
    """The text of a table entry that holds one paragraph of plain text, else None."""
    if len(entry) == 0:
        return ""
    if len(entry) != 1 or not isinstance(entry[0], nodes.paragraph):
        return None
    paragraph = entry[0]
    if len(paragraph) == 1 and isinstance(paragraph[0], nodes.math) and _POWER_OF_TEN.match(paragraph[0].astext()):
        return paragraph[0].astext()  # "10^{-1}", kept as it is
    if not all(isinstance(child, nodes.Text) for child in paragraph.children):
        return None
    return paragraph.astext()


def table_for_print(table) -> None:
    """Set one table for print (see `_tables_for_print`)."""
    tgroup = next(iter(table.findall(nodes.tgroup)), None)
    tbody = next(iter(table.findall(nodes.tbody)), None) if tgroup is not None else None
    if tbody is None or any(entry.get("morerows") or entry.get("morecols") for entry in table.findall(nodes.entry)):
        return
    rows = [list(row.children) for row in tbody.children if isinstance(row, nodes.row)]
    texts = [[_entry_text(entry) for entry in row] for row in rows]
    width = len([c for c in tgroup.children if isinstance(c, nodes.colspec)])
    numeric = numeric_columns([[t if t is not None else "x" for t in row] for row in texts])
    numeric += [False] * (width - len(numeric))
    for j, is_numeric in enumerate(numeric):
        if not is_numeric:
            continue
        column = [row[j] if j < len(row) and row[j] is not None else "" for row in texts]
        if any(_POWER_OF_TEN.match(cell) for cell in column):
            continue  # formulas, right-aligned as they are
        cells = aligned_cells(column)
        for row, tex in zip(rows, cells):
            if j < len(row) and tex:
                row[j][0].replace_self(nodes.paragraph("", "", nodes.raw("", tex, format="latex")))
    # An empty cell (a group's label, shown once) is set empty, not as an empty paragraph
    # (which makes its row a line taller); a group starts with a little space.
    for row in rows:
        for entry in row:
            if len(entry) == 1 and isinstance(entry[0], nodes.paragraph) and not entry[0].astext().strip():
                entry.remove(entry[0])
    first = [row[0] if row else None for row in rows]
    if len(rows) > 2 and first[0] is not None and len(first[0]) and any(e is not None and not len(e) for e in first):
        for entry in first[1:]:
            if entry is not None and len(entry):
                entry.insert(0, nodes.raw("", "\\addlinespace", format="latex"))
    if any(numeric) and next(iter(table.findall(nodes.literal_block)), None) is None:
        # tabulary's columns; Sphinx sets a table of more than 30 rows as a longtable
        letters = ("r", "l") if sum(1 for _ in table.findall(nodes.row)) > 30 else ("R", "T")
        spec = "".join(letters[0] if is_numeric else letters[1] for is_numeric in numeric)
        table.parent.insert(table.parent.index(table), addnodes.tabular_col_spec(spec=spec))
    if table.next_node(nodes.title) is not None and _float_safe(table):
        table["lecturelib_float"] = True


def _tables_for_print(app, doctree, docname):
    """In the PDF, tables are set as a book sets them: the columns of numbers right-aligned on
    the decimal point with a true minus sign (``1.268e+30`` as 1.268×10³⁰), booktabs rules
    (``latex_table_style``) without shading, a group of rows (a label shown once) separated
    from the next by a little space and no taller than its lines; a captioned table and a
    figure outside any box float (``htbp``) instead of leaving the rest of a page empty."""
    if app.builder.name != "latex":
        return
    for table in list(doctree.findall(nodes.table)):
        at = table.parent.index(table)
        if at and isinstance(table.parent[at - 1], addnodes.tabular_col_spec):
            # columns of its own (the notation's): a long uncaptioned table breaks across pages
            rows = sum(1 for _ in table.findall(nodes.row))
            if table.next_node(nodes.title) is None and rows > _LONG_TABLE_ROWS and _float_safe(table):
                table["classes"].append("longtable")
        else:
            table_for_print(table)
    for figure in doctree.findall(nodes.figure):
        if _float_safe(figure):
            figure["lecturelib_float"] = True


def _visit_figure_latex(self, node):
    from sphinx.writers.latex import LaTeXTranslator

    if node.get("lecturelib_float") and not self.table and not self.no_latex_floats:
        saved, self.elements["figure_align"] = self.elements["figure_align"], "htbp"
        try:
            LaTeXTranslator.visit_figure(self, node)
        finally:
            self.elements["figure_align"] = saved
    else:
        LaTeXTranslator.visit_figure(self, node)


def _depart_figure_latex(self, node):
    from sphinx.writers.latex import LaTeXTranslator

    LaTeXTranslator.depart_figure(self, node)


def _visit_table_latex(self, node):
    from sphinx.writers.latex import LaTeXTranslator

    LaTeXTranslator.visit_table(self, node)


def _depart_table_latex(self, node):
    from sphinx.writers.latex import LaTeXTranslator

    floats = (node.get("lecturelib_float") and len(self.tables) == 1 and not self.no_latex_floats
              and self.table.get_table_type() != "longtable")
    if floats:
        self.body.append("\n\\begin{table}[htbp]\n")
    LaTeXTranslator.depart_table(self, node)
    if floats:
        self.body.append("\\end{table}\n")


# A chapter's closing paragraph on its graded exercise set, written for the notebook reader.
_GRADED_POINTER = re.compile(r"^The graded exercise set for this chapter is the notebook (exercises/[\w-]+)\.ipynb")


def _graded_exercises_in_one_line(app, doctree, docname):
    """In the PDF, a chapter's closing paragraphs on its graded exercise set (which notebook,
    which cell to fill in, the command that checks it: 86 words for the notebook reader)
    become one line pointing to the set in the book's *Exercises* part."""
    if app.builder.name != "latex":
        return
    for paragraph in list(doctree.findall(nodes.paragraph)):
        match = _GRADED_POINTER.match(paragraph.astext())
        if not match or paragraph.parent is None:
            continue
        parent, at = paragraph.parent, paragraph.parent.index(paragraph)
        following = parent.children[at + 1:at + 3]
        if (len(following) == 2 and isinstance(following[0], nodes.literal_block)
                and isinstance(following[1], nodes.paragraph)):
            for node in following:
                parent.remove(node)
        target = match.group(1)
        title = app.env.titles.get(target)
        if target in getattr(app.builder, "docnames", ()) and title is not None:
            tex = (f"The graded exercises of this chapter: \\hyperref[\\detokenize{{{target}::doc}}]"
                   f"{{\\sphinxstyleemphasis{{{tex_escape(title.astext(), latex_engine='xelatex')}}}}}"
                   f", page~\\pageref{{\\detokenize{{{target}::doc}}}}.")
        else:
            tex = (f"The graded exercises of this chapter: the notebook "
                   f"\\sphinxcode{{\\sphinxupquote{{{tex_escape(target, latex_engine='xelatex')}.ipynb}}}}.")
        paragraph.replace_self(nodes.paragraph("", "", nodes.raw("", tex, format="latex")))


_DOI = "https://doi.org/"


class DoiLinksWithoutFootnotes(SphinxPostTransform):
    """In the PDF, a bibliography entry's DOI link shows its address (``https://doi.org/...``)
    instead of ``doi:...`` and a footnote repeating the address.  Runs after the
    bibliography is written and before Sphinx adds the footnotes (``latex_show_urls``,
    its ShowUrlsTransform at priority 400)."""

    default_priority = 350
    formats = ("latex",)

    def run(self, **kwargs):
        for ref in list(self.document.findall(nodes.reference)):
            uri = ref.get("refuri", "")
            if uri.startswith(_DOI) and ref.astext() == "doi:" + uri[len(_DOI):]:
                ref[:] = [nodes.Text(uri)]


# ---------------------------------------------------------------------------- the HTML book

def caption_alt_text(figure: nodes.figure) -> None:
    """Give each image of ``figure`` without alt text the figure's caption as alt text."""
    caption = figure.next_node(nodes.caption)
    if caption is None or not caption.astext().strip():
        return
    for image in figure.findall(nodes.image):
        if not image.get("alt") or image.get("alt") == image.get("uri"):
            image["alt"] = caption.astext().strip()


def _figures_and_solutions_for_html(app, doctree, docname):
    """Alt text from captions; each exercise's solution a closed dropdown (the module docstring)."""
    if app.builder.format != "html":
        return
    for figure in doctree.findall(nodes.figure):
        caption_alt_text(figure)
    for node in doctree.findall(nodes.Element):
        if type(node).__name__ == "solution_node" and "dropdown" not in node["classes"]:
            node["classes"].append("dropdown")


def _scripts_once(app, pagename, templatename, context, doctree):
    """Each inline script and script file once per page (sphinx-thebe adds its settings twice)."""
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, kept = set(), []
    for script in scripts:
        # The same inline script comes once with the file name None and once with "".
        key = (getattr(script, "filename", script) or "",
               tuple(sorted((k, str(v)) for k, v in getattr(script, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            kept.append(script)
    context["script_files"] = kept


_DOWNLOAD_LINK = re.compile(r'(<a href="[^"]*_sources/[^"]+\.ipynb") target="_blank"')
# The theme's toggle of a table-of-contents entry's sections: a <summary> with only an icon.
_NAMELESS_TOGGLE = '<summary><span class="toctree-toggle" role="presentation">'
_NAMED_TOGGLE = '<summary aria-label="Show or hide the sections"><span class="toctree-toggle" role="presentation">'


# Docutils writes the bibliography as role="list" with role="doc-biblioentry" items, which
# ARIA 1.2 does not accept in a list (axe-core: aria-required-children); they are list items.
_BIBLIOGRAPHY_ENTRY = re.compile(r'(<div class="citation" id="[^"]*") role="doc-biblioentry"')


def rewrite_page(html: str) -> str:
    """A built page with its download button downloading, its section toggles named and its
    bibliography entries marked as the items of their list."""
    html = _DOWNLOAD_LINK.sub(r"\1 download", html).replace(_NAMELESS_TOGGLE, _NAMED_TOGGLE)
    return _BIBLIOGRAPHY_ENTRY.sub(r'\1 role="listitem"', html)


def _rewrite_pages(app, exception):
    """Each page's download button saves the notebook (``download``) instead of opening a
    tab; each section toggle of the sidebar has a name for screen readers (WCAG 4.1.2)."""
    if exception is not None or app.builder.format != "html":
        return
    for page in Path(app.outdir).rglob(f"*{app.builder.out_suffix}"):
        html = page.read_text(encoding="utf-8")
        changed = rewrite_page(html)
        if changed != html:
            page.write_text(changed, encoding="utf-8")


# ------------------------------------------------------------------------ the bibliography

def author_year_label(entry) -> str:
    """"Shashua, 2009", "Cover and Thomas, 2006", "Hastie et al., 2009": the text's citation.

    Names are read from the BibTeX source with its LaTeX decoded ("Bj\\"orck" -> "Björck");
    the prefix of a name is kept ("von Luxburg").
    """
    from pybtex.richtext import Text

    persons = entry.persons.get("author") or entry.persons.get("editor") or []
    names = [Text.from_latex(" ".join(p.prelast_names + p.last_names)).render_as("text") for p in persons]
    if not names:
        raise ValueError(f"bibliography entry {entry.key!r} has no author or editor")
    if len(names) == 1:
        who = names[0]
    elif len(names) == 2:
        who = f"{names[0]} and {names[1]}"
    else:
        who = f"{names[0]} et al."
    year = entry.fields.get("year")
    if not year:
        raise ValueError(f"bibliography entry {entry.key!r} has no year")
    return f"{who}, {year}"


def _register_bibliography_style():
    """The pybtex style ``lecturelib``: ``unsrt`` entries, sorted by author and year, author-year labels."""
    from pybtex.plugin import register_plugin
    from pybtex.style.formatting.unsrt import Style as UnsrtStyle
    from pybtex.style.labels import BaseLabelStyle

    class AuthorYearLabels(BaseLabelStyle):
        def format_labels(self, sorted_entries):
            for entry in sorted_entries:
                yield author_year_label(entry)

    class AuthorYearStyle(UnsrtStyle):
        default_label_style = "lecturelib_author_year"
        default_sorting_style = "author_year_title"

    register_plugin("pybtex.style.labels", "lecturelib_author_year", AuthorYearLabels, force=True)
    register_plugin("pybtex.style.formatting", "lecturelib", AuthorYearStyle, force=True)


def _nodes_of_this_document(app, doctree):
    """Make every node of a page's doctree name that page's document as its own.

    Text parsed in a nested document (MyST's ``{eval-rst}`` blocks, which hold the
    reference's autodoc directives) is moved into the page with the nested document still
    recorded on its nodes, and that document's settings carry the whole build environment.
    Pickled with the page, it made each reference page's doctree about 3 MB instead of
    50 kB, and Sphinx unpickles every doctree several times per build.
    """
    for node in doctree.findall(include_self=False):
        if node.document is not doctree:
            node.document = doctree


def setup(app):
    # Last of the doctree-read listeners: the doctree is pickled right after them.
    app.connect("doctree-read", _nodes_of_this_document, priority=900)
    # After the toctree collector's listener (priority 500), which assigns the numbers.
    app.connect("env-get-updated", _number_per_chapter, priority=900)
    app.connect("env-updated", _later_pages_carry_their_number)
    app.connect("doctree-resolved", _later_page_headings_for_html)
    app.connect("html-page-context", _summaries_on_search_page)
    app.connect("builder-inited", _index_prose_not_code)
    app.connect("config-inited", _scorer_from_the_book)
    app.connect("build-finished", _search_summaries)
    app.add_config_value("lecturelib_latex_volumes", [], "env")
    app.add_config_value("lecturelib_api_index", "", "env")
    app.connect("config-inited", _index_templates)
    app.connect("doctree-read", _html_only_pages_out_of_print)
    app.connect("html-page-context", _index_of_concepts)
    app.connect("html-collect-pages", _index_of_the_api)
    app.connect("env-updated", _add_latex_volumes)
    app.connect("doctree-read", _parts_for_latex)
    app.connect("doctree-resolved", _corrections_for_latex)
    app.connect("doctree-resolved", _equation_numbers_for_latex)
    app.connect("doctree-read", _preface_for_latex)
    app.connect("doctree-resolved", _folded_code_out_of_print)
    app.connect("doctree-resolved", _later_pages_into_their_chapter)
    app.connect("doctree-resolved", _links_within_the_volume)
    app.connect("doctree-resolved", _proofs_for_latex)
    app.connect("doctree-resolved", _statements_whole_for_latex)
    app.connect("doctree-resolved", _figures_and_solutions_for_html)
    app.connect("doctree-resolved", _tables_for_print)
    app.add_post_transform(ApiNamesInTheIndex)
    app.connect("doctree-resolved", _graded_exercises_in_one_line)
    app.add_post_transform(DoiLinksWithoutFootnotes)
    app.add_node(nodes.figure, override=True, latex=(_visit_figure_latex, _depart_figure_latex))
    app.add_node(nodes.table, override=True, latex=(_visit_table_latex, _depart_table_latex))
    app.connect("html-page-context", _scripts_once, priority=900)
    app.connect("build-finished", _rewrite_pages)
    _register_bibliography_style()
    # Before numpydoc (priority 500), which turns the sections into reST of its own.
    app.connect("autodoc-process-docstring", _process_docstring, priority=400)
    app.connect("autodoc-skip-member", _skip_member)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

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

A link survives only when it is an absolute ``http``, ``https`` or ``mailto`` address whose
host is a public name or address (:func:`public_link`): a link to this machine
(``127.0.0.1`` on another port, ``localhost``), to a private or link-local network, or a
relative link is shown as text, so that a click cannot carry the app's cookie elsewhere.

Math (``$...$``, ``$$...$$`` on lines of their own or inside a paragraph, as in the
notebooks) is wrapped as ``\\(...\\)`` and
``\\[...\\]`` in elements of class ``math``, the only ones MathJax typesets; its TeX input
is configured with small ``maxMacros`` and ``maxBuffer`` and MathJax's ``safe`` extension
(``static/mathjax-config.js``), so a macro bomb ends in an error message, not a frozen
page, and no TeX command sets an ``id``, ``class``, ``style`` or ``href``.

Markdown that answers do not need is off: link reference definitions (whose parse is
quadratic: 3,000 of them took half a minute).  What remains is rendered by
:class:`BudgetedRenderer` in a worker process with a time budget: an answer that takes
longer is shown as plain text, and the app's thread never waits longer than the budget.
"""

from __future__ import annotations

import asyncio
import html
import ipaddress
import multiprocessing
import re
import threading
import time
from urllib.parse import unquote

import nh3
from markupsafe import Markup
from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.dollarmath import dollarmath_plugin

from ..course.lmsfeedback import MATH

MAX_RENDERED_CHARS = 50_000  # a 15-line proof is a few thousand; markdown-it takes about 1 s for 50 000 of list items
MAX_NESTING = 20
RENDER_BUDGET = 3.0  # seconds of one answer's rendering before it is shown as plain text
TAGS = {"p", "br", "hr", "em", "strong", "code", "pre", "blockquote", "ul", "ol", "li",
        "h1", "h2", "h3", "h4", "h5", "h6", "a", "span", "div", "table", "thead", "tbody",
        "tr", "th", "td", "del"}
ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}}
CLASSES = {"span": {"math"}, "div": {"math"}, "pre": {"plain"}}
SCHEMES = {"http", "https", "mailto"}
LOCAL_SUFFIXES = ("localhost", "local", "internal", "intranet", "lan", "home", "corp",
                  "private", "home.arpa", "localdomain")
TOP_LEVEL = re.compile(r"^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$")


def _math(content: str, options: dict) -> str:
    """The inside of the plugin's ``<span class="math inline">`` or ``<div class="math block">``."""
    if options.get("display_mode"):
        return f"\\[{html.escape(content)}\\]"
    return f"\\({html.escape(content)}\\)"


def _inline_display(self, tokens, idx, options, env) -> str:
    """``$$...$$`` inside a paragraph: display math in a ``<span>``, so that the paragraph
    goes on around it (the plugin's ``<div>`` would end the paragraph there)."""
    return f'<span class="math">{_math(tokens[idx].content.strip(), {"display_mode": True})}</span>'


def math_text(text) -> Markup:
    """A rubric item's text for a page (a Jinja filter): escaped, with ``$...$`` and
    ``$$...$$`` wrapped for MathJax as answers' math is (only elements of class ``math``
    are typeset)."""
    text, out, last = str(text), [], 0
    for match in MATH.finditer(text):
        latex, display = match.group(1) or match.group(2), bool(match.group(1))
        out += [html.escape(text[last:match.start()]),
                f'<span class="math">{_math(latex, {"display_mode": display})}</span>']
        last = match.end()
    out.append(html.escape(text[last:]))
    return Markup("".join(out))


BIDI_CONTROLS = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def student_text(text) -> Markup:
    """A student's own words shown as they are (a Jinja filter, for a regrade's reason):
    escaped, without bidirectional controls (a right-to-left override would reorder the
    page's text around it), and isolated in ``<bdi>`` so that right-to-left script in it
    stays inside."""
    return Markup(f"<bdi>{html.escape(BIDI_CONTROLS.sub('', str(text)))}</bdi>")


def _parser() -> MarkdownIt:
    """CommonMark with tables, strikethrough and dollar math as JupyterLab reads it:
    ``$...$`` inline, ``$$...$$`` as display math also inside a paragraph (the way students
    write in notebooks), no link reference definitions."""
    md = MarkdownIt("commonmark", {"html": False, "maxNesting": MAX_NESTING, "linkify": False})
    md.enable("table").enable("strikethrough").disable("reference")
    md.use(dollarmath_plugin, renderer=_math, allow_space=True, allow_digits=True,
           double_inline=True)
    md.add_render_rule("math_inline_double", _inline_display)
    return md


_MD = _parser()


# ------------------------------------------------------------------------- links


def _ipv4_part(part: str) -> int | None:
    """One part of a host as the WHATWG URL standard reads IPv4 (``0x7f``, ``0177``, ``127``)."""
    if re.fullmatch(r"0[xX][0-9a-fA-F]*", part):
        return int(part[2:] or "0", 16)
    if re.fullmatch(r"0[0-7]+", part):
        return int(part, 8)
    if re.fullmatch(r"[0-9]+", part):
        return int(part)
    return None


def _ipv4(host: str):
    """The IPv4 address a browser reads in ``host`` (``127.1``, ``2130706433``), ``None``
    when it is a name, ``False`` when it looks like an address but is none."""
    parts = host.split(".")
    if len(parts) > 1 and parts[-1] == "":
        parts.pop()
    if _ipv4_part(parts[-1]) is None:
        return None
    numbers = [_ipv4_part(p) for p in parts]
    if len(numbers) > 4 or None in numbers or any(n > 255 for n in numbers[:-1]) \
            or numbers[-1] >= 256 ** (5 - len(numbers)):
        return False
    value = numbers[-1] + sum(n << (8 * (3 - i)) for i, n in enumerate(numbers[:-1]))
    return ipaddress.IPv4Address(value)


def _public_host(host: str) -> bool:
    host = unquote(host).lower()
    if host.startswith("["):
        try:
            address = ipaddress.IPv6Address(host[1:-1] if host.endswith("]") else "")
        except ValueError:
            return False
        mapped = address.ipv4_mapped
        return (mapped or address).is_global and not address.is_multicast
    if not host or not re.fullmatch(r"[a-z0-9._-]+", host):
        return False
    address = _ipv4(host)
    if address is not None:
        return bool(address) and address.is_global and not address.is_multicast
    labels = host.rstrip(".").split(".")
    return (len(labels) > 1 and all(labels) and TOP_LEVEL.match(labels[-1]) is not None
            and not any(host.rstrip(".").endswith("." + s) or host.rstrip(".") == s
                        for s in LOCAL_SUFFIXES))


def public_link(href: str) -> bool:
    """Whether a link may stay a link: ``mailto``, or ``http(s)`` to a public host.

    The address is read as a browser reads it (WHATWG URL: tabs and newlines dropped,
    backslashes as slashes, ``http:host`` without slashes, IPv4 in any base), so that no
    spelling of this machine or of a private network passes as public."""
    href = re.sub(r"[\t\n\r]", "", href).strip()
    match = re.match(r"([a-zA-Z][a-zA-Z0-9+.-]*):(.*)", href, re.S)
    if match is None:
        return False  # relative: the app's own pages
    scheme, rest = match[1].lower(), match[2]
    if scheme == "mailto":
        return True
    if scheme not in ("http", "https"):
        return False
    authority = re.split(r"[/\\?#]", rest.lstrip("/\\"), maxsplit=1)[0]
    host = authority.rpartition("@")[2]
    if not host.startswith("["):
        host = host.partition(":")[0]
    elif "]" in host:
        host = host[:host.index("]") + 1]
    return _public_host(host)


def _neutralise_links(tokens: list[Token]) -> None:
    """Turn every link whose address is not :func:`public_link` into its text followed
    by the address, as text."""
    for token in tokens:
        children = token.children or []
        open_links: list[str | None] = []
        for i, child in enumerate(children):
            if child.type == "link_open":
                href = str(child.attrGet("href") or "")
                if public_link(href):
                    open_links.append(None)
                    continue
                open_links.append(href)
                children[i] = Token("text", "", 0, content="")
            elif child.type == "link_close" and open_links:
                href = open_links.pop()
                if href is not None:
                    children[i] = Token("text", "", 0,
                                        content=f" (link to a local or relative address, not followed: {href})")


# ------------------------------------------------------------------------- rendering


def sanitise(fragment: str) -> str:
    """``fragment`` with only the allowed tags, attributes, classes and link schemes."""
    return nh3.clean(fragment, tags=TAGS, attributes=ATTRIBUTES, allowed_classes=CLASSES,
                     url_schemes=SCHEMES, link_rel="noopener noreferrer nofollow",
                     strip_comments=True)


def plain_text(text: str, notes: list[str]) -> tuple[str, str]:
    """The answer as escaped plain text, and the notes."""
    return f"<pre class=\"plain\">{html.escape(text)}</pre>", "; ".join(notes)


def _bounded(text) -> tuple[str, list[str]]:
    text = text if isinstance(text, str) else ""
    if len(text) > MAX_RENDERED_CHARS:
        return text[:MAX_RENDERED_CHARS], [f"only the first {MAX_RENDERED_CHARS} characters are shown"]
    return text, []


def render_answer(text: str) -> tuple[str, str]:
    """Safe HTML of a Markdown answer, and a note for the grader ("" when there is none):
    the answer was cut at :data:`MAX_RENDERED_CHARS`, or nests deeper than
    :data:`MAX_NESTING` levels, in which case it is shown as plain text, in full."""
    text, notes = _bounded(text)
    tokens = _MD.parse(text)
    if any(t.level >= MAX_NESTING - 1 for t in tokens) or (text.strip() and not tokens):
        notes.append(f"the answer nests deeper than {MAX_NESTING} levels: shown as plain text")
        return plain_text(text, notes)
    _neutralise_links(tokens)
    return sanitise(_MD.renderer.render(tokens, _MD.options, {})), "; ".join(notes)


def _worker(conn, work) -> None:
    """The worker process: render each text received, send the result back."""
    conn.send("ready")
    while True:
        try:
            text = conn.recv()
        except EOFError:
            return
        conn.send(work(text))


class BudgetedRenderer:
    """:func:`render_answer` in a worker process, with a time budget per answer.

    Past ``budget`` seconds the worker is killed (and started again for the next answer)
    and the answer is shown as plain text.  :meth:`render` waits in a thread of its own,
    so the app's event loop goes on serving other requests meanwhile; renderings are
    taken one at a time.  ``work`` is the function the worker runs (a test gives a slow one).
    """

    STARTUP = 60.0  # seconds a fresh worker may take to import what it needs

    def __init__(self, budget: float = RENDER_BUDGET, work=render_answer):
        self.budget, self.work = budget, work
        self._lock = threading.RLock()
        self._process = self._conn = None
        self._closed = False
        self._is_ready, self._spawned = False, 0.0

    def start(self) -> None:
        """Start the worker now (in the background), so that the first page is fast."""
        threading.Thread(target=self._ready, daemon=True).start()

    def _ready(self) -> bool:
        with self._lock:
            return self._started()

    def _started(self, wait: float | None = None) -> bool:
        """Whether the worker is ready, starting one if there is none; waits at most
        ``wait`` seconds (default :attr:`STARTUP`) for a new worker.  A worker not ready
        within ``wait`` but still within :attr:`STARTUP` is left starting, for the next
        rendering."""
        if self._process is not None and self._process.is_alive() and self._is_ready:
            return True
        if self._closed:
            return False
        if self._process is None or not self._process.is_alive():
            self.stop()
            context = multiprocessing.get_context("spawn")
            self._conn, child = context.Pipe()
            self._process = context.Process(target=_worker, args=(child, self.work), daemon=True,
                                            name="lecturelib-render")
            self._process.start()
            child.close()
            self._is_ready, self._spawned = False, time.monotonic()
        left = self.STARTUP - (time.monotonic() - self._spawned)
        try:
            if self._conn.poll(max(0.0, min(left, self.STARTUP if wait is None else wait))) \
                    and self._conn.recv() == "ready":
                self._is_ready = True
                return True
        except (EOFError, OSError):
            pass
        if time.monotonic() - self._spawned >= self.STARTUP or not self._process.is_alive():
            self.stop()
        return False

    def close(self) -> None:
        """Kill the worker for good (a rendering after this is plain text)."""
        with self._lock:
            self._closed = True
            self.stop()

    def stop(self) -> None:
        """Kill the worker (the next rendering starts a new one)."""
        with self._lock:
            if self._process is not None:
                self._process.kill()
                self._process.join(5)
                self._conn.close()
            self._process = self._conn = None
            self._is_ready = False

    def render_blocking(self, text: str, budget: float | None = None) -> tuple[str, str]:
        """The rendering of ``text`` within ``budget`` seconds (default :attr:`budget`),
        waiting for a starting worker included; past it, plain text."""
        budget = self.budget if budget is None else min(budget, self.budget)
        deadline = time.monotonic() + budget
        text, notes = _bounded(text)
        if budget <= 0:
            notes.append("the page's rendering budget was spent: shown as plain text")
            return plain_text(text, notes)
        if not self._lock.acquire(timeout=budget):  # another rendering holds the worker
            notes.append(f"rendering took longer than {budget:g} s: shown as plain text")
            return plain_text(text, notes)
        try:
            if not self._started(wait=max(0.0, deadline - time.monotonic())):
                notes.append("the rendering process was not ready in time: shown as plain text")
                return plain_text(text, notes)
            try:
                self._conn.send(text)
                if self._conn.poll(max(0.0, deadline - time.monotonic())):
                    html_, note = self._conn.recv()
                    return html_, "; ".join(notes + [note] if note else notes)
            except (EOFError, OSError):
                pass
            self.stop()  # busy past the budget: killed, a new one started for the next answer
        finally:
            self._lock.release()
        self.start()
        notes.append(f"rendering took longer than {budget:g} s: shown as plain text")
        return plain_text(text, notes)

    async def render(self, text: str, budget: float | None = None) -> tuple[str, str]:
        return await asyncio.get_running_loop().run_in_executor(None, self.render_blocking, text, budget)

"""Similarity screening (``lecturelib gradebook similarity``): pairs of submissions whose
answer code, or whose written answers, are unusually alike, for a person to look at.  It
never changes a grade.

Each submission's code cells are fingerprinted with copydetect (winnowing, Schleimer,
Wilkerson and Aiken 2003, on tokens with every name replaced by one symbol, so renaming
variables changes nothing, and fingerprints of ``k`` consecutive tokens, so reordering
lines keeps most of them).  Two kinds of passages are not evidence and are removed first:
the released exercise's own code (made from the solution notebook exactly as ``lecturelib
assign`` makes it), and the solution's code, since correct answers coincide with it, and
with each other, however independently they were written.

What is left is weighed by how rare it is in the class: a fingerprint found in
:math:`d` of the :math:`n` submissions weighs :math:`w = \\log(n / d)`, nothing when every
submission has it, most when only the pair does (a shared unusual mistake is the signal).
For a pair :math:`(a, b)` with fingerprint sets :math:`A` and :math:`B`, the share
:math:`s_a = \\sum_{h \\in A \\cap B} w_h / \\sum_{h \\in A} w_h` is the weight of what
:math:`a` shares with :math:`b` out of all of :math:`a`'s, and the pair's score is
:math:`(s_a + s_b) / 2`.  A pair is flagged when its score is at least :data:`MIN_FLAG`
and a robust outlier among the class's pairs,
:math:`(s - \\operatorname{median}) / (1.4826\\,\\mathrm{MAD}) >` :data:`Z_FLAG`, and what
it shares covers at least :data:`MIN_SHARED_TOKENS` tokens: two short answers that
coincide in a line or two are not enough to read on.

Written answers are screened the same way as text: their fingerprints are the word
:data:`SHINGLE`-grams of the normalised text, less those of the question's prompt and
model answer (:func:`screen_texts`).

Disguises that change no meaning are undone before comparing: statements that do nothing
(``pass``, ``...``) in code, since a copy padded with one between every line shares no
run of :data:`K` tokens; in text, compatibility forms (NFKC), invisible format characters
(zero-width joiners and spaces, bidirectional controls) and letters of another script
that look like Latin ones (Unicode's confusables, from the confusable-homoglyphs package:
a Cyrillic ``а`` for ``a``).
"""

from __future__ import annotations

import dataclasses
import html
import io
import itertools
import json
import math
import re
import unicodedata
from collections import Counter
from pathlib import Path

import numpy as np

from ..core.exercise import make_exercise
from ..core.notebook import GradingError, read_notebook
from ..core.report import plain
from ..core.safejson import PayloadError, check_depth
from ..core.submissions import Candidate, Unreadable, read_submission

K = 25            # tokens per fingerprint (copydetect's noise threshold)
WINDOW = 6        # winnowing window: every match of K + WINDOW - 1 tokens is found
MIN_TOKENS = 40   # a submission with fewer own tokens is not compared
MAX_CODE = 400_000  # characters of code read from one notebook
MIN_FLAG = 0.5
Z_FLAG = 3.5
SHOWN = 20
SHINGLE = 5           # words per fingerprint of a written answer
MIN_WORDS = 15        # a written answer with fewer words of its own is not compared
MIN_SHARED_TOKENS = 120  # a flagged pair of code shares at least a short function's worth
MIN_SHARED_SHINGLES = 20  # a flagged pair of written answers shares about a sentence


@dataclasses.dataclass(frozen=True)
class Pair:
    a: str
    b: str
    score: float
    share_a: float
    share_b: float
    z: float
    flagged: bool
    shared: int = 0  # tokens (code) or word shingles (text) of the passages both have


@dataclasses.dataclass
class Screening:
    pairs: list[Pair]            # every pair, most similar first
    skipped: list[str]           # submissions not compared, and why
    fingerprints: dict           # student -> copydetect CodeFingerprint


def notebook_code(data: bytes) -> str:
    """The code cells of a notebook given as bytes, joined; raises ``ValueError``."""
    text = data.decode("utf-8")
    check_depth(text, 64)
    nb = json.loads(text)
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(cells, list):
        raise ValueError("no cells")
    parts = []
    for cell in cells:
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            source = cell.get("source", "")
            source = "".join(source) if isinstance(source, list) else source
            if isinstance(source, str):
                parts.append(source)
    return "\n\n".join(parts)[:MAX_CODE]


NO_OP_LINE = re.compile(r"^[ \t]*(?:(?:pass|\.\.\.)[ \t]*(?:;[ \t]*)?)+(?:#[^\n]*)?$\n?", re.M)


def without_no_ops(code: str) -> str:
    """``code`` without its lines that only do nothing (``pass``, ``...``)."""
    return NO_OP_LINE.sub("", code)


def fingerprint(code: str, boilerplate: set | frozenset = frozenset()):
    """copydetect's fingerprint of ``code`` (Python) without its no-op lines
    (:func:`without_no_ops`), less the ``boilerplate`` hashes."""
    from copydetect import CodeFingerprint
    from copydetect.utils import get_token_coverage

    fp = CodeFingerprint("code.py", K, WINDOW, fp=io.StringIO(without_no_ops(code)), language="python")
    if boilerplate:
        fp.hashes = fp.hashes - boilerplate
        fp.hash_idx = {h: i for h, i in fp.hash_idx.items() if h not in boilerplate}
        fp.token_coverage = get_token_coverage(fp.hash_idx, K, len(fp.filtered_code))
    return fp


def exercise_boilerplate(solution_path, assignment: str) -> set:
    """The fingerprints of the released exercise's code cells and of the solution's: what
    every student was given, and what a correct answer shares with everyone's."""
    solution = read_notebook(solution_path)
    hashes: set = set()
    for nb in (make_exercise(solution, assignment), solution):
        code = "\n\n".join(c.source for c in nb.cells if c.cell_type == "code")
        hashes |= set(fingerprint(code).hashes)
    return hashes


def _robust_z(scores: np.ndarray) -> np.ndarray:
    median = np.median(scores)
    mad = 1.4826 * np.median(np.abs(scores - median))
    return (scores - median) / max(mad, 1e-3)


def rarity_weights(sets: dict[str, set]) -> dict:
    """``log(n / d)`` for each fingerprint found in ``d`` of the ``n`` sets."""
    counts = Counter(h for hashes in sets.values() for h in hashes)
    return {h: math.log(len(sets) / d) for h, d in counts.items()}


def weighted_shares(a: set, b: set, weights: dict) -> tuple[float, float]:
    """The weight of what ``a`` and ``b`` share, as a share of each one's own weight."""
    shared = sum(weights[h] for h in a & b)
    own_a, own_b = sum(weights[h] for h in a), sum(weights[h] for h in b)
    return (shared / own_a if own_a else 0.0), (shared / own_b if own_b else 0.0)


def _pairs(sets: dict[str, set], shared_size, min_shared: int) -> list[Pair]:
    """Every pair of ``sets``, scored by rarity-weighted shares, most similar first.  A
    pair is flagged only if ``shared_size(a, b, common)`` is at least ``min_shared``: two
    short answers that coincide in a line or two are not enough to read on."""
    weights = rarity_weights(sets)
    raw = [(a, b, *weighted_shares(sets[a], sets[b], weights))
           for a, b in itertools.combinations(sorted(sets), 2)]
    scores = np.array([(sa + sb) / 2 for _, _, sa, sb in raw]) if raw else np.zeros(0)
    z = _robust_z(scores) if raw else scores
    pairs = []
    for (a, b, sa, sb), s, zi in zip(raw, scores.tolist(), z):
        outlier = s >= MIN_FLAG and zi > Z_FLAG
        size = shared_size(a, b, sets[a] & sets[b]) if outlier else 0
        pairs.append(Pair(a, b, s, sa, sb, float(zi), bool(outlier and size >= min_shared), size))
    pairs.sort(key=lambda p: (-p.score, p.a, p.b))
    return pairs


def _shared_tokens(fps):
    """The tokens of the smaller side that the pair's common fingerprints cover."""
    from copydetect.utils import get_token_coverage

    def size(a, b, common):
        return int(min(get_token_coverage({h: fp.hash_idx[h] for h in common}, K, len(fp.filtered_code))
                       for fp in (fps[a], fps[b])))
    return size


def screen(codes: dict[str, str], boilerplate: set = frozenset()) -> Screening:
    """Compare every pair of ``codes`` (student -> code) after removing ``boilerplate``."""
    fps, skipped = {}, []
    for student, code in sorted(codes.items()):
        fp = fingerprint(code, boilerplate)
        if fp.token_coverage < MIN_TOKENS:
            skipped.append(f"{student}: too little code of its own to compare")
        else:
            fps[student] = fp
    pairs = _pairs({student: set(fp.hashes) for student, fp in fps.items()}, _shared_tokens(fps),
                   MIN_SHARED_TOKENS)
    return Screening(pairs, skipped, fps)


WORD = re.compile(r"[^\W_]+|[^\w\s]", re.UNICODE)


def folded(text: str) -> str:
    """``text`` as it reads: NFKC, without format characters (zero-width joiners, spaces
    and bidirectional controls), each letter that looks like a Latin one in another script
    replaced by that Latin letter (confusable-homoglyphs' data, Unicode's confusables)."""
    from confusable_homoglyphs import confusables

    text = "".join(ch for ch in unicodedata.normalize("NFKC", text) if unicodedata.category(ch) != "Cf")
    latin = {}
    for found in confusables.is_confusable(text, greedy=True, preferred_aliases=["latin"]) or []:
        like = [glyph["c"] for glyph in found["homoglyphs"] if glyph["c"].isascii()]
        if like:
            latin[found["character"]] = like[0]
    return text.translate(str.maketrans(latin))


def shingles(text: str) -> set[str]:
    """The word :data:`SHINGLE`-grams of a text, :func:`folded`, case and spacing folded
    (math symbols count as words, so a shared odd step in a derivation is found like a
    shared sentence)."""
    words = WORD.findall(folded(text).lower())
    return {" ".join(words[i:i + SHINGLE]) for i in range(len(words) - SHINGLE + 1)}


def screen_texts(texts: dict[str, str], given: str = "") -> Screening:
    """Compare every pair of written answers (student -> text), without the shingles of
    ``given`` (the question's prompt and model answer)."""
    common = shingles(given)
    sets, skipped = {}, []
    for student, text in sorted(texts.items()):
        own = shingles(text) - common
        if len(own) < MIN_WORDS:
            skipped.append(f"{student}: too little text of its own to compare")
        else:
            sets[student] = own
    pairs = _pairs(sets, lambda a, b, common: len(common), MIN_SHARED_SHINGLES)
    return Screening(pairs, skipped, {})


def written_answers(book, assignment: str) -> dict[str, tuple[str, dict[str, str]]]:
    """Per written question: its model answer and every student's answer text."""
    from ..gradebook import manual

    out = {}
    for q in manual.questions(book.db, assignment):
        if q["kind"] != "written":
            continue
        rows = book.db.execute("SELECT student, answer FROM results WHERE assignment=? AND "
                               "question=? AND answer != ''", (assignment, q["id"])).fetchall()
        out[q["id"]] = (q["model_answer"], dict(rows))
    return out


def gradebook_codes(book, assignment: str) -> tuple[dict[str, str], list[str]]:
    """The code of every graded submission of ``assignment``, read again from the path the
    gradebook stored (never following a link) and checked against its SHA-256."""
    import hashlib

    rows = book.db.execute("SELECT student, path, sha256 FROM submissions WHERE assignment=? "
                           "ORDER BY student", (assignment,)).fetchall()
    if not rows:
        raise GradingError(f"the gradebook {book.path} has no results for assignment {assignment!r}")
    codes, skipped = {}, []
    for student, path, sha in rows:
        path = Path(path)
        try:
            data = read_submission(Candidate(student, path.parent, (path.name,)))
        except Unreadable as exc:
            skipped.append(f"{student}: the graded file could not be read again: {exc}")
            continue
        if hashlib.sha256(data).hexdigest() != sha:
            skipped.append(f"{student}: the file changed since it was graded")
            continue
        try:
            codes[student] = notebook_code(data)
        except (ValueError, PayloadError, UnicodeDecodeError, RecursionError):
            skipped.append(f"{student}: not a readable notebook")
    return codes, skipped


# --------------------------------------------------------------------------------------
# The report
# --------------------------------------------------------------------------------------

STYLE = """body{font-family:sans-serif;margin:2em;max-width:80em}table{border-collapse:collapse}
td,th{border:1px solid #bbb;padding:.2em .5em;text-align:left}tr.flag{background:#fde2e2}
.code{display:flex;gap:1em}.code pre{flex:1;overflow:auto;background:#f6f6f6;padding:.5em;
font-size:85%;max-height:40em}mark{background:#ffd966}"""
HEAD = ('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'">'
        '<title>{title}</title><style>{style}</style></head><body>')


def _highlighted(fp_a, fp_b) -> tuple[str, str]:
    from copydetect import compare_files
    from copydetect.utils import highlight_overlap

    _, _, (slices_a, slices_b) = compare_files(fp_a, fp_b)
    out = []
    for fp, slices in ((fp_a, slices_a), (fp_b, slices_b)):
        if slices.size == 0:
            out.append(html.escape(fp.raw_code))
        else:
            text, _ = highlight_overlap(fp.raw_code, slices, "<mark>", "</mark>", escape_html=True)
            out.append(text)
    return out[0], out[1]


def _pair_table(pairs: list[Pair]) -> list[str]:
    esc = html.escape
    rows = ["<table><tr><th>#</th><th>student</th><th>student</th><th>score</th>"
            "<th>shares</th><th>robust z</th><th>flagged</th></tr>"]
    for i, p in enumerate(pairs[:SHOWN], 1):
        rows.append(f'<tr class="{"flag" if p.flagged else ""}"><td>{i}</td><td>{esc(p.a)}</td>'
                    f"<td>{esc(p.b)}</td><td>{p.score:.2f}</td><td>{p.share_a:.2f} / "
                    f"{p.share_b:.2f}</td><td>{p.z:.1f}</td><td>{'yes' if p.flagged else ''}</td></tr>")
    rows.append("</table>")
    return rows


def _written_sections(written: dict, texts: dict) -> list[str]:
    """One section per written question: its pairs, and each flagged pair's two texts."""
    esc = html.escape
    parts = []
    for qid, screening in written.items():
        flagged = [p for p in screening.pairs if p.flagged]
        parts.append(f"<h2>Written answers to {esc(qid)}: {len(flagged)} pair(s) flagged</h2>")
        parts += _pair_table(screening.pairs)
        for p in flagged[:10]:
            parts.append(f"<h3>{esc(p.a)} and {esc(p.b)}: {p.score:.2f}</h3><div class=\"code\">"
                         f"<pre>{esc(texts[qid][p.a])}</pre><pre>{esc(texts[qid][p.b])}</pre></div>")
    return parts


def html_report(screening: Screening, assignment: str, notes=(), written=None, texts=None) -> str:
    """A short offline HTML page: the most similar pairs, then each flagged pair's code side
    by side with the shared passages marked.  Everything a student wrote is escaped."""
    esc = html.escape
    title = f"Similarity screening: {assignment}"
    parts = [HEAD.format(title=esc(title), style=STYLE), f"<h1>{esc(title)}</h1>",
             f"<p>{len(screening.fingerprints)} submissions compared, {len(screening.pairs)} pairs. "
             "Score: the mean share of each submission's code (after removing the released "
             "exercise's and the solution's code) that also occurs in the other, each passage "
             "weighed by how rare it is in the class. Flagged: score at least "
             f"{MIN_FLAG}, more than {Z_FLAG} robust standard deviations above the class's "
             f"median pair, and at least {MIN_SHARED_TOKENS} tokens of code shared (written "
             f"answers: {MIN_SHARED_SHINGLES} runs of {SHINGLE} words). A flag asks for a "
             "person to read the code; it is not a finding and "
             "changes no grade.</p>"]
    parts += [f"<p>{esc(plain(n, 300))}</p>" for n in notes]
    parts += _pair_table(screening.pairs)
    if screening.skipped:
        parts.append("<h2>Not compared</h2><ul>")
        parts += [f"<li>{esc(plain(line, 300))}</li>" for line in screening.skipped]
        parts.append("</ul>")
    for p in [p for p in screening.pairs if p.flagged][:10]:
        left, right = _highlighted(screening.fingerprints[p.a], screening.fingerprints[p.b])
        parts.append(f"<h2>{esc(p.a)} and {esc(p.b)}: {p.score:.2f}</h2>"
                     f'<div class="code"><pre>{left}</pre><pre>{right}</pre></div>')
    parts += _written_sections(written or {}, texts or {})
    parts.append("</body></html>\n")
    return "\n".join(parts)


def default_report_path(book, assignment: str) -> Path:
    return book.path.parent / "reports" / f"{assignment}-similarity.html"


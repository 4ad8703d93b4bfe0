"""Answers of one written question grouped by what they say: ``lecturelib gradebook groups``.

A group holds answers a careful teaching assistant would grade the same way; precision
comes before saving actions.  Each answer is read as the grading page shows it
(:func:`read_answer`): its prose, and its formulas (``$...$``, ``$$...$$``, ``\\(...\\)``,
``\\[...\\]``; nothing inside a link's address or a code span), by one left-to-right pass
(linear time on any input).  Notation is folded in the formulas (spacing, ``\\left`` and
``\\right``, ``\\dfrac`` and ``\\tfrac`` as ``\\frac``, braces around one symbol) but their
case is kept (:math:`\\phi` is not :math:`\\Phi`); the prose is folded for case, white space
and emphasis.

Two answers are *close* when

- they are the same after this folding ("identical"), or
- they hold the same steps: the same set of formula pieces (every side of every relation
  ``=``, ``<``, ``\\le``, ... in their math, each compared symbolically when SymPy can read
  it, else as folded LaTeX), and words not further apart than :data:`STEPS_WORD_DISTANCE`
  (TF-IDF cosine distance), "same steps"; the final expression is one piece among the
  others, never evidence on its own; or
- neither has a formula and their words are within :data:`WORD_DISTANCE`, "similar words".

Groups are made by complete linkage (scikit-learn's agglomerative clustering on these
distances, as chapter 6 teaches clustering): every member is close to *every* other
member, so no answer is chained into a group through a bridge.  Each member records how it
joined (against the group's first answer), and a group is "identical" only when all its
members are.  Blank answers (nothing but white space, emphasis or the prompt) form one
group labelled "blank"; an answer longer than :data:`MAX_COMPARED_CHARS` characters stands
alone unless it is identical to another.

Student text is hostile: SymPy only parses it (its LaTeX grammar, never ``eval``), in a
forked child with a memory budget, and *each answer* has its own budget of
:data:`ANSWER_PARSE_SECONDS` of CPU time (so load on the machine does not change the
result); a piece not read in time, or not readable, is compared as folded LaTeX, which
keeps answers apart rather than joining them.

The groups are stored in the gradebook (``answer_groups``), so that splits and merges
last.  An answer that changed since it was grouped, or a new one, stands in a group of its
own until the groups are made again (``--recompute``, which drops the splits and merges).
"""

from __future__ import annotations

import dataclasses
import re
import signal

import numpy as np

from ..autograde.budget import OverBudget, run_in_budget
from ..core.notebook import ANSWER_PROMPT, GradingError
from ..core.report import plain
from . import manual

TABLE = """
CREATE TABLE IF NOT EXISTS answer_groups (
    assignment TEXT NOT NULL, question TEXT NOT NULL, student TEXT NOT NULL,
    group_no INTEGER NOT NULL, method TEXT NOT NULL, answer_sha TEXT NOT NULL,
    PRIMARY KEY (assignment, question, student));
"""
# how an answer joined its group (the ``method`` of its row)
IDENTICAL, SAME_STEPS, SIMILAR_WORDS = "identical", "same steps", "similar words"
BLANK, ALONE, SPLIT, MERGED = "blank", "alone", "split off", "merged"
WORD_DISTANCE = 0.5        # answers without formulas: close below this cosine distance
STEPS_WORD_DISTANCE = 0.99  # the same formula pieces: the words need only share a subject
MAX_COMPARED_CHARS = 20_000  # a proof is a few thousand characters; longer: alone unless identical
MAX_PIECES = 80            # formula pieces read per answer (the rest compared as text)
PIECE_TOKENS = 200         # a longer piece is compared as folded LaTeX, never parsed
ANSWER_PARSE_SECONDS = 1.0  # CPU seconds of SymPy per answer
PARSE_MEMORY_MB = 1024
PARSE_SECONDS = 120.0      # the whole question's child: past it every piece is compared as text
READ_CACHE = 20_000        # pieces whose reading is kept between groupings (this process)
_READ: dict[str, str | None] = {}

# ------------------------------------------------------------------------- reading an answer

_DELIMITERS = (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"), ("$", "$"))
_TOKEN = re.compile(r"\\[A-Za-z]+|\\.|\s+|.", re.S)
_SPACING = {"\\left", "\\right", "\\big", "\\Big", "\\bigg", "\\Bigg", "\\bigl", "\\bigr",
            "\\Bigl", "\\Bigr", "\\biggl", "\\biggr", "\\displaystyle", "\\textstyle", "\\,",
            "\\;", "\\:", "\\!", "\\ ", "\\quad", "\\qquad", "~", "\\middle", "\\nonumber"}
_SYNONYMS = {"\\dfrac": "\\frac", "\\tfrac": "\\frac", "\\le": "\\leq", "\\ge": "\\geq",
             "\\ne": "\\neq", "\\to": "\\rightarrow", "\\implies": "\\Rightarrow",
             "\\lvert": "|", "\\rvert": "|", "\\vert": "|", "\\lVert": "\\|", "\\rVert": "\\|",
             "\\Vert": "\\|", "\\mid": "|", "\\colon": ":", "\\ln": "\\log", "\\top": "T",
             "\\intercal": "T", "\\mathsf{T}": "T", "\\lbrace": "\\{", "\\rbrace": "\\}"}
_RELATIONS = {"=", "<", ">", "\\leq", "\\geq", "\\neq", "\\iff", "\\Rightarrow",
              "\\Leftrightarrow", "\\Longrightarrow", "\\propto", "\\approx", "\\equiv",
              "\\sim", "\\in", "\\subseteq", "\\rightarrow", "&", "\\\\", ":=", ",", ";"}
_ENVIRONMENT = re.compile(r"\\(?:begin|end)\{[A-Za-z*]{1,20}\}")
_WORD = re.compile(r"[^\W\d_]{2,}")
_EMPHASIS = re.compile(r"[*_`#>]+")


@dataclasses.dataclass
class Reading:
    """An answer as the grouping compares it."""

    key: str                 # the folded text: equal keys are identical answers
    words: str               # the prose, folded, for TF-IDF
    pieces: list[str]        # the folded formula pieces, in order
    blank: bool
    long: bool


def _link_free(text: str) -> str:
    """``text`` without the addresses of Markdown links and images (``](...)``) and of
    autolinks (``<http...>``), which the page does not show as math.  One pass: once no
    closing bracket is left, none is looked for again."""
    out, i, n = [], 0, len(text)
    no_paren = no_angle = False
    while i < n:
        j = text.find("](", i) if not no_paren else -1
        k = text.find("<http", i) if not no_angle else -1
        starts = [s for s in (j, k) if s >= 0]
        if not starts:
            out.append(text[i:])
            break
        s = min(starts)
        if s == j:
            end = text.find(")", s + 2)
            if end < 0:
                no_paren = True
                out.append(text[i:s + 2])
                i = s + 2
                continue
            out.append(text[i:s + 1])
            i = end + 1
        else:
            end = text.find(">", s + 5)
            if end < 0:
                no_angle = True
                out.append(text[i:s + 5])
                i = s + 5
                continue
            out.append(text[i:s])
            i = end + 1
    return "".join(out)


def split_math(text: str) -> list[tuple[bool, str]]:
    """``(is_math, text)`` segments of an answer, in order.  Inline code spans are prose;
    a ``\\$`` is a dollar sign.  Linear time: each delimiter's closing search runs forward
    from where the last one ended, and a delimiter with no closing left is not looked
    for again."""
    segments: list[tuple[bool, str]] = []
    exhausted: set[str] = set()
    prose, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == "`":
            end = text.find("`", i + 1) if "`" not in exhausted else -1
            if end < 0:
                exhausted.add("`")
                prose.append(c)
                i += 1
                continue
            prose.append(text[i + 1:end])
            i = end + 1
            continue
        if c == "\\" and i + 1 < n and text[i + 1] == "$":
            prose.append("$")
            i += 2
            continue
        for opening, closing in _DELIMITERS:
            if opening in exhausted or not text.startswith(opening, i):
                continue
            end = text.find(closing, i + len(opening))
            if end < 0:
                exhausted.add(opening)
                continue
            if prose:
                segments.append((False, "".join(prose)))
                prose = []
            segments.append((True, text[i + len(opening):end]))
            i = end + len(closing)
            break
        else:
            prose.append(c)
            i += 1
    if prose:
        segments.append((False, "".join(prose)))
    return segments


def fold_math(latex: str) -> list[str]:
    """The TeX tokens of ``latex`` with spacing and sizing dropped, synonyms (``\\dfrac``,
    ``\\le``, ``\\ln``, ...) replaced, braces around one token removed; case kept."""
    tokens = []
    for token in _TOKEN.findall(_ENVIRONMENT.sub(" ", latex)):
        if token.isspace() or token in _SPACING:
            continue
        tokens.append(_SYNONYMS.get(token, token))
    out: list[str] = []
    for token in tokens:  # {x} -> x after ^ or _ (a brace pair around one token)
        if token == "}" and len(out) >= 3 and out[-2] == "{" and out[-3] in ("^", "_"):
            out[-2] = out.pop()
            continue
        out.append(token)
    while out and out[-1] in (".", ",", ";", ":"):
        out.pop()
    return out


def _latex(tokens: list[str]) -> str:
    """Tokens joined back into LaTeX (a space only where a control word meets a letter)."""
    parts = []
    for token in tokens:
        if parts and parts[-1][-1].isalpha() and parts[-1].startswith("\\") and token[0].isalpha():
            parts.append(" ")
        parts.append(token)
    return "".join(parts)


def formula_pieces(tokens: list[str]) -> list[str]:
    """Every side of every relation of a folded formula, cut only outside braces (so that
    ``\\sum_{i=k+1}`` stays whole)."""
    pieces, current, depth = [], [], 0
    for token in tokens:
        depth += token == "{"
        depth -= token == "}" and depth > 0
        if depth == 0 and token in _RELATIONS:
            if current:
                pieces.append(_latex(current))
            current = []
        else:
            current.append(token)
    if current:
        pieces.append(_latex(current))
    return pieces


def read_answer(text: str) -> Reading:
    """What :func:`group_answers` compares of an answer (see the module's docstring)."""
    text = text if isinstance(text, str) else ""
    long = len(text) > MAX_COMPARED_CHARS
    body = text.replace(ANSWER_PROMPT, " ")
    key_parts, words, pieces = [], [], []
    for is_math, part in split_math(_link_free(body)):
        if is_math:
            tokens = fold_math(part)
            if tokens:
                key_parts.append("$" + _latex(tokens) + "$")
                if not long:
                    pieces.extend(formula_pieces(tokens))
        else:
            folded = " ".join(_EMPHASIS.sub(" ", part).lower().split())
            if folded:
                key_parts.append(folded)
                words.append(folded)
    key = " ".join(key_parts)
    return Reading(key=key, words=" ".join(words), pieces=pieces[:MAX_PIECES],
                   blank=not _WORD.search(key) and not any(ch.isalnum() for ch in key), long=long)


def normalise(text: str) -> str:
    """The answer folded for spacing, case of the prose, emphasis, math delimiters and
    notation (case kept in math): two answers equal here say the same thing."""
    return read_answer(text).key


def final_expression(text: str) -> str | None:
    """The folded LaTeX of the answer's last formula piece (``None`` when it has none)."""
    pieces = read_answer(text).pieces
    return pieces[-1] if pieces else None


# ------------------------------------------------------------------------- reading formulas


class _Slow(Exception):
    pass


def _alarm(signum, frame):
    raise _Slow


def _symbolic(piece: str):
    from sympy import cancel, srepr
    from sympy.parsing.latex import parse_latex

    return "=" + srepr(cancel(parse_latex(piece, backend="lark")))


def canonical_forms(answers: list[list[str]]) -> dict[str, str]:
    """piece -> ``"=" + srepr`` of SymPy's normal form (:func:`sympy.cancel`) of the parsed
    piece, or ``None`` when it does not parse, for the pieces read in time: each answer's
    pieces are read within its own :data:`ANSWER_PARSE_SECONDS` of CPU time (a piece
    another answer read is not read again); one longer than :data:`PIECE_TOKENS` tokens and
    those left when the budget ran out have no entry.  Meant for a forked child
    (:func:`piece_keys`): it installs a SIGPROF handler."""
    signal.signal(signal.SIGPROF, _alarm)
    known: dict[str, str | None] = {}
    for pieces in answers:
        todo = [p for p in dict.fromkeys(pieces) if p not in known
                and len(_TOKEN.findall(p)) <= PIECE_TOKENS]
        signal.setitimer(signal.ITIMER_PROF, ANSWER_PARSE_SECONDS)
        try:
            for piece in todo:
                try:
                    known[piece] = _symbolic(piece)
                except _Slow:
                    raise
                except Exception:  # noqa: BLE001 -- a student's text: compared as LaTeX
                    known[piece] = None
        except _Slow:  # this answer's budget is spent: its other pieces stay LaTeX
            pass
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
    return known


def pieces_to_read(readings: list[Reading], words: np.ndarray) -> list[list[str]]:
    """Per answer, the pieces whose symbolic reading could join it to another: those of
    the symmetric difference with an answer of as many distinct pieces whose words are
    close (:data:`STEPS_WORD_DISTANCE`).  Pieces written alike need no parse."""
    sets = [frozenset(r.pieces) for r in readings]
    wanted: list[set[str]] = [set() for _ in readings]
    for i in range(len(readings)):
        for j in np.flatnonzero(words[i] <= STEPS_WORD_DISTANCE):
            if j > i and sets[i] and sets[j] and sets[i] != sets[j] and len(sets[i]) == len(sets[j]):
                wanted[i] |= sets[i] - sets[j]
                wanted[j] |= sets[j] - sets[i]
    return [[p for p in r.pieces if p in w] for r, w in zip(readings, wanted)]


def piece_keys(readings: list[Reading], words: np.ndarray) -> list[list[str]]:
    """Each answer's pieces as comparison keys: the symbolic form (:func:`canonical_forms`,
    in a forked child with :data:`PARSE_MEMORY_MB`) where :func:`pieces_to_read` asks for
    one and it was read in time, else ``"~"`` and the folded LaTeX.  Past
    :data:`PARSE_SECONDS`, or on any failure, every piece is compared as folded LaTeX."""
    answers = [[p for p in pieces if p not in _READ] for pieces in pieces_to_read(readings, words)]
    if any(answers):
        from sympy.parsing.latex import parse_latex

        parse_latex("x", backend="lark")  # the grammar built once, before the fork
        found = run_in_budget(canonical_forms, answers, memory_mb=PARSE_MEMORY_MB,
                              timeout=PARSE_SECONDS)
        if isinstance(found, dict):
            if len(_READ) + len(found) > READ_CACHE:
                _READ.clear()
            _READ.update(found)
    return [[_READ.get(p) or "~" + p for p in r.pieces] for r in readings]


# ------------------------------------------------------------------------- grouping


def word_distances(words: list[str]) -> np.ndarray:
    """Cosine distances of the answers' TF-IDF vectors (words, English stop words left
    out); 1 between an answer with no word and any other, 0 between two."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.metrics.pairwise import cosine_distances

    n = len(words)
    empty = np.array([not _WORD.search(w) for w in words])
    try:
        vectors = TfidfVectorizer(sublinear_tf=True, stop_words="english",
                                  token_pattern=r"(?u)\b[^\W\d_]{2,}\b").fit_transform(words)
        distance = cosine_distances(vectors)
    except ValueError:  # no word in any answer
        distance = np.ones((n, n))
    distance[empty[:, None] | empty[None, :]] = 1.0
    distance[empty[:, None] & empty[None, :]] = 0.0
    return np.clip(distance, 0.0, 1.0)


FAR = 2.0


def answer_distances(readings: list[Reading], keys: list[list[str]], words: np.ndarray) -> np.ndarray:
    """The distances complete linkage joins below 1: 0 for identical answers, the word
    distance scaled into [0, 1) for close ones (:func:`group_answers`), :data:`FAR` else."""
    n = len(readings)
    ids = {}
    text_id = np.array([ids.setdefault(r.key, len(ids)) for r in readings])
    steps = {}
    step_id = np.array([steps.setdefault(frozenset(k), len(steps)) for k in keys])
    has_steps = np.array([bool(k) for k in keys])
    blank = np.array([r.blank for r in readings])
    long = np.array([r.long for r in readings])
    same_steps = (step_id[:, None] == step_id[None, :]) & has_steps[:, None] & \
        (words <= STEPS_WORD_DISTANCE)
    has_words = np.array([bool(_WORD.search(r.words)) for r in readings])
    similar = ~has_steps[:, None] & ~has_steps[None, :] & has_words[:, None] & has_words[None, :] & \
        (words <= WORD_DISTANCE)
    close = (same_steps | similar) & ~blank[:, None] & ~blank[None, :] & ~long[:, None] & ~long[None, :]
    distance = np.where(close, 0.01 + 0.98 * words, FAR)
    distance[text_id[:, None] == text_id[None, :]] = 0.0
    np.fill_diagonal(distance, 0.0)
    return distance


def how_joined(reading: Reading, first: Reading, keys: list[str]) -> str:
    if reading.key == first.key:
        return BLANK if reading.blank else IDENTICAL
    return SAME_STEPS if keys else SIMILAR_WORDS


def group_answers(texts: list[str]) -> list[tuple[int, str]]:
    """A group label (the smallest member index) and how the answer joined it (against
    that first member: "identical", "same steps", "similar words", "blank"; "alone" for a
    group of one), per answer."""
    from sklearn.cluster import AgglomerativeClustering

    n = len(texts)
    if n == 0:
        return []
    readings = [read_answer(t) for t in texts]
    words = word_distances([r.words for r in readings])
    keys = piece_keys(readings, words)
    if n == 1:
        labels = np.zeros(1, dtype=int)
    else:
        labels = AgglomerativeClustering(n_clusters=None, metric="precomputed", linkage="complete",
                                         distance_threshold=1.0).fit_predict(
            answer_distances(readings, keys, words))
    first: dict[int, int] = {}
    for i, label in enumerate(labels):
        first.setdefault(int(label), i)
    size = np.bincount(labels)
    out = []
    for i, label in enumerate(labels):
        root = first[int(label)]
        how = (BLANK if readings[i].blank else ALONE) if size[label] == 1 else \
            how_joined(readings[i], readings[root], keys[i])
        out.append((root, how))
    return out


def group_method(hows: list[str]) -> str:
    """A group's label from its members' ways of joining: the one way when they all
    joined alike, else the ways named with how many."""
    if len(hows) == 1:
        return BLANK if hows[0] == BLANK else ALONE
    distinct = sorted(set(hows), key=hows.index)
    if len(distinct) == 1:
        return distinct[0]
    return ", ".join(f"{hows.count(h)} {h}" for h in distinct)


# ------------------------------------------------------------------------- the store


def create_table(db) -> None:
    db.executescript(TABLE)


def _answers(db, assignment: str, qid: str) -> dict[str, str]:
    """student -> answer text of every answer of the written question (not "no answer")."""
    if manual.question(db, assignment, qid)["kind"] != "written":
        raise GradingError(f"{qid} is not a written question: only written answers are grouped")
    rows = db.execute("SELECT student, answer FROM results WHERE assignment=? AND question=? "
                      "AND answer != '' ORDER BY student", (assignment, qid)).fetchall()
    return dict(rows)


def make_groups(db, assignment: str, qid: str) -> None:
    """Group every answer of ``qid`` afresh, replacing the stored groups."""
    answers = _answers(db, assignment, qid)
    students = sorted(answers)
    labels = group_answers([answers[s] for s in students])
    numbers = {root: n for n, root in enumerate(sorted({root for root, _ in labels}), start=1)}
    with db:
        db.execute("DELETE FROM answer_groups WHERE assignment=? AND question=?", (assignment, qid))
        db.executemany("INSERT INTO answer_groups VALUES (?, ?, ?, ?, ?, ?)",
                       [(assignment, qid, s, numbers[root], how, manual.answer_sha(answers[s]))
                        for s, (root, how) in zip(students, labels)])


def groups(db, assignment: str, qid: str, *, recompute: bool = False) -> list[dict]:
    """The groups of ``qid``'s answers, made the first time (or with ``recompute``):
    ``[{"group", "method", "how", "identical", "students", "graded", "pending"}]``, largest
    first.  ``how`` maps each member to the way it joined; ``identical`` says whether every
    member is the same as the first after folding (:func:`normalise`; a split or a merge
    makes no group identical).  An answer that
    changed since grouping, or a new one, is in a group of its own (``"alone"``)."""
    create_table(db)
    answers = _answers(db, assignment, qid)
    stored = db.execute("SELECT COUNT(*) FROM answer_groups WHERE assignment=? AND question=?",
                        (assignment, qid)).fetchone()[0]
    if recompute or not stored:
        make_groups(db, assignment, qid)
    rows = db.execute("SELECT student, group_no, method, answer_sha FROM answer_groups WHERE "
                      "assignment=? AND question=? ORDER BY student", (assignment, qid)).fetchall()
    members: dict[int, dict[str, str]] = {}
    grouped = set()
    for student, number, how, sha in rows:
        if student in answers and manual.answer_sha(answers[student]) == sha:
            members.setdefault(number, {})[student] = how
            grouped.add(student)
    next_number = max([n for _, n, _, _ in rows], default=0) + 1
    for student in sorted(set(answers) - grouped):
        members[next_number] = {student: ALONE}
        next_number += 1
    pending = {s for (s, q) in _pending(db, assignment) if q == qid}
    out = []
    for number, how in members.items():
        students = sorted(how)
        out.append({"group": number, "method": group_method([how[s] for s in students]),
                    "how": {s: how[s] for s in students},
                    "identical": len(students) == 1 or all(how[s] in (IDENTICAL, BLANK) for s in students),
                    "students": students, "graded": sum(s not in pending for s in students),
                    "pending": sum(s in pending for s in students)})
    return sorted(out, key=lambda g: (-len(g["students"]), g["group"]))


def _pending(db, assignment: str) -> set[tuple[str, str]]:
    return {(r["student"], r["question"]) for r in manual.effective_results(db, assignment)
            if r["pending"]}


def _group(db, assignment: str, qid: str, number: int) -> dict:
    found = [g for g in groups(db, assignment, qid) if g["group"] == number]
    if not found:
        raise GradingError(f"question {qid} has no group {number}")
    return found[0]


def split(db, assignment: str, qid: str, students: list[str]) -> int:
    """Move ``students`` out of their groups into a new group of their own; its number."""
    current = {s for g in groups(db, assignment, qid) for s in g["students"]}
    unknown = [s for s in students if s not in current]
    if unknown or not students:
        raise GradingError(f"no answer of {plain(unknown[0] if unknown else '', 60)!r} to "
                           f"question {qid}" if unknown else "name the students to split off")
    number = db.execute("SELECT COALESCE(MAX(group_no), 0) + 1 FROM answer_groups WHERE "
                        "assignment=? AND question=?", (assignment, qid)).fetchone()[0]
    answers = _answers(db, assignment, qid)
    with db:
        db.executemany("INSERT OR REPLACE INTO answer_groups VALUES (?, ?, ?, ?, ?, ?)",
                       [(assignment, qid, s, number, SPLIT, manual.answer_sha(answers[s]))
                        for s in students])
    return number


def merge(db, assignment: str, qid: str, numbers: list[int]) -> int:
    """Merge the groups ``numbers`` into the first of them; its number.  The first group's
    members keep how they joined; the others' say "merged"."""
    chosen = [_group(db, assignment, qid, n) for n in numbers]
    if len(chosen) < 2:
        raise GradingError("name at least two groups to merge")
    target = chosen[0]["group"]
    answers = _answers(db, assignment, qid)
    with db:
        db.executemany("INSERT OR REPLACE INTO answer_groups VALUES (?, ?, ?, ?, ?, ?)",
                       [(assignment, qid, s, target, MERGED, manual.answer_sha(answers[s]))
                        for g in chosen[1:] for s in g["students"]])
    return target


def why_not_at_once(group: dict) -> str:
    """Why the command line will not grade ``group`` in one action ("" when it will): its
    members are not all the same answer after folding, and no one has seen them all."""
    if group["identical"]:
        return ""
    return (f"group {group['group']} holds answers that differ after folding spacing, case and "
            f"notation ({group['method']}): grade it in the app, where every member is shown, "
            "or split it into identical groups")


def grade_group(db, assignment: str, qid: str, number: int, *, who: str, applied,
                comment: str = "", adjustment=0.0, adjustment_reason: str = "",
                versions: dict | None = None) -> list[dict]:
    """Grade every answer of group ``number`` alike, in one action; each member's grade is
    recorded in the audit as coming from the group.  Returns the members' new states.

    ``versions`` (student -> the grade's version the grader saw, as the app sends them):
    a member graded by someone else since is a :class:`~.manual.Conflict`, found before
    any member is written."""
    members = _group(db, assignment, qid, number)["students"]
    current = {s: manual.grade_state(db, assignment, s, qid) for s in members}
    if versions is not None:
        for student in members:
            if versions.get(student) != current[student]["version"]:
                raise manual.Conflict(current[student], "version")
    manual.check_group_grade(db, assignment, qid, members, who)  # never another grader's grade
    states = []
    for student in members:
        version = current[student]["version"]
        states.append(manual.save_grade(db, assignment, student, qid, who=who, version=version,
                                        applied=list(applied), comment=comment,
                                        adjustment=adjustment, adjustment_reason=adjustment_reason,
                                        via=f"group {number}"))
    return states


def groups_table(result: list[dict]) -> str:
    """The groups as plain text, one line each."""
    lines = [f"{'group':>5} {'answers':>7} {'graded':>6}  how grouped            students"]
    for g in result:
        names = ", ".join(plain(s, 40) for s in g["students"][:8])
        more = f" and {len(g['students']) - 8} more" if len(g["students"]) > 8 else ""
        lines.append(f"{g['group']:>5} {len(g['students']):>7} {g['graded']:>6}  "
                     f"{plain(g['method'], 40):<22} {names}{more}")
    return "\n".join(lines) + "\n"

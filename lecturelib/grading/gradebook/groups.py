"""Answers of one written question grouped by what they say: ``lecturelib gradebook groups``.

A teaching assistant grades a group in one action and can still open, split off or merge
any member.  Answers are grouped in three passes, each joining the groups of the one
before:

1. the same text after normalising it (case, white space, Markdown emphasis, math
   delimiters, spaces and ``\\left``/``\\right`` inside math);
2. the same final expression: the right-hand side of the answer's last equation in math,
   parsed from LaTeX by SymPy and compared symbolically (their difference simplifies to 0),
   so that :math:`\\frac{a-1}{a+b-2}` and :math:`(1-a)/(2-a-b)` meet;
3. similar text: TF-IDF vectors of the answers' words and word pairs, joined by
   average-linkage agglomerative clustering while the cosine distance stays under
   :data:`TEXT_DISTANCE` (scikit-learn, as chapter 6 teaches clustering); two groups whose
   final expressions both parsed and differ are never joined by their words.

Student text is hostile: SymPy only parses it (its LaTeX grammar, never ``eval``), each
expression within :data:`EXPRESSION_SECONDS`, and all of them in a forked child with a
memory and a time budget; an answer whose expression does not parse, or takes too long,
simply joins no group by that pass.

The groups are stored in the gradebook (``answer_groups``), so that splits and merges
last.  An answer that changed since it was grouped, or a new one, stands in a group of its
own until the groups are made again (``--recompute``, which drops the splits and merges).
"""

from __future__ import annotations

import re
import signal

from ..autograde.budget import OverBudget, run_in_budget
from ..core.notebook import GradingError
from ..core.report import plain
from . import manual

TABLE = """
CREATE TABLE IF NOT EXISTS answer_groups (
    assignment TEXT NOT NULL, question TEXT NOT NULL, student TEXT NOT NULL,
    group_no INTEGER NOT NULL, method TEXT NOT NULL, answer_sha TEXT NOT NULL,
    PRIMARY KEY (assignment, question, student));
"""
TEXT_DISTANCE = 0.7
EXPRESSION_CHARS = 300
EXPRESSION_SECONDS = 2
PARSE_MEMORY_MB = 1024
PARSE_SECONDS = 60.0

MATH = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$|\\\[(.+?)\\\]|\\\((.+?)\\\)", re.S)
EMPHASIS = re.compile(r"[*_`]+")
LATEX_SPACING = re.compile(r"\\(left|right|,|;|!|quad|qquad)\b|\\[,;!]")


def normalise(text: str) -> str:
    """The answer with case, white space, emphasis, math delimiters and math spacing
    folded: two answers equal here say the same thing."""
    text = LATEX_SPACING.sub("", text)
    text = MATH.sub(lambda m: " " + "".join(g for g in m.groups() if g).replace(" ", "") + " ", text)
    text = EMPHASIS.sub("", text)
    return " ".join(text.lower().split())


def final_expression(text: str) -> str | None:
    """The LaTeX of the answer's last right-hand side in math (``None`` when there is none):
    the text after the last ``=`` of its last math span that has one, else of its last."""
    spans = [next(g for g in m.groups() if g) for m in MATH.finditer(text)]
    if not spans:
        return None
    with_equation = [s for s in spans if "=" in s]
    last = (with_equation or spans)[-1]
    side = last.rsplit("=", 1)[-1].strip().rstrip(".,;")
    return side if 0 < len(side) <= EXPRESSION_CHARS else None


class _Slow(Exception):
    pass


def _alarm(signum, frame):
    raise _Slow


def canonical_forms(expressions: list[str | None]) -> list[str | None]:
    """Each expression's canonical SymPy form (``srepr`` of the simplified expression), or
    ``None`` when it does not parse or takes longer than :data:`EXPRESSION_SECONDS`.
    Meant to run in a budgeted child (:func:`final_forms`): it installs a SIGALRM handler."""
    from sympy import simplify, srepr
    from sympy.parsing.latex import parse_latex

    signal.signal(signal.SIGALRM, _alarm)
    forms: list[str | None] = []
    for expression in expressions:
        form = None
        if expression is not None:
            signal.alarm(EXPRESSION_SECONDS)
            try:
                form = srepr(simplify(parse_latex(expression, backend="lark")))
            except Exception:  # noqa: BLE001 -- a student's text: no form, no group by it
                form = None
            finally:
                signal.alarm(0)
        forms.append(form)
    return forms


def final_forms(texts: list[str]) -> list[str | None]:
    """:func:`canonical_forms` of the answers' final expressions, in a forked child with
    :data:`PARSE_MEMORY_MB` and :data:`PARSE_SECONDS`; all ``None`` past that budget."""
    expressions = [final_expression(t) for t in texts]
    if not any(expressions):
        return [None] * len(texts)
    forms = run_in_budget(canonical_forms, expressions, memory_mb=PARSE_MEMORY_MB,
                          timeout=PARSE_SECONDS)
    if isinstance(forms, (OverBudget, Exception)):
        return [None] * len(texts)
    return forms


class _Union:
    def __init__(self, n: int):
        self.parent = list(range(n))
        self.how = ["alone"] * n

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def join(self, i: int, j: int, how: str) -> None:
        a, b = sorted((self.find(i), self.find(j)))
        if a != b:
            self.parent[b] = a
            if self.how[a] == "alone":
                self.how[a] = how


def similar_text_pairs(texts: list[str]) -> list[tuple[int, int]]:
    """Pairs (representative indices) that average-linkage clustering of TF-IDF vectors
    puts together at cosine distance below :data:`TEXT_DISTANCE`."""
    from sklearn.cluster import AgglomerativeClustering
    from sklearn.feature_extraction.text import TfidfVectorizer

    if len(texts) < 2:
        return []
    try:
        vectors = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True).fit_transform(texts)
    except ValueError:  # no words at all
        return []
    labels = AgglomerativeClustering(n_clusters=None, metric="cosine", linkage="average",
                                     distance_threshold=TEXT_DISTANCE).fit_predict(vectors.toarray())
    first: dict[int, int] = {}
    pairs = []
    for i, label in enumerate(labels):
        if label in first:
            pairs.append((first[label], i))
        else:
            first[label] = i
    return pairs


def group_answers(texts: list[str]) -> list[tuple[int, str]]:
    """A group label (the smallest member index) and how the group was formed, per answer."""
    union = _Union(len(texts))
    normalised = [normalise(t) for t in texts]
    seen: dict[str, int] = {}
    for i, key in enumerate(normalised):
        if key in seen:
            union.join(seen[key], i, "identical")
        else:
            seen[key] = i
    first_with: dict[str, int] = {}
    forms = final_forms(texts)
    for i, form in enumerate(forms):
        if form is None:
            continue
        if form in first_with:
            union.join(first_with[form], i, "same final expression")
        else:
            first_with[form] = i
    has_form = {union.find(i) for i, form in enumerate(forms) if form is not None}
    roots = sorted({union.find(i) for i in range(len(texts))})
    for a, b in similar_text_pairs([normalised[r] for r in roots]):
        # text decides only where an expression could not: two different final
        # expressions are two different answers, however alike their words
        if not (roots[a] in has_form and roots[b] in has_form):
            union.join(roots[a], roots[b], "similar text")
    return [(union.find(i), union.how[union.find(i)]) for i in range(len(texts))]


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
    ``[{"group", "method", "students", "graded", "pending"}]``, largest first.  An answer
    that changed since grouping, or a new one, is in a group of its own (method ``"alone"``)."""
    create_table(db)
    answers = _answers(db, assignment, qid)
    stored = db.execute("SELECT COUNT(*) FROM answer_groups WHERE assignment=? AND question=?",
                        (assignment, qid)).fetchone()[0]
    if recompute or not stored:
        make_groups(db, assignment, qid)
    rows = db.execute("SELECT student, group_no, method, answer_sha FROM answer_groups WHERE "
                      "assignment=? AND question=?", (assignment, qid)).fetchall()
    members: dict[int, list[str]] = {}
    method: dict[int, str] = {}
    grouped = set()
    for student, number, how, sha in rows:
        if student in answers and manual.answer_sha(answers[student]) == sha:
            members.setdefault(number, []).append(student)
            method[number] = how
            grouped.add(student)
    next_number = max([n for _, n, _, _ in rows], default=0) + 1
    for student in sorted(set(answers) - grouped):
        members[next_number], method[next_number] = [student], "alone"
        next_number += 1
    pending = {s for (s, q) in _pending(db, assignment) if q == qid}
    out = [{"group": n, "method": method[n] if len(m) > 1 else "alone", "students": sorted(m),
            "graded": sum(s not in pending for s in m), "pending": sum(s in pending for s in m)}
           for n, m in members.items()]
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
        db.executemany("INSERT OR REPLACE INTO answer_groups VALUES (?, ?, ?, ?, 'split off', ?)",
                       [(assignment, qid, s, number, manual.answer_sha(answers[s])) for s in students])
    return number


def merge(db, assignment: str, qid: str, numbers: list[int]) -> int:
    """Merge the groups ``numbers`` into the first of them; its number."""
    chosen = [_group(db, assignment, qid, n) for n in numbers]
    if len(chosen) < 2:
        raise GradingError("name at least two groups to merge")
    target = chosen[0]["group"]
    answers = _answers(db, assignment, qid)
    with db:
        db.executemany("INSERT OR REPLACE INTO answer_groups VALUES (?, ?, ?, ?, 'merged', ?)",
                       [(assignment, qid, s, target, manual.answer_sha(answers[s]))
                        for g in chosen for s in g["students"]])
    return target


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
                     f"{g['method']:<22} {names}{more}")
    return "\n".join(lines) + "\n"

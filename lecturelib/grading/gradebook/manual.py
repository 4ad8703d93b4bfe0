"""Grading by people: rubric grades of written answers, overrides, and their audit trail.

The tables live in the gradebook's SQLite file, beside its own (:mod:`.gradebook`):

- ``rubric_items``: each written question's rubric, seeded from the solution notebook
  (the gradebook's ``questions`` table) the first time it is read; from then on the
  instructor may edit an item's points or text here, and every grade that applied the item
  changes with it, since a grade stores *which* items apply, never their points;
- ``manual_grades``: one row per (assignment, student, question) that a person graded:
  the applied rubric items, a comment, an optional adjustment with its reason, or (for a
  question scored by checks) an override with its reason; the SHA-256 of the answer that
  was graded, a ``version`` raised by every change, and whether the grade is ``decided``
  (a rubric item applied and removed again is not: the answer stays pending);
- ``audit``: every change (who, when, what, the state before and after, as JSON).

The score of a written answer is

.. math:: s = \\min\\bigl(\\max\\bigl(\\textstyle\\sum_{i \\in A} p_i + a,\\ 0\\bigr),\\ P\\bigr)

for the applied items :math:`A` with their current points :math:`p_i`, the adjustment
:math:`a` and the question's points :math:`P` (CONTRIBUTING, "Written questions").
A change names the ``version`` its author saw; when the row has moved on since (another
grader saved first), the change is refused with :class:`Conflict`, which carries the
current state, so that no update is ever lost.  A grade given to an answer that has
changed since (the student handed in again) no longer counts: the answer is pending again.

This module imports nothing from :mod:`.gradebook` (which imports it).
"""

from __future__ import annotations

import datetime
import hashlib
import json
import math
import sqlite3
import unicodedata

from ..core.notebook import RUBRIC_ID, GradingError
from ..core.report import GradeReport, QuestionResult, plain, write_atomic
from ..core.submissions import feedback_path

SCHEMA = """
CREATE TABLE IF NOT EXISTS rubric_items (
    assignment TEXT NOT NULL, question TEXT NOT NULL, item TEXT NOT NULL,
    position INTEGER NOT NULL, points REAL NOT NULL, text TEXT NOT NULL,
    version INTEGER NOT NULL DEFAULT 1, PRIMARY KEY (assignment, question, item));
CREATE TABLE IF NOT EXISTS manual_grades (
    assignment TEXT NOT NULL, student TEXT NOT NULL, question TEXT NOT NULL,
    applied TEXT NOT NULL DEFAULT '[]', comment TEXT NOT NULL DEFAULT '',
    adjustment REAL NOT NULL DEFAULT 0, adjustment_reason TEXT NOT NULL DEFAULT '',
    override REAL, override_reason TEXT NOT NULL DEFAULT '',
    answer_sha TEXT NOT NULL, grader TEXT NOT NULL, updated_at TEXT NOT NULL,
    version INTEGER NOT NULL, decided INTEGER NOT NULL DEFAULT 1,
    PRIMARY KEY (assignment, student, question));
CREATE TABLE IF NOT EXISTS audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, who TEXT NOT NULL,
    assignment TEXT NOT NULL, student TEXT NOT NULL, question TEXT NOT NULL,
    action TEXT NOT NULL, before TEXT NOT NULL, after TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS audit_of_answer ON audit (assignment, student, question);
"""
MAX_COMMENT = 5000
MAX_REASON = 300
MAX_ITEM_TEXT = 300
MAX_GRADER_NAME = 40
NAME_MARKS = " .'’_@+-"  # besides letters, marks and digits of any script
# Unicode's default-ignorable code points that are marks or letters (the others are format or
# control characters, refused by category): invisible, so two names differing by one look alike
INVISIBLE = frozenset([0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0,
                       *range(0x180B, 0x1810), *range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)])
GRADER_RULE = (f"a grader's name is 1 to {MAX_GRADER_NAME} letters (of any script), digits, "
               "single spaces between words (none before or after) or . ' _ @ + -")


class Conflict(Exception):
    """A change made from a stale view: someone else changed the row first (``why`` is
    ``"version"``), or the answer itself changed since it was shown (``"answer"``: the
    student handed in again).  ``current`` is the row's state now."""

    def __init__(self, current: dict, why: str = "version"):
        super().__init__("the answer changed since it was shown" if why == "answer"
                         else "changed by someone else in the meantime")
        self.current = current
        self.why = why


def check_seen(state: dict, version: int | None, shown_sha: str | None) -> None:
    """Raise :class:`Conflict` if the grade is no longer at ``version`` or the answer no
    longer the one whose :func:`answer_sha` is ``shown_sha`` (``None``: not checked), as a
    decision taken from a page shown earlier needs (a regrade, a double-marking decision)."""
    if version is not None and version != state["version"]:
        raise Conflict(state, "version")
    if shown_sha is not None and shown_sha != answer_sha(state["answer"]):
        raise Conflict(state, "answer")


def create_tables(db: sqlite3.Connection) -> None:
    db.executescript(SCHEMA)
    columns = {row[1] for row in db.execute("PRAGMA table_info(manual_grades)")}
    if "decided" not in columns:  # a gradebook written before a grade had to be decided
        with db:
            db.execute("ALTER TABLE manual_grades ADD COLUMN decided INTEGER NOT NULL DEFAULT 1")


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def answer_sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def grader_name(name) -> str | None:
    """``name`` as a grader's name (NFC), or ``None`` when it is not one: 1 to
    :data:`MAX_GRADER_NAME` letters, combining marks and digits of any script, single
    spaces between words and the marks of :data:`NAME_MARKS` ("Zoë van Dijk", "O'Neil").
    No control, format (bidirectional overrides) or other invisible character passes."""
    if not isinstance(name, str) or len(name) > 4 * MAX_GRADER_NAME:
        return None
    name = unicodedata.normalize("NFC", name)
    if (not 1 <= len(name) <= MAX_GRADER_NAME or name != name.strip(" ") or "  " in name
            or not any(unicodedata.category(c)[0] in "LN" for c in name)):
        return None
    if all((unicodedata.category(c)[0] in "LMN" and ord(c) not in INVISIBLE) or c in NAME_MARKS
           for c in name):
        return name
    return None


def check_grader(who) -> str:
    name = grader_name(who)
    if name is None or name != who:
        raise GradingError(GRADER_RULE)
    return who


def _text(value, limit: int, what: str) -> str:
    if not isinstance(value, str):
        raise GradingError(f"{what} must be text")
    if len(value) > limit:
        raise GradingError(f"{what} is longer than {limit} characters")
    return value.strip()


def _finite(value, what: str) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        raise GradingError(f"{what} must be a number")
    return float(value)


# ------------------------------------------------------------------------- questions


def questions(db, assignment: str) -> list[dict]:
    """The questions of ``assignment`` in notebook order: ``id, kind, points,
    model_answer, n_checks`` (from the last grading run)."""
    rows = db.execute("SELECT question, kind, points, model_answer, n_checks FROM questions "
                      "WHERE assignment=? ORDER BY position", (assignment,)).fetchall()
    return [dict(zip(("id", "kind", "points", "model_answer", "n_checks"), r)) for r in rows]


def question(db, assignment: str, qid: str) -> dict:
    found = [q for q in questions(db, assignment) if q["id"] == qid]
    if not found:
        raise GradingError(f"assignment {assignment!r} has no question {qid!r} in the gradebook")
    return found[0]


def assignments(db) -> list[str]:
    return [r[0] for r in db.execute("SELECT DISTINCT assignment FROM questions ORDER BY assignment")]


def rubric(db, assignment: str, qid: str) -> list[dict]:
    """The rubric of a written question as it stands (``id, points, text, version``),
    seeded from the solution's the first time."""
    row = db.execute("SELECT rubric FROM questions WHERE assignment=? AND question=?",
                     (assignment, qid)).fetchone()
    have = {r[0] for r in db.execute("SELECT item FROM rubric_items WHERE assignment=? AND "
                                     "question=?", (assignment, qid))}
    if row is not None and not {item["id"] for item in json.loads(row[0])} <= have:
        with db:  # a write only when an item is new (each commit is a disk sync)
            db.executemany(
                "INSERT OR IGNORE INTO rubric_items (assignment, question, item, position, points, "
                "text) VALUES (?, ?, ?, ?, ?, ?)",
                [(assignment, qid, item["id"], i, item["points"], item["text"])
                 for i, item in enumerate(json.loads(row[0]))])
    rows = db.execute("SELECT item, points, text, version FROM rubric_items WHERE assignment=? "
                      "AND question=? ORDER BY position", (assignment, qid)).fetchall()
    return [dict(zip(("id", "points", "text", "version"), r)) for r in rows]


def edit_rubric_item(db, assignment: str, qid: str, item: str, *, who: str, version: int,
                     points, text) -> dict:
    """Change one rubric item's points and text; every grade that applied it follows.

    Raises :class:`Conflict` when the item changed since ``version`` was read.
    """
    check_grader(who)
    points = _finite(points, "an item's points")
    if points == 0 or abs(points) > question(db, assignment, qid)["points"]:
        raise GradingError("an item's points are non-zero and at most the question's points")
    text = _text(text, MAX_ITEM_TEXT, "an item's text")
    if not text:
        raise GradingError("an item needs a text")
    current = {i["id"]: i for i in rubric(db, assignment, qid)}
    if item not in current:
        raise GradingError(f"question {qid!r} has no rubric item {item!r}")
    with db:
        changed = db.execute("UPDATE rubric_items SET points=?, text=?, version=version+1 WHERE "
                             "assignment=? AND question=? AND item=? AND version=?",
                             (points, text, assignment, qid, item, version)).rowcount
        if not changed:
            raise Conflict(current[item])
        after = {"id": item, "points": points, "text": text, "version": version + 1}
        _audit(db, who, assignment, "", qid, f"rubric item {item}", current[item], after)
    return after


# ------------------------------------------------------------------------- grades

FIELDS = ("applied", "comment", "adjustment", "adjustment_reason", "override",
          "override_reason", "answer_sha", "grader", "updated_at", "version", "decided")


def _result(db, assignment, student, qid) -> dict:
    row = db.execute("SELECT points, max, reason, pending, kind, checks, answer, answer_note "
                     "FROM results WHERE assignment=? AND student=? AND question=?",
                     (assignment, student, qid)).fetchone()
    if row is None:
        # never the student's name: the grading app passes this message on (anonymous mode)
        raise GradingError(f"no result of this student for {assignment} {qid}")
    return dict(zip(("points", "max", "reason", "pending", "kind", "checks", "answer", "answer_note"),
                    row))


def _stored(db, assignment, student, qid) -> dict | None:
    row = db.execute(f"SELECT {', '.join(FIELDS)} FROM manual_grades WHERE assignment=? AND "
                     "student=? AND question=?", (assignment, student, qid)).fetchone()
    if row is None:
        return None
    grade = dict(zip(FIELDS, row))
    grade["applied"] = json.loads(grade["applied"])
    grade["decided"] = bool(grade["decided"])
    return grade


def written_score(applied, items: list[dict], adjustment: float, max_points: float) -> float:
    """The score of a written answer: applied items' current points plus the adjustment,
    clipped to ``[0, max_points]``."""
    points = {i["id"]: i["points"] for i in items}
    raw = sum(points[a] for a in applied if a in points) + adjustment
    return min(max(raw, 0.0), max_points)


def grade_state(db, assignment: str, student: str, qid: str, items=None) -> dict:
    """What the app shows for one answer: the result, the manual grade (``version`` 0 when
    there is none), the effective ``score`` and whether it is ``pending`` or ``stale``
    (graded on an answer that has changed since).  ``graded`` says whether the manual
    grade counts: it exists, is ``decided`` (see :func:`save_grade`) and not stale."""
    result = _result(db, assignment, student, qid)
    grade = _stored(db, assignment, student, qid)
    state = {"student": student, "question": qid, "kind": result["kind"], "max": result["max"],
             "auto_points": result["points"], "reason": result["reason"],
             "checks": json.loads(result["checks"]) if result["checks"] else None,
             "answer": result["answer"], "answer_note": result["answer_note"], "version": 0, "applied": [], "comment": "",
             "adjustment": 0.0, "adjustment_reason": "", "override": None,
             "override_reason": "", "grader": "", "updated_at": "", "stale": False,
             "decided": False}
    if grade is not None:
        state.update(grade)
        state["stale"] = grade["answer_sha"] != answer_sha(result["answer"])
    graded = state["graded"] = grade is not None and not state["stale"] and state["decided"]
    if result["kind"] == "written":
        items = rubric(db, assignment, qid) if items is None else items
        state["pending"] = bool(result["pending"]) and not graded
        state["score"] = (written_score(state["applied"], items, state["adjustment"], result["max"])
                          if graded else result["points"])
    else:
        state["pending"] = False
        state["score"] = (state["override"] if graded and state["override"] is not None
                          else result["points"])
    return state


def _public(state: dict) -> dict:
    return {k: state[k] for k in ("applied", "comment", "adjustment", "adjustment_reason",
                                  "override", "override_reason", "version", "decided")}


def _write(db, assignment, student, qid, who, version, action, before, values,
           shown_sha) -> dict:
    """Insert or update a manual grade if its version is still ``version`` and the answer
    is still the one whose SHA-256 is ``shown_sha`` (``None``: not checked).  Both are
    conditions of the one statement that writes, so a regrading that stores a new answer
    in between is seen too."""
    answer = _result(db, assignment, student, qid)["answer"]
    if shown_sha is not None and shown_sha != answer_sha(answer):
        raise Conflict(grade_state(db, assignment, student, qid), "answer")
    row = {**{k: before[k] for k in ("applied", "comment", "adjustment", "adjustment_reason",
                                     "override", "override_reason")}, "decided": True, **values}
    params = (json.dumps(row["applied"]), row["comment"], row["adjustment"],
              row["adjustment_reason"], row["override"], row["override_reason"],
              answer_sha(answer), who, _now(), int(row["decided"]))
    same_answer = ("EXISTS (SELECT 1 FROM results WHERE assignment=? AND student=? AND "
                   "question=? AND answer=?)")
    key = (assignment, student, qid)
    with db:
        if version == 0:
            try:
                changed = db.execute(
                    "INSERT INTO manual_grades (assignment, student, question, applied, comment, "
                    "adjustment, adjustment_reason, override, override_reason, answer_sha, grader, "
                    "updated_at, decided, version) SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1 "
                    f"WHERE {same_answer}",
                    (*key, *params, *key, answer)).rowcount
            except sqlite3.IntegrityError:
                changed = 0
        else:
            changed = db.execute(
                "UPDATE manual_grades SET applied=?, comment=?, adjustment=?, adjustment_reason=?, "
                "override=?, override_reason=?, answer_sha=?, grader=?, updated_at=?, decided=?, "
                "version=version+1 WHERE assignment=? AND student=? AND question=? AND version=? "
                f"AND {same_answer}", (*params, *key, version, *key, answer)).rowcount
        if not changed:
            now = _result(db, assignment, student, qid)["answer"]
            raise Conflict(grade_state(db, assignment, student, qid),
                           "version" if now == answer else "answer")
        after = grade_state(db, assignment, student, qid)
        _audit(db, who, assignment, student, qid, action, _public(before) | {"score": before["score"]},
               _public(after) | {"score": after["score"]})
    return after


def save_grade(db, assignment: str, student: str, qid: str, *, who: str, version: int,
               applied, comment: str = "", adjustment=0.0, adjustment_reason: str = "",
               shown_sha: str | None = None, via: str = "", confirmed: bool = True) -> dict:
    """Grade a written answer: the applied rubric items, a comment, an adjustment.

    A grade counts only when a grader decided it: it applies an item or an adjustment, or
    it is ``confirmed`` (saved as it is, 0 points included).  The grading app saves every
    click on a rubric item unconfirmed, so that an item applied and removed again leaves the
    answer pending (``decided`` false), not graded 0; its "Save" button confirms.

    ``version`` is the grade's version the grader saw (0: not graded yet), ``shown_sha``
    the :func:`answer_sha` of the answer the grader read (the app always sends it).
    Raises :class:`Conflict` if someone changed the grade since or the answer is no
    longer that one, :class:`GradingError` on bad input.  ``via`` says where the grade
    came from besides the answer itself (``"group 3"``): the audit records the action as
    ``grade (group 3)``.
    """
    check_grader(who)
    before = grade_state(db, assignment, student, qid)
    if before["kind"] != "written":
        raise GradingError(f"{qid} is scored by its checks: override its score instead")
    items = {i["id"] for i in rubric(db, assignment, qid)}
    if (not isinstance(applied, list) or not all(isinstance(a, str) for a in applied)
            or not set(applied) <= items or len(set(applied)) != len(applied)):
        raise GradingError(f"applied rubric items must be distinct items of {qid}'s rubric")
    adjustment = _finite(adjustment, "the adjustment")
    if abs(adjustment) > before["max"]:
        raise GradingError("the adjustment is at most the question's points either way")
    reason = _text(adjustment_reason, MAX_REASON, "the adjustment's reason")
    if adjustment and not reason:
        raise GradingError("a point adjustment needs a reason")
    values = {"applied": sorted(applied, key=[i["id"] for i in rubric(db, assignment, qid)].index),
              "comment": _text(comment, MAX_COMMENT, "the comment"),
              "adjustment": adjustment, "adjustment_reason": reason if adjustment else "",
              "decided": confirmed is True or bool(applied) or adjustment != 0}
    action = f"grade ({via})" if via else "grade"
    return _write(db, assignment, student, qid, who, version, action, before, values, shown_sha)


def changed_by_others(db, assignment: str, student: str, qid: str, *, since: int, who: str) -> bool:
    """Whether someone other than ``who`` changed the grade after its version ``since``
    (the audit records each version a change made)."""
    return db.execute("SELECT 1 FROM audit WHERE assignment=? AND student=? AND question=? AND who<>? "
                      "AND json_extract(after, '$.version') > ? LIMIT 1",
                      (assignment, student, qid, who, since)).fetchone() is not None


def graders_of(db, assignment: str, student: str, qid: str) -> set[str]:
    """Everyone who gave the answer's grade or changed it (by itself, from a group, a regrade
    or a double-marking decision), from the audit: the people an "another grader" rule
    compares with."""
    rows = db.execute("SELECT DISTINCT who FROM audit WHERE assignment=? AND student=? AND "
                      "question=? AND (action LIKE 'grade%' OR action='override')",
                      (assignment, student, qid)).fetchall()
    return {r[0] for r in rows}


def check_group_grade(db, assignment: str, qid: str, students, who: str) -> None:
    """Refuse a group grade by ``who`` that would replace another person's grade of a member
    (a first mark waiting for its blind second mark, above all): a group grade grades
    answers nobody graded, or the grader's own."""
    others = 0
    for student in students:
        state = grade_state(db, assignment, student, qid)
        if state["graded"] and graders_of(db, assignment, student, qid) - {who}:
            others += 1
    if others:
        raise GradingError(f"{others} answer{'s' if others > 1 else ''} of this group "
                           f"{'were' if others > 1 else 'was'} graded by someone else: a group grade "
                           "does not replace another grader's grade (split them off first)")


def change_grade(db, assignment: str, student: str, qid: str, *, who: str, seen: int,
                 shown_sha: str | None, apply: str | None = None, remove: str | None = None,
                 fields: dict | None = None, confirmed: bool = False) -> dict:
    """One operation on the stored grade of a written answer, as a click or a key of the
    grading app makes it: ``apply`` a rubric item, ``remove`` one, or set the ``fields``
    ``comment``, ``adjustment``, ``adjustment_reason`` (``confirmed``: the grader's "Save").

    The operation applies to the grade as it is stored, not to the state a page computed
    from what it showed: three keys pressed before the first save comes back all land, each
    with its own audit entry.  ``seen`` is the grade's version the page last showed; a
    change since by *someone else* is a :class:`Conflict` (two people changing the same
    grade), the grader's own changes are not.  An item applied that is already applied (or
    removed that is not) changes nothing and records nothing.
    """
    check_grader(who)
    for item in (apply, remove):
        if item is not None and item not in {i["id"] for i in rubric(db, assignment, qid)}:
            raise GradingError(f"question {qid} has no rubric item {str(item)[:20]!r}")
    fields = fields or {}
    if set(fields) - {"comment", "adjustment", "adjustment_reason"}:
        raise GradingError("a grade's fields are its comment, adjustment and adjustment_reason")
    while True:  # a writer of another process between this read and the write: read again
        before = grade_state(db, assignment, student, qid)
        if before["version"] != seen and changed_by_others(db, assignment, student, qid,
                                                           since=seen, who=who):
            raise Conflict(before, "version")
        applied = [a for a in before["applied"] if a != remove]
        if apply is not None and apply not in applied:
            applied.append(apply)
        if not fields and not confirmed and applied == before["applied"]:
            return before
        current = {k: before[k] for k in ("comment", "adjustment", "adjustment_reason")} | fields
        try:
            return save_grade(db, assignment, student, qid, who=who, version=before["version"],
                              applied=applied, shown_sha=shown_sha, confirmed=confirmed, **current)
        except Conflict as conflict:
            if conflict.why != "version":
                raise


def save_override(db, assignment: str, student: str, qid: str, *, who: str, version: int,
                  points, reason: str, shown_sha: str | None = None) -> dict:
    """Override the checks' score of a code question (``points`` None: remove the override).
    A reason is required; the change is recorded in the audit.  ``version`` and
    ``shown_sha`` as in :func:`save_grade`."""
    check_grader(who)
    before = grade_state(db, assignment, student, qid)
    if before["kind"] == "written":
        raise GradingError(f"{qid} is a written question: grade it with its rubric")
    reason = _text(reason, MAX_REASON, "the override's reason")
    if points is not None:
        points = _finite(points, "the override")
        if not 0 <= points <= before["max"]:
            raise GradingError(f"an override is between 0 and {before['max']:g} points")
        if not reason:
            raise GradingError("an override needs a reason")
    values = {"override": points, "override_reason": reason if points is not None else ""}
    return _write(db, assignment, student, qid, who, version, "override", before, values, shown_sha)


def _audit(db, who, assignment, student, qid, action, before, after) -> None:
    db.execute("INSERT INTO audit (at, who, assignment, student, question, action, before, after) "
               "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
               (_now(), who, assignment, student, qid, action, json.dumps(before, sort_keys=True),
                json.dumps(after, sort_keys=True)))


def audit_log(db, assignment: str) -> list[dict]:
    rows = db.execute("SELECT id, at, who, student, question, action, before, after FROM audit "
                      "WHERE assignment=? ORDER BY id", (assignment,)).fetchall()
    keys = ("id", "at", "who", "student", "question", "action", "before", "after")
    return [dict(zip(keys, r)) | {"before": json.loads(r[6]), "after": json.loads(r[7])}
            for r in rows]


# ------------------------------------------------------------------------- the class


def students(db, assignment: str) -> list[str]:
    return [r[0] for r in db.execute("SELECT DISTINCT student FROM results WHERE assignment=? "
                                     "ORDER BY student", (assignment,))]


def effective_results(db, assignment: str, question: str | None = None) -> list[dict]:
    """Every result row of ``assignment`` (of one ``question``, if given) with manual
    grades counted: ``student, question, points, max, pending, kind, reason, rubric``
    (applied items with their points and text), ``comment``, ``grader`` (who graded it by
    hand, "" for none).  A pending answer counts 0."""
    items = {q["id"]: rubric(db, assignment, q["id"]) for q in questions(db, assignment)
             if q["kind"] == "written" and question in (None, q["id"])}
    out = []
    for student, qid in db.execute("SELECT student, question FROM results WHERE assignment=? "
                                   "AND (? IS NULL OR question=?) ORDER BY student",
                                   (assignment, question, question)).fetchall():
        state = grade_state(db, assignment, student, qid, items.get(qid))
        graded = state["graded"]
        by_id = {i["id"]: i for i in items.get(qid, [])}
        applied = [{"id": a, "points": by_id[a]["points"], "text": by_id[a]["text"]}
                   for a in state["applied"] if a in by_id] if graded else []
        reason = state["reason"]
        if graded and state["kind"] == "written":
            reason = "graded with the rubric"
            if state["adjustment"]:
                reason += f"; adjusted {state['adjustment']:+g}: {state['adjustment_reason']}"
        elif graded and state["override"] is not None:
            reason = f"score set by the instructor: {state['override_reason']} (checks: {reason})"
        out.append({"student": student, "question": qid, "points": 0.0 if state["pending"]
                    else float(state["score"]), "max": state["max"], "pending": state["pending"],
                    "kind": state["kind"], "reason": plain(reason, 400), "rubric": applied,
                    "comment": state["comment"] if graded else "", "checks": state["checks"],
                    "grader": state["grader"] if graded else ""})
    return out


def report_for(db, assignment: str, student: str) -> GradeReport:
    """A student's :class:`~.report.GradeReport` with manual grades: what the feedback
    file and the JSON result say after rubric grading."""
    rows = [r for r in effective_results(db, assignment) if r["student"] == student]
    if not rows:
        raise GradingError(f"no results of {student!r} for {assignment}")
    order = {q["id"]: i for i, q in enumerate(questions(db, assignment))}
    rows.sort(key=lambda r: order.get(r["question"], len(order)))
    sub = db.execute("SELECT path, notes FROM submissions WHERE assignment=? AND student=?",
                     (assignment, student)).fetchone()
    results = [QuestionResult(r["question"], r["points"], r["max"], r["reason"], r["pending"],
                              r["kind"], r["checks"], "", r["rubric"], r["comment"]) for r in rows]
    return GradeReport(sub[0] if sub else "", assignment, results, [],
                       [n for n in (sub[1].split("\n") if sub and sub[1] else [])])


def progress(db, assignment: str, qid: str) -> tuple[int, int]:
    """``(graded, answers)`` of a written question: answers no longer pending, of all."""
    rows = effective_results(db, assignment, qid)
    return sum(not r["pending"] for r in rows), len(rows)


def statistics(db, assignment: str) -> list[dict]:
    """Per question: the score distribution (``histogram``: score -> count, graded
    answers only), the mean, how many are pending, and the most often missed rubric items
    (a positive item not applied, a negative item applied) or checks (failed)."""
    rows = effective_results(db, assignment)
    out = []
    for q in questions(db, assignment):
        mine = [r for r in rows if r["question"] == q["id"]]
        graded = [r for r in mine if not r["pending"]]
        histogram: dict[float, int] = {}
        for r in graded:
            histogram[r["points"]] = histogram.get(r["points"], 0) + 1
        missed: list[tuple[str, int]] = []
        if q["kind"] == "written":
            rated = [r for r in graded if r["reason"].startswith("graded with the rubric")]
            for item in rubric(db, assignment, q["id"]):
                hits = sum(any(a["id"] == item["id"] for a in r["rubric"]) for r in rated)
                count = len(rated) - hits if item["points"] > 0 else hits
                missed.append((f"{item['id']} ({item['points']:+g}): {item['text']}", count))
        else:
            for i in range(q["n_checks"]):
                failed = sum(1 for r in mine if r["checks"] is not None and len(r["checks"]) > i
                             and r["checks"][i] is not True)
                missed.append((f"check {i + 1}", failed))
        missed = sorted((m for m in missed if m[1]), key=lambda m: -m[1])[:5]
        out.append({"id": q["id"], "kind": q["kind"], "max": q["points"], "answers": len(mine),
                    "pending": len(mine) - len(graded), "histogram": dict(sorted(histogram.items())),
                    "mean": sum(r["points"] for r in graded) / len(graded) if graded else None,
                    "missed": missed})
    return out


def check_item_id(item) -> str:
    if not isinstance(item, str) or not RUBRIC_ID.match(item):
        raise GradingError("not a rubric item id")
    return item


def write_feedback(book, assignment: str, folder) -> list:
    """Write ``STUDENT.md`` and ``STUDENT.json`` for every student of ``assignment`` in the
    gradebook ``book``, manual grades included; return the Markdown files' paths."""
    from pathlib import Path


    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise GradingError(f"cannot create the feedback folder: {exc.strerror}") from None
    written = []
    for student in students(book.db, assignment):
        report = report_for(book.db, assignment, student)
        path = feedback_path(folder, student)
        write_atomic(path, report.feedback(student))
        write_atomic(path.with_suffix(".json"), json.dumps(report.as_dict(), indent=2) + "\n")
        written.append(path)
    return written

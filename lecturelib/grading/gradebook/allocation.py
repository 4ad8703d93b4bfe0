"""Who grades which answer, in which order, and blind double marking of a sample.

- **A fair order.** The answers of a question are taken in the order of the HMAC-SHA256
  of ``assignment/question/student`` under a random key kept in the gradebook: pseudo-random,
  different for every question, the same on every restart and for every grader, so the same
  students are not always graded first (by a fresh grader) or last (by a tired one); and,
  keyed, not something a student with the class list can work out (nor whether their
  answer is in the double-marked sample, nor who grades it).
- **Shares.** With graders named (``serve --graders "Ann Lee,Bo Chen"``), that order is
  dealt round-robin, so each grader's share is a fair sample of the class.
- **Anonymous numbers.** In anonymous mode the app calls each student "Student N", with
  N drawn at random the first time and stored (``anonymous_numbers``), so that a number
  names the same student after a restart and says nothing about the name.
- **Double marking.** A sample of ``percent`` % of each question's answers, chosen by
  another hash, also gets a blind second mark from the next grader in the rotation, who
  is not shown the first.  :func:`disagreements` lists the answers where the two differ;
  a third grader resolves each (:func:`resolve_disagreement`): the grade stands, or the
  second mark becomes the grade.  :func:`agreement` measures, per question, how often the
  two blind marks agree on the points and, per rubric item, Cohen's kappa (scikit-learn)
  between them; a resolved pair is measured on the first mark as it stood when resolved.
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import json
import secrets
import sqlite3

import numpy as np

from ..core.notebook import GradingError
from . import manual

TABLE = """
CREATE TABLE IF NOT EXISTS second_marks (
    assignment TEXT NOT NULL, question TEXT NOT NULL, student TEXT NOT NULL,
    grader TEXT NOT NULL, applied TEXT NOT NULL, adjustment REAL NOT NULL,
    answer_sha TEXT NOT NULL, at TEXT NOT NULL, PRIMARY KEY (assignment, question, student));
CREATE TABLE IF NOT EXISTS double_mark_resolutions (
    assignment TEXT NOT NULL, question TEXT NOT NULL, student TEXT NOT NULL,
    resolver TEXT NOT NULL, kept TEXT NOT NULL, first_grader TEXT NOT NULL,
    first_applied TEXT NOT NULL, first_adjustment REAL NOT NULL, answer_sha TEXT NOT NULL,
    at TEXT NOT NULL, PRIMARY KEY (assignment, question, student));
CREATE TABLE IF NOT EXISTS app_keys (name TEXT PRIMARY KEY, value BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS anonymous_numbers (
    assignment TEXT NOT NULL, student TEXT NOT NULL, number INTEGER NOT NULL,
    PRIMARY KEY (assignment, student), UNIQUE (assignment, number));
"""


def _rank(key: bytes, salt: str, assignment: str, qid: str, student: str) -> str:
    return hmac.new(key, f"{salt}/{assignment}/{qid}/{student}".encode(), hashlib.sha256).hexdigest()


def fair_order(db, assignment: str, qid: str, students) -> list[str]:
    """``students`` in the question's fixed pseudo-random order (keyed by the gradebook)."""
    key = stored_key(db, "answer order")
    return sorted(students, key=lambda s: _rank(key, "order", assignment, qid, s))


def stored_key(db, name: str) -> bytes:
    """A random 32-byte key kept in the gradebook under ``name``, made the first time: the
    grading app's key of students' opaque ids, so that an id (and a grader's unsaved text
    kept under it) names the same answer after a restart, and the key of the fair order."""
    create_table(db)
    found = db.execute("SELECT value FROM app_keys WHERE name=?", (name,)).fetchone()
    if found is None:  # made once; a write only then
        with db:
            db.execute("INSERT OR IGNORE INTO app_keys VALUES (?, ?)", (name, secrets.token_bytes(32)))
        found = db.execute("SELECT value FROM app_keys WHERE name=?", (name,)).fetchone()
    return bytes(found[0])


def anonymous_numbers(db, assignment: str, students) -> dict[str, int]:
    """Each of ``students``' number in anonymous mode: stored, so the same on every restart;
    students never numbered before get the next numbers, in a random order."""
    create_table(db)

    def stored() -> dict[str, int]:
        return dict(db.execute("SELECT student, number FROM anonymous_numbers WHERE assignment=?",
                               (assignment,)).fetchall())

    numbers = stored()
    new = [s for s in dict.fromkeys(students) if s not in numbers]
    if new:
        secrets.SystemRandom().shuffle(new)
        first = max(numbers.values(), default=0) + 1
        with db:
            db.executemany("INSERT OR IGNORE INTO anonymous_numbers VALUES (?, ?, ?)",
                           [(assignment, s, first + i) for i, s in enumerate(new)])
        numbers = stored()
    return {s: numbers[s] for s in students}


def check_graders(graders, double_mark: float) -> list[str]:
    """The graders sharing each question (``--graders "Ann Lee,Bo Chen"``), checked with the
    share of answers marked twice (``--double-mark``)."""
    graders = list(graders or [])
    for name in graders:
        if manual.grader_name(name) != name:
            raise GradingError(f"--graders: {name[:60]!r} is not a grader's name ({manual.GRADER_RULE})")
    if len(set(graders)) != len(graders):
        raise GradingError("--graders names a grader twice")
    if not 0 <= double_mark <= 100:
        raise GradingError("--double-mark is a percentage from 0 to 100")
    if double_mark and len(graders) < 2:
        raise GradingError("--double-mark needs at least two --graders (a second mark comes from "
                           "another grader)")
    return graders


def shares(db, assignment: str, qid: str, students, graders: list[str]) -> dict[str, list[str]]:
    """Each grader's answers: the fair order dealt round-robin."""
    if not graders or len(set(graders)) != len(graders):
        raise GradingError("name each grader once")
    order = fair_order(db, assignment, qid, students)
    return {g: order[i::len(graders)] for i, g in enumerate(graders)}


def double_sample(db, assignment: str, qid: str, students, percent: float) -> list[str]:
    """The answers of the question that get a second, blind mark: ``percent`` % of them
    (rounded up), chosen by their own hash, in the fair order."""
    if not 0 <= percent <= 100:
        raise GradingError("--double-mark is a percentage from 0 to 100")
    students = list(students)
    count = int(np.ceil(len(students) * percent / 100))
    key = stored_key(db, "answer order")
    chosen = set(sorted(students, key=lambda s: _rank(key, "double", assignment, qid, s))[:count])
    return [s for s in fair_order(db, assignment, qid, students) if s in chosen]


def second_grader(db, assignment: str, qid: str, student: str, students, graders: list[str],
                  first=()) -> str:
    """Who marks ``student``'s answer a second time: the grader after the one whose share
    holds it, or the next after them who gave none of its grade (``first``: who did, as
    when someone graded it from its group)."""
    if len(graders) < 2:
        raise GradingError("double marking needs at least two graders")
    for i, (grader, mine) in enumerate(shares(db, assignment, qid, students, graders).items()):
        if student in mine:
            rotation = [graders[(i + k) % len(graders)] for k in range(1, len(graders) + 1)]
            return next((g for g in rotation if g not in set(first)), rotation[0])
    raise GradingError(f"no answer of {student!r} to {qid}")


def create_table(db) -> None:
    db.executescript(TABLE)


def save_second_mark(db, assignment: str, student: str, qid: str, *, who: str, applied,
                     adjustment=0.0) -> dict:
    """Record a blind second mark of a written answer (rubric items, an adjustment); it
    changes no grade.  Its grader must not be the one who graded the answer."""
    create_table(db)
    manual.check_grader(who)
    state = manual.grade_state(db, assignment, student, qid)
    if state["kind"] != "written":
        raise GradingError(f"{qid} is scored by its checks: only written answers are double marked")
    if who in manual.graders_of(db, assignment, student, qid):
        raise GradingError(f"{who} gave the first mark: the second comes from another grader")
    items = [i["id"] for i in manual.rubric(db, assignment, qid)]
    if not isinstance(applied, list) or not set(applied) <= set(items) or len(set(applied)) != len(applied):
        raise GradingError(f"applied rubric items must be distinct items of {qid}'s rubric")
    adjustment = manual._finite(adjustment, "the adjustment")
    row = (assignment, qid, student, who, json.dumps(sorted(applied, key=items.index)), adjustment,
           manual.answer_sha(state["answer"]),
           datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"))
    with db:
        if db.execute("SELECT 1 FROM second_marks WHERE assignment=? AND question=? AND student=? "
                      "AND answer_sha=?", (assignment, qid, student, row[6])).fetchone():
            raise GradingError("this answer has its blind second mark already: a second mark is "
                               "never replaced")
        db.execute("INSERT OR REPLACE INTO second_marks VALUES (?, ?, ?, ?, ?, ?, ?, ?)", row)
        manual._audit(db, who, assignment, student, qid, "second mark", {},
                      {"applied": json.loads(row[4]), "adjustment": adjustment})
    return {"student": student, "question": qid, "grader": who, "applied": json.loads(row[4]),
            "adjustment": adjustment}


def _pairs(db, assignment: str, qid: str | None = None, student: str | None = None) -> list[dict]:
    """Every double-marked answer (of one question, one student, if asked) whose two marks
    are of its current answer, side by side, with the resolution of their disagreement if
    there was one (``resolved``, else None).  A resolved pair's first mark is the grade as
    it stood when it was resolved."""
    create_table(db)
    rows = db.execute("SELECT question, student, grader, applied, adjustment, answer_sha FROM "
                      "second_marks WHERE assignment=? AND (? IS NULL OR question=?) AND "
                      "(? IS NULL OR student=?) ORDER BY question, student",
                      (assignment, qid, qid, student, student)).fetchall()
    out = []
    for question, student, grader, applied, adjustment, sha in rows:
        state = manual.grade_state(db, assignment, student, question)
        if sha != manual.answer_sha(state["answer"]):
            continue
        resolved = _resolution(db, assignment, question, student, sha)
        if resolved is None and not state["graded"]:
            continue
        items = manual.rubric(db, assignment, question)
        first = ({"grader": state["grader"], "applied": state["applied"], "adjustment": state["adjustment"]}
                 if resolved is None else resolved.pop("first"))
        first["score"] = manual.written_score(first["applied"], items, first["adjustment"], state["max"])
        second = {"grader": grader, "applied": json.loads(applied), "adjustment": adjustment}
        second["score"] = manual.written_score(second["applied"], items, adjustment, state["max"])
        out.append({"question": question, "student": student, "items": [i["id"] for i in items],
                    "first": first, "second": second, "resolved": resolved})
    return out


def _resolution(db, assignment: str, qid: str, student: str, sha: str) -> dict | None:
    row = db.execute("SELECT resolver, kept, at, first_grader, first_applied, first_adjustment "
                     "FROM double_mark_resolutions WHERE assignment=? AND question=? AND "
                     "student=? AND answer_sha=?", (assignment, qid, student, sha)).fetchone()
    if row is None:
        return None
    resolver, kept, at, grader, applied, adjustment = row
    return {"by": resolver, "kept": kept, "at": at,
            "first": {"grader": grader, "applied": json.loads(applied), "adjustment": adjustment}}


def disagreements(db, assignment: str, qid: str | None = None, student: str | None = None) -> list[dict]:
    """The double-marked answers (of one question, one student, if asked) whose two marks
    differ in points or in rubric items, and whose disagreement nobody has resolved yet."""
    return [p for p in _pairs(db, assignment, qid, student) if p["resolved"] is None
            and (p["first"]["score"] != p["second"]["score"]
                 or set(p["first"]["applied"]) != set(p["second"]["applied"]))]


def disagreement(db, assignment: str, student: str, qid: str) -> dict | None:
    """The unresolved disagreement on ``student``'s answer to ``qid``, or None."""
    return next(iter(disagreements(db, assignment, qid, student)), None)


KEEP = ("first", "second")


def resolve_disagreement(db, assignment: str, student: str, qid: str, *, who: str, keep: str,
                         version: int | None = None, shown_sha: str | None = None) -> dict:
    """Resolve the disagreement of the two blind marks of ``student``'s answer.

    ``keep="first"`` leaves the grade as it is (the first mark, or what it has become
    since); ``keep="second"`` makes the second mark the grade (its rubric items and
    adjustment; the comment stays).  The resolver is a third grader, neither of the two
    who marked.  ``version`` and ``shown_sha`` (the grade's version and the answer's
    SHA-256 the resolver saw) make a decision taken on a grade or an answer that changed
    since a :class:`~.manual.Conflict`, as does a disagreement someone else resolved
    meanwhile.  Recorded in the audit; returns the answer's state after the decision.
    """
    manual.check_grader(who)
    if keep not in KEEP:
        raise GradingError("say which mark is kept: 'first' (the grade as it stands) or "
                           "'second' (the blind second mark)")
    state = manual.grade_state(db, assignment, student, qid)
    pair = disagreement(db, assignment, student, qid)
    if pair is None:
        if shown_sha is not None and _resolution(db, assignment, qid, student, shown_sha):
            raise manual.Conflict(state, "resolved")
        raise GradingError(f"no disagreement of double marking to resolve on this answer of "
                           f"{assignment} {qid}")
    if who in manual.graders_of(db, assignment, student, qid) | {pair["second"]["grader"]}:
        raise GradingError(f"{who} gave one of the two marks: a third grader resolves the disagreement")
    manual.check_seen(state, version, shown_sha)
    sha = manual.answer_sha(state["answer"])
    first, second = pair["first"], pair["second"]
    with db:  # claimed first: of two resolvers at once, one wins and the other is a conflict
        db.execute("DELETE FROM double_mark_resolutions WHERE assignment=? AND question=? AND "
                   "student=? AND answer_sha<>?", (assignment, qid, student, sha))
        try:
            db.execute("INSERT INTO double_mark_resolutions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (assignment, qid, student, who, keep, first["grader"],
                        json.dumps(first["applied"]), first["adjustment"], sha,
                        datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")))
        except sqlite3.IntegrityError:
            raise manual.Conflict(state, "resolved") from None
    try:
        if keep == "second":
            state = manual.save_grade(
                db, assignment, student, qid, who=who, version=state["version"],
                applied=second["applied"], comment=state["comment"], adjustment=second["adjustment"],
                adjustment_reason=f"the blind second mark's adjustment ({second['grader']})"[:manual.MAX_REASON]
                if second["adjustment"] else "", via="double marking", shown_sha=sha)
    except Exception:
        with db:
            db.execute("DELETE FROM double_mark_resolutions WHERE assignment=? AND question=? AND "
                       "student=? AND answer_sha=?", (assignment, qid, student, sha))
        raise
    with db:
        manual._audit(db, who, assignment, student, qid, "double marking resolved",
                      {"first": {"grader": first["grader"], "score": first["score"]},
                       "second": {"grader": second["grader"], "score": second["score"]}},
                      {"kept": keep, "score": state["score"]})
    return state


def agreement(db, assignment: str) -> list[dict]:
    """Per question with double marks: how many, the share with equal points, the mean
    absolute difference of points, and Cohen's kappa of each rubric item (``None`` where
    it is undefined: both graders applied it always, or never)."""
    from sklearn.metrics import cohen_kappa_score

    pairs = _pairs(db, assignment)
    out = []
    for qid in sorted({p["question"] for p in pairs}):
        mine = [p for p in pairs if p["question"] == qid]
        first = np.array([p["first"]["score"] for p in mine])
        second = np.array([p["second"]["score"] for p in mine])
        kappas = {}
        for item in mine[0]["items"]:
            a = [item in p["first"]["applied"] for p in mine]
            b = [item in p["second"]["applied"] for p in mine]
            kappas[item] = None if len(set(a) | set(b)) < 2 else float(cohen_kappa_score(a, b))
            if kappas[item] is not None and np.isnan(kappas[item]):
                kappas[item] = None
        out.append({"question": qid, "double_marked": len(mine),
                    "same_points": float(np.mean(first == second)),
                    "mean_difference": float(np.mean(np.abs(first - second))),
                    "item_kappa": kappas})
    return out


def owes_second_mark(db, assignment: str, qid: str, student: str, *, grader: str,
                     graders: list[str], percent: float) -> bool:
    """Whether ``grader`` owes ``student``'s answer a blind second mark: the answer is in the
    sample, has its first mark (from someone else), ``grader`` is next in the rotation, and
    has not marked it yet.  The grading app then hides the first mark from them."""
    if not (graders and grader in graders and percent):
        return False
    students = manual.students(db, assignment)
    if student not in double_sample(db, assignment, qid, students, percent):
        return False
    state = manual.grade_state(db, assignment, student, qid)
    if state["kind"] != "written" or not state["graded"]:
        return False
    first = manual.graders_of(db, assignment, student, qid)
    if grader in first or second_grader(db, assignment, qid, student, students, graders, first) != grader:
        return False
    create_table(db)
    return db.execute("SELECT 1 FROM second_marks WHERE assignment=? AND question=? AND student=? "
                      "AND answer_sha=?", (assignment, qid, student,
                                           manual.answer_sha(state["answer"]))).fetchone() is None


def next_ungraded(db, assignment: str, qid: str, *, grader: str | None = None,
                  graders: list[str] | None = None, percent: float = 0) -> str | None:
    """The next answer ``grader`` should grade: the first pending one of their share (of the
    whole question without named graders), then the first sampled answer they owe a second
    mark; ``None`` when there is none."""
    rows = [r for r in manual.effective_results(db, assignment, qid)]
    students = [r["student"] for r in rows]
    pending = {r["student"] for r in rows if r["pending"]}
    mine = shares(db, assignment, qid, students, graders)[grader] if graders and grader in graders \
        else fair_order(db, assignment, qid, students)
    first = next((s for s in mine if s in pending), None)
    if first is not None or not (graders and grader in graders and percent):
        return first
    for student in double_sample(db, assignment, qid, students, percent):
        # the same test as the answer's page: an answer it would not show for a second mark
        # (graded from its group by this grader, say) is not offered again and again
        if student not in pending and owes_second_mark(db, assignment, qid, student, grader=grader,
                                                       graders=graders, percent=percent):
            return student
    return None

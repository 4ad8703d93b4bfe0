"""Regrade requests: ``lecturelib gradebook regrade``.

A student asks for a regrade through the LMS; the instructor records the request with the
student's reason.  A grader resolves it with a decision and its reason, another grader
than the one who graded the answer where a person did; the decision may change the grade
(rubric items of a written answer, an override of a code question) or keep it.  The
audit keeps the request, the decision and the change, and the student's feedback file is
written again.
"""

from __future__ import annotations

import datetime
from pathlib import Path

from ..core.notebook import GradingError
from ..core.report import write_atomic
from ..core.submissions import feedback_path
from . import manual

TABLE = """
CREATE TABLE IF NOT EXISTS regrade_requests (
    id INTEGER PRIMARY KEY AUTOINCREMENT, assignment TEXT NOT NULL, student TEXT NOT NULL,
    question TEXT NOT NULL, reason TEXT NOT NULL, requested_at TEXT NOT NULL,
    recorded_by TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'open', decided_by TEXT NOT NULL
    DEFAULT '', decision TEXT NOT NULL DEFAULT '', decided_at TEXT NOT NULL DEFAULT '');
"""
MAX_REASON = 2000
FIELDS = ("id", "assignment", "student", "question", "reason", "requested_at", "recorded_by",
          "status", "decided_by", "decision", "decided_at")


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def create_table(db) -> None:
    db.executescript(TABLE)


def _reason(text, what: str) -> str:
    text = manual._text(text, MAX_REASON, what)
    if not text:
        raise GradingError(f"{what} is empty: say why")
    return text


def request(db, assignment: str, student: str, qid: str, *, reason: str, who: str) -> int:
    """Record a student's request to regrade ``qid``; its id.  ``who`` records it."""
    create_table(db)
    manual.check_grader(who)
    reason = _reason(reason, "the student's reason")
    manual.grade_state(db, assignment, student, qid)  # the answer exists, or a clear error
    with db:
        number = db.execute("INSERT INTO regrade_requests (assignment, student, question, reason, "
                            "requested_at, recorded_by) VALUES (?, ?, ?, ?, ?, ?)",
                            (assignment, student, qid, reason, _now(), who)).lastrowid
        manual._audit(db, who, assignment, student, qid, f"regrade {number} requested", {},
                      {"reason": reason})
    return number


def requests(db, assignment: str | None = None, *, open_only: bool = False) -> list[dict]:
    """The requests, oldest first (of one assignment, the open ones only, if asked)."""
    create_table(db)
    rows = db.execute(f"SELECT {', '.join(FIELDS)} FROM regrade_requests WHERE "
                      "(? IS NULL OR assignment=?) AND (? = 0 OR status='open') ORDER BY id",
                      (assignment, assignment, int(open_only))).fetchall()
    return [dict(zip(FIELDS, r)) for r in rows]


def _open_request(db, number: int) -> dict:
    found = [r for r in requests(db) if r["id"] == number]
    if not found:
        raise GradingError(f"no regrade request {number}")
    if found[0]["status"] != "open":
        raise GradingError(f"regrade request {number} is already resolved")
    return found[0]


def open_request(db, assignment: str, student: str, qid: str) -> dict | None:
    """The open request on one answer (the oldest, if several), or None."""
    found = [r for r in requests(db, assignment, open_only=True)
             if (r["student"], r["question"]) == (student, qid)]
    return found[0] if found else None


def first_graders(db, req: dict) -> set[str]:
    """Who changed the answer's grade before the request was recorded: they do not
    resolve it (a second mark counts; the person recording the request does not)."""
    opened = db.execute("SELECT MIN(id) FROM audit WHERE assignment=? AND student=? AND question=? "
                        "AND action=?", (req["assignment"], req["student"], req["question"],
                                         f"regrade {req['id']} requested")).fetchone()[0]
    rows = db.execute("SELECT DISTINCT who FROM audit WHERE assignment=? AND student=? AND "
                      "question=? AND id<? AND action NOT LIKE 'regrade %'",
                      (req["assignment"], req["student"], req["question"], opened or 0)).fetchall()
    return {r[0] for r in rows}


def resolve(db, number: int, *, who: str, decision: str, applied=None, override=None,
            feedback_dir=None, version: int | None = None, shown_sha: str | None = None) -> dict:
    """Resolve request ``number`` with ``decision`` (its reason, shown to the student).

    ``applied`` (rubric item ids) regrades a written answer, ``override`` (points) a code
    question; neither keeps the grade.  The resolver must not be anyone who graded the
    answer before the request (:func:`first_graders`).  ``version`` and ``shown_sha`` (the
    grade's version and the answer's SHA-256 the resolver saw, as the app sends them) make
    a decision taken on a grade or an answer that changed since a
    :class:`~.manual.Conflict`.  With ``feedback_dir`` the student's feedback file there is
    written again.  Returns the answer's state after the decision.
    """
    manual.check_grader(who)
    req = _open_request(db, number)
    decision = _reason(decision, "the decision")
    state = manual.grade_state(db, req["assignment"], req["student"], req["question"])
    if who in first_graders(db, req):
        raise GradingError(f"{who} graded this answer: another grader resolves its regrade request")
    manual.check_seen(state, version, shown_sha)
    via = f"regrade {number}"
    if applied is not None:
        state = manual.save_grade(db, req["assignment"], req["student"], req["question"], who=who,
                                  version=state["version"], applied=list(applied),
                                  comment=state["comment"], adjustment=state["adjustment"],
                                  adjustment_reason=state["adjustment_reason"], via=via,
                                  shown_sha=shown_sha)
    elif override is not None:
        state = manual.save_override(db, req["assignment"], req["student"], req["question"],
                                     who=who, version=state["version"], points=override,
                                     reason=f"{via}: {decision}"[:manual.MAX_REASON],
                                     shown_sha=shown_sha)
    with db:
        db.execute("UPDATE regrade_requests SET status='resolved', decided_by=?, decision=?, "
                   "decided_at=? WHERE id=?", (who, decision, _now(), number))
        manual._audit(db, who, req["assignment"], req["student"], req["question"],
                      f"regrade {number} resolved", {"reason": req["reason"]},
                      {"decision": decision, "score": state["score"]})
    if feedback_dir is not None:
        write_student_feedback(db, req["assignment"], req["student"], feedback_dir)
    return state


def decided(db, assignment: str, student: str) -> list[dict]:
    """The resolved regrade requests of ``student`` on ``assignment``, oldest first."""
    return [r for r in requests(db, assignment) if r["student"] == student and r["status"] == "resolved"]


def write_student_feedback(db, assignment: str, student: str, folder) -> None:
    """Write one student's feedback file again, with every regrade decision of theirs."""
    report = manual.report_for(db, assignment, student)
    report.notes += [f"regrade of {r['question']}: {r['decision']}" for r in decided(db, assignment, student)]
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise GradingError(f"cannot create the feedback folder: {exc.strerror}") from None
    write_atomic(feedback_path(folder, student), report.feedback(student))

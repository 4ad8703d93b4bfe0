"""Scoring a run against the reference, question by question, into a grade report.

Comparisons happen here, in the grader's process (:mod:`.compare`); a written question is
never scored by a check.  Every reason is in the grader's own words.
"""

from __future__ import annotations

from ..core.notebook import (MAX_ANSWER_CHARS, MAX_CODE_CHARS, notebook_assignment,
                             question_code, written_answer, written_answer_note)
from ..core.report import NO_ANSWER, PENDING, GradeReport, QuestionResult, plain
from . import compare as cmp
from .answers import Answer, Run
from .reference import Reference


def score_questions(questions, student: Run, reference: Reference, nb=None) -> list[QuestionResult]:
    """Compare a student's run with the reference, question by question.

    A written question is never scored by a check: it is pending, or 0 ("no answer") when
    the notebook ``nb`` has no answer cell for it or the cell is blank or still the prompt.
    A code question earns its points when every check matches, or with ``check_points``
    the points of each check that matches.  The student's text of each question (its
    answer cell, or the code cells that ran for it) is kept in ``answer`` for the grading
    app, with ``answer_note`` naming the other cells tagged for the question.
    """
    results = []
    for q in questions:
        if q.written:
            results.append(_written_result(q, nb, reference.exercise_ids))
            continue
        reason = student.question_errors.get(q.id)
        outcomes: list[bool | None] = [None] * len(q.checks)
        failures = []
        if reason is None:
            for i, (check, got) in enumerate(zip(q.checks, student.answers[q.id])):
                why = _compare_check(q, check, i, got, reference.raw[q.id][i])
                outcomes[i] = why is None
                if why:
                    failures.append(why)
                    if q.check_points is None:
                        break
        code, note = question_code(nb, q.id, MAX_CODE_CHARS) if nb is not None else (None, "")
        if reason is not None or (failures and q.check_points is None):
            points, reason = 0.0, reason or failures[0]
        elif failures:
            points = sum(share for share, ok in zip(q.check_points, outcomes) if ok)
            reason = f"{failures[0]} ({outcomes.count(True)} of {len(outcomes)} checks match)"
        else:
            points, reason = q.points, "ok"
        results.append(QuestionResult(q.id, float(points), q.points, plain(reason),
                                      checks=outcomes, answer=code or "", answer_note=note))
    return results


def _written_result(q, nb, exercise_ids) -> QuestionResult:
    state, text = written_answer(nb, q.id, exercise_ids) if nb is not None else ("missing", "")
    if state in ("missing", "empty"):
        return QuestionResult(q.id, 0.0, q.points, NO_ANSWER, kind="written")
    reason = {"present": PENDING,
              "below": f"{PENDING} (taken from the Markdown cells under the answer cell)",
              "cut": f"{PENDING} (the answer is longer than {MAX_ANSWER_CHARS} characters: "
                     "only its beginning is kept)"}[state]
    return QuestionResult(q.id, 0.0, q.points, reason, pending=True, kind="written", answer=text,
                          answer_note=written_answer_note(nb, q.id))


def _compare_check(q, check, index, got: Answer, want) -> str | None:
    """``None`` if the check passes, else a reason in the grader's own words."""
    label = f"check {index + 1}"
    if not got.ok:
        return f"{label} {got.error}"
    value = got.value
    try:
        if check.post:
            value, want = cmp.post_both(check.post, value, want)
        mismatch = cmp.compare(value, want, q.compare, q.rtol, q.atol)
    except cmp.Mismatch as exc:
        return f"{label}: {exc}"
    except Exception:  # post or a comparison failed on this answer, not on the solution's
        return f"{label}: the answer has the wrong form"
    return f"{label}: {mismatch}" if mismatch else None


def report_for_run(nb, label: str, assignment: str, questions, reference: Reference,
                   student: Run, *, sandbox: bool = True) -> GradeReport:
    """The grade report of notebook ``nb`` whose run gave ``student``."""
    notes = []
    claimed = notebook_assignment(nb)
    if claimed is not None and claimed != assignment:
        notes.append(f"the notebook says it belongs to assignment {plain(claimed, 60)!r}; "
                     f"it was graded as {assignment!r}")
    if not sandbox:
        notes.append("graded without the sandbox (--no-sandbox): this score is not trustworthy")
    results = score_questions(questions, student, reference, nb)
    if student.raised_cells and any(r.points < r.max for r in results if r.kind != "written"):
        notes.append(first_error_note(*student.raised_cells[0]))
    return GradeReport(label, assignment, results, student.skipped_cells, notes)


def first_error_note(index: int, name: str) -> str:
    """Where to look first when checks fail: the first code cell that raised."""
    what = f"an exception ({name})" if name else "an exception"
    return (f"code cell {index} raised {what}; the failures above may follow from it, "
            "so fix that cell first")

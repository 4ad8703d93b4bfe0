"""Running a notebook in the sandbox, reading its answers, and grading one submission.

The grader's process never runs a notebook's code.  It sends the code cells and the check
expressions to the driver in the sandbox (:mod:`.inside`), reads back at most a few MiB of
JSON, decodes it as plain data (:mod:`.safejson`) and compares it with the solution's
answers (:mod:`.compare`), which come from a separate sandboxed run of the solution
notebook, cached by the solution's content hash.
"""

from __future__ import annotations

import builtins
import dataclasses
import hashlib
import json
import os
from pathlib import Path

from . import compare as cmp
from . import sandbox as sb
from .notebook import (MAX_ANSWER_CHARS, MAX_CODE_CHARS, GradingError, check_assignment_name,
                       code_sources, load_questions, notebook_assignment, question_cell_text,
                       read_notebook, written_answer)
from .budget import OverBudget, run_in_budget
from .report import NO_ANSWER, PENDING, GradeReport, QuestionResult, plain
from .safejson import PayloadError, decode, loads

@dataclasses.dataclass
class Answer:
    """One check's outcome in a run: a decoded value, or what went wrong in the grader's
    own words (:func:`raised` or :data:`UNSUPPORTED`)."""

    ok: bool
    value: object = None
    error: str = ""


UNSUPPORTED = "returned an answer of a form that cannot be graded"


def builtin_exception(name) -> str | None:
    """``name`` if it names one of Python's builtin exception classes, else ``None``."""
    cls = vars(builtins).get(name) if isinstance(name, str) else None
    return name if isinstance(cls, type) and issubclass(cls, BaseException) else None


def raised(name) -> str:
    """A raising check, in a fixed vocabulary: never the notebook's message or names."""
    name = builtin_exception(name)
    return f"raised an exception ({name})" if name else "raised an exception"


@dataclasses.dataclass
class Run:
    """Outcome of running one notebook: answers per question, or why there are none."""

    answers: dict[str, list[Answer]]
    question_errors: dict[str, str]
    skipped_cells: list[tuple[int, str]]


_CODES = {
    "timeout": "ran longer than {limits.cell_timeout} s",
    "crash": "crashed the kernel",
    "total_timeout": "was not reached within the notebook's time limit of {limits.total_timeout} s",
    "unreadable": "the answer could not be read back from the notebook",
}
MAX_SKIPPED = 5  # skipped cells reported (their indices come from the sandbox)


def _describe_code(code, limits: sb.Limits) -> str:
    text = _CODES.get(code) if isinstance(code, str) else None
    return text.format(limits=limits) if text else "could not be evaluated"


def _parse_answer(item) -> Answer | None:
    if not isinstance(item, dict) or not isinstance(item.get("ok"), bool):
        return None
    if not item["ok"]:
        return Answer(False, error=UNSUPPORTED if item.get("unsupported") is True
                      else raised(item.get("error")))
    try:
        return Answer(True, decode(item.get("value")))
    except PayloadError as exc:  # its messages are the grader's own, a fixed set
        return Answer(False, error=f"{UNSUPPORTED} ({exc})")
    except (ValueError, TypeError, OverflowError, MemoryError, RecursionError):
        return Answer(False, error=UNSUPPORTED)


def _parse_answers(results, count) -> list[Answer] | None:
    if not isinstance(results, list) or len(results) != count:
        return None
    answers = [_parse_answer(item) for item in results]
    return None if any(a is None for a in answers) else answers


def _parse_skipped(raw, n_cells: int, limits: sb.Limits) -> list[tuple[int, str]]:
    """At most :data:`MAX_SKIPPED` distinct cells, each with a reason from a fixed set."""
    skipped: dict[int, str] = {}
    for item in raw if isinstance(raw, list) else []:
        if (isinstance(item, list) and len(item) == 2 and type(item[0]) is int
                and 0 <= item[0] < n_cells and item[0] not in skipped):
            skipped[item[0]] = _describe_code(item[1], limits)
            if len(skipped) == MAX_SKIPPED:
                break
    return sorted(skipped.items())


def parse_output(output: bytes, exprs: dict[str, list[str]], n_cells: int,
                 limits: sb.Limits) -> Run:
    """Decode the driver's output strictly; whatever is off schema counts as no answer.

    Every reason is the grader's own text: nothing the sandbox wrote is shown."""
    try:
        data = loads(output, limits.output_mb * 2**20)
    except PayloadError as exc:  # a fixed message
        return Run({}, {qid: f"the notebook's answers could not be read ({exc})" for qid in exprs}, [])
    if not isinstance(data, dict):
        return Run({}, {qid: "the notebook's answers could not be read" for qid in exprs}, [])
    raw_answers = data.get("answers") if isinstance(data.get("answers"), dict) else {}
    raw_errors = data.get("errors") if isinstance(data.get("errors"), dict) else {}
    answers, errors = {}, {}
    for qid, checks in exprs.items():
        parsed = _parse_answers(raw_answers.get(qid), len(checks))
        if parsed is not None:
            answers[qid] = parsed
        else:
            errors[qid] = _describe_code(raw_errors.get(qid, "unreadable"), limits)
    return Run(answers, errors, _parse_skipped(data.get("skipped"), n_cells, limits))


def _job(cells: list[str], exprs: dict[str, list[str]], limits: sb.Limits) -> bytes:
    return json.dumps({"cells": cells, "questions": [{"id": q, "exprs": e} for q, e in exprs.items()],
                       "limits": limits.for_driver()}).encode()


def run_job(cells: list[str], exprs: dict[str, list[str]], limits: sb.Limits,
            *, sandbox: bool = True) -> sb.Outcome:
    """Run ``cells`` and evaluate ``exprs`` (question id -> expressions) after them, in the
    sandbox; the driver's raw output, not yet parsed.  This is all a grading worker does
    (a Dask worker too): it is given the notebook's code and the check expressions, never
    the solution's answers or the points."""
    return sb.run_driver(_job(cells, exprs, limits), limits, sandbox=sandbox)


PARSE_MEMORY_MB = 2048  # address space the parse may add, in a child of the grader
PARSE_TIMEOUT = 60.0  # seconds; the parse is linear: about 1.5 s at the 48 MiB cap
PARSE_OVER_BUDGET = "the notebook's answers could not be read (over the parser's budget)"


def run_from_outcome(outcome: sb.Outcome, exprs: dict[str, list[str]], n_cells: int,
                     limits: sb.Limits) -> Run:
    """The answers in a run's raw output, parsed by the grader (in a forked child with a
    memory and a time budget, :func:`~.budget.run_in_budget`: the parse is linear in its
    input, and the budget holds even so)."""
    if outcome.output is None:
        return Run({}, {qid: outcome.failure for qid in exprs}, [])
    run = run_in_budget(parse_output, outcome.output, exprs, n_cells, limits,
                        memory_mb=PARSE_MEMORY_MB, timeout=PARSE_TIMEOUT)
    if isinstance(run, Run):
        return run
    if isinstance(run, OverBudget):
        return Run({}, {qid: PARSE_OVER_BUDGET for qid in exprs}, [])
    raise run  # a bug of the parser: never silent


def run_notebook(cells: list[str], exprs: dict[str, list[str]], limits: sb.Limits,
                 *, sandbox: bool = True) -> Run:
    """Run ``cells`` and evaluate ``exprs`` (question id -> expressions) after them."""
    outcome = run_job(cells, exprs, limits, sandbox=sandbox)
    return run_from_outcome(outcome, exprs, len(cells), limits)


def hidden_exprs(questions) -> dict[str, list[str]]:
    """The check expressions of the code questions (a written question has none)."""
    return {q.id: [c.expr for c in q.checks] for q in questions if not q.written}


# --------------------------------------------------------------------------------------
# The solution's answers
# --------------------------------------------------------------------------------------


@dataclasses.dataclass
class Reference:
    """The solution's answers to every check (after ``post``), and what identifies them."""

    key: str
    raw: dict[str, list[object]]


_REFERENCE_CACHE: dict[str, Reference] = {}


def reference_key(solution_path: Path) -> str:
    """Content hash of the solution notebook and the lecturelib package (driver included)."""
    digest = hashlib.sha256(Path(solution_path).read_bytes())
    for path in sorted(sb.PACKAGE_DIR.rglob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def reference_run(solution_path, questions, limits: sb.Limits, *, sandbox: bool = True,
                  use_cache: bool = True, store=None) -> Reference:
    """The solution notebook's answers, computed once per content hash.

    ``store`` (a :class:`~.gradebook.Gradebook`) keeps them across runs of the command.
    """
    solution_path = Path(solution_path)
    key = reference_key(solution_path)
    if use_cache and key in _REFERENCE_CACHE:
        return _REFERENCE_CACHE[key]
    cells = code_sources(read_notebook(solution_path))
    output = store.reference_output(key) if (store is not None and use_cache) else None
    fresh = output is None
    if fresh:
        outcome = sb.run_driver(_job(cells, hidden_exprs(questions), limits), limits, sandbox=sandbox)
        if outcome.output is None:
            raise GradingError(f"the solution notebook {solution_path} does not run cleanly: "
                               f"{outcome.failure}")
        output = outcome.output
    reference = _reference_from_output(solution_path, key, output, questions, limits, len(cells))
    if use_cache:
        _REFERENCE_CACHE[key] = reference
        if store is not None and fresh:
            store.store_reference_output(key, solution_path.stem, output)
    return reference


def _reference_from_output(solution_path, key, output, questions, limits, n_cells) -> Reference:
    run = parse_output(output, hidden_exprs(questions), n_cells, limits)
    problems = [f"{qid}: {why}" for qid, why in run.question_errors.items()]
    for qid, answers in run.answers.items():
        problems += [f"{qid}: check {i + 1} {a.error}" for i, a in enumerate(answers) if not a.ok]
    if run.skipped_cells or problems:
        detail = "; ".join(problems + [f"cell {i} {r}" for i, r in run.skipped_cells])
        raise GradingError(f"the solution notebook {solution_path} does not run cleanly: {detail}")
    raw = {qid: [a.value for a in answers] for qid, answers in run.answers.items()}
    for q in questions:
        for i, check in enumerate(q.checks):  # a written question has no checks
            if check.post:
                try:
                    cmp.apply_post(check.post, raw[q.id][i])
                except Exception as exc:
                    raise GradingError(f"{solution_path}: question {q.id}, check {i + 1}: "
                                       f"post {check.post!r} fails on the solution: {exc}") from None
    return Reference(key, raw)


# --------------------------------------------------------------------------------------
# Grading one submission
# --------------------------------------------------------------------------------------


def score_questions(questions, student: Run, reference: Reference, nb=None) -> list[QuestionResult]:
    """Compare a student's run with the reference, question by question.

    A written question is never scored by a check: it is pending, or 0 ("no answer") when
    the notebook ``nb`` has no answer cell for it or the cell is blank or still the prompt.
    A code question earns its points when every check matches, or with ``check_points``
    the points of each check that matches.  The student's text of each question (its
    answer cell, or its code cell) is kept in ``answer`` for the grading app.
    """
    results = []
    for q in questions:
        if q.written:
            results.append(_written_result(q, nb))
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
        code = question_cell_text(nb, q.id, MAX_CODE_CHARS)[0] if nb is not None else None
        if reason is not None or (failures and q.check_points is None):
            points, reason = 0.0, reason or failures[0]
        elif failures:
            points = sum(share for share, ok in zip(q.check_points, outcomes) if ok)
            reason = f"{failures[0]} ({outcomes.count(True)} of {len(outcomes)} checks match)"
        else:
            points, reason = q.points, "ok"
        results.append(QuestionResult(q.id, float(points), q.points, plain(reason),
                                      checks=outcomes, answer=code or ""))
    return results


def _written_result(q, nb) -> QuestionResult:
    state, text = written_answer(nb, q.id) if nb is not None else ("missing", "")
    if state in ("missing", "empty"):
        return QuestionResult(q.id, 0.0, q.points, NO_ANSWER, kind="written")
    reason = PENDING if state == "present" else (
        f"{PENDING} (the answer is longer than {MAX_ANSWER_CHARS} characters: "
        "only its beginning is kept)")
    return QuestionResult(q.id, 0.0, q.points, reason, pending=True, kind="written", answer=text)


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


def default_solutions_dir() -> Path:
    env = os.environ.get("LECTURELIB_SOLUTIONS")
    if env:
        return Path(env)
    return sb.PACKAGE_DIR.parent / "solutions"


def solution_for(assignment: str, solutions_dir=None) -> Path:
    """The solution notebook of ``assignment``; a clear error if there is none."""
    check_assignment_name(assignment)
    solutions_dir = Path(solutions_dir) if solutions_dir else default_solutions_dir()
    path = solutions_dir / f"{assignment}.ipynb"
    if not path.is_file():
        raise GradingError(f"no solution notebook for assignment {assignment!r} in {solutions_dir} "
                           "(grading is an instructor command: it needs the solutions; to check "
                           "your own work, run: .venv/bin/lecturelib check NOTEBOOK)")
    return path


def grade_notebook(nb, label: str, assignment: str, questions, reference: Reference,
                   limits: sb.Limits, *, sandbox: bool = True) -> GradeReport:
    """Grade an already read notebook ``nb`` against ``reference``."""
    student = run_notebook(code_sources(nb), hidden_exprs(questions), limits, sandbox=sandbox)
    return report_for_run(nb, label, assignment, questions, reference, student, sandbox=sandbox)


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
    return GradeReport(label, assignment, score_questions(questions, student, reference, nb),
                       student.skipped_cells, notes)


def grade(notebook, *, assignment: str, solutions_dir=None, cell_timeout=60, total_timeout=600,
          memory_mb=4096, sandbox=True, limits: sb.Limits | None = None) -> GradeReport:
    """Grade a student notebook against the solution of ``assignment``.

    The assignment is named by the instructor, never read from the student's file; the
    grading spec, the points and the reference answers come only from the solution
    notebook.  Both notebooks run in the sandbox unless ``sandbox=False`` (no isolation:
    only for a student checking their own work).
    """
    limits = limits or sb.Limits(cell_timeout=cell_timeout, total_timeout=total_timeout,
                                 memory_mb=memory_mb)
    solution_path = solution_for(assignment, solutions_dir)
    questions = load_questions(read_notebook(solution_path))
    nb = read_notebook(notebook)
    reference = reference_run(solution_path, questions, limits, sandbox=sandbox)
    return grade_notebook(nb, str(notebook), assignment, questions, reference, limits, sandbox=sandbox)

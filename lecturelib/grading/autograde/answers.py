"""Reading a sandboxed run's output: the answers of every check, as plain data.

Whatever the driver wrote is hostile.  It is decoded strictly (:mod:`..core.safejson`), in
a forked child with a memory and a time budget (:mod:`.budget`); whatever is off schema
counts as no answer, and every reason is the grader's own text from a fixed vocabulary:
nothing the sandbox wrote is shown.
"""

from __future__ import annotations

import builtins
import dataclasses

from ..core.safejson import PayloadError, decode, loads
from .budget import OverBudget, run_in_budget
from .job import CELL_FACTOR, TOTAL_FLOOR
from .sandbox import Limits, Outcome


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
    """Outcome of running one notebook: answers per question, or why there are none; the
    first cells that raised (a builtin exception's name, or "" for another), and how long
    each cell (by code-cell index) and each question's checks took."""

    answers: dict[str, list[Answer]]
    question_errors: dict[str, str]
    skipped_cells: list[tuple[int, str]]
    raised_cells: list[tuple[int, str]] = dataclasses.field(default_factory=list)
    cell_seconds: dict[int, float] = dataclasses.field(default_factory=dict)
    check_seconds: dict[str, float] = dataclasses.field(default_factory=dict)


_CODES = {
    "timeout": "ran longer than {seconds} s",
    "crash": "crashed the kernel",
    "total_timeout": ("was not reached within the whole notebook's time limit of {limits.total_timeout} s "
                      f"({CELL_FACTOR} times the solution's own run, at least {TOTAL_FLOOR} s, "
                      "at most --total-timeout)"),
    "unreadable": "the answer could not be read back from the notebook",
}
MAX_SKIPPED = 5  # skipped cells reported (their indices come from the sandbox)


def _describe_code(code, limits: Limits, seconds: int | None = None) -> str:
    """A code of the driver in words; ``seconds`` is the time limit that applied."""
    text = _CODES.get(code) if isinstance(code, str) else None
    return (text.format(limits=limits, seconds=seconds or limits.cell_timeout) if text
            else "could not be evaluated")


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


def _cell_entries(raw, n_cells: int) -> list[tuple[int, object]]:
    """The ``[index, value]`` pairs of ``raw`` with a valid, new code-cell index."""
    entries: dict[int, object] = {}
    for item in raw if isinstance(raw, list) else []:
        if (isinstance(item, list) and len(item) == 2 and type(item[0]) is int
                and 0 <= item[0] < n_cells and item[0] not in entries):
            entries[item[0]] = item[1]
    return sorted(entries.items())


def _parse_skipped(raw, n_cells: int, limits: Limits, cell_limits=None) -> list[tuple[int, str]]:
    """At most :data:`MAX_SKIPPED` distinct cells, each with a reason from a fixed set."""
    entries = _cell_entries(raw, n_cells)[:MAX_SKIPPED]
    return [(i, _describe_code(code, limits, cell_limits[i] if cell_limits else None))
            for i, code in entries]


def _parse_raised(raw, n_cells: int) -> list[tuple[int, str]]:
    """At most :data:`MAX_SKIPPED` cells that raised, each with a builtin exception's name
    or "" (a name the notebook chose is never shown)."""
    return [(i, builtin_exception(name) or "") for i, name in _cell_entries(raw, n_cells)][:MAX_SKIPPED]


def _seconds(value) -> float | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < 1e6
    return float(value) if ok else None


def _parse_seconds(raw, n_cells: int, exprs) -> tuple[dict[int, float], dict[str, float]]:
    raw = raw if isinstance(raw, dict) else {}
    cells = {i: s for i, s in ((i, _seconds(v)) for i, v in _cell_entries(raw.get("cells"), n_cells))
             if s is not None}
    checks = raw.get("checks") if isinstance(raw.get("checks"), dict) else {}
    return cells, {q: s for q, s in ((q, _seconds(checks.get(q))) for q in exprs) if s is not None}


def parse_output(output: bytes, exprs: dict[str, list[str]], n_cells: int,
                 limits: Limits, cell_limits=None, check_limits=None) -> Run:
    """Decode the driver's output strictly; whatever is off schema counts as no answer.

    ``cell_limits`` and ``check_limits`` are the time limits the job set (a reason names
    the one that applied).  Every reason is the grader's own text: nothing the sandbox
    wrote is shown."""
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
            errors[qid] = _describe_code(raw_errors.get(qid, "unreadable"), limits,
                                         (check_limits or {}).get(qid))
    cell_seconds, check_seconds = _parse_seconds(data.get("seconds"), n_cells, exprs)
    return Run(answers, errors, _parse_skipped(data.get("skipped"), n_cells, limits, cell_limits),
               _parse_raised(data.get("raised"), n_cells), cell_seconds, check_seconds)


PARSE_MEMORY_MB = 2048  # address space the parse may add, in a child of the grader
PARSE_TIMEOUT = 60.0  # seconds; the parse is linear: about 1.5 s at the 48 MiB cap
PARSE_OVER_BUDGET = "the notebook's answers could not be read (over the parser's budget)"


def run_from_outcome(outcome: Outcome, exprs: dict[str, list[str]], n_cells: int,
                     limits: Limits, cell_limits=None, check_limits=None) -> Run:
    """The answers in a run's raw output, parsed by the grader (in a forked child with a
    memory and a time budget, :func:`~.budget.run_in_budget`: the parse is linear in its
    input, and the budget holds even so)."""
    if outcome.output is None:
        return Run({}, {qid: outcome.failure for qid in exprs}, [])
    run = run_in_budget(parse_output, outcome.output, exprs, n_cells, limits, cell_limits,
                        check_limits, memory_mb=PARSE_MEMORY_MB, timeout=PARSE_TIMEOUT)
    if isinstance(run, Run):
        return run
    if isinstance(run, OverBudget):
        return Run({}, {qid: PARSE_OVER_BUDGET for qid in exprs}, [])
    raise run  # a bug of the parser: never silent

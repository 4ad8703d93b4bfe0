"""What the sandbox is given for one notebook: its code cells and the check expressions.

A job never holds the solution's answers or the points: this is all a grading worker (a
Dask worker too) sees, and its raw output is read back by :mod:`.answers`.
"""

from __future__ import annotations

import json
import math

from .sandbox import Limits, Outcome, run_driver

# A cell's time limit, from the solution's own run of the same cell (README, "Time limits").
CELL_FLOOR = 10    # seconds: no cell is stopped sooner
CELL_FACTOR = 10   # times the solution's time for the cell


def time_limit(solution_seconds: float | None, cap: int) -> int:
    """The time limit of a cell (or of a question's checks) whose solution took
    ``solution_seconds``: :data:`CELL_FACTOR` times that, at least :data:`CELL_FLOOR`
    seconds and at most ``cap`` (the ``--timeout``), which is also the limit of a cell the
    solution does not have (``None``)."""
    if solution_seconds is None:
        return cap
    return int(min(cap, max(CELL_FLOOR, math.ceil(CELL_FACTOR * solution_seconds))))


TOTAL_FLOOR = 30   # seconds: no notebook as a whole is stopped sooner


def total_limit(solution_seconds: float, cap: int) -> int:
    """The time limit of a whole notebook whose solution's cells and checks took
    ``solution_seconds`` together: :data:`CELL_FACTOR` times that, at least
    :data:`TOTAL_FLOOR` seconds and at most ``cap`` (the ``--total-timeout``).  Without it
    a notebook of many cells, each just under its own limit, would run for their sum."""
    return int(min(cap, max(TOTAL_FLOOR, math.ceil(CELL_FACTOR * solution_seconds))))


def job_bytes(cells: list[str], exprs: dict[str, list[str]], limits: Limits,
              cell_limits: list[int] | None = None, check_limits: dict[str, int] | None = None) -> bytes:
    job = {"cells": cells, "questions": [{"id": q, "exprs": e} for q, e in exprs.items()],
           "limits": limits.for_driver()}
    if cell_limits is not None:
        job["cell_timeouts"] = cell_limits
    if check_limits is not None:
        job["check_timeouts"] = check_limits
    return json.dumps(job).encode()


def run_job(cells: list[str], exprs: dict[str, list[str]], limits: Limits,
            cell_limits: list[int] | None = None, check_limits: dict[str, int] | None = None,
            *, sandbox: bool = True) -> Outcome:
    """Run ``cells`` and evaluate ``exprs`` (question id -> expressions) after them, in the
    sandbox; the driver's raw output, not yet parsed.  This is all a grading worker does
    (a Dask worker too): it is given the notebook's code, the check expressions and the
    time limits (``cell_limits`` per cell, ``check_limits`` per question; without them
    ``limits.cell_timeout``), never the solution's answers or the points."""
    return run_driver(job_bytes(cells, exprs, limits, cell_limits, check_limits), limits,
                      sandbox=sandbox)


def hidden_exprs(questions) -> dict[str, list[str]]:
    """The check expressions of the code questions (a written question has none)."""
    return {q.id: [c.expr for c in q.checks] for q in questions if not q.written}

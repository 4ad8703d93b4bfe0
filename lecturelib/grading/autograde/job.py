"""What the sandbox is given for one notebook: its code cells and the check expressions.

A job never holds the solution's answers or the points: this is all a grading worker (a
Dask worker too) sees, and its raw output is read back by :mod:`.answers`.
"""

from __future__ import annotations

import json

from .sandbox import Limits, Outcome, run_driver


def job_bytes(cells: list[str], exprs: dict[str, list[str]], limits: Limits) -> bytes:
    return json.dumps({"cells": cells, "questions": [{"id": q, "exprs": e} for q, e in exprs.items()],
                       "limits": limits.for_driver()}).encode()


def run_job(cells: list[str], exprs: dict[str, list[str]], limits: Limits,
            *, sandbox: bool = True) -> Outcome:
    """Run ``cells`` and evaluate ``exprs`` (question id -> expressions) after them, in the
    sandbox; the driver's raw output, not yet parsed.  This is all a grading worker does
    (a Dask worker too): it is given the notebook's code and the check expressions, never
    the solution's answers or the points."""
    return run_driver(job_bytes(cells, exprs, limits), limits, sandbox=sandbox)


def hidden_exprs(questions) -> dict[str, list[str]]:
    """The check expressions of the code questions (a written question has none)."""
    return {q.id: [c.expr for c in q.checks] for q in questions if not q.written}

"""The solution's side of a grading: the solution notebook and its answers to every check.

The solution runs once per content hash of the notebook and of ``lecturelib`` (the driver
included), in the sandbox like any submission; its answers are cached in memory and, given
a gradebook, across runs of the command.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from pathlib import Path

from ..core.notebook import (GradingError, check_assignment_name, code_cell_ids, code_sources,
                             read_notebook)
from ..core.exercise import make_exercise
from . import compare as cmp
from .answers import parse_output
from .job import hidden_exprs, job_bytes
from .sandbox import PACKAGE_DIR, Limits, run_driver


@dataclasses.dataclass
class Reference:
    """The solution's answers to every check (after ``post``), and what identifies them;
    how long its run of each code cell (by cell id) and of each question's checks took."""

    key: str
    raw: dict[str, list[object]]
    cell_seconds: dict[str, float] = dataclasses.field(default_factory=dict)
    check_seconds: dict[str, float] = dataclasses.field(default_factory=dict)
    exercise_ids: frozenset = frozenset()  # the ids of the exercise's own cells


_REFERENCE_CACHE: dict[str, Reference] = {}


def reference_key(solution_path: Path) -> str:
    """Content hash of the solution notebook and the lecturelib package (driver included)."""
    digest = hashlib.sha256(Path(solution_path).read_bytes())
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def reference_run(solution_path, questions, limits: Limits, *, sandbox: bool = True,
                  use_cache: bool = True, store=None) -> Reference:
    """The solution notebook's answers, computed once per content hash.

    ``store`` (a :class:`~.gradebook.Gradebook`) keeps them across runs of the command.
    """
    solution_path = Path(solution_path)
    key = reference_key(solution_path)
    if use_cache and key in _REFERENCE_CACHE:
        return _REFERENCE_CACHE[key]
    nb = read_notebook(solution_path)
    cells, ids = code_sources(nb), code_cell_ids(nb)
    output = store.reference_output(key) if (store is not None and use_cache) else None
    fresh = output is None
    if fresh:
        outcome = run_driver(job_bytes(cells, hidden_exprs(questions), limits), limits, sandbox=sandbox)
        if outcome.output is None:
            raise GradingError(f"the solution notebook {solution_path} does not run cleanly: "
                               f"{outcome.failure}")
        output = outcome.output
    reference = _reference_from_output(solution_path, key, output, questions, limits, ids)
    exercise = make_exercise(nb, solution_path.stem)
    reference.exercise_ids = frozenset(exercise.metadata["lecturelib"]["cells"])
    if use_cache:
        _REFERENCE_CACHE[key] = reference
        if store is not None and fresh:
            store.store_reference_output(key, solution_path.stem, output)
    return reference


def _reference_from_output(solution_path, key, output, questions, limits, ids) -> Reference:
    run = parse_output(output, hidden_exprs(questions), len(ids), limits)
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
    cell_seconds = {ids[i]: seconds for i, seconds in run.cell_seconds.items() if ids[i]}
    return Reference(key, raw, cell_seconds, run.check_seconds)


def default_solutions_dir() -> Path:
    env = os.environ.get("LECTURELIB_SOLUTIONS")
    if env:
        return Path(env)
    return PACKAGE_DIR.parent / "solutions"


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

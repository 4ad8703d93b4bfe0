"""``lecturelib assign``: the student's exercise notebook written from the solution notebook.

Solution code between ``# BEGIN SOLUTION`` and ``# END SOLUTION`` becomes a stub that
raises ``NotImplementedError``; solution text and written questions' model answers become
the answer prompt; hidden checks are dropped and the public checks kept for ``check()``.
The output is deterministic, so a test can prove that ``exercises/`` is in sync.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import nbformat

from .notebook import (ANSWER_PROMPT, BEGIN, END, STUB, GradingError, Question, as_notebook,
                       cell_tags, check_assignment_name, load_questions, question_id, read_notebook)


def _strip_solution(source: str, where: str) -> str:
    out: list[str] = []
    inside = False
    for line in source.splitlines():
        stripped = line.strip()
        if stripped == BEGIN:
            if inside:
                raise GradingError(f"{where}: nested '{BEGIN}'")
            inside = True
            indent = line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}# YOUR CODE HERE")
            out.append(f"{indent}{STUB}")
        elif stripped == END:
            if not inside:
                raise GradingError(f"{where}: '{END}' without '{BEGIN}'")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise GradingError(f"{where}: '{BEGIN}' is never closed")
    return "\n".join(out)


def public_checks_metadata(questions) -> dict:
    """The public checks of every code question, as stored in the student notebook's metadata."""
    return {q.id: [dataclasses.asdict(p) for p in q.public] for q in questions if not q.written}


def written_prompt_spec(question: Question) -> dict:
    """What the student's answer cell carries: that it is written, and its points; nothing else."""
    return {"written": True, "points": int(question.points) if question.points.is_integer()
            else question.points}


def check_setup_source(name: str) -> str:
    """The code cell that defines ``check`` in a student notebook (after its first code cell)."""
    return (f"# check(\"q1\") runs question 1's public checks: they reveal no answer and\n"
            f"# do not count for the grade (see \"How to use this course\").\n"
            f"from lecturelib.checks import public_checks\n\n"
            f"check = public_checks({name!r})")


def _code_cell(source: str, tag: str, cell_id: str) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(source, metadata={"tags": [tag]})
    cell["id"] = re.sub(r"[^A-Za-z0-9-]", "-", cell_id)  # deterministic, so assign is reproducible
    return cell


def make_exercise(solution_nb, name: str) -> nbformat.NotebookNode:
    """Turn a solution notebook into the student's notebook (a new object).

    Solution code and solution text are removed, outputs cleared, and the hidden checks
    dropped; the public checks are kept in the notebook's metadata for ``check()``, which
    a cell after the first code cell defines and a cell after each question calls.
    """
    check_assignment_name(name)
    solution_nb = as_notebook(solution_nb, "make_exercise")
    questions = load_questions(solution_nb)  # refuse to publish a notebook whose spec is broken
    has_public = {q.id for q in questions if q.public}
    written = {q.id: q for q in questions if q.written}
    nb = nbformat.from_dict(json.loads(json.dumps(solution_nb)))
    cells, setup_pending = [], bool(has_public)
    for index, cell in enumerate(nb.cells):
        tags = cell_tags(cell)
        qid = question_id(cell)
        cell.metadata.pop("grading", None)
        cell.metadata.pop("execution", None)
        if qid in written:  # the model answer and the rubric stay in the solution
            cell.source = ANSWER_PROMPT
            cell.metadata["tags"] = [f"question:{qid}", "answer"]
            cell.metadata["grading"] = written_prompt_spec(written[qid])
            cell.pop("attachments", None)
        elif cell.cell_type == "markdown" and "solution" in tags:
            cell.source = ANSWER_PROMPT
            cell.metadata["tags"] = [t for t in tags if t != "solution"] + ["answer"]
        elif cell.cell_type == "code":
            cell.source = _strip_solution(cell.source, f"cell {index}")
            cell.outputs = []
            cell.execution_count = None
        cells.append(cell)
        if cell.cell_type == "code" and setup_pending:
            cells.append(_code_cell(check_setup_source(name), "public-checks", f"{name}-check-setup"))
            setup_pending = False
        if cell.cell_type == "code" and qid in has_public:
            cells.append(_code_cell(f'check("{qid}")', f"check:{qid}", f"{name}-check-{qid}"))
    nb.cells = cells
    # the exercise's own cells: a student's Markdown cells under an answer prompt are theirs
    nb.metadata["lecturelib"] = {"assignment": name, "public_checks": public_checks_metadata(questions),
                                 "cells": [c["id"] for c in cells if isinstance(c.get("id"), str)]}
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


def _dumps(nb) -> str:
    return nbformat.writes(nb) + "\n"


def assign(solution_paths, output_dir="exercises", check=False) -> list[Path]:
    """Write (or with ``check=True`` verify) the student notebook of each solution.

    Returns the paths that were written, or, when checking, the paths that are stale.
    """
    output_dir = Path(output_dir)
    touched: list[Path] = []
    for solution_path in map(Path, solution_paths):
        nb = read_notebook(solution_path)
        text = _dumps(make_exercise(nb, solution_path.stem))
        target = output_dir / solution_path.name
        current = target.read_text(encoding="utf-8") if target.is_file() else None
        if current == text:
            continue
        touched.append(target)
        if not check:
            output_dir.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
    return touched

"""``lecturelib check NOTEBOOK``: run a notebook and all of its public checks.

This is the student's command: it runs the student's own notebook with the student's own
permissions (no sandbox, no solutions needed) and prints, question by question, which of
the public checks hold (:mod:`lecturelib.checks`), and whether each written answer is
there (the student's own answer cell is read, never judged).  Public checks never count for the grade.

The checks, and which questions are written, come from the course's own notebook of the
set (``exercises/<set>.ipynb``, else ``solutions/<set>.ipynb``), found by the name the
notebook gives and never taken from the checked notebook itself: a notebook handed round
between students could otherwise run code hidden in its metadata, or claim that every
check holds.  What is printed is stripped of control characters.
"""

from __future__ import annotations

import json
import subprocess
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError

from ...checks import COURSE, CheckResult, checks_in_metadata, format_results
from ..core.notebook import (MAX_ANSWER_CHARS, GradingError, exercise_cell_ids, load_questions,
                             notebook_assignment, question_id, read_notebook, written_answer)
from ..core.report import plain

MARKER = "@@lecturelib-public-checks@@"


@dataclass
class SelfCheck:
    """The public checks of one notebook after it ran."""

    path: Path
    assignment: str
    results: dict[str, list[CheckResult]]
    failed_cells: list[str]
    written: dict[str, str] = field(default_factory=dict)  # qid -> written_answer's state
    stopped: int = 0  # cells that ran past the time limit (the grader would skip them)

    @property
    def passed(self) -> bool:
        return (not self.stopped and all(r.holds for rs in self.results.values() for r in rs)
                and all(state in ("present", "below", "cut") for state in self.written.values()))

    def text(self) -> str:
        lines = [f"{self.path} ({self.assignment}): public checks"]
        lines += [format_results(qid, rs) for qid, rs in self.results.items()]
        lines += [f"{qid}: written answer {WRITTEN_STATES[state]}" for qid, state in self.written.items()]
        if self.failed_cells:
            lines.append("cells that raised an error or were stopped: " + ", ".join(self.failed_cells))
        done = sum(all(r.holds for r in rs) for rs in self.results.values())
        lines.append(f"{done} of {len(self.results)} questions pass all their public checks. "
                     "Public checks do not count for the grade; the graded checks are hidden.")
        return "\n".join(_printable(line) for text in lines for line in text.splitlines())


def _printable(line: str) -> str:
    """``line`` with each control or format character (terminal escapes, bidirectional
    overrides) shown as a space: the student's code wrote some of it."""
    return "".join(" " if unicodedata.category(ch)[0] == "C" else ch for ch in line)


WRITTEN_STATES = {
    "present": "present (graded by a person, not by a check)",
    "below": "present, in cells under the answer cell (graded by a person, not by a check)",
    "cut": f"present, but longer than {MAX_ANSWER_CHARS} characters: only its beginning is graded",
    "empty": "missing: the answer cell is empty or still reads the prompt",
    "missing": "missing: no cell tagged as its answer (restore the answer cell)",
}


def written_questions(nb) -> list[str]:
    """The written questions of an exercise (its answer cells) or of a solution notebook."""
    found = []
    for cell in nb.cells:
        spec = cell.get("metadata", {}).get("grading")
        qid = question_id(cell)
        if qid and isinstance(spec, dict) and spec.get("written") is True and qid not in found:
            found.append(qid)
    return found


def course_notebook(assignment: str, course) -> nbformat.NotebookNode:
    """The course's own notebook of ``assignment``: ``exercises/<name>.ipynb`` in the course
    folder ``course``, else ``solutions/<name>.ipynb``; the name must be one of theirs."""
    course = Path(course)
    found = {p.stem: p for folder in ("solutions", "exercises") for p in sorted((course / folder).glob("*.ipynb"))}
    if assignment not in found:
        names = ", ".join(sorted(found)) or "none"
        raise GradingError(f"the notebook belongs to {plain(assignment, 60)!r}, which is not one of the "
                           f"course's exercise sets in {course} ({names}): is it one of the course's "
                           "exercise notebooks? (--course names the course's folder)")
    return read_notebook(found[assignment])


def stored_public_checks(nb, assignment: str) -> dict:
    """The public checks of the course's notebook ``nb`` of ``assignment``: its metadata
    (an exercise written by ``lecturelib assign``) or its questions (a solution)."""
    checks = checks_in_metadata(nb.metadata, assignment)
    if checks is None and any("grading" in c.get("metadata", {}) for c in nb.cells):
        checks = {q.id: [{"expr": p.expr, "why": p.why} for p in q.public] for q in load_questions(nb)}
    if not isinstance(checks, dict) or not any(checks.values()):
        raise GradingError(f"the course's notebook of {assignment} has no public checks")
    return {qid: items for qid, items in checks.items() if items}


PROBE = """\
from lecturelib.checks import PublicChecks as _LecturelibChecks, results_json as _lecturelib_results
print({marker!r} + _lecturelib_results(_LecturelibChecks({assignment!r}, {checks!r}), globals()))
"""


def _probe_cell(assignment: str, checks: dict) -> nbformat.NotebookNode:
    """The cell run after the notebook: every public check, printed as one JSON line."""
    return nbformat.v4.new_code_cell(PROBE.format(marker=MARKER, assignment=assignment, checks=checks))


def _read_probe(cell) -> dict:
    text = "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("name") == "stdout")
    errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    if MARKER not in text:
        detail = f" ({errors[0].get('ename')}: {errors[0].get('evalue', '')[:120]})" if errors else ""
        raise GradingError(f"the public checks could not be run after the notebook{detail}")
    return json.loads(text.rsplit(MARKER, 1)[1].splitlines()[0])


def _seconds(cell) -> float | None:
    """How long a cell ran, from the timings nbclient records in its metadata."""
    import datetime

    timing = cell.get("metadata", {}).get("execution", {})
    start, end = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
    try:
        return (datetime.datetime.fromisoformat(end.replace("Z", "+00:00"))
                - datetime.datetime.fromisoformat(start.replace("Z", "+00:00"))).total_seconds()
    except (AttributeError, TypeError, ValueError):
        return None


def _failed_cells(cells, cell_timeout: int) -> list[str]:
    """Each code cell that raised (its exception's name), or that ran past ``cell_timeout``
    and was stopped (nbclient interrupts it and goes on with the next cell)."""
    failed = []
    for number, cell in enumerate(cells, 1):  # counted as the student sees the cells
        if cell.cell_type != "code":
            continue
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                seconds = _seconds(cell)
                if out.get("ename") == "KeyboardInterrupt" and seconds is not None and seconds >= cell_timeout - 1:
                    failed.append(f"cell {number} of the notebook (ran longer than {cell_timeout} s: stopped, "
                                  "the cells after it ran without it)")
                else:
                    failed.append(f"cell {number} of the notebook ({out.get('ename', 'error')})")
                break
    return failed


def self_check(path, *, cell_timeout: int = 120, course=None) -> SelfCheck:
    """Run the notebook at ``path`` in a fresh kernel, in its own folder, then the public
    checks of its exercise set as the course folder ``course`` (default: the one lecturelib
    is installed from) stores them (:func:`course_notebook`)."""
    path = Path(path)
    nb = read_notebook(path)
    assignment = notebook_assignment(nb) or path.stem
    own = course_notebook(assignment, COURSE if course is None else course)
    checks = stored_public_checks(own, assignment)
    written = {qid: written_answer(nb, qid, exercise_cell_ids(own))[0] for qid in written_questions(own)}
    nb.cells.append(_probe_cell(assignment, checks))
    client = NotebookClient(nb, timeout=cell_timeout, kernel_name="python3", allow_errors=True,
                            interrupt_on_timeout=True, record_timing=True,
                            resources={"metadata": {"path": str(path.resolve().parent)}})
    try:
        client.execute(stderr=subprocess.DEVNULL)  # the kernel's own log lines, not the cells' output
    except CellTimeoutError:
        raise GradingError(f"a cell of {path} ran longer than {cell_timeout} s (--timeout)") from None
    except DeadKernelError:
        raise GradingError(f"the kernel running {path} died (out of memory, or the notebook ended it)") from None
    raw = _read_probe(nb.cells[-1])
    results = {qid: [CheckResult(str(why), str(problem)) for why, problem in raw.get(qid, [])]
               for qid in checks}
    failed = _failed_cells(nb.cells[:-1], cell_timeout)
    return SelfCheck(path, assignment, results, failed, written,
                     sum("ran longer than" in line for line in failed))

"""Each cell's time limit comes from the solution's own run of it (issue 43, speed), and a
student's feedback names the first cell that raised (issue 43, item 7).

The toy solution's cells take milliseconds, so a hanging answer cell is stopped after the
floor (10 s), not after the cap (``--timeout``, 60 s here); a cell the solution does not
have gets the cap.  Both notebooks run in the sandbox, as any grading does.
"""

from __future__ import annotations

import copy
import dataclasses
import time

import nbformat
import pytest
from nbformat.v4 import new_code_cell

from gradingtools import cell_with, toy_solution
from lecturelib import grading
from lecturelib.grading.autograde import sandbox
from lecturelib.grading.autograde.grade import Grader
from lecturelib.grading.autograde.job import CELL_FLOOR, TOTAL_FLOOR, time_limit, total_limit

pytestmark = pytest.mark.skipif(
    sandbox.sandbox_problem() is not None and not __import__("os").environ.get("CI"),
    reason="no sandbox here")

CAP = 60


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    root = tmp_path_factory.mktemp("limits")
    (root / "solutions").mkdir()
    solution = toy_solution()
    nbformat.write(solution, root / "solutions" / "toy.ipynb")
    return root, solution


def student(root, solution, name, edit):
    """A submission made from the solution itself, so its cells keep the solution's ids (as
    an exercise written by ``lecturelib assign`` does)."""
    nb = copy.deepcopy(solution)
    edit(nb.cells)
    path = root / f"{name}.ipynb"
    nbformat.write(nb, path)
    return path


def position(nb, text) -> int:
    """The position, counted from 1 over all cells, of the cell holding ``text``."""
    return cell_with(nb.cells, text) + 1


def test_the_limit_is_ten_times_the_solutions_time_between_the_floor_and_the_cap():
    assert time_limit(0.01, CAP) == CELL_FLOOR
    assert time_limit(2.5, CAP) == 25
    assert time_limit(30.0, CAP) == CAP
    assert time_limit(None, CAP) == CAP  # a cell the solution does not have
    assert time_limit(0.01, 5) == 5      # the cap wins over the floor


@pytest.mark.full
def test_a_hanging_answer_is_stopped_after_the_floor_not_the_cap(course):
    root, solution = course

    def hang(cells):
        i = cell_with(cells, "def normalise")
        cells[i].source = "def normalise(v):\n    while True:\n        pass"
        cells.insert(i + 1, new_code_cell("normalise([1, 2])"))  # a new cell: the cap

    grader = Grader("toy", solutions_dir=root / "solutions",
                    limits=sandbox.Limits(cell_timeout=CAP))
    nb = nbformat.read(student(root, solution, "hang", hang), as_version=4)
    cells, checks = grader.time_limits(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert cells[cell_with(code, "def normalise")] == CELL_FLOOR
    assert cells[cell_with(code, "normalise([1, 2])")] == CAP
    assert all(limit == CELL_FLOOR for limit in checks.values())

    def hang_in_check(cells):
        i = cell_with(cells, "def normalise")
        cells[i].source = "def normalise(v):\n    while True:\n        pass"

    path = student(root, solution, "hang-check", hang_in_check)
    start = time.monotonic()
    report = grading.grade(path, assignment="toy", solutions_dir=root / "solutions", cell_timeout=CAP)
    elapsed = time.monotonic() - start
    by_id = {q.id: q for q in report.questions}
    assert by_id["q2"].points == 0 and by_id["q2"].reason == f"ran longer than {CELL_FLOOR} s"
    assert by_id["q1"].points == 2 and by_id["q3"].points == 1
    assert elapsed < CAP, elapsed  # before: the check hung for the whole 60 s cap


def test_the_feedback_names_the_first_cell_that_raised(course):
    root, solution = course

    def typo(cells):
        cells[cell_with(cells, "import numpy as np")].source = "import numpyy as np"

    report = grading.grade(student(root, solution, "typo", typo), assignment="toy",
                           solutions_dir=root / "solutions", cell_timeout=CAP)
    assert report.score == 0
    note = f"cell {position(solution, 'import numpy as np')} of the notebook raised an exception (ModuleNotFoundError)"
    assert any(n.startswith(note) for n in report.notes), report.notes
    assert note in report.feedback("alice")

    def own_exception(cells):
        cells[cell_with(cells, "import numpy as np")].source = (
            "class Secret_Hint_Value(Exception): pass\nraise Secret_Hint_Value()")

    report = grading.grade(student(root, solution, "own", own_exception), assignment="toy",
                           solutions_dir=root / "solutions", cell_timeout=CAP)
    assert any(n.startswith(f"cell {position(solution, 'import numpy as np')} of the notebook raised an exception;")
               for n in report.notes), report.notes
    assert "Secret_Hint_Value" not in report.feedback("bob")  # a name the notebook chose


def slow_cells(cells):
    """Six cells of 8 s each after the imports: each under its own limit (the floor, 10 s),
    48 s together."""
    i = cell_with(cells, "import numpy as np")
    for _ in range(6):
        cells.insert(i + 1, new_code_cell("import time\ntime.sleep(8)"))


def test_a_whole_notebook_is_bounded_by_the_solutions_whole_run(course):
    """Issue 49: a submission of many cells, each just under its own limit, ran for their
    sum (95 s against 5 s for the others); the whole run is now bounded as each cell is."""
    root, solution = course
    assert total_limit(0.5, 600) == TOTAL_FLOOR and total_limit(12.0, 600) == 120
    assert total_limit(12.0, 90) == 90  # --total-timeout wins
    grader = Grader("toy", solutions_dir=root / "solutions",
                    limits=sandbox.Limits(cell_timeout=CAP, total_timeout=600))
    nb = nbformat.read(student(root, solution, "slow", slow_cells), as_version=4)
    _, _, limits, cell_limits, _ = grader.job(nb)
    assert limits.total_timeout == TOTAL_FLOOR and limits.cell_timeout == CAP
    assert sorted(set(cell_limits)) == [CELL_FLOOR, CAP]  # each new cell still gets the cap
    untimed = Grader("toy", solutions_dir=root / "solutions", limits=grader.limits)
    untimed._reference = dataclasses.replace(grader.reference(), cell_seconds={}, check_seconds={})
    assert untimed.job(nb)[2].total_timeout == 600  # a solution run without times bounds nothing


@pytest.mark.full
def test_many_slow_cells_stop_at_the_whole_notebooks_limit_and_the_feedback_says_so(course):
    root, solution = course
    path = student(root, solution, "slow-run", slow_cells)
    start = time.monotonic()
    report = grading.grade(path, assignment="toy", solutions_dir=root / "solutions",
                           cell_timeout=CAP, total_timeout=600)
    elapsed = time.monotonic() - start
    assert elapsed < 48, elapsed  # before: every cell ran, 48 s and more
    assert report.score == 0
    reason = f"was not reached within the whole notebook's time limit of {TOTAL_FLOOR} s"
    assert all(q.reason.startswith(reason) for q in report.questions if q.kind != "written"), report.questions
    assert "10 times the solution's own run" in report.feedback("alice")


@pytest.mark.full
def test_a_hung_questions_reason_names_its_cell_and_the_limit(course):
    """Issue 49, item 9: the reason of a question whose own cell hung said NameError (its
    checks met a name the stopped cell never defined), and the note counted "code cell 1"
    from 0 over code cells; both now name the cell as the student finds it."""
    root, solution = course

    def hang_q1(cells):
        i = cell_with(cells, "p0 = lik[0]")
        cells[i].source = "while True:\n    pass\np0 = 0.04"

    report = grading.grade(student(root, solution, "hang-q1", hang_q1), assignment="toy",
                           solutions_dir=root / "solutions", cell_timeout=CAP)
    by_id = {q.id: q for q in report.questions}
    where = f"cell {position(solution, 'p0 = lik[0]')} of the notebook"
    assert by_id["q1"].reason == f"its {where} (question q1) ran longer than {CELL_FLOOR} s and was stopped"
    assert by_id["q2"].points == 3 and by_id["q3"].points == 1
    assert f"{where} was skipped: it ran longer than {CELL_FLOOR} s" in report.feedback("alice")

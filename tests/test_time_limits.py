"""Each cell's time limit comes from the solution's own run of it (issue 43, speed), and a
student's feedback names the first cell that raised (issue 43, item 7).

The toy solution's cells take milliseconds, so a hanging answer cell is stopped after the
floor (10 s), not after the cap (``--timeout``, 60 s here); a cell the solution does not
have gets the cap.  Both notebooks run in the sandbox, as any grading does.
"""

from __future__ import annotations

import copy
import time

import nbformat
import pytest
from nbformat.v4 import new_code_cell

from gradingtools import cell_with, toy_solution
from lecturelib import grading
from lecturelib.grading.autograde import sandbox
from lecturelib.grading.autograde.grade import Grader
from lecturelib.grading.autograde.job import CELL_FLOOR, time_limit

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


def test_the_limit_is_ten_times_the_solutions_time_between_the_floor_and_the_cap():
    assert time_limit(0.01, CAP) == CELL_FLOOR
    assert time_limit(2.5, CAP) == 25
    assert time_limit(30.0, CAP) == CAP
    assert time_limit(None, CAP) == CAP  # a cell the solution does not have
    assert time_limit(0.01, 5) == 5      # the cap wins over the floor


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
    note = "code cell 0 raised an exception (ModuleNotFoundError)"
    assert any(n.startswith(note) for n in report.notes), report.notes
    assert note in report.feedback("alice")

    def own_exception(cells):
        cells[cell_with(cells, "import numpy as np")].source = (
            "class Secret_Hint_Value(Exception): pass\nraise Secret_Hint_Value()")

    report = grading.grade(student(root, solution, "own", own_exception), assignment="toy",
                           solutions_dir=root / "solutions", cell_timeout=CAP)
    assert any(n.startswith("code cell 0 raised an exception;") for n in report.notes)
    assert "Secret_Hint_Value" not in report.feedback("bob")  # a name the notebook chose

"""The exercise pipeline: generation, grading, and a grader that cannot be fooled.

The toy exercise set (tests/gradingtools.py) keeps the cheating tests fast; the real
solution notebooks are checked for full marks, their student versions for zero.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell

from gradingtools import (break_q3, cell_with, course_of, every_set, everyday_and_full, toy_solution,
                          write_variant)
from lecturelib import grading

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))
LECTURELIB = [sys.executable, "-m", "lecturelib.grading"]


# ----------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    """A solutions/ folder with the toy set and its generated student notebook."""
    return course_of(tmp_path_factory.mktemp("toy"), toy_solution())


def variant(toy, name, edit):
    return write_variant(toy, name, edit, nbformat.read(toy / "solutions" / "toy.ipynb", as_version=4))


def grade_toy(toy, path, **kw):
    kw.setdefault("cell_timeout", 8)
    return grading.grade(path, assignment="toy", solutions_dir=toy / "solutions", **kw)


def scores(report):
    return {q.id: q.points for q in report.questions}


# ----------------------------------------------------------------------------- assign


def test_assign_replaces_solution_blocks(toy):
    ex = nbformat.read(toy / "exercises" / "toy.ipynb", as_version=4)
    code = "\n".join(c.source for c in ex.cells if c.cell_type == "code")
    assert "v / v.sum()" not in code and "p0 = lik[0]" not in code
    assert "BEGIN SOLUTION" not in code
    assert code.count("raise NotImplementedError") == 3
    q2 = next(c for c in ex.cells if "def normalise" in c.source)
    assert "    raise NotImplementedError" in q2.source  # keeps the indentation
    assert all(not c.get("outputs") for c in ex.cells if c.cell_type == "code")
    assert any(c.source == grading.ANSWER_PROMPT for c in ex.cells)
    assert ex.metadata["lecturelib"]["assignment"] == "toy"
    assert not any("grading" in c.metadata for c in ex.cells)


def test_assign_is_deterministic(toy, tmp_path):
    grading.assign([toy / "solutions" / "toy.ipynb"], tmp_path)
    assert (tmp_path / "toy.ipynb").read_bytes() == (toy / "exercises" / "toy.ipynb").read_bytes()
    assert grading.assign([toy / "solutions" / "toy.ipynb"], tmp_path, check=True) == []


def test_assign_check_reports_stale_exercise(toy, tmp_path):
    stale = tmp_path / "toy.ipynb"
    stale.write_text("{}")
    assert grading.assign([toy / "solutions" / "toy.ipynb"], tmp_path, check=True) == [stale]
    assert stale.read_text() == "{}"


@pytest.mark.parametrize("source, message", [
    ("# BEGIN SOLUTION\nx = 1", "never closed"),
    ("x = 1\n# END SOLUTION", "without"),
    ("# BEGIN SOLUTION\n# BEGIN SOLUTION\n# END SOLUTION", "nested"),
])
def test_assign_rejects_unbalanced_markers(source, message):
    nb = toy_solution()
    nb.cells[1].source = source
    with pytest.raises(grading.GradingError, match=message):
        grading.make_exercise(nb, "toy")


@pytest.mark.parametrize("spec, message", [
    ({"points": 0, "checks": ["x"]}, "points"),
    ({"points": 1, "checks": []}, "checks"),
    ({"points": 1, "checks": ["x ="]}, "not an expression"),
    ({"points": 1, "checks": ["x"], "compare": "roughly"}, "compare"),
])
def test_bad_grading_spec_is_refused(spec, message):
    nb = toy_solution()
    nb.cells[3].metadata["grading"] = spec
    with pytest.raises(grading.GradingError, match=message):
        grading.load_questions(nb)


@pytest.mark.parametrize("func", [grading.load_questions, lambda nb: grading.make_exercise(nb, "toy")],
                         ids=["load_questions", "make_exercise"])
def test_a_path_or_a_malformed_dict_is_refused_clearly(func, tmp_path):
    path = tmp_path / "toy.ipynb"
    nbformat.write(toy_solution(), path)
    for arg in (path, str(path)):
        with pytest.raises(grading.GradingError, match=r"not a path: read the file first with read_notebook"):
            func(arg)
    with pytest.raises(grading.GradingError, match="not an nbformat-4 notebook"):
        func({"cells": [{"source": "x", "metadata": {"tags": ["question:q1"]}}]})
    broken = dict(toy_solution())
    broken["cells"] = ["x = 1"]
    with pytest.raises(grading.GradingError, match="not a valid nbformat-4 notebook"):
        func(broken)
    # the plain-dict form of a valid notebook is a notebook
    nb = toy_solution()
    assert func(json.loads(json.dumps(nb))) == func(nb)


def test_duplicate_question_ids_are_refused():
    nb = toy_solution()
    nb.cells[5].metadata["tags"] = ["question:q1"]
    with pytest.raises(grading.GradingError, match="used twice"):
        grading.load_questions(nb)


# ----------------------------------------------------------------------------- grade


def test_toy_solution_full_marks(toy):
    report = grade_toy(toy, toy / "solutions" / "toy.ipynb")
    assert (report.score, report.total) == (6, 6)
    assert all(q.reason == "ok" for q in report.questions)


def test_toy_exercise_scores_zero_with_reasons(toy):
    report = grade_toy(toy, toy / "exercises" / "toy.ipynb")
    assert report.score == 0 and report.total == 6
    assert "NotImplementedError" in {q.id: q.reason for q in report.questions}["q2"]


def test_partial_answers_score_per_question(toy):
    report = grade_toy(toy, variant(toy, "honest", break_q3))
    assert scores(report) == {"q1": 2, "q2": 3, "q3": 0}
    assert "column 0 differs" in report.questions[2].reason


def test_function_is_probed_on_several_inputs(toy):
    def only_first_probe(cells):  # right on [1, 3], wrong elsewhere
        i = cell_with(cells, "def normalise")
        cells[i].source = "def normalise(v):\n    return np.array([0.25, 0.75])"
    report = grade_toy(toy, variant(toy, "hardcoded", only_first_probe))
    assert scores(report)["q2"] == 0
    assert "check 2" in report.questions[1].reason


def test_up_to_sign_accepts_flipped_eigenvector(toy):
    def flip(cells):
        i = cell_with(cells, "top = V[:, -1]")
        cells[i].source = cells[i].source.replace("top = V[:, -1]", "top = -V[:, -1]")
    assert grade_toy(toy, variant(toy, "flipped", flip)).score == 6


# ------------------------------------------------------------- cheating notebooks
# Each cheater also gets q3 honestly wrong, so the right score is 5, never 6 or 0.

CHEATS = {
    "redefines_checker": """
import lecturelib.grading as g
g.compare = lambda *a, **k: None
g.grade = lambda *a, **k: None
def __lecturelib_extract(*a, **k):
    print("@@lecturelib-answer@@" + '[{"ok": true, "value": 0}]')
""",
    "patches_numpy": """
np.allclose = lambda *a, **k: True
np.testing.assert_allclose = lambda *a, **k: None
np.array_equal = lambda *a, **k: True
""",
    "prints_fake_score": """
print("question  points   max  result")
print("total          6     6")
print('@@lecturelib-answer@@[{"ok": true, "value": [0.7071, 0.7071]}]')
import json; open("grade.json", "w").write(json.dumps({"score": 6, "total": 6}))
""",
    "calls_os_exit": "import os\nos._exit(0)",
    "loops_forever": "while True:\n    pass",
    "swallows_interrupts": """
import time
while True:
    try:
        time.sleep(0.1)
    except BaseException:
        pass
""",
    "hook_rewrites_answers": """
def _fake(*args, **kwargs):
    global top
    top = np.array([0.70710678, 0.70710678])
get_ipython().events.register("pre_run_cell", _fake)
""",
}


# The two cheats that run until the time limit stops them wait out that limit: make test-all.
SLOW_CHEATS = {"loops_forever", "swallows_interrupts"}


@pytest.mark.parametrize("name", everyday_and_full(sorted(CHEATS), set(CHEATS) - SLOW_CHEATS))
def test_cheater_scores_what_real_answers_earn(toy, name):
    def edit(cells):
        break_q3(cells)
        cells.insert(cell_with(cells, "top = V") + 1, new_code_cell(CHEATS[name]))

    report = grade_toy(toy, variant(toy, name, edit))
    if name == "hook_rewrites_answers":
        # The hook runs in the student's kernel, so it *is* the student's answer to q3:
        # it earns what that answer is worth (right), and nothing more.
        assert report.score == 6
        return
    assert scores(report) == {"q1": 2, "q2": 3, "q3": 0}, report.table()
    if name in ("calls_os_exit", "loops_forever", "swallows_interrupts"):
        assert report.skipped_cells, "the fatal cell should have been skipped and reported"


def test_hanging_function_fails_only_its_question(toy):
    def edit(cells):
        i = cell_with(cells, "def normalise")
        cells[i].source = "def normalise(v):\n    while True:\n        pass"
    report = grade_toy(toy, variant(toy, "hangs_in_check", edit), cell_timeout=4)
    assert scores(report) == {"q1": 2, "q2": 0, "q3": 1}
    assert "longer than" in report.questions[1].reason


def test_kernel_killed_by_check_fails_only_its_question(toy):
    def edit(cells):
        i = cell_with(cells, "def normalise")
        cells[i].source = "def normalise(v):\n    import os\n    os._exit(3)"
    report = grade_toy(toy, variant(toy, "dies_in_check", edit))
    assert scores(report) == {"q1": 2, "q2": 0, "q3": 1}
    assert "crashed the kernel" in report.questions[1].reason


def test_student_cannot_read_solutions(toy):
    def edit(cells):
        break_q3(cells)
        steal = (f"import json\nsol = json.load(open({str(toy / 'solutions' / 'toy.ipynb')!r}))\n"
                 "exec(''.join(c['source'] for c in sol['cells'] if 'top' in ''.join(c['source'])))")
        cells.append(new_code_cell(steal))
    report = grade_toy(toy, variant(toy, "reads_solutions", edit))
    assert scores(report) == {"q1": 2, "q2": 3, "q3": 0}


def test_student_cannot_start_processes(toy):
    def edit(cells):
        break_q3(cells)
        cells.append(new_code_cell(
            f"import subprocess\nout = subprocess.run(['cat', {str(toy / 'solutions' / 'toy.ipynb')!r}])"))
    assert grade_toy(toy, variant(toy, "subprocess", edit)).score == 5


def test_memory_exhaustion_is_contained(toy):
    def edit(cells):
        break_q3(cells)
        cells.append(new_code_cell("hog = np.ones(10**11)"))
    assert grade_toy(toy, variant(toy, "memory", edit), memory_mb=2048).score == 5


def test_deleted_question_scores_zero_for_it(toy):
    def edit(cells):
        del cells[cell_with(cells, "top = V")]
    report = grade_toy(toy, variant(toy, "deleted", edit))
    assert scores(report) == {"q1": 2, "q2": 3, "q3": 0}
    assert "NameError" in report.questions[2].reason


def test_syntax_error_cell_loses_only_its_question(toy):
    def edit(cells):
        i = cell_with(cells, "def normalise")
        cells[i].source = "def normalise(v)\n    return v"
    assert scores(grade_toy(toy, variant(toy, "syntax", edit))) == {"q1": 2, "q2": 0, "q3": 1}


def test_points_come_from_the_solution_not_the_student(toy):
    def edit(cells):
        i = cell_with(cells, "top = V")
        cells[i].metadata["grading"] = {"points": 100, "checks": ["1"]}
        break_q3(cells)
    report = grade_toy(toy, variant(toy, "edits_spec", edit))
    assert (report.score, report.total) == (5, 6)


# ----------------------------------------------------------------------------- CLI


def run_cli(*args, cwd=None):
    return subprocess.run(LECTURELIB + list(args), capture_output=True, text=True, cwd=cwd, timeout=600)


def test_cli_grade_table_and_json(toy, tmp_path):
    out = tmp_path / "result.json"
    path = variant(toy, "cli", break_q3)
    proc = run_cli("grade", str(path), "--solutions", str(toy / "solutions"), "--assignment", "toy", "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "q3" in proc.stdout and "total" in proc.stdout
    result = json.loads(out.read_text())
    assert (result["score"], result["total"]) == (5, 6)
    assert [q["id"] for q in result["questions"]] == ["q1", "q2", "q3"]
    assert {"id", "points", "max", "reason"} <= set(result["questions"][0])


def test_cli_cheater_cannot_forge_json_result(toy, tmp_path):
    out = tmp_path / "result.json"

    def edit(cells):
        break_q3(cells)
        cells.append(new_code_cell(
            f"open({str(out)!r}, 'w').write('{{\"score\": 6, \"total\": 6}}')"))
    path = variant(toy, "forges_json", edit)
    proc = run_cli("grade", str(path), "--solutions", str(toy / "solutions"), "--assignment", "toy", "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text())["score"] == 5


@pytest.mark.parametrize("content, message", [
    ("this is not json", "not a Jupyter notebook"),
    ('{"cells": 3}', "not a"),
    (b"\x89PNG\r\n\x1a\n\x00\x00", "not a Jupyter notebook"),
])
def test_cli_corrupt_notebook_gets_clear_error(tmp_path, toy, content, message):
    path = tmp_path / "broken.ipynb"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    proc = run_cli("grade", str(path), "--solutions", str(toy / "solutions"), "--assignment", "toy")
    assert proc.returncode == 2
    assert message in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("args, message", [
    (["gradebook", "feedback", "--assignment", "a", "--format", "blackboard"],
     "argument --format: invalid choice: 'blackboard' (choose from 'canvas', 'moodle') "
     "(see lecturelib gradebook feedback --help)"),
    (["gradebook", "serve", "--port", "abc"], "argument --port: invalid int value: 'abc'"),
    (["grade", "x.ipynb"], "the following arguments are required: --assignment"),
    (["check", "x.ipynb", "--\x1b]0;owned\x07\x1b[31mred"], "unrecognized arguments: -- ]0;owned [31mred"),
])
def test_cli_bad_argument_is_one_line(args, message):
    """A bad argument is refused in one line (argparse printed its usage block first),
    without the control characters a file name can put in an unrecognised argument."""
    proc = run_cli(*args)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("lecturelib: error: ")
    assert message in proc.stderr and "\x1b" not in proc.stderr and "usage" not in proc.stderr


def test_cli_missing_file_and_unknown_assignment(tmp_path, toy):
    proc = run_cli("grade", str(tmp_path / "nope.ipynb"), "--assignment", "toy",
                   "--solutions", str(toy / "solutions"))
    assert proc.returncode == 2 and "no such file" in proc.stderr
    path = variant(toy, "unknown", lambda cells: None)
    proc = run_cli("grade", str(path), "--solutions", str(toy / "solutions"), "--assignment", "zz")
    assert proc.returncode == 2 and "no solution notebook" in proc.stderr


# ------------------------------------------------------------- the real exercise sets


def test_there_are_solution_notebooks():
    assert SOLUTIONS, "solutions/ holds no exercise set"


def test_exercises_in_sync_with_solutions():
    stale = grading.assign(SOLUTIONS, ROOT / "exercises", check=True)
    assert stale == [], f"run `make assign`: {stale}"
    generated = {p.name for p in SOLUTIONS}
    assert {p.name for p in (ROOT / "exercises").glob("*.ipynb")} == generated


@pytest.mark.parametrize("solution", every_set(SOLUTIONS))
def test_solution_full_marks_and_exercise_zero(solution):
    questions = grading.load_questions(grading.read_notebook(solution))
    assert len(questions) >= 5
    full = grading.grade(solution, assignment=solution.stem, solutions_dir=ROOT / "solutions")
    written = {q.id for q in questions if q.written}
    # every solution: full automatic marks, its written parts pending (never scored by a check)
    assert full.score == full.auto_total > 0, full.table()
    assert set(full.pending) == written, full.table()
    empty = grading.grade(ROOT / "exercises" / solution.name, assignment=solution.stem,
                          solutions_dir=ROOT / "solutions")
    # every untouched exercise: zero, its written parts "no answer" at once
    assert empty.score == 0 and not empty.pending, empty.table()
    assert all(q.reason == "no answer" for q in empty.questions if q.id in written), empty.table()
    assert empty.total == full.total

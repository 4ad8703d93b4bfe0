"""Public checks: every question has them, the solution passes them, the exercise fails them.

Also ``check("q1")`` inside a kernel and ``lecturelib check`` on the command line, as a
student uses them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from gradingtools import every_set
from lecturelib.checks import CheckResult, PublicChecks, format_results
from lecturelib.grading.core.notebook import load_questions, read_notebook
from lecturelib.grading.autograde.selfcheck import self_check

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))
LECTURELIB = [str(Path(sys.executable).with_name("lecturelib"))]


def questions(path):
    return load_questions(read_notebook(path))


@pytest.mark.parametrize("solution", SOLUTIONS, ids=lambda p: p.stem)
def test_every_question_has_public_checks_that_hide_the_grading(solution):
    exercise = ROOT / "exercises" / solution.name
    stored = json.loads(exercise.read_text(encoding="utf-8"))
    assert set(stored["metadata"]["lecturelib"]) == {"assignment", "public_checks", "cells"}
    # "cells" lists the exercise's own cells by id, and nothing else
    assert stored["metadata"]["lecturelib"]["cells"] == [c["id"] for c in stored["cells"]]
    # only a written question's answer cell carries a spec, and only its kind and points
    assert all(set(c["metadata"]["grading"]) == {"written", "points"} and "answer" in c["metadata"]["tags"]
               for c in stored["cells"] if "grading" in c["metadata"]), "graded checks in the exercise"
    for q in questions(solution):
        if q.written:  # graded by people, with no public checks
            continue
        assert q.public, f"{solution.stem} {q.id} has no public check"
        hidden = {c.expr for c in q.checks}
        for p in q.public:
            assert p.expr not in hidden, f"{solution.stem} {q.id}: a public check is a graded one"
            assert 0 < len(p.why) <= 100 and p.why == p.why.strip(), (q.id, p.why)
        assert stored["metadata"]["lecturelib"]["public_checks"][q.id] == [
            {"expr": p.expr, "why": p.why} for p in q.public]
        tags = [c["metadata"].get("tags", []) for c in stored["cells"]]
        assert [f"check:{q.id}"] in tags, f"{q.id}: no check cell in the exercise"


@pytest.mark.parametrize("solution", every_set(SOLUTIONS))
def test_solution_passes_and_exercise_fails_every_public_check(solution):
    passed = self_check(solution)
    failing = [(qid, r.why, r.problem) for qid, rs in passed.results.items() for r in rs if not r.holds]
    assert passed.passed and not failing, failing
    assert not passed.failed_cells
    untouched = self_check(ROOT / "exercises" / solution.name)
    holding = [(qid, r.why) for qid, rs in untouched.results.items() for r in rs if r.holds]
    assert not holding, f"public checks that an untouched exercise passes: {holding}"
    assert set(untouched.results) == {q.id for q in questions(solution) if not q.written}


# ----------------------------------------------------------------------- check() in a kernel


def test_check_reports_what_holds_and_why_not(capsys):
    checks = PublicChecks("toy", {"q1": [
        {"expr": "x == 2", "why": "x is two"},
        {"expr": "x > 5", "why": "x is large"},
        {"expr": "f(x)", "why": "f accepts x"},
        {"expr": "np.ones(3) > 0", "why": "an array"},
    ]})
    results = checks.run("q1", {"x": 2, "np": __import__("numpy")})
    assert [r.holds for r in results] == [True, False, False, False]
    assert results[1].problem == "does not hold"
    assert results[2].problem.startswith("NameError")
    assert "neither true nor false" in results[3].problem
    namespace = {"x": 7, "check": checks}
    exec('check("q1")', namespace)
    out = capsys.readouterr().out
    assert out.startswith("q1: 1 of 4 public checks hold")
    assert "  pass  x is large" in out and "  FAIL  x is two (does not hold)" in out


def test_check_refuses_unknown_questions_and_bad_specs():
    checks = PublicChecks("toy", {"q1": [{"expr": "True", "why": "always"}]})
    with pytest.raises(ValueError, match=r"no question 'q9' \(its questions: q1\)"):
        checks.run("q9", {})
    with pytest.raises(ValueError, match="list of"):
        PublicChecks("toy", {"q1": "True"})
    with pytest.raises(ValueError, match="assignment"):
        PublicChecks("", {})


def test_check_finds_its_notebook_even_renamed(tmp_path, capsys, monkeypatch):
    exercise = json.loads((ROOT / "exercises" / "07-pac.ipynb").read_text(encoding="utf-8"))
    (tmp_path / "my copy.ipynb").write_text(json.dumps(exercise), encoding="utf-8")
    (tmp_path / "other.ipynb").write_text(json.dumps({"metadata": {}, "cells": []}), encoding="utf-8")
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    monkeypatch.chdir(tmp_path)
    expected = exercise["metadata"]["lecturelib"]["public_checks"]
    assert PublicChecks("07-pac").checks == expected
    monkeypatch.chdir(tmp_path.parent)
    lost = PublicChecks("07-pac", folder=tmp_path / "nowhere")
    exec('check("q1")', {"check": lost})
    assert "no such notebook" in capsys.readouterr().out


def test_format_results():
    text = format_results("q2", [CheckResult("a"), CheckResult("b", "ValueError: bad")])
    assert text == "q2: 1 of 2 public checks hold\n  pass  a\n  FAIL  b (ValueError: bad)"


# ----------------------------------------------------------------------- lecturelib check


def toy_course(tmp_path, checks) -> Path:
    """A course folder whose exercise set ``toy`` has the public checks ``checks``."""
    course = tmp_path / "course"
    (course / "exercises").mkdir(parents=True, exist_ok=True)
    nb = nbformat.v4.new_notebook()
    nb.metadata["lecturelib"] = {"assignment": "toy", "public_checks": checks}
    (course / "exercises" / "toy.ipynb").write_text(nbformat.writes(nb), encoding="utf-8")
    return course


def toy_notebook(tmp_path, *sources, metadata=None) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    nb.metadata["lecturelib"] = metadata or {"assignment": "toy"}
    path = tmp_path / "toy.ipynb"
    path.write_text(nbformat.writes(nb), encoding="utf-8")
    return path


def toy_exercise(tmp_path, answer: str, extra: str = "") -> Path:
    return toy_notebook(tmp_path, f"x = {answer}\n{extra}")


TOY_CHECKS = {"q1": [{"expr": "x == 2", "why": "x is two"}]}


def run_cli(*args, cwd=None, course=None):
    args = list(args) + (["--course", str(course)] if course else [])
    return subprocess.run(LECTURELIB + args, capture_output=True, text=True, timeout=300, cwd=cwd)


def test_cli_check_exit_status_says_whether_all_hold(tmp_path):
    course = toy_course(tmp_path, TOY_CHECKS)
    good = run_cli("check", str(toy_exercise(tmp_path, "2")), course=course)
    assert good.returncode == 0, good.stderr
    assert "q1: 1 of 1 public checks hold" in good.stdout
    assert "do not count for the grade" in good.stdout
    bad = run_cli("check", str(toy_exercise(tmp_path, "3", "raise ValueError('no')")), course=course)
    assert bad.returncode == 1
    assert "FAIL  x is two (does not hold)" in bad.stdout
    assert "cells that raised an error or were stopped: cell 1 of the notebook (ValueError)" in bad.stdout


@pytest.mark.parametrize("setup, message", [
    (lambda d: d / "missing.ipynb", "no such file"),
    (lambda d: (d / "x.ipynb").write_text("{not json") and d / "x.ipynb", "x.ipynb"),
    (lambda d: (d / "c.ipynb").write_text(nbformat.writes(nbformat.v4.new_notebook())) and d / "c.ipynb",
     "not one of the course's exercise sets"),
    (lambda d: toy_notebook(d, "x = 2", metadata={"assignment": "../toy"}), "not one of the course's"),
])
def test_cli_check_bad_input_is_one_line(tmp_path, setup, message):
    proc = run_cli("check", str(setup(tmp_path)), course=toy_course(tmp_path, TOY_CHECKS))
    assert proc.returncode == 2
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.full
def test_cli_check_stops_a_cell_that_runs_too_long_names_it_and_goes_on(tmp_path):
    """A hanging cell is stopped after --timeout and named; the cells after it still run and
    every question is reported (issue 43: it used to abort the whole check)."""
    course = toy_course(tmp_path, {**TOY_CHECKS, "q2": [{"expr": "y == 3", "why": "y is three"}]})
    path = toy_notebook(tmp_path, "x = 2", "while True:\n    pass", "y = x + 1")
    proc = run_cli("check", str(path), "--timeout", "3", course=course)
    assert proc.returncode == 1, proc.stderr
    assert "cell 2 of the notebook (ran longer than 3 s: stopped" in proc.stdout
    assert "q1: 1 of 1 public checks hold" in proc.stdout and "q2: 1 of 1 public checks hold" in proc.stdout
    assert run_cli("check", str(path), "--timeout", "0", course=course).returncode == 2


def test_cli_check_takes_the_checks_from_the_course_never_from_the_notebook(tmp_path):
    """Issue 49: a notebook handed round carried its own "public checks" in its metadata;
    they ran (writing a file here) and claimed every check held on an empty notebook, and
    what the student's code raised reached the terminal with its escape codes."""
    course = toy_course(tmp_path, TOY_CHECKS)
    hostile = {"assignment": "toy", "public_checks": {"q1": [
        {"expr": "__import__('pathlib').Path('pwned').write_text('x') > 0", "why": "\x1b[2Jall fine"}]}}
    escape = "class E:\n    def __eq__(self, other):\n        raise ValueError('\\x1b]0;owned\\x07\\x1b[2J')\nx = E()"
    path = toy_notebook(tmp_path, escape, metadata=hostile)
    proc = run_cli("check", str(path), course=course, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert not (tmp_path / "pwned").exists()
    assert "q1: 0 of 1 public checks hold" in proc.stdout
    assert "FAIL  x is two (ValueError:" in proc.stdout
    assert "all fine" not in proc.stdout and "\x1b" not in proc.stdout and "\x07" not in proc.stdout


def test_check_in_a_kernel_prefers_the_courses_own_exercise(tmp_path, monkeypatch):
    """Issue 49, item 2: check("q1") in a notebook handed round read that notebook's own
    metadata; the course's copy of the exercise comes first."""
    hostile = json.loads((ROOT / "exercises" / "07-pac.ipynb").read_text(encoding="utf-8"))
    hostile["metadata"]["lecturelib"]["public_checks"] = {"q1": [{"expr": "open('pwned', 'w')", "why": "ok"}]}
    (tmp_path / "07-pac.ipynb").write_text(json.dumps(hostile), encoding="utf-8")
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    monkeypatch.chdir(tmp_path)
    course = json.loads((ROOT / "exercises" / "07-pac.ipynb").read_text(encoding="utf-8"))
    assert PublicChecks("07-pac").checks == course["metadata"]["lecturelib"]["public_checks"]

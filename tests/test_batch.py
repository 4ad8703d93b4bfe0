"""Grading a whole class: a batch of 40 submissions into the gradebook, CSV export,
feedback files, skipping unchanged work, and the same job on a Dask cluster."""

from __future__ import annotations

import csv
import io
import json
import os
import sqlite3
import subprocess
import sys

import nbformat
import pytest
from nbformat.v4 import new_code_cell

from gradingtools import break_q3, cell_with, toy_solution, write_variant
from lecturelib.grading import sandbox
from lecturelib.grading.batch import grade_batch
from lecturelib.grading.gradebook import Gradebook
from lecturelib.grading.sandbox import Limits

pytestmark = pytest.mark.skipif(
    not os.environ.get("CI") and sandbox.sandbox_problem() is not None,
    reason=f"no sandbox here: {sandbox.sandbox_problem()}")

LIMITS = Limits(cell_timeout=8, total_timeout=120, memory_mb=2048)

HOSTILE = {
    "reads-solutions": "try:\n    top = open(SOL).read()\nexcept OSError:\n    pass",
    "exits": "import os\nos._exit(0)",
    "loops": "while True:\n    pass",
    "forks": ("import subprocess\nkids = []\nfor _ in range(300):\n    try:\n"
              "        kids.append(subprocess.Popen(['sleep', '60']))\n    except OSError:\n        break"),
    "floods": "import sys\nfor _ in range(200):\n    sys.stdout.write('x' * 2**20)",
    "patches-numpy": "np.allclose = lambda *a, **k: True",
}
CORRUPT = {
    "not-json": b"this is not json",
    "png": b"\x89PNG\r\n\x1a\n\x00\x00",
    "empty": b"",
    "wrong-shape": b'{"cells": 3}',
    "too-deep": b"[" * 10000 + b"]" * 10000,
    "surrogate": None,  # made below
}


@pytest.fixture(scope="module")
def klass(tmp_path_factory):
    """40 submissions with the score each must get."""
    root = tmp_path_factory.mktemp("class")
    (root / "solutions").mkdir()
    nbformat.write(toy_solution(), root / "solutions" / "toy.ipynb")
    subs = root / "submissions"
    subs.mkdir()
    expected = {}
    for i in range(10):
        write_variant(subs, f"honest{i:02d}", lambda cells: None)
        expected[f"honest{i:02d}"] = 6
    for i in range(10):
        write_variant(subs, f"partial{i:02d}", break_q3)
        expected[f"partial{i:02d}"] = 5
    sol = str(root / "solutions" / "toy.ipynb")
    for name, code in HOSTILE.items():
        def edit(cells, code=code):
            break_q3(cells)
            cells.insert(cell_with(cells, "top = V") + 1, new_code_cell(f"SOL = {sol!r}\n" + code))
        write_variant(subs, f"hostile-{name}", edit)
        expected[f"hostile-{name}"] = 5
    for name, data in CORRUPT.items():
        path = subs / f"corrupt-{name}.ipynb"
        if data is None:
            write_variant(subs, f"corrupt-{name}", lambda cells: None)
            path.write_text(path.read_text().replace("import numpy as np", "import numpy as np # \\udc80"))
        else:
            path.write_bytes(data)
        expected[f"corrupt-{name}"] = 0
    honest = (subs / "honest00.ipynb").read_bytes()
    for i in range(8):  # the same file handed in by eight students (in their own folders)
        folder = subs / f"copier{i}"
        folder.mkdir()
        (folder / "toy.ipynb").write_bytes(honest)
        expected[f"copier{i}"] = 6
    assert len(expected) == 40
    return root, expected


def test_a_class_of_40_grades_into_the_gradebook(klass):
    root, expected = klass
    book_path = root / "gradebook.sqlite"
    with Gradebook(book_path) as book:
        summary = grade_batch([root / "submissions"], assignment="toy", gradebook=book,
                              solutions_dir=root / "solutions", limits=LIMITS, jobs=2, progress=False)
        got = {student: report.score for student, report in summary.graded}
        assert got == expected
        csv_text = book.export_csv("toy")
    rows = list(csv.DictReader(io.StringIO(csv_text)))
    assert [r["student"] for r in rows] == sorted(expected)
    assert list(rows[0]) == ["student", "q1", "q2", "q3", "total"]
    assert {r["student"]: float(r["total"]) for r in rows} == expected
    assert all(float(r["q1"]) + float(r["q2"]) + float(r["q3"]) == float(r["total"]) for r in rows)
    db = sqlite3.connect(book_path)
    assert db.execute("SELECT COUNT(*) FROM results WHERE assignment='toy'").fetchone()[0] == 120
    reasons = dict(db.execute("SELECT student, reason FROM results WHERE question='q1'"))
    assert "not a Jupyter notebook" in reasons["corrupt-not-json"]
    assert len({h for (h,) in db.execute("SELECT sha256 FROM submissions WHERE student LIKE 'copier%'")}) == 1
    feedback = (root / "feedback" / "toy" / "partial00.md").read_text()
    assert "**Score: 5 / 6**" in feedback and "| q3 | 0 | 1 |" in feedback

    # Unchanged submissions are not graded again; a changed one is.
    changed = root / "submissions" / "partial00.ipynb"
    nb = nbformat.read(changed, as_version=4)
    i = cell_with(nb.cells, "top = V")
    nb.cells[i].source = nb.cells[i].source.replace("V[:, 0]", "V[:, -1]")
    nbformat.write(nb, changed)
    with Gradebook(book_path) as book:
        again = grade_batch([root / "submissions"], assignment="toy", gradebook=book,
                            solutions_dir=root / "solutions", limits=LIMITS, jobs=2, progress=False)
        assert [s for s, _ in again.graded] == ["partial00"] and len(again.unchanged) == 39
        assert again.graded[0][1].score == 6
        assert book.scores("toy")["partial00"] == {"q1": 2, "q2": 3, "q3": 1}


def test_cli_grades_a_folder_and_exports_csv(klass, tmp_path):
    root, expected = klass
    subs = tmp_path / "few"
    subs.mkdir()
    for name in ("honest01", "partial01", "hostile-exits"):
        (subs / f"{name}.ipynb").write_bytes((root / "submissions" / f"{name}.ipynb").read_bytes())
    (subs / "corrupt.ipynb").write_bytes(b"{")
    book, out = tmp_path / "grades.sqlite", tmp_path / "grades.csv"
    run = [sys.executable, "-m", "lecturelib.grading"]
    proc = subprocess.run(run + ["grade", str(subs), "--assignment", "toy", "--solutions",
                                 str(root / "solutions"), "--gradebook", str(book), "--timeout", "8"],
                          capture_output=True, text=True, timeout=600)
    # the corrupt notebook could not be graded normally: listed at the end, exit status 1
    assert proc.returncode == 1 and "--accept-failures" in proc.stderr, proc.stderr
    assert "honest01: 6 / 6" in proc.stdout and "corrupt: 0 / 6" in proc.stdout
    assert "1 submission(s) could not be graded normally:\n  corrupt: malformed" in proc.stdout
    proc = subprocess.run(run + ["gradebook", "export", "--assignment", "toy", "--gradebook", str(book),
                                 "--output", str(out)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    totals = {r["student"]: r["total"] for r in csv.DictReader(out.open())}
    assert totals == {"corrupt": "0", "honest01": "6", "hostile-exits": "5", "partial01": "5"}
    assert sorted(p.name for p in (tmp_path / "feedback" / "toy").iterdir()) == [
        "corrupt.md", "honest01.md", "hostile-exits.md", "partial01.md"]
    result = tmp_path / "one.json"  # one notebook into the gradebook, with --json, twice
    for _ in range(2):
        result.unlink(missing_ok=True)
        proc = subprocess.run(run + ["grade", str(subs / "partial01.ipynb"), "--assignment", "toy",
                                     "--solutions", str(root / "solutions"), "--gradebook", str(book),
                                     "--json", str(result), "--timeout", "8"],
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(result.read_text())["score"] == 5
    proc = subprocess.run(run + ["gradebook", "export", "--assignment", "nope", "--gradebook", str(book)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "no results" in proc.stderr and "Traceback" not in proc.stderr


def test_grading_on_a_dask_cluster_of_two_workers(klass, tmp_path):
    distributed = pytest.importorskip("distributed")
    root, expected = klass
    subs = tmp_path / "dask"
    subs.mkdir()
    names = ["honest02", "partial02", "hostile-reads-solutions", "corrupt-png"]
    for name in names:
        (subs / f"{name}.ipynb").write_bytes((root / "submissions" / f"{name}.ipynb").read_bytes())
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        with Gradebook(tmp_path / "dask.sqlite") as book:
            summary = grade_batch([subs], assignment="toy", gradebook=book,
                                  solutions_dir=root / "solutions", limits=LIMITS,
                                  scheduler=cluster.scheduler_address, progress=False)
    assert {s: r.score for s, r in summary.graded} == {n: expected[n] for n in names}


def test_batch_refuses_bad_arguments(klass, tmp_path):
    root, _ = klass
    run = [sys.executable, "-m", "lecturelib.grading", "grade"]
    cases = [
        ([str(tmp_path / "missing")], "no such file"),
        ([str(tmp_path)], "no notebooks to grade"),
        ([str(root / "submissions"), "--json", str(tmp_path / "r.json")], "--json takes one notebook"),
        ([str(root / "submissions"), "--jobs", "0"], "--jobs must be at least 1"),
        ([str(root / "submissions"), "--gradebook", str(tmp_path)], "not a file"),
    ]
    for args, message in cases:
        proc = subprocess.run(run + args + ["--assignment", "toy", "--solutions", str(root / "solutions")],
                              capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert proc.returncode == 2, (args, proc.stderr)
        assert message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    not_sqlite = tmp_path / "text.sqlite"
    not_sqlite.write_text("hello " * 1000)
    proc = subprocess.run(run + [str(root / "submissions"), "--assignment", "toy", "--gradebook",
                                 str(not_sqlite), "--solutions", str(root / "solutions")],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 2 and "not a gradebook" in proc.stderr, proc.stderr

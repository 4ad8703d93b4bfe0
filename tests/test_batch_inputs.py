"""Issue 33: the grader's inputs, identities and gradebook (classes 6, 7 and 9).

A class folder is hostile as a whole: its entries may be symbolic links, special files or
names made to confuse rows, files and terminals.  Only the few honest notebooks are run in
the sandbox (the toy set of ``gradingtools``); everything else is refused before that.
"""

from __future__ import annotations

import csv
import io
import os
import stat
import subprocess
import sys

import nbformat
import pytest

from gradingtools import break_q3, toy_solution, write_variant
from test_batch import LIMITS
from lecturelib.grading.autograde import sandbox
from lecturelib.grading.gradebook.batch import grade_batch, problem_of
from lecturelib.grading.gradebook import Gradebook
from lecturelib.grading.core.notebook import MAX_NOTEBOOK_BYTES
from lecturelib.grading.core.report import GradeReport, QuestionResult

pytestmark = pytest.mark.skipif(
    not os.environ.get("CI") and sandbox.sandbox_problem() is not None,
    reason=f"no sandbox here: {sandbox.sandbox_problem()}")

RUN = [sys.executable, "-m", "lecturelib.grading"]


@pytest.fixture()
def course(tmp_path):
    (tmp_path / "solutions").mkdir()
    nbformat.write(toy_solution(), tmp_path / "solutions" / "toy.ipynb")
    (tmp_path / "subs").mkdir()
    return tmp_path


def batch(course, book, **kw):
    return grade_batch([course / "subs"], assignment="toy", gradebook=book,
                       solutions_dir=course / "solutions", limits=LIMITS, jobs=2,
                       progress=False, **kw)


def reasons(book, question="q1"):
    return dict(book.db.execute("SELECT student, reason FROM results WHERE question=?", (question,)))


# ------------------------------------------------------------------ 6: opened, not followed


def test_links_and_special_files_are_refused_per_student(course):
    subs = course / "subs"
    write_variant(subs, "alice", lambda cells: None)
    os.symlink(course / "solutions" / "toy.ipynb", subs / "mallory.ipynb")   # the solution
    os.symlink("/proc/self/environ", subs / "eve.ipynb")                     # the grader's env
    os.symlink(subs / "alice.ipynb", subs / "copy1.ipynb")                   # two links to
    os.symlink(subs / "alice.ipynb", subs / "copy2.ipynb")                   # a classmate
    os.mkfifo(subs / "fifo.ipynb")
    os.mknod(subs / "dev.ipynb", stat.S_IFCHR | 0o600, os.makedev(1, 3))     # /dev/null
    elsewhere = course / "elsewhere"
    elsewhere.mkdir()
    nbformat.write(toy_solution(), elsewhere / "toy.ipynb")
    os.symlink(elsewhere, subs / "linked")                                   # a folder link
    with open(subs / "big.ipynb", "wb") as big:                              # sparse, fast
        big.truncate(MAX_NOTEBOOK_BYTES + 1)
    with Gradebook(course / "book.sqlite") as book:
        summary = batch(course, book)
        scores = {s: r.score for s, r in summary.graded}
        why = reasons(book)
    assert scores == {"alice": 6, "mallory": 0, "eve": 0, "copy1": 0, "copy2": 0, "fifo": 0,
                      "dev": 0, "linked": 0, "big": 0}
    for student in ("mallory", "eve", "copy1", "copy2", "linked"):
        assert why[student] == "could not be read: a symbolic link", why[student]
    assert why["fifo"] == why["dev"] == "could not be read: not a regular file"
    assert why["big"] == f"could not be read: larger than {MAX_NOTEBOOK_BYTES} bytes"
    feedback = (course / "feedback" / "toy" / "eve.md").read_text()
    assert "PATH" not in feedback and "could not be read: a symbolic link" in feedback
    assert len(summary.problems) == 8 and all("could not be read" in p for p in summary.problems)


# ------------------------------------------------------------------ 7: identities and names


def test_identity_is_the_top_level_entry_and_names_are_safe(course):
    subs = course / "subs"
    (subs / "bob").mkdir()
    write_variant(subs / "bob", "toy", break_q3)            # bob's notebook: 5 / 6
    write_variant(subs / "bob", "alice", lambda cells: None)  # in bob's folder: not alice's
    write_variant(subs, "carol", break_q3)
    write_variant(subs, "carol.", lambda cells: None)        # a distinct student and file
    evil = "\x1b[2J\x1b]0;pwned\x07dan"
    write_variant(subs, evil, lambda cells: None)
    write_variant(subs, "x;=HYPERLINK(1)", lambda cells: None)
    with Gradebook(course / "book.sqlite") as book:
        # bob's earlier row came from another file: replacing it is reported
        book.record("bob", "0" * 64, GradeReport("/elsewhere/bob.ipynb", "toy", [], []))
        summary = batch(course, book)
        scores = {s: r.score for s, r in summary.graded}
        assert set(book.scores("toy")) == {"bob", "carol", "carol."}
    assert scores == {"bob": 5, "carol": 5, "carol.": 6}
    assert sorted(p.name for p in (course / "feedback" / "toy").iterdir()) == [
        "bob.md", "carol..md", "carol.md"]
    text = "\n".join(summary.problems + summary.notices)
    assert "\x1b" not in text and "\x07" not in text
    assert any("extra notebook, not graded" in p and "alice.ipynb" in p for p in summary.problems)
    assert any(repr(evil) in p for p in summary.problems)
    assert any("HYPERLINK" in p and "refused" in p for p in summary.problems)
    assert any("bob" in n and "/elsewhere/bob.ipynb" in n for n in summary.notices)


def test_csv_export_quotes_every_field_and_neutralises_formulas(tmp_path):
    with Gradebook(tmp_path / "book.sqlite") as book:
        for name in ("=cmd|' /C calc'!A0", "ok;=HYPERLINK(1)", "split\rrow", "line\nbreak",
                     "+1", "plain"):
            book.record(name, "0" * 64, GradeReport(
                "x.ipynb", "toy", [QuestionResult("q1", 1.0, 2.0, "ok")], []))
        text = book.export_csv("toy")
    lines = text.split("\n")
    assert "\r" not in text and len([line for line in lines if line]) == 7
    assert all(line.startswith('"') and line.endswith('"') for line in lines if line)
    cells = [row[0] for row in csv.reader(io.StringIO(text))][1:]
    assert sorted(cells) == sorted(["'=cmd|' /C calc'!A0", "ok;'=HYPERLINK(1)", "split row",
                                    "line break", "'+1", "plain"])
    for cell in cells:
        for separator in (";", ",", "\t", "|"):
            for part in cell.split(separator)[1:]:
                assert part.lstrip()[:1] not in ("=", "+", "-", "@"), cell


# ------------------------------------------------------------------ 9: stale and silent


@pytest.mark.full
def test_changed_solution_regrades_and_failures_are_loud(course):
    subs = course / "subs"
    write_variant(subs, "dave", lambda cells: None)
    (subs / "broken.ipynb").write_bytes(b'{"cells": ')
    wrong = write_variant(subs, "wrong", lambda cells: None)
    nb = nbformat.read(wrong, as_version=4)
    nb.metadata["lecturelib"] = {"assignment": "02-other"}
    nbformat.write(nb, wrong)
    args = [str(subs), "--assignment", "toy", "--solutions", str(course / "solutions"),
            "--gradebook", str(course / "book.sqlite"), "--timeout", "8"]

    def grade(*extra):
        return subprocess.run(RUN + ["grade", *args, *extra], capture_output=True, text=True,
                              timeout=600)

    proc = grade()
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and "dave: 6 / 6" in proc.stdout
    summary = proc.stdout[proc.stdout.index("could not be graded normally"):]
    assert "broken" in summary and "wrong" in summary and "dave" not in summary
    assert "--accept-failures" in proc.stderr

    proc = grade("--accept-failures")           # nothing changed: still listed, exit 0
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "unchanged" in proc.stdout and "broken" in proc.stdout

    solution = course / "solutions" / "toy.ipynb"
    nb = nbformat.read(solution, as_version=4)
    q1 = next(c for c in nb.cells if "question:q1" in c.metadata.get("tags", []))
    q1.metadata["grading"]["points"] = 4
    nbformat.write(nb, solution)
    proc = grade("--accept-failures")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "solution changed: regrading 3" in proc.stdout
    assert "dave: 8 / 8" in proc.stdout


def test_timeouts_and_other_assignments_are_named_from_the_graders_own_reasons():
    nb = toy_solution()

    def report(reason, skipped=()):
        return GradeReport("x.ipynb", "toy", [QuestionResult("q1", 0.0, 2.0, reason),
                                              QuestionResult("q2", 3.0, 3.0, "ok")], list(skipped))

    assert problem_of(report("ok"), nb, "toy") == ""
    assert problem_of(report("check 1 raised ran longer than 1 s"), nb, "toy") == ""  # the student's text
    assert problem_of(report("check 1: wrong", [(3, "ran longer than 8 s")]), nb, "toy").startswith("timeout")
    assert problem_of(report("ran longer than 8 s"), nb, "toy").startswith("timeout")
    nb.metadata["lecturelib"] = {"assignment": "\x1b[2J02-other"}
    problem = problem_of(report("ok"), nb, "toy")
    assert problem.startswith("wrong assignment") and "\x1b" not in problem

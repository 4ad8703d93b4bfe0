"""The gradebook: one SQLite file with every graded submission of a class.

Tables:

- ``submissions``: one row per (assignment, student): the notebook's path and SHA-256, when
  it was graded, score and total, notes, what it was graded with (``grader``: the solution
  notebook's SHA-256 and the grader's version; a row is graded again when it changes) and
  why it was not graded normally (``problem``, empty when it was);
- ``results``: one row per (assignment, student, question): points, max and the reason,
  with the notebook's hash and the time;
- ``reference_runs``: the solution notebooks' answers, by content hash, so that a class is
  compared with one reference run;
- ``questions``: each assignment's questions as last graded (kind, points, model answer and
  rubric of a written question, number of checks), for the grading app.

A result row also holds ``pending`` (a written answer waiting for a person), ``kind``,
``checks`` (each check's outcome, JSON) and ``answer`` (the student's written answer or
question cell, bounded).  Manual grades, rubric edits and their audit trail live in the
tables of :mod:`.manual`, in the same file; :meth:`Gradebook.scores` counts them.

``export_csv`` writes one row per student and one column per question, then the total:
the shape LMS grade imports expect.  Every field is quoted, and a text cell a spreadsheet
could run as a formula (starting with ``= + - @``, a tab or a carriage return, also after
a separator) is prefixed with an apostrophe; line breaks inside a cell become spaces.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime
import io
import json
import re
import sqlite3
from pathlib import Path

from ..core.notebook import GradingError
from ..core.report import GradeReport
from . import manual

SCHEMA = """
CREATE TABLE IF NOT EXISTS submissions (
    assignment TEXT NOT NULL, student TEXT NOT NULL, path TEXT NOT NULL, sha256 TEXT NOT NULL,
    graded_at TEXT NOT NULL, score REAL NOT NULL, total REAL NOT NULL, notes TEXT NOT NULL,
    grader TEXT NOT NULL DEFAULT '', problem TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (assignment, student));
CREATE TABLE IF NOT EXISTS results (
    assignment TEXT NOT NULL, student TEXT NOT NULL, question TEXT NOT NULL,
    points REAL NOT NULL, max REAL NOT NULL, reason TEXT NOT NULL,
    sha256 TEXT NOT NULL, graded_at TEXT NOT NULL,
    PRIMARY KEY (assignment, student, question));
CREATE TABLE IF NOT EXISTS reference_runs (
    key TEXT PRIMARY KEY, assignment TEXT NOT NULL, output BLOB NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS questions (
    assignment TEXT NOT NULL, question TEXT NOT NULL, position INTEGER NOT NULL,
    kind TEXT NOT NULL, points REAL NOT NULL, model_answer TEXT NOT NULL, rubric TEXT NOT NULL,
    n_checks INTEGER NOT NULL, PRIMARY KEY (assignment, question));
"""
RESULT_COLUMNS = {"pending": "INTEGER NOT NULL DEFAULT 0", "kind": "TEXT NOT NULL DEFAULT 'auto'",
                  "checks": "TEXT NOT NULL DEFAULT ''", "answer": "TEXT NOT NULL DEFAULT ''",
                  "answer_note": "TEXT NOT NULL DEFAULT ''"}


def skipped_lines(report: GradeReport) -> list[str]:
    """The report's skipped cells as the notes a later feedback file keeps."""
    return [f"code cell {i} was skipped: it {reason}" for i, reason in report.skipped_cells]


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


class Gradebook:
    """A SQLite gradebook; use as a context manager or call :meth:`close`."""

    def __init__(self, path):
        self.path = Path(path)
        if self.path.exists() and not self.path.is_file():
            raise GradingError(f"gradebook {self.path} exists and is not a file")
        try:
            self.db = sqlite3.connect(self.path)
            self.db.executescript(SCHEMA)
            columns = {row[1] for row in self.db.execute("PRAGMA table_info(submissions)")}
            with self.db:  # a gradebook written before these columns existed
                for column in ("grader", "problem"):
                    if column not in columns:
                        self.db.execute(f"ALTER TABLE submissions ADD COLUMN {column} "
                                        "TEXT NOT NULL DEFAULT ''")
                have = {row[1] for row in self.db.execute("PRAGMA table_info(results)")}
                for column, kind in RESULT_COLUMNS.items():
                    if column not in have:
                        self.db.execute(f"ALTER TABLE results ADD COLUMN {column} {kind}")
            manual.create_tables(self.db)
        except sqlite3.DatabaseError as exc:
            raise GradingError(f"{self.path} is not a gradebook (SQLite said: {exc})") from None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self.db.close()

    # submissions ---------------------------------------------------------------------

    def submission(self, assignment: str, student: str) -> dict | None:
        """A student's row: ``path``, ``sha256``, ``grader`` and ``problem``, or ``None``."""
        row = self.db.execute("SELECT path, sha256, grader, problem FROM submissions "
                              "WHERE assignment=? AND student=?", (assignment, student)).fetchone()
        return dict(zip(("path", "sha256", "grader", "problem"), row)) if row else None

    def record(self, student: str, sha256: str, report: GradeReport, grader: str = "",
               problem: str = "") -> None:
        """Store (replace) one student's result for ``report.assignment``."""
        when = _now()
        key = (report.assignment, student)
        with self.db:
            self.db.execute("DELETE FROM results WHERE assignment=? AND student=?", key)
            self.db.execute(
                "INSERT OR REPLACE INTO submissions (assignment, student, path, sha256, graded_at, "
                "score, total, notes, grader, problem) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (*key, report.notebook, sha256, when, report.score, report.total,
                 "\n".join(skipped_lines(report) + report.notes), grader, problem))
            self.db.executemany(
                "INSERT INTO results (assignment, student, question, points, max, reason, sha256, "
                "graded_at, pending, kind, checks, answer, answer_note) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(*key, q.id, q.points, q.max, q.reason, sha256, when, int(q.pending), q.kind,
                  json.dumps(q.checks) if q.checks is not None else "", q.answer, q.answer_note)
                 for q in report.questions])

    def store_questions(self, assignment: str, questions) -> None:
        """Keep the questions of ``assignment`` (a solution's :class:`~.notebook.Question`
        list) for the grading app: kinds, points, model answers and rubrics."""
        with self.db:
            self.db.execute("DELETE FROM questions WHERE assignment=?", (assignment,))
            self.db.executemany(
                "INSERT INTO questions VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(assignment, q.id, i, q.kind, q.points, q.model_answer,
                  json.dumps([dataclasses.asdict(r) for r in q.rubric]), len(q.checks))
                 for i, q in enumerate(questions)])

    def scores(self, assignment: str) -> dict[str, dict[str, float]]:
        """student -> question -> points, for one assignment, counting manual grades
        (a person's rubric grade of a written answer, an override of a check's score).
        A written answer still pending counts 0 here; see :meth:`pending`."""

        table: dict[str, dict[str, float]] = {}
        for row in manual.effective_results(self.db, assignment):
            table.setdefault(row["student"], {})[row["question"]] = row["points"]
        return table

    def pending(self, assignment: str) -> set[tuple[str, str]]:
        """``(student, question)`` of the written answers no person has graded yet."""

        return {(row["student"], row["question"]) for row in manual.effective_results(self.db, assignment)
                if row["pending"]}

    def questions(self, assignment: str) -> list[str]:
        rows = self.db.execute("SELECT DISTINCT question FROM results WHERE assignment=?",
                               (assignment,)).fetchall()
        return sorted((r[0] for r in rows), key=_natural)

    # reference runs ------------------------------------------------------------------

    def reference_output(self, key: str) -> bytes | None:
        row = self.db.execute("SELECT output FROM reference_runs WHERE key=?", (key,)).fetchone()
        return bytes(row[0]) if row else None

    def store_reference_output(self, key: str, assignment: str, output: bytes) -> None:
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO reference_runs VALUES (?, ?, ?, ?)",
                            (key, assignment, output, _now()))

    # export --------------------------------------------------------------------------

    def export_csv(self, assignment: str, allow_pending: bool = False) -> str:
        """CSV text: ``student, q1, ..., qN, total``, one row per student, manual grades
        counted.  Refused while a written answer is pending, unless ``allow_pending``:
        then its cell reads ``pending`` and the total counts the graded questions only."""
        questions = self.questions(assignment)
        if not questions:
            raise GradingError(f"the gradebook {self.path} has no results for assignment {assignment!r}")
        pending = self.pending(assignment)
        if pending and not allow_pending:
            raise GradingError(f"{len(pending)} written answer(s) of {assignment} are still pending "
                               "(grade them with `lecturelib gradebook serve`, or pass "
                               "--allow-pending to export them as 'pending')")
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_ALL)
        writer.writerow(["student", *map(csv_safe, questions), "total"])
        for student, points in sorted(self.scores(assignment).items()):
            row = [points.get(q, 0.0) for q in questions]
            cells = ["pending" if (student, q) in pending else csv_number(p) for q, p in zip(questions, row)]
            writer.writerow([csv_safe(student), *cells, csv_number(sum(row))])
        return out.getvalue()


def _natural(qid: str):
    digits = "".join(ch for ch in qid if ch.isdigit())
    return (int(digits) if digits else 0, qid)


def csv_number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
AFTER_SEPARATOR = re.compile(r"([,;\t|]\s*)(?=[=+\-@])")


def csv_safe(text: str) -> str:
    """A cell a spreadsheet will not run as a formula, on one line: line breaks become
    spaces, and a cell starting like a formula gets a leading apostrophe, as does what
    follows a separator a spreadsheet may split on (``, ; | tab``)."""
    text = str(text)
    risky = text[:1] in FORMULA_START
    text = text.replace("\r\n", " ").replace("\r", " ").replace("\n", " ")
    text = AFTER_SEPARATOR.sub(r"\1'", text)
    return "'" + text if risky else text

"""The gradebook: one SQLite file with every graded submission of a class.

Tables:

- ``submissions``: one row per (assignment, student): the notebook's path and SHA-256, when
  it was graded, score and total, notes, what it was graded with (``grader``: the solution
  notebook's SHA-256 and the grader's version; a row is graded again when it changes) and
  why it was not graded normally (``problem``, empty when it was);
- ``results``: one row per (assignment, student, question): points, max and the reason,
  with the notebook's hash and the time;
- ``reference_runs``: the solution notebooks' answers, by content hash, so that a class is
  compared with one reference run.

``export_csv`` writes one row per student and one column per question, then the total:
the shape LMS grade imports expect.  Every field is quoted, and a text cell a spreadsheet
could run as a formula (starting with ``= + - @``, a tab or a carriage return, also after
a separator) is prefixed with an apostrophe; line breaks inside a cell become spaces.
"""

from __future__ import annotations

import csv
import datetime
import io
import re
import sqlite3
from pathlib import Path

from .notebook import GradingError
from .report import GradeReport

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
"""


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
                 "\n".join(report.notes), grader, problem))
            self.db.executemany(
                "INSERT INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(*key, q.id, q.points, q.max, q.reason, sha256, when) for q in report.questions])

    def scores(self, assignment: str) -> dict[str, dict[str, float]]:
        """student -> question -> points, for one assignment."""
        table: dict[str, dict[str, float]] = {}
        for student, question, points in self.db.execute(
                "SELECT student, question, points FROM results WHERE assignment=? "
                "ORDER BY student", (assignment,)):
            table.setdefault(student, {})[question] = points
        return table

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

    def export_csv(self, assignment: str) -> str:
        """CSV text: ``student, q1, ..., qN, total``, one row per student."""
        questions = self.questions(assignment)
        if not questions:
            raise GradingError(f"the gradebook {self.path} has no results for assignment {assignment!r}")
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_ALL)
        writer.writerow(["student", *map(_csv_safe, questions), "total"])
        for student, points in sorted(self.scores(assignment).items()):
            row = [points.get(q, 0.0) for q in questions]
            writer.writerow([_csv_safe(student), *map(_number, row), _number(sum(row))])
        return out.getvalue()


def _natural(qid: str):
    digits = "".join(ch for ch in qid if ch.isdigit())
    return (int(digits) if digits else 0, qid)


def _number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
AFTER_SEPARATOR = re.compile(r"([,;\t|]\s*)(?=[=+\-@])")


def _csv_safe(text: str) -> str:
    """A cell a spreadsheet will not run as a formula, on one line: line breaks become
    spaces, and a cell starting like a formula gets a leading apostrophe, as does what
    follows a separator a spreadsheet may split on (``, ; | tab``)."""
    text = str(text)
    risky = text[:1] in FORMULA_START
    text = text.replace("\r\n", " ").replace("\r", " ").replace("\n", " ")
    text = AFTER_SEPARATOR.sub(r"\1'", text)
    return "'" + text if risky else text

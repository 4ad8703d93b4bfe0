"""Grade reports: the per-question table, the JSON result, and a student's feedback file.

Every reason shown to a person passes through :func:`plain`: control characters (terminal
escape codes, bidirectional overrides, ...) are removed and the text is cut short, so a
message written by a notebook cannot redraw the instructor's terminal.
"""

from __future__ import annotations

import dataclasses
import json
import os
import stat
import tempfile
import unicodedata
from pathlib import Path

from .notebook import GradingError

MAX_REASON = 160


def plain(text, limit: int = MAX_REASON) -> str:
    """``text`` without control or format characters, on one line, at most ``limit`` long."""
    text = "".join(ch if unicodedata.category(ch)[0] != "C" else " " for ch in str(text))
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclasses.dataclass
class QuestionResult:
    id: str
    points: float
    max: float
    reason: str

    def as_dict(self):
        return dataclasses.asdict(self)


@dataclasses.dataclass
class GradeReport:
    notebook: str
    assignment: str
    questions: list[QuestionResult]
    skipped_cells: list[tuple[int, str]]
    notes: list[str] = dataclasses.field(default_factory=list)

    @property
    def score(self) -> float:
        return sum(q.points for q in self.questions)

    @property
    def total(self) -> float:
        return sum(q.max for q in self.questions)

    def as_dict(self):
        return {
            "notebook": self.notebook,
            "assignment": self.assignment,
            "score": self.score,
            "total": self.total,
            "questions": [q.as_dict() for q in self.questions],
            "skipped_cells": [{"cell": i, "reason": r} for i, r in self.skipped_cells],
            "notes": list(self.notes),
        }

    def table(self) -> str:
        width = max([8] + [len(q.id) for q in self.questions])
        lines = [f"Grading {plain(self.notebook, 200)} (assignment {self.assignment})", ""]
        lines.append(f"{'question':<{width}}  {'points':>6}  {'max':>4}  result")
        for q in self.questions:
            lines.append(f"{q.id:<{width}}  {fmt(q.points):>6}  {fmt(q.max):>4}  {q.reason}")
        lines.append(f"{'total':<{width}}  {fmt(self.score):>6}  {fmt(self.total):>4}")
        for index, reason in self.skipped_cells:
            lines.append(f"note: code cell {index} was skipped: it {reason}")
        lines += [f"note: {note}" for note in self.notes]
        return "\n".join(lines)

    def feedback(self, student: str) -> str:
        """A Markdown feedback page for the student: question, points, reason."""
        lines = [f"# Feedback: {self.assignment}", "", f"Student: {plain(student, 100)}", "",
                 f"**Score: {fmt(self.score)} / {fmt(self.total)}**", "",
                 "| question | points | max | result |", "|---|---:|---:|---|"]
        for q in self.questions:
            reason = q.reason.replace("|", "\\|").replace("`", "'")
            lines.append(f"| {q.id} | {fmt(q.points)} | {fmt(q.max)} | {reason} |")
        notes = [f"code cell {i} was skipped: it {r}" for i, r in self.skipped_cells] + self.notes
        if notes:
            lines += ["", "Notes:", ""] + [f"- {n}" for n in notes]
        return "\n".join(lines) + "\n"


def fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def write_atomic(path, text: str) -> None:
    """Write ``text`` to ``path`` by an atomic rename, refusing to write through anything
    but a regular file (a FIFO, a symbolic link, a device or a folder)."""
    path = Path(path)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise GradingError(f"cannot write {path}: {exc.strerror}") from None
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise GradingError(f"refusing to write {path}: it exists and is not a regular file")
    folder = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=folder)
    except OSError as exc:
        raise GradingError(f"cannot write {path}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise GradingError(f"cannot write {path}: {exc.strerror}") from None


def write_json(path, report: GradeReport) -> None:
    write_atomic(path, json.dumps(report.as_dict(), indent=2) + "\n")

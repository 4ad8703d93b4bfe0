"""Grade reports: the per-question table, the JSON result, and a student's feedback file.

Every reason shown to a person passes through :func:`plain`: control characters (terminal
escape codes, bidirectional overrides, ...) are removed and the text is cut short, so a
message written by a notebook cannot redraw the instructor's terminal.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
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


PENDING = "pending: written answer, graded by a person"
NO_ANSWER = "no answer"


@dataclasses.dataclass
class QuestionResult:
    """One question's result.  A written question is ``pending`` (0 points for now) until a
    person grades it; ``rubric`` (applied items: id, points, text) and ``comment`` come
    from that grading (:mod:`.manual`), ``checks`` is each check's outcome (True, False,
    or None when the question's checks could not be run), ``answer`` the student's text
    or code (kept in the gradebook for the grading app, never printed here) and
    ``answer_note`` what the app says about it (other cells tagged for the question)."""

    id: str
    points: float
    max: float
    reason: str
    pending: bool = False
    kind: str = "auto"
    checks: list | None = None
    answer: str = ""
    rubric: list = dataclasses.field(default_factory=list)
    comment: str = ""
    answer_note: str = ""

    def as_dict(self):
        out = {"id": self.id, "points": self.points, "max": self.max, "reason": self.reason,
               "pending": self.pending}
        if self.rubric or self.comment:
            out["rubric"] = [dict(item) for item in self.rubric]
            out["comment"] = self.comment
        return out


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

    @property
    def pending(self) -> list[str]:
        """The questions waiting for a person's grade."""
        return [q.id for q in self.questions if q.pending]

    @property
    def auto_total(self) -> float:
        """The points of the questions scored by checks."""
        return sum(q.max for q in self.questions if q.kind != "written")

    def as_dict(self):
        return {
            "notebook": self.notebook,
            "assignment": self.assignment,
            "score": self.score,
            "total": self.total,
            "pending": self.pending,
            "questions": [q.as_dict() for q in self.questions],
            "skipped_cells": [{"cell": i, "reason": r} for i, r in self.skipped_cells],
            "notes": list(self.notes),
        }

    def table(self) -> str:
        width = max([8] + [len(q.id) for q in self.questions])
        lines = [f"Grading {plain(self.notebook, 200)} (assignment {self.assignment})", ""]
        lines.append(f"{'question':<{width}}  {'points':>6}  {'max':>4}  result")
        for q in self.questions:
            points = "pending" if q.pending else fmt(q.points)
            lines.append(f"{q.id:<{width}}  {points:>6}  {fmt(q.max):>4}  {q.reason}")
        pending = self.pending
        lines.append(f"{'total':<{width}}  {fmt(self.score):>6}  {fmt(self.total):>4}"
                     + (f"  ({len(pending)} written answer(s) pending: {', '.join(pending)})"
                        if pending else ""))
        for index, reason in self.skipped_cells:
            lines.append(f"note: code cell {index} was skipped: it {reason}")
        lines += [f"note: {note}" for note in self.notes]
        return "\n".join(lines)

    def feedback(self, student: str) -> str:
        """A Markdown feedback page for the student: question, points, reason."""
        lines = [f"# Feedback: {_markdown(self.assignment, 100)}", "",
                 f"Student: {_markdown(student, 100)}", "",
                 f"**Score: {fmt(self.score)} / {fmt(self.total)}**", "",
                 "| question | points | max | result |", "|---|---:|---:|---|"]
        for q in self.questions:
            points = "pending" if q.pending else fmt(q.points)
            lines.append(f"| {q.id} | {points} | {fmt(q.max)} | {_cell(q.reason)} |")
        for q in self.questions:
            if q.rubric or q.comment:
                lines += ["", f"**{q.id}**: {fmt(q.points)} / {fmt(q.max)}", ""]
                lines += [f"- {'+' if item['points'] > 0 else ''}{fmt(item['points'])}: "
                          f"{_cell(item['text'], 300)}" for item in q.rubric]
                if q.comment:
                    lines += ["", f"Comment: {_cell(q.comment, 2000)}"]
        if self.pending:
            lines += ["", f"Written answers still to be graded: {', '.join(self.pending)}."]
        notes = [f"code cell {i} was skipped: it {r}" for i, r in self.skipped_cells] + self.notes
        if notes:
            lines += ["", "Notes:", ""] + [f"- {_markdown(n, 400)}" for n in notes]
        return "\n".join(lines) + "\n"


def _cell(text, limit: int = MAX_REASON) -> str:
    """Text for one line of the Markdown feedback: no control characters, no table breaks,
    no code spans or raw HTML (``<`` and ``&`` are escaped)."""
    text = plain(text, limit).replace("&", "&amp;").replace("<", "&lt;")
    return text.replace("|", "\\|").replace("`", "'")


MARKDOWN_SPECIAL = "\\`*_{}[]#|!~$/@"  # emphasis, code, links, HTML, tables, math, autolinks


def _markdown(text, limit: int) -> str:
    """Text shown literally by any Markdown renderer (CommonMark, GFM, MyST): one line with
    ``<`` and ``&`` as entities and every character that can start inline Markdown, math
    or an autolink (``http://``, ``www.``, ``a@b``) backslash-escaped.  A note may quote
    what a notebook says about itself (its ``metadata.lecturelib.assignment``)."""
    text = plain(text, limit).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = "".join(f"\\{ch}" if ch in MARKDOWN_SPECIAL else ch for ch in text)
    return re.sub(r"(?i)\bwww\.", lambda m: m[0][:-1] + "\\.", text)


def fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def write_atomic(path, text: str | bytes) -> None:
    """Write ``text`` (UTF-8) or bytes to ``path`` by an atomic rename, refusing to write
    through anything but a regular file (a FIFO, a symbolic link, a device or a folder)."""
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
        with (os.fdopen(fd, "wb") if isinstance(text, bytes)
              else os.fdopen(fd, "w", encoding="utf-8")) as out:
            out.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise GradingError(f"cannot write {path}: {exc.strerror}") from None


def write_json(path, report: GradeReport) -> None:
    write_atomic(path, json.dumps(report.as_dict(), indent=2) + "\n")

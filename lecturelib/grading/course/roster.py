"""The class roster: a CSV of student ids and names, read as hostile input.

A roster maps submissions to LMS ids and says who submitted nothing.  Its header names the
columns; each may be spelled the way this package writes it or the way an LMS exports it,
so a Canvas gradebook export (``Student, ID, SIS User ID, SIS Login ID, Section``) or a
Moodle participants export can serve as the roster as it is:

============  ==========================================================
``id``        the LMS user id (required; ``ID``, ``Identifier``, ``userid``)
``name``      the student's name (required; ``Student``, ``Full name``)
``sis_id``    the institution's id (``SIS User ID``, ``ID number``, ``idnumber``)
``login``     the login (``SIS Login ID``, ``username``)
``email``     the e-mail address (``Email address``)
``section``   the section (``Section``)
============  ==========================================================

The ``id`` is the key of the student's rows in the gradebook (the batch grader's student
name), so it is restricted to the grader's safe set of characters.  A Canvas export's
"Points Possible" row is skipped.  Moodle's grading worksheet can be the roster too: its
``Identifier`` column (``Participant 1234567``) is read as ``1234567``, the number Moodle
puts in the download's folder names (``Full Name_1234567_assignsubmission_file_``).
"""

from __future__ import annotations

import csv
import dataclasses
import io
import re
from pathlib import Path

from ..core.notebook import GradingError
from ..core.report import plain
from ..core.submissions import NAME, NAME_RULE, Candidate, Unreadable, display, read_submission

PARTICIPANT = re.compile(r"^Participant (\d{1,20})$")  # Moodle's grading worksheet
MAX_ROSTER_BYTES = 16 * 2**20
MAX_STUDENTS = 100_000
MAX_FIELD = 300
FIELDS = ("id", "name", "sis_id", "login", "email", "section")
ALIASES = {
    "id": ("id", "identifier", "userid", "user id"),
    "name": ("name", "student", "full name", "fullname"),
    "sis_id": ("sis_id", "sis user id", "id number", "idnumber"),
    "login": ("login", "sis login id", "username"),
    "email": ("email", "email address", "e-mail"),
    "section": ("section",),
}


@dataclasses.dataclass(frozen=True)
class Student:
    """One enrolled student: the LMS ``id`` and what the LMS needs to find them."""

    id: str
    name: str
    sis_id: str = ""
    login: str = ""
    email: str = ""
    section: str = ""


@dataclasses.dataclass
class Roster:
    """The students in roster order, by id; :meth:`find` also matches logins and e-mails."""

    students: dict[str, Student]

    def __contains__(self, student_id) -> bool:
        return student_id in self.students

    def __iter__(self):
        return iter(self.students.values())

    def __len__(self) -> int:
        return len(self.students)

    def get(self, student_id) -> Student | None:
        return self.students.get(student_id)

    def matches(self, key: str) -> list[Student]:
        """Every student whose id, SIS id, login or e-mail is ``key`` (logins and e-mails
        case-insensitively): more than one means ``key`` is ambiguous."""
        low = key.lower()
        return [s for s in self.students.values()
                if key in (s.id, s.sis_id) or (low and low in (s.login.lower(), s.email.lower()))]

    def find(self, key: str) -> Student | None:
        """The one student :meth:`matches` finds for ``key``, or ``None`` (none, or more
        than one)."""
        found = self.matches(key)
        return found[0] if len(found) == 1 else None


def _columns(header: list[str], where: str) -> dict[str, int]:
    names = [h.strip().lower() for h in header]
    found = {}
    for field, spellings in ALIASES.items():
        hits = [i for i, h in enumerate(names) if h in spellings]
        if len(hits) > 1:
            raise GradingError(f"{where}: the header names the {field!r} column twice")
        if hits:
            found[field] = hits[0]
    missing = [f for f in ("id", "name") if f not in found]
    if missing:
        raise GradingError(f"{where}: the header has no {' and no '.join(map(repr, missing))} "
                           f"column (expected columns: {', '.join(FIELDS)})")
    return found


def parse_roster(text: str, where: str = "the roster") -> Roster:
    """A :class:`Roster` from CSV text; a :class:`GradingError` naming the first problem."""
    rows = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(rows, None)
        if header is None:
            raise GradingError(f"{where} is empty")
        columns = _columns(header, where)
        students: dict[str, Student] = {}
        for row in rows:
            line = rows.line_num
            if any("\n" in cell or "\r" in cell for cell in row):
                raise GradingError(f"{where}, line {line}: a field runs over a line break (an "
                                   "unclosed quote?)")
            if not any(cell.strip() for cell in row):
                continue
            values = {f: (row[i].strip() if i < len(row) else "") for f, i in columns.items()}
            if values["name"] == "Points Possible" and not values["id"]:
                continue  # the second row of a Canvas gradebook export
            too_long = [f for f, v in values.items() if len(v) > MAX_FIELD]
            if too_long:
                raise GradingError(f"{where}, line {line}: the {too_long[0]!r} field is longer "
                                   f"than {MAX_FIELD} characters")
            sid = values["id"] = PARTICIPANT.sub(r"\1", values["id"])
            if not NAME.match(sid):
                raise GradingError(f"{where}, line {line}: the id {display(sid)} is not a safe "
                                   f"student id ({NAME_RULE})")
            if sid in students:
                raise GradingError(f"{where}, line {line}: the id {display(sid)} is listed twice")
            if len(students) == MAX_STUDENTS:
                raise GradingError(f"{where} lists more than {MAX_STUDENTS} students")
            students[sid] = Student(**{f: plain(v, MAX_FIELD) for f, v in values.items()})
    except csv.Error as exc:
        hint = "; an unclosed quote?" if "end of data" in str(exc) else ""
        raise GradingError(f"{where}, line {rows.line_num}: not readable as CSV ({exc}{hint})") from None
    if not students:
        raise GradingError(f"{where} lists no student")
    return Roster(students)


def read_roster(path) -> Roster:
    """Read a roster file (UTF-8, optionally with a byte-order mark), never following a
    symbolic link, at most :data:`MAX_ROSTER_BYTES`."""
    path = Path(path)
    try:
        data = read_submission(Candidate("roster", path.parent, (path.name,)), MAX_ROSTER_BYTES)
    except Unreadable as exc:
        raise GradingError(f"the roster {display(str(path))} could not be read: {exc}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise GradingError(f"the roster {display(str(path))} is not UTF-8 text") from None
    return parse_roster(text, f"the roster {display(str(path))}")

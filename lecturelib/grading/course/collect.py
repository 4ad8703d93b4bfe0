"""``lecturelib collect``: an LMS bulk download (or a folder) in, a tidy folder out.

The input is a Canvas "Download Submissions" zip (files named
``lastfirst_USERID_SUBMISSIONID_original-name.ipynb``, ``lastfirst_late_USERID_...`` when
handed in late, ``original-name-1.ipynb``, ``-2``, ... for resubmissions), a Moodle
"Download all submissions" zip (one folder ``Full Name_ID_assignsubmission_file_/`` per
student, or files named ``Full Name_ID_assignsubmission_file_original-name``), or a folder
holding either layout unpacked, or the plain layout of the batch grader (``alice.ipynb``,
``alice/``).  The output folder holds one notebook per student, ``STUDENT.ipynb`` (the LMS
user id, or the plain layout's name), the student's latest submission: the latest time,
then the highest LMS submission id, then the highest resubmission suffix.  Each file keeps
its submission time as its modification time, and the times go into the gradebook
(table ``submission_times``) for the course's late policy (:mod:`.course`).

The submission time is the zip entry's: its extended-timestamp field (UTC) when there is
one, else its date and time read in the course's time zone; in a folder, the file's
modification time.

A zip is hostile input.  Before anything is extracted, every entry is checked and an entry
that fails is refused with one line in the report, never a traceback: at most
:data:`MAX_ENTRIES` entries, each at most the grader's notebook size cap, all together at
most ``max_total`` bytes uncompressed and at most :data:`MAX_RATIO` times their
compressed size (zip bombs); no absolute path, no ``..``, no backslash or control
character in a name; no symbolic link or special file (the entry's Unix mode bits); no
encrypted entry; no name twice.  Nothing is ever written where the zip says: only
``OUTPUT/STUDENT.ipynb`` for a safe ``STUDENT``.  Every name in the report is escaped.
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import os
import re
import stat
import struct
import zipfile
import zoneinfo
from pathlib import Path

from ..core.notebook import MAX_NOTEBOOK_BYTES, GradingError, check_assignment_name
from ..core.submissions import (NAME, NAME_RULE, SKIPPED, Candidate, Unreadable, display,
                               read_submission)
from .roster import Roster

MAX_ZIP_BYTES = 4 * 2**30
MAX_ENTRIES = 20_000
MAX_TOTAL = 2 * 2**30
MAX_RATIO = 100
MAX_NAME = 400

CANVAS = re.compile(r"^(?P<login>[A-Za-z0-9-]*?)_(?:(?P<late>late)_)?(?P<uid>\d{1,20})_"
                    r"(?P<sub>\d{1,20})_(?P<original>.+)$", re.IGNORECASE)
MOODLE = re.compile(r"^(?P<name>.+)_(?P<uid>\d{1,20})_assignsubmission_(?P<plugin>[a-z]+)_(?P<rest>.*)$")
RESUBMISSION = re.compile(r"^(?P<stem>.*)-(?P<n>\d{1,4})$")


@dataclasses.dataclass
class Found:
    """One notebook found in the input, before the latest per student is chosen."""

    student: str
    lms_name: str
    source: str          # the entry's name in the zip or its path in the folder
    submitted: datetime.datetime
    order: tuple         # (submission id, resubmission suffix) after the time
    lms_late: bool
    data: bytes | None = None  # read later for zips, at once for folders
    info: zipfile.ZipInfo | None = None


@dataclasses.dataclass
class Collected:
    """What :func:`collect` did: the notebooks kept, and every line of its report."""

    kept: dict[str, Found]
    older: list[str]        # older submissions not kept
    refused: list[str]      # entries refused (hostile or unreadable), one line each
    unmapped: list[str]     # notebooks that could not be mapped to a student
    skipped: list[str]      # files that are not notebooks
    not_on_roster: list[str]
    missing: list[str]      # roster students with no submission
    beyond: list[str] = dataclasses.field(default_factory=list)  # over the submission limit

    def report(self) -> str:
        lines = [f"collected {len(self.kept)} submission(s)"]
        sections = [("refused", self.refused), ("could not be mapped to a student", self.unmapped),
                    ("not on the roster (collected; no SIS ids in the exports)", self.not_on_roster),
                    ("no submission (on the roster)", self.missing),
                    ("older submissions, not kept", self.older),
                    ("over the course's limit of submissions, not kept", self.beyond),
                    ("not a notebook, skipped", self.skipped)]
        for title, items in sections:
            if items:
                lines.append(f"{title}: {len(items)}")
                lines += [f"  {item}" for item in items]
        return "\n".join(lines)

    @property
    def problems(self) -> int:
        return len(self.refused) + len(self.unmapped)


# --------------------------------------------------------------------------------------
# Names
# --------------------------------------------------------------------------------------


def _version(original: str) -> tuple[str, int]:
    """``(name without the resubmission suffix, suffix)``: ``01-bayes-2.ipynb`` -> 2."""
    stem, dot, ext = original.rpartition(".")
    if not dot:
        stem, ext = original, ""
    match = RESUBMISSION.match(stem)
    if match:
        return f"{match['stem']}.{ext}" if ext else match["stem"], int(match["n"])
    return original, 0


def parse_entry(parts: list[str]) -> tuple[str, str, tuple, bool, str] | None:
    """``(student id, LMS name, order, late flag, original file name)`` from the parts of a
    path in a Canvas or Moodle download, or ``None`` when the name is neither's."""
    first = parts[0]
    moodle = MOODLE.match(first)
    if moodle:
        rest = [moodle["rest"], *parts[1:]] if moodle["rest"] else parts[1:]
        if not rest:
            return None
        return moodle["uid"], moodle["name"], (0, 0), False, rest[-1]
    canvas = CANVAS.match(first) if len(parts) == 1 else None
    if canvas:
        _, suffix = _version(canvas["original"])
        return (canvas["uid"], canvas["login"], (int(canvas["sub"]), suffix),
                bool(canvas["late"]), canvas["original"])
    return None


def _safe_entry_name(name: str) -> str | None:
    """Why a zip entry's name is refused, or ``None`` when it may be looked at."""
    if len(name) > MAX_NAME:
        return "name too long"
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in name):
        return "control character in the name"
    if "\\" in name:
        return "backslash in the name"
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        return "absolute path"
    if ".." in name.split("/"):
        return "path escape ('..')"
    return None


# --------------------------------------------------------------------------------------
# Times
# --------------------------------------------------------------------------------------


def _extended_time(extra: bytes) -> int | None:
    """The UTC modification time of an extended-timestamp extra field (0x5455), if any."""
    i = 0
    while i + 4 <= len(extra):
        tag, size = struct.unpack_from("<HH", extra, i)
        body = extra[i + 4: i + 4 + size]
        if tag == 0x5455 and len(body) >= 5 and body[0] & 1:
            return struct.unpack_from("<i", body, 1)[0]
        i += 4 + size
    return None


def entry_time(info: zipfile.ZipInfo, zone: datetime.tzinfo) -> datetime.datetime:
    """When a zip entry was last modified, in UTC (see the module's docstring)."""
    utc = _extended_time(info.extra)
    if utc is not None:
        return datetime.datetime.fromtimestamp(utc, datetime.timezone.utc)
    return datetime.datetime(*info.date_time, tzinfo=zone).astimezone(datetime.timezone.utc)


def time_zone(name: str | None) -> datetime.tzinfo:
    if not name:
        return datetime.timezone.utc
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise GradingError(f"unknown time zone {display(name)} (an IANA name such as "
                           "'Europe/Zurich')") from None


# --------------------------------------------------------------------------------------
# Reading the input
# --------------------------------------------------------------------------------------


def _entry_problem(info: zipfile.ZipInfo) -> str | None:
    """Why a zip entry is refused before it is read, or ``None``."""
    why = _safe_entry_name(info.filename)
    if why:
        return why
    kind = stat.S_IFMT(info.external_attr >> 16)
    if info.create_system == 3 and kind:  # Unix file type bits (absent: a plain file)
        if stat.S_ISLNK(kind):
            return "a symbolic link"
        if kind not in (stat.S_IFREG, stat.S_IFDIR):
            return "a special file"
    if info.flag_bits & 0x1:
        return "encrypted"
    if info.file_size > MAX_NOTEBOOK_BYTES:
        return f"larger than {MAX_NOTEBOOK_BYTES} bytes"
    if info.file_size > MAX_RATIO * max(info.compress_size, 1) and info.file_size > 2**20:
        return f"compressed more than {MAX_RATIO} times (a zip bomb?)"
    return None


def _open_zip(path: Path):
    try:
        data_fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise GradingError(f"{display(str(path))}: no such file") from None
    except OSError as exc:
        raise GradingError(f"{display(str(path))} could not be opened "
                           f"({'a symbolic link' if os.path.islink(path) else exc.strerror})") from None
    info = os.fstat(data_fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(data_fd)
        raise GradingError(f"{display(str(path))} is not a regular file")
    if info.st_size > MAX_ZIP_BYTES:
        os.close(data_fd)
        raise GradingError(f"{display(str(path))} is larger than {MAX_ZIP_BYTES} bytes")
    handle = os.fdopen(data_fd, "rb")
    try:
        return zipfile.ZipFile(handle)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        handle.close()
        raise GradingError(f"{display(str(path))} is not a readable zip file") from None


def _from_zip(path: Path, zone, max_total: int, found: list, refused: list, unmapped: list,
              skipped: list):
    archive = _open_zip(path)
    with archive:
        infos = archive.infolist()
        if len(infos) > MAX_ENTRIES:
            raise GradingError(f"{display(str(path))} has {len(infos)} entries, more than "
                               f"{MAX_ENTRIES}: refused")
        names, total = set(), 0
        for info in infos:
            label = display(info.filename)
            why = _entry_problem(info)
            if why is None and info.filename in names:
                why = "the same name twice in the zip"
            names.add(info.filename)
            if why is None and not info.is_dir():
                total += info.file_size
                if total > max_total:
                    why = f"the zip's files together exceed {max_total} bytes uncompressed"
            if why:
                refused.append(f"{label}: refused: {why}")
                continue
            parts = info.filename.rstrip("/").split("/")
            if info.is_dir() or any(p in SKIPPED for p in parts) or not parts[-1]:
                continue
            if not parts[-1].endswith(".ipynb"):
                skipped.append(label)
                continue
            try:
                when = entry_time(info, zone)
            except (ValueError, OverflowError, OSError):
                refused.append(f"{label}: refused: its time is not a valid date")
                continue
            _add(found, unmapped, parts, label, when, info=info)
        for item in found:
            try:
                with archive.open(item.info) as member:
                    data = member.read(MAX_NOTEBOOK_BYTES + 1)
            except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError,
                    RuntimeError):
                data = None
            if data is None or len(data) != item.info.file_size:
                refused.append(f"{item.source}: refused: could not be read (corrupt entry)")
                item.data = None
            else:
                item.data = data
    found[:] = [f for f in found if f.data is not None]


def _add(found, unmapped, parts, label, when, info=None, data=None):
    parsed = parse_entry(parts)
    if parsed is None:
        if len(parts) <= 2:  # the batch grader's plain layout: alice.ipynb or alice/x.ipynb
            student = parts[0][:-len(".ipynb")] if len(parts) == 1 else parts[0]
            parsed = (student, "", (0, 0), False, parts[-1])
        else:
            unmapped.append(f"{label}: not a Canvas or Moodle name, nor STUDENT.ipynb or STUDENT/NOTEBOOK")
            return
    student, lms_name, order, late, _ = parsed
    if not NAME.match(student):
        unmapped.append(f"{label}: the student {display(student)} is not a safe name ({NAME_RULE})")
        return
    found.append(Found(student, lms_name, label, when, order, late, data, info))


def _from_folder(folder: Path, found: list, refused: list, unmapped: list, skipped: list):
    count = 0
    for here, dirs, files in os.walk(folder, followlinks=False):
        rel = Path(here).relative_to(folder).parts
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED)
        for name in sorted(files) + [d for d in dirs if os.path.islink(os.path.join(here, d))]:
            parts = [*rel, name]
            label = display("/".join(parts))
            count += 1
            if count > MAX_ENTRIES:
                raise GradingError(f"{display(str(folder))} holds more than {MAX_ENTRIES} files: refused")
            if os.path.islink(os.path.join(here, name)):
                refused.append(f"{label}: refused: a symbolic link")
                continue
            if not name.endswith(".ipynb"):
                skipped.append(label)
                continue
            try:
                data = read_submission(Candidate("", folder, tuple(parts)))
                mtime = os.lstat(os.path.join(here, name)).st_mtime
            except Unreadable as exc:
                refused.append(f"{label}: refused: {exc}")
                continue
            except OSError:
                refused.append(f"{label}: refused: unreadable")
                continue
            when = datetime.datetime.fromtimestamp(mtime, datetime.timezone.utc)
            _add(found, unmapped, parts, label, when, data=data)


# --------------------------------------------------------------------------------------
# Choosing, writing, recording
# --------------------------------------------------------------------------------------


def _choose(found: list[Found], roster: Roster | None, cap: int | None = None):
    """The latest submission of each student (with a ``cap``, the latest of the first
    ``cap``); the others as report lines.  With a roster, a plain-layout name that is a
    roster login, SIS id or e-mail becomes its id."""
    if roster is not None:
        for f in found:
            if f.student not in roster:
                match = roster.find(f.student)
                if match is not None:
                    f.student = match.id
    by_student: dict[str, list[Found]] = {}
    for f in found:
        by_student.setdefault(f.student, []).append(f)
    kept, older, beyond = {}, [], []
    for student, mine in sorted(by_student.items()):
        mine.sort(key=lambda f: (f.submitted, f.order, f.source))
        if cap is not None and len(mine) > cap:
            beyond += [f"{f.source} ({_iso(f.submitted)}): submission {i} of {student}, "
                       f"over the limit of {cap}" for i, f in enumerate(mine[cap:], cap + 1)]
            mine = mine[:cap]
        kept[student] = mine[-1]
        older += [f"{f.source} ({_iso(f.submitted)}): older than {mine[-1].source} "
                  f"({_iso(mine[-1].submitted)})" for f in mine[:-1]]
    return kept, older, beyond


def _iso(when: datetime.datetime) -> str:
    return when.astimezone(datetime.timezone.utc).isoformat(timespec="seconds")


def _prepare_output(output: Path):
    if os.path.islink(output):
        raise GradingError(f"the output folder {display(str(output))} is a symbolic link")
    if output.exists():
        if not output.is_dir():
            raise GradingError(f"the output {display(str(output))} exists and is not a folder")
        if any(output.iterdir()):
            raise GradingError(f"the output folder {display(str(output))} is not empty: collect "
                               "into a new folder")
    try:
        output.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise GradingError(f"cannot create {display(str(output))}: {exc.strerror}") from None


def _write(output: Path, f: Found):
    target = output / f"{f.student}.ipynb"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(target, flags, 0o644)
        with os.fdopen(fd, "wb") as out:
            out.write(f.data)
        stamp = f.submitted.timestamp()
        os.utime(target, (stamp, stamp))
    except OSError as exc:
        raise GradingError(f"cannot write {display(str(target))}: {exc.strerror}") from None


def collect(source, output, *, assignment: str, roster: Roster | None = None,
            timezone: str | None = None, max_total: int = MAX_TOTAL, gradebook=None,
            max_submissions: int | None = None) -> Collected:
    """Collect the latest submission of each student from ``source`` into ``output``.

    Parameters
    ----------
    source : path
        A Canvas or Moodle bulk-download zip, or a folder (either layout unpacked, or
        ``STUDENT.ipynb`` / ``STUDENT/NOTEBOOK.ipynb``).
    output : path
        A new or empty folder; receives ``STUDENT.ipynb`` per student.
    assignment : str
        The assignment the submission times are recorded for.
    roster : Roster, optional
        Maps logins and e-mails of a plain folder to ids; lists students with no
        submission and submissions of students not on it.
    timezone : str, optional
        The IANA time zone of zip entries without a UTC timestamp (default UTC).
    gradebook : Gradebook, optional
        Where the submission times are recorded (table ``submission_times``).
    max_submissions : int, optional
        The course's limit: a student's submissions after the first ``max_submissions``
        (in time order) are reported and not kept.
    """
    check_assignment_name(assignment)
    if max_submissions is not None and (isinstance(max_submissions, bool) or
                                        not isinstance(max_submissions, int) or max_submissions < 1):
        raise GradingError(f"max_submissions must be a whole number of at least 1, got {max_submissions!r}")
    zone = time_zone(timezone)
    source, output = Path(source), Path(output)
    found: list[Found] = []
    refused: list[str] = []
    unmapped: list[str] = []
    skipped: list[str] = []
    if source.is_dir() and not source.is_symlink():
        _from_folder(source, found, refused, unmapped, skipped)
    else:
        _from_zip(source, zone, max_total, found, refused, unmapped, skipped)
    kept, older, beyond = _choose(found, roster, max_submissions)
    not_on_roster, missing = [], []
    if roster is not None:
        not_on_roster = [f"{s}: {kept[s].source}" for s in kept if s not in roster]
        missing = [f"{s.id} ({s.name})" for s in roster if s.id not in kept]
    _prepare_output(output)
    for f in kept.values():
        _write(output, f)
    if gradebook is not None:
        record_times(gradebook, assignment, kept.values())
    return Collected(kept, older, refused, unmapped, skipped, not_on_roster, missing, beyond)


TIMES_SCHEMA = """
CREATE TABLE IF NOT EXISTS submission_times (
    assignment TEXT NOT NULL, student TEXT NOT NULL, submitted_at TEXT NOT NULL,
    sha256 TEXT NOT NULL, source TEXT NOT NULL, lms_name TEXT NOT NULL, lms_late INTEGER NOT NULL,
    PRIMARY KEY (assignment, student));
"""


def record_times(gradebook, assignment: str, kept) -> None:
    """Store (replace) the submission time of each collected notebook in the gradebook."""
    with gradebook.db:
        gradebook.db.executescript(TIMES_SCHEMA)
        gradebook.db.executemany(
            "INSERT OR REPLACE INTO submission_times VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(assignment, f.student, _iso(f.submitted), hashlib.sha256(f.data).hexdigest(),
              f.source, f.lms_name, int(f.lms_late)) for f in kept])


@dataclasses.dataclass(frozen=True)
class SubmissionTime:
    submitted: datetime.datetime
    sha256: str
    lms_late: bool
    lms_name: str


def submission_times(gradebook, assignment: str) -> dict[str, SubmissionTime]:
    """student -> when the collected notebook was handed in (empty if nothing collected)."""
    gradebook.db.executescript(TIMES_SCHEMA)
    rows = gradebook.db.execute("SELECT student, submitted_at, sha256, lms_late, lms_name FROM "
                                "submission_times WHERE assignment=?", (assignment,)).fetchall()
    return {s: SubmissionTime(datetime.datetime.fromisoformat(t), h, bool(late), name)
            for s, t, h, late, name in rows}


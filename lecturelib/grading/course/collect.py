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

Names are chosen by students.  The layout (``canvas``, ``moodle`` or ``plain``) is decided
once for the whole download (:func:`download_layout`), and a student's id is read only
from the part of a name that LMS writes (:func:`parse_canvas`, :func:`parse_moodle`); a
name whose student-chosen part carries a second id pattern is refused, and an id that
comes under two LMS names keeps none of its entries.  A roster maps only plain names.

A zip is hostile input.  Before :mod:`zipfile` parses its directory, the end record is
read: more than :data:`MAX_ENTRIES` entries (by its count, or by the entry signatures in
the directory), or a directory over :data:`MAX_DIRECTORY_BYTES`, refuses the zip.  Before
anything is extracted, every entry is checked and an entry that fails is refused with one
line in the report, never a traceback: each at most the grader's notebook size cap, all
together at most ``max_total`` bytes uncompressed and at most :data:`MAX_RATIO` times
their compressed size; no entry whose bytes overlap another's (zip bombs); no absolute
path, no ``..``, no backslash or control character in a name; no symbolic link or special
file (the entry's Unix mode bits); no encrypted entry; no name twice.  Entries are copied
1 MiB at a time into a staging folder inside the output, never held whole in memory.
Nothing is ever written where the zip says: only ``OUTPUT/STUDENT.ipynb`` for a safe
``STUDENT``.  Every name in the report is escaped.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import errno
import functools
import hashlib
import os
import re
import shutil
import stat
import struct
import tempfile
import zipfile
import zlib
import zoneinfo
from pathlib import Path

from ..core.notebook import MAX_NOTEBOOK_BYTES, GradingError, check_assignment_name
from ..core.submissions import (NAME, NAME_RULE, SKIPPED, Candidate, Unreadable, display,
                               read_submission)
from .roster import Roster

MAX_ZIP_BYTES = 4 * 2**30
MAX_ENTRIES = 20_000
MAX_DIRECTORY_BYTES = 64 * 2**20  # the central directory: 20 000 entries take about 2 MiB
MAX_TOTAL = 2 * 2**30
MAX_RATIO = 100
MAX_NAME = 400

CANVAS = re.compile(r"^(?P<login>[A-Za-z0-9-]*?)_(?:(?P<late>late)_)?(?P<uid>\d{1,20})_"
                    r"(?P<sub>\d{1,20})_(?P<original>.+)$", re.IGNORECASE)
MOODLE_ID = re.compile(r"_(?P<uid>\d{1,20})_assignsubmission_(?P<plugin>[a-z]+)_")
DIGITS = re.compile(r"^[0-9]{1,20}$")
RESUBMISSION = re.compile(r"^(?P<stem>.*)-(?P<n>\d{1,4})$")
LAYOUTS = ("canvas", "moodle", "plain")


@dataclasses.dataclass
class Found:
    """One notebook found in the input, before the latest per student is chosen."""

    student: str
    lms_name: str
    source: str          # the entry's name in the zip or its path in the folder, escaped
    submitted: datetime.datetime
    order: tuple         # (submission id, resubmission suffix) after the time
    lms_late: bool
    sha256: str = ""     # of the bytes staged on disk
    layout: str = "plain"
    lms_prefix: str = ""  # the part of the name the LMS wrote, which its feedback upload reads
    info: zipfile.ZipInfo | None = None   # where the bytes are: a zip entry ...
    parts: tuple = ()                     # ... or a file below the folder
    staged: Path | None = None


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
    layout: str = "plain"

    def report(self) -> str:
        lines = [f"collected {len(self.kept)} submission(s) ({self.layout} layout)"]
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
# Names: one layout per download, and only the part the LMS writes is read
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


def _looks_canvas(parts) -> bool:
    return len(parts) == 1 and CANVAS.match(parts[0]) is not None


def _looks_moodle(parts) -> bool:
    match = MOODLE_ID.search(parts[0])
    return match is not None and match.start() > 0


def download_layout(names: list[list[str]]) -> str:
    """``canvas``, ``moodle`` or ``plain``: the layout of a download, from the path parts
    of its notebooks.  A Canvas name (``login_ID_SUBID_…``, top level) and a Moodle name
    (``Full Name_ID_assignsubmission_PLUGIN_…``) cannot both be honest in one download: a
    name that could be either says nothing, and a download holding names that can only be
    Canvas's and names that can only be Moodle's is refused."""
    canvas = moodle = 0
    for parts in names:
        is_canvas, is_moodle = _looks_canvas(parts), _looks_moodle(parts)
        canvas += is_canvas and not is_moodle
        moodle += is_moodle and not is_canvas
    if canvas and moodle:
        raise GradingError("the download mixes Canvas names (login_ID_SUBMISSION_...) and Moodle "
                           "names (Full Name_ID_assignsubmission_...): collect one LMS's download "
                           "at a time")
    if canvas or moodle:
        return "canvas" if canvas else "moodle"
    return "canvas" if any(map(_looks_canvas, names)) else "plain"


class NameProblem(Exception):
    """Why an entry's name is not one its download's LMS writes (one report line).
    ``hostile``: the name is refused (it could pass for someone else's), not just unmapped."""

    def __init__(self, message: str, hostile: bool = False):
        super().__init__(message)
        self.hostile = hostile


def _second_id(text: str) -> bool:
    """Whether the part of a name the student chose carries an LMS id pattern."""
    return CANVAS.match(text) is not None or MOODLE_ID.search(text) is not None


def lms_reads(layout: str, name: str) -> str | None:
    """The user id that the LMS's own bulk feedback upload reads from the file name ``name``
    (None: it reads none).  Moodle (the file feedback plugin's zip importer) splits the
    name at ``_`` into at most five fields: the second is the participant id, the third
    and fourth a plugin (``assignsubmission_file``, but ``assignfeedback_file`` too).  Canvas ("Re-Upload
    Submissions") splits the name at ``_`` and takes the first field made only of digits
    as the user id, the second as the submitted file's id."""
    if layout == "moodle":
        fields = name.split("_", 4)
        return fields[1] if len(fields) == 5 and DIGITS.match(fields[1]) else None
    if layout == "canvas":
        numbers = [field for field in name.split("_") if DIGITS.match(field)]
        return numbers[0] if len(numbers) >= 2 else None
    return None


def _same_id_for_the_lms(layout: str, prefix: str, uid: str) -> None:
    """Refuse a name from which the LMS's feedback upload would read another id than ours."""
    read = lms_reads(layout, prefix + "feedback.html")
    if read != uid:
        raise NameProblem(f"{layout.capitalize()}'s feedback upload would read the id {read or 'none'} "
                          f"from this name, not {uid}: refused, it could pass for another student's",
                          hostile=True)


def parse_canvas(parts) -> tuple[str, str, tuple, bool]:
    """``(user id, login, order, late flag)`` of a Canvas entry: ``login_[late_]ID_SUBID_``
    is Canvas's, the rest the student's file name (which must carry no id of its own)."""
    match = CANVAS.match(parts[0]) if len(parts) == 1 else None
    if match is None:
        raise NameProblem("not a Canvas name (login_ID_SUBMISSION_file at the top level) in a "
                          "Canvas download")
    if _second_id(match["original"]):
        raise NameProblem("the student's file name carries a second LMS id pattern (_ID_SUBMISSION_ "
                          "or _ID_assignsubmission_): refused, it could pass for another student's",
                          hostile=True)
    _same_id_for_the_lms("canvas", parts[0][:match.start("original")], match["uid"])
    _, suffix = _version(match["original"])
    return match["uid"], match["login"], (int(match["sub"]), suffix), bool(match["late"])


def parse_moodle(parts) -> tuple[str, str, tuple, bool]:
    """``(user id, full name, order, late flag)`` of a Moodle entry: the first part is
    ``Full Name_ID_assignsubmission_PLUGIN_`` (a folder) or that followed by the student's
    file name (the flat layout); exactly one id pattern in it."""
    first = parts[0]
    ids = list(MOODLE_ID.finditer(first))
    if not ids or ids[0].start() == 0:
        raise NameProblem("not a Moodle name (Full Name_ID_assignsubmission_PLUGIN_) in a Moodle "
                          "download")
    if len(ids) > 1 or CANVAS.match(first[ids[0].end():]):
        raise NameProblem("the name carries a second LMS id pattern: refused, it could pass for "
                          "another student's", hostile=True)
    if len(parts) == 1 and not first[ids[0].end():]:
        raise NameProblem("a Moodle folder name without a file")
    _same_id_for_the_lms("moodle", first[:ids[0].end()], ids[0]["uid"])
    return ids[0]["uid"], first[:ids[0].start()], (0, 0), False


def parse_plain(parts) -> tuple[str, str, tuple, bool]:
    """The batch grader's plain layout: ``alice.ipynb`` or ``alice/NOTEBOOK.ipynb``."""
    if len(parts) > 2:
        raise NameProblem("not STUDENT.ipynb or STUDENT/NOTEBOOK.ipynb")
    return (parts[0][:-len(".ipynb")] if len(parts) == 1 else parts[0]), "", (0, 0), False


PARSERS = {"canvas": parse_canvas, "moodle": parse_moodle, "plain": parse_plain}


def lms_prefix(layout: str, parts) -> str:
    """The part of an entry's name its LMS wrote (Canvas's ``login_ID_SUBMISSION_``,
    Moodle's ``Full Name_ID_assignsubmission_file_``; "" in the plain layout): the LMS's
    bulk feedback upload maps a file back to its student by it."""
    if layout == "canvas":
        match = CANVAS.match(parts[0])
        return parts[0][:match.start("original")] if match else ""
    if layout == "moodle":
        ids = list(MOODLE_ID.finditer(parts[0]))
        return parts[0][:ids[0].end()] if ids else ""
    return ""


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


ZONE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_+-]{0,30}(?:/[A-Za-z0-9_+-]{1,30}){0,2}$")


NOT_PLACES = {"localtime", "posixrules", "Factory"}  # files of a zone database, not IANA places


@functools.lru_cache(maxsize=1)
def _zone_names() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones()) - NOT_PLACES


def time_zone(name: str | None) -> datetime.tzinfo:
    """The IANA time zone ``name`` (UTC when empty), or a one-line error: a name that is
    not of the IANA form or not among the zone database's places (``localtime``, this
    machine's own setting, and ``posixrules`` are files of the database, not places)."""
    if not name:
        return datetime.timezone.utc
    try:
        if not ZONE_NAME.match(name) or name not in _zone_names():
            raise ValueError(name)
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
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


END_RECORD = struct.Struct("<4s4H2LH")        # the zip's end of central directory record
END_LOCATOR64 = struct.Struct("<4sLQL")       # the zip64 end record's locator before it
END_RECORD64 = struct.Struct("<4sQ2H2L4Q")    # the zip64 end record
LOCAL_HEADER = struct.Struct("<4s5H3L2H")     # an entry's local header


def _end_record(handle, size: int) -> tuple[int, int, int]:
    """``(entries, start, size)`` of the central directory, read from the end record the
    way :mod:`zipfile` finds it (the last 22 bytes, else the last signature in the last
    64 KiB; the zip64 record just before it when its locator is there), or ``None``."""
    handle.seek(max(size - (1 << 16) - END_RECORD.size, 0))
    tail = handle.read()
    at = len(tail) - END_RECORD.size
    if not (at >= 0 and tail[at:at + 4] == b"PK\x05\x06" and tail[-2:] == b"\0\0"):
        at = tail.rfind(b"PK\x05\x06")
    if at < 0 or at + END_RECORD.size > len(tail):
        return None
    record = END_RECORD.unpack_from(tail, at)
    entries, cd_size, location = record[4], record[5], size - len(tail) + at
    start = location - cd_size
    if location >= END_LOCATOR64.size + END_RECORD64.size:
        handle.seek(location - END_LOCATOR64.size - END_RECORD64.size)
        data = handle.read(END_RECORD64.size + END_LOCATOR64.size)
        zip64 = END_RECORD64.unpack_from(data)
        if END_LOCATOR64.unpack_from(data, END_RECORD64.size)[0] == b"PK\x06\x07" and \
                zip64[0] == b"PK\x06\x06":
            entries, cd_size = zip64[7], zip64[8]
            start = location - cd_size - END_RECORD64.size - END_LOCATOR64.size
    return entries, start, cd_size


def _check_directory(handle, size: int, label: str) -> int:
    """Refuse a zip whose central directory is too large to parse, before :mod:`zipfile`
    parses it: the entry count of the end record, the directory's size, and the number of
    entry signatures in it (zipfile reads the directory by its size, not by the count).
    Returns where the directory starts."""
    found = _end_record(handle, size)
    if found is None or found[1] < 0:
        raise GradingError(f"{label} is not a readable zip file")
    entries, start, cd_size = found
    if entries > MAX_ENTRIES:
        raise GradingError(f"{label} has {entries} entries, more than {MAX_ENTRIES}: refused")
    if cd_size > MAX_DIRECTORY_BYTES:
        raise GradingError(f"{label}: its central directory is larger than {MAX_DIRECTORY_BYTES} "
                           "bytes: refused")
    handle.seek(start)
    signatures = handle.read(cd_size).count(b"PK\x01\x02")
    if signatures > MAX_ENTRIES:
        raise GradingError(f"{label} has {signatures} entries, more than {MAX_ENTRIES}: refused")
    return start


def _open_zip(path: Path):
    """The zip file, opened without following a link, its directory checked first."""
    label = display(str(path))
    try:
        data_fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise GradingError(f"{label}: no such file") from None
    except OSError as exc:
        raise GradingError(f"{label} could not be opened "
                           f"({'a symbolic link' if os.path.islink(path) else exc.strerror})") from None
    info = os.fstat(data_fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(data_fd)
        raise GradingError(f"{label} is not a regular file")
    if info.st_size > MAX_ZIP_BYTES:
        os.close(data_fd)
        raise GradingError(f"{label} is larger than {MAX_ZIP_BYTES} bytes")
    handle = os.fdopen(data_fd, "rb")
    try:
        directory = _check_directory(handle, info.st_size, label)
        return handle, zipfile.ZipFile(handle), directory
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, struct.error, NotImplementedError):
        handle.close()
        raise GradingError(f"{label} is not a readable zip file") from None
    except GradingError:
        handle.close()
        raise


def _overlapping(handle, infos, directory: int) -> dict[int, str]:
    """index -> why, for the entries whose bytes (local header, name, extra field and
    compressed data, as :mod:`zipfile` reads them) overlap another entry's or the central
    directory: a zip bomb can point many entries at the same compressed bytes."""
    spans, why = [], {}
    for i, info in enumerate(infos):
        header = b""
        if 0 <= info.header_offset < directory:
            handle.seek(info.header_offset)
            header = handle.read(LOCAL_HEADER.size)
        if len(header) != LOCAL_HEADER.size or header[:4] != b"PK\x03\x04":
            why[i] = "could not be read (corrupt entry)"
            continue
        fields = LOCAL_HEADER.unpack(header)
        end = info.header_offset + LOCAL_HEADER.size + fields[9] + fields[10] + info.compress_size
        if end > directory:
            why[i] = "its data runs into the zip's directory (a zip bomb?)"
        spans.append((info.header_offset, end, i))
    spans.sort()
    reach, holder = -1, None
    for begin, end, i in spans:
        if begin < reach:
            why[i] = why[holder] = "its bytes overlap another entry's (a zip bomb?)"
        if end > reach:
            reach, holder = end, i
    return why


@dataclasses.dataclass
class Entry:
    """A notebook found in the input, before its name is read: its path parts, the label
    printed for it, its time, and where its bytes are."""

    parts: list[str]
    label: str
    when: datetime.datetime
    info: zipfile.ZipInfo | None = None


def _from_zip(handle, archive, directory: int, zone, max_total: int, refused: list,
              skipped: list) -> list[Entry]:
    infos = archive.infolist()
    if len(infos) > MAX_ENTRIES:
        raise GradingError(f"the zip has {len(infos)} entries, more than {MAX_ENTRIES}: refused")
    overlaps = _overlapping(handle, infos, directory)
    entries, names, total = [], set(), 0
    for i, info in enumerate(infos):
        label = display(info.filename)
        why = _entry_problem(info) or overlaps.get(i)
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
        entries.append(Entry(parts, label, when, info))
    return entries


def _from_folder(folder: Path, refused: list, skipped: list) -> list[Entry]:
    entries, count = [], 0
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
                mtime = os.lstat(os.path.join(here, name)).st_mtime
            except OSError:
                refused.append(f"{label}: refused: unreadable")
                continue
            entries.append(Entry(parts, label, datetime.datetime.fromtimestamp(mtime, datetime.timezone.utc)))
    return entries


def _identify(entries: list[Entry], layout: str, refused: list, unmapped: list) -> list[Found]:
    """Each entry's student, read from the part of its name its layout's LMS writes."""
    found = []
    for e in entries:
        try:
            student, lms_name, order, late = PARSERS[layout](e.parts)
        except NameProblem as exc:
            (refused if exc.hostile else unmapped).append(f"{e.label}: {exc}")
            continue
        if not NAME.match(student):
            unmapped.append(f"{e.label}: the student {display(student)} is not a safe name ({NAME_RULE})")
            continue
        found.append(Found(student, lms_name, e.label, e.when, order, late, layout=layout,
                           lms_prefix=lms_prefix(layout, e.parts), info=e.info, parts=tuple(e.parts)))
    return found


def _stage(f: Found, archive, folder: Path | None, staging: Path, refused: list) -> bool:
    """Copy a notebook to ``staging`` (from a zip a bounded chunk at a time, never whole in
    memory) and note its SHA-256; one that cannot be read is refused (``False``)."""
    fd, name = tempfile.mkstemp(suffix=".ipynb", dir=staging)
    os.fchmod(fd, 0o644)
    target = Path(name)
    digest, size = hashlib.sha256(), 0
    try:
        if f.info is not None:
            with os.fdopen(fd, "wb") as out, archive.open(f.info) as member:
                while chunk := member.read(1 << 20):
                    size += len(chunk)
                    if size > f.info.file_size:
                        break
                    digest.update(chunk)
                    out.write(chunk)
            ok = size == f.info.file_size
        else:
            with os.fdopen(fd, "wb") as out:
                data = read_submission(Candidate("", folder, f.parts))
                digest.update(data)
                out.write(data)
            ok = True
    except Unreadable as exc:
        refused.append(f"{f.source}: refused: {exc}")
        target.unlink(missing_ok=True)
        return False
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError,
            RuntimeError, zlib.error):
        ok = False
    if not ok:
        refused.append(f"{f.source}: refused: could not be read (corrupt entry)")
        target.unlink(missing_ok=True)
        return False
    f.staged, f.sha256 = target, digest.hexdigest()
    return True


# --------------------------------------------------------------------------------------
# Choosing, writing, recording
# --------------------------------------------------------------------------------------


def _map_plain_names(found: list[Found], roster: Roster, unmapped: list) -> list[Found]:
    """A plain-layout name that is a roster login, SIS id or e-mail becomes its id; an
    LMS's id is an id and nothing else.  A name that matches two students is unmapped."""
    kept = []
    for f in found:
        if f.layout == "plain":
            matches = roster.matches(f.student)
            if len(matches) > 1:
                unmapped.append(f"{f.source}: {display(f.student)} matches more than one student "
                                f"of the roster ({', '.join(display(s.id) for s in matches)})")
                continue
            if matches:
                f.student = matches[0].id
        kept.append(f)
    return kept


def _one_identity(found: list[Found], refused: list) -> list[Found]:
    """Drop the entries of an LMS id that come under more than one LMS name (a login or a
    full name): one student's entries never replace another's."""
    names: dict[str, set[str]] = {}
    for f in found:
        if f.layout != "plain":
            names.setdefault(f.student, set()).add(f.lms_name.lower())
    mixed = {s for s, n in names.items() if len(n) > 1}
    for f in found:
        if f.student in mixed:
            refused.append(f"{f.source}: refused: the id {display(f.student)} comes under more than "
                           f"one name in the download ({', '.join(map(display, sorted(names[f.student])))}); "
                           "none of its entries kept")
    return [f for f in found if f.student not in mixed]


def _choose(found: list[Found], cap: int | None, stage):
    """The latest submission of each student (with a ``cap``, the latest of the first
    ``cap``) that ``stage`` can copy (an unreadable one gives way to the one before it);
    the others as report lines."""
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
        while mine and not stage(mine[-1]):
            mine.pop()
        if mine:
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
    try:
        if os.path.lexists(target):
            raise FileExistsError(errno.EEXIST, "it exists")
        os.rename(f.staged, target)
        stamp = f.submitted.timestamp()
        os.utime(target, (stamp, stamp), follow_symlinks=False)
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
        Maps logins, SIS ids and e-mails of a plain folder's names to ids (never an LMS's
        id); lists students with no submission and submissions of students not on it.
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
    refused: list[str] = []
    unmapped: list[str] = []
    skipped: list[str] = []
    archive = folder = None
    with contextlib.ExitStack() as stack:
        if source.is_dir() and not source.is_symlink():
            folder = source
            entries = _from_folder(source, refused, skipped)
        else:
            handle, archive, directory = _open_zip(source)
            stack.enter_context(handle)
            stack.enter_context(archive)
            entries = _from_zip(handle, archive, directory, zone, max_total, refused, skipped)
        layout = download_layout([e.parts for e in entries])
        found = _identify(entries, layout, refused, unmapped)
        if roster is not None:
            found = _map_plain_names(found, roster, unmapped)
        found = _one_identity(found, refused)
        _prepare_output(output)
        staging = Path(tempfile.mkdtemp(prefix=".collect-", dir=output))
        try:
            kept, older, beyond = _choose(found, max_submissions, functools.partial(
                _stage, archive=archive, folder=folder, staging=staging, refused=refused))
            for f in kept.values():
                _write(output, f)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    not_on_roster, missing = [], []
    if roster is not None:
        not_on_roster = [f"{s}: {kept[s].source}" for s in kept if s not in roster]
        missing = [f"{s.id} ({s.name})" for s in roster if s.id not in kept]
    if gradebook is not None:
        record_times(gradebook, assignment, kept.values())
    return Collected(kept, older, refused, unmapped, skipped, not_on_roster, missing, beyond, layout)


TIMES_SCHEMA = """
CREATE TABLE IF NOT EXISTS submission_times (
    assignment TEXT NOT NULL, student TEXT NOT NULL, submitted_at TEXT NOT NULL,
    sha256 TEXT NOT NULL, source TEXT NOT NULL, lms_name TEXT NOT NULL, lms_late INTEGER NOT NULL,
    layout TEXT NOT NULL DEFAULT '', lms_prefix TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (assignment, student));
"""


def _times_table(db) -> None:
    """Create the table, or add the columns a table written before them lacks."""
    db.executescript(TIMES_SCHEMA)
    columns = [row[1] for row in db.execute("PRAGMA table_info(submission_times)")]
    for column in ("layout", "lms_prefix"):
        if column not in columns:
            db.execute(f"ALTER TABLE submission_times ADD COLUMN {column} TEXT NOT NULL DEFAULT ''")


def record_times(gradebook, assignment: str, kept) -> None:
    """Store (replace) the submission time of each collected notebook in the gradebook."""
    with gradebook.db:
        _times_table(gradebook.db)
        gradebook.db.executemany(
            "INSERT OR REPLACE INTO submission_times (assignment, student, submitted_at, sha256, "
            "source, lms_name, lms_late, layout, lms_prefix) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(assignment, f.student, _iso(f.submitted), f.sha256, f.source, f.lms_name,
              int(f.lms_late), f.layout, f.lms_prefix) for f in kept])


@dataclasses.dataclass(frozen=True)
class SubmissionTime:
    submitted: datetime.datetime
    sha256: str
    lms_late: bool
    lms_name: str
    layout: str = ""   # canvas, moodle or plain ("" before the column existed)
    lms_prefix: str = ""  # what the LMS's feedback upload maps back to the student

    @property
    def lms_flag(self) -> bool | None:
        """The LMS's own late flag, where the LMS writes one (Canvas's ``_late_``)."""
        return self.lms_late if self.layout == "canvas" else None


def submission_times(gradebook, assignment: str) -> dict[str, SubmissionTime]:
    """student -> when the collected notebook was handed in (empty if nothing collected)."""
    with gradebook.db:
        _times_table(gradebook.db)
    rows = gradebook.db.execute("SELECT student, submitted_at, sha256, lms_late, lms_name, layout, "
                                "lms_prefix FROM submission_times WHERE assignment=?",
                                (assignment,)).fetchall()
    return {s: SubmissionTime(datetime.datetime.fromisoformat(t), h, bool(late), name, layout, prefix)
            for s, t, h, late, name, layout, prefix in rows}


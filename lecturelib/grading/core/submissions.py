"""Submission files: finding the notebooks of a class and reading them safely.

A folder of submissions is hostile: names are checked against :data:`NAME` before they
become a student's id, symbolic links are found and refused (never followed), and a file
is read through file descriptors, on the folder's own file system, up to a size cap.
"""

from __future__ import annotations

import dataclasses
import errno
import os
import re
import stat
import tempfile
from pathlib import Path

from .notebook import MAX_NOTEBOOK_BYTES, GradingError, read_notebook


NAME = re.compile(r"^(?!\.)[A-Za-z0-9._@+-]{1,100}$")


NAME_RULE = "letters, digits and ._-@+ only, no leading dot, at most 100 characters"


SKIPPED = {".ipynb_checkpoints", "__MACOSX"}


def display(text) -> str:
    """A name or path as printed: ``repr`` (escape codes escaped), cut short."""
    text = str(text)
    return repr(text if len(text) <= 200 else text[:200] + "...")


class Unreadable(Exception):
    """A submission refused before it is read; the message is one of a fixed few."""


@dataclasses.dataclass(frozen=True)
class Candidate:
    """A notebook found for ``student``: ``parts`` below ``root`` (a folder on ``dev``)."""

    student: str
    root: Path
    parts: tuple[str, ...]

    @property
    def path(self) -> Path:
        return self.root.joinpath(*self.parts)


def _notebooks_in(folder: Path) -> list[tuple[tuple[str, ...], bool]]:
    """``(parts, is_link)`` of every notebook below ``folder`` and of every symbolic link
    to a folder there (never followed), in a stable order."""
    found = []
    for here, dirs, files in os.walk(folder, followlinks=False):
        rel = Path(here).relative_to(folder).parts
        for d in list(dirs):
            if d in SKIPPED or os.path.islink(os.path.join(here, d)):
                dirs.remove(d)
                if d not in SKIPPED:
                    found.append((rel + (d,), True))
        dirs.sort()
        found += [(rel + (f,), False) for f in sorted(files) if f.endswith(".ipynb")]
    return found


def find_candidates(paths, assignment: str) -> tuple[list[Candidate], list[str]]:
    """Every notebook named on the command line or found in its folders, with its student.

    In a folder, the student is the top-level entry: ``alice.ipynb`` (the file's stem) or
    ``alice/`` (the folder's name, whatever the notebooks inside are called), always.
    A file named on the command line is its stem's student, or its folder's when it is
    named after the assignment (``alice/01-bayes.ipynb``).  Symbolic links (to notebooks
    or folders) are candidates that will be refused, never followed.  Returns the
    candidates and problem lines (folders without a notebook).
    """
    found: list[Candidate] = []
    problems: list[str] = []
    for path in map(Path, paths):
        if path.is_dir():  # the instructor's own argument may be a link; nothing below it
            root = path
            try:
                entries = sorted(os.scandir(root), key=lambda e: e.name)
            except OSError as exc:
                raise GradingError(f"cannot list {display(str(path))}: {exc.strerror}") from None
            for entry in entries:
                name = entry.name
                if name in SKIPPED:
                    continue
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                    is_link = entry.is_symlink()
                    link_to_dir = is_link and entry.is_dir(follow_symlinks=True)
                except OSError:
                    is_dir = is_link = link_to_dir = False
                if is_dir:
                    inside = _notebooks_in(Path(entry.path))
                    if not inside:
                        problems.append(f"{display(name)}: no notebook in this folder")
                    found += [Candidate(name, root, (name, *parts)) for parts, _ in inside]
                elif name.endswith(".ipynb"):
                    student = name[:-len(".ipynb")]
                    if student == assignment:
                        student = path.resolve().name
                    found.append(Candidate(student, root, (name,)))
                elif link_to_dir:
                    found.append(Candidate(name, root, (name,)))
        elif path.is_file() or os.path.lexists(path):
            student = path.stem
            if student == assignment and path.parent.name:
                student = path.parent.name
            found.append(Candidate(student, path.parent, (path.name,)))
        else:
            raise GradingError(f"{display(str(path))}: no such file or folder")
    if not found and not problems:
        raise GradingError("no notebooks to grade (no .ipynb file in the given folders)")
    return found, problems


def read_submission(candidate: Candidate, cap: int = MAX_NOTEBOOK_BYTES) -> bytes:
    """The bytes of a submission, opened without following any symbolic link below its
    root: a regular file on the root folder's device, at most ``cap`` bytes.  Raises
    :class:`Unreadable` with a fixed reason (never the file's content)."""
    fds = []
    try:
        try:
            root = os.open(candidate.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            raise Unreadable("unreadable") from None
        fds.append(root)
        device = os.fstat(root).st_dev
        *folders, name = candidate.parts
        where = root
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        for i, part in enumerate([*folders, name]):
            last = i == len(folders)
            try:
                fd = os.open(part, flags if last else flags | os.O_DIRECTORY, dir_fd=where)
            except OSError as exc:
                try:
                    link = stat.S_ISLNK(os.lstat(part, dir_fd=where).st_mode)
                except OSError:
                    link = False
                if link or exc.errno == errno.ELOOP:
                    raise Unreadable("a symbolic link") from None
                raise Unreadable("not a regular file" if exc.errno in (errno.ENXIO, errno.ENOTDIR)
                                 else "unreadable") from None
            fds.append(fd)
            where = fd
        info = os.fstat(where)
        if not stat.S_ISREG(info.st_mode):
            raise Unreadable("not a regular file")
        if info.st_dev != device:
            raise Unreadable("on another file system")
        if info.st_size > cap:
            raise Unreadable(f"larger than {cap} bytes")
        chunks, size = [], 0
        try:
            while size <= cap:
                chunk = os.read(where, min(1 << 20, cap + 1 - size))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
        except OSError:
            raise Unreadable("unreadable") from None
        if size > cap:
            raise Unreadable(f"larger than {cap} bytes")
        return b"".join(chunks)
    finally:
        for fd in fds:
            os.close(fd)


def notebook_from_bytes(data: bytes):
    """The notebook in a submission's bytes (read with :func:`read_notebook`'s bounds), or
    a :class:`GradingError` whose message names no path of the grader's."""
    with tempfile.TemporaryDirectory(prefix="lecturelib-submission-") as folder:
        path = Path(folder) / "submission.ipynb"
        path.write_bytes(data)
        try:
            return read_notebook(path)
        except GradingError as exc:
            raise GradingError(str(exc).replace(str(path), "the file")) from None


def feedback_folder(gradebook_path, assignment: str) -> Path:
    """Where an assignment's feedback files go unless told otherwise: beside the gradebook,
    in ``feedback/ASSIGNMENT``."""
    return Path(gradebook_path).parent / "feedback" / assignment


def feedback_path(folder: Path, student: str) -> Path:
    """The feedback file of a student: the (safe, checked) name itself, so one per student."""
    if not NAME.match(student):
        raise GradingError(f"unsafe student name {display(student)}")
    return folder / f"{student}.md"

"""Grading a whole class: many submissions, in parallel, into the gradebook.

The solution notebook runs once (its answers are cached by content hash, in memory and in
the gradebook); then every submission is graded on its own, each in its own sandbox, by a
pool of ``jobs`` workers on this machine or by the workers of a Dask distributed cluster.
A submission that cannot be read, or that breaks everything it can, gets a zero row with
the reason and never stops or affects the others.  Unchanged submissions (same notebook
hash as the gradebook's row) are skipped unless ``force``.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import errno
import hashlib
import ipaddress
import os
import re
import stat
import sys
import tempfile
from pathlib import Path

from .gradebook import Gradebook
from .notebook import (MAX_NOTEBOOK_BYTES, GradingError, code_sources, load_questions,
                       notebook_assignment, read_notebook)
from .report import GradeReport, QuestionResult, plain, write_atomic
from .runner import (hidden_exprs, reference_run, report_for_run, run_from_outcome, run_job,
                     solution_for)
from .sandbox import Limits, require_sandbox


GRADER_VERSION = "2"  # raise when grading changes: every gradebook row is graded again
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


@dataclasses.dataclass(frozen=True)
class Submission:
    student: str
    path: Path
    data: bytes
    problem: str = ""  # "could not be read: ..." when the file was refused

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest() if not self.problem else "-"


@dataclasses.dataclass
class BatchSummary:
    graded: list[tuple[str, GradeReport]]
    unchanged: list[str]
    problems: list[str] = dataclasses.field(default_factory=list)  # escaped one-liners
    notices: list[str] = dataclasses.field(default_factory=list)   # rows replaced, ...
    regrading: list[str] = dataclasses.field(default_factory=list)  # "solution changed: ..."


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


def failed_report(label: str, assignment: str, questions, reason: str) -> GradeReport:
    results = [QuestionResult(q.id, 0.0, q.points, plain(reason), kind=q.kind) for q in questions]
    return GradeReport(label, assignment, results, [], [plain(reason, 300)])


TIMEOUT_WORDS = ("ran longer than", "time limit")


def problem_of(report: GradeReport, nb, assignment: str) -> str:
    """Why a graded notebook was not graded normally ("" when it was): it says it belongs
    to another assignment, or a cell or the whole run hit a limit.  Only the grader's own
    reasons are looked at (a check's reason, which may quote the student, starts "check")."""
    claimed = notebook_assignment(nb)
    if claimed is not None and claimed != assignment:
        return f"wrong assignment: the notebook says {display(plain(claimed, 60))}"
    runs = [r for _, r in report.skipped_cells]
    runs += [q.reason for q in report.questions if q.reason != "ok" and q.kind != "written"
             and not q.reason.startswith("check ")]
    if any(word in r for r in runs for word in TIMEOUT_WORDS):
        return "timeout: " + plain(next(r for r in runs if any(w in r for w in TIMEOUT_WORDS)), 100)
    if runs and len(runs) == sum(q.kind != "written" for q in report.questions) and len(set(runs)) == 1:
        return "did not run: " + plain(runs[0], 100)
    return ""


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


def feedback_path(folder: Path, student: str) -> Path:
    """The feedback file of a student: the (safe, checked) name itself, so one per student."""
    if not NAME.match(student):
        raise GradingError(f"unsafe student name {display(student)}")
    return folder / f"{student}.md"


def scheduler_security(address: str, tls_ca=None, tls_cert=None, tls_key=None):
    """The ``distributed.Security`` to reach the Dask scheduler at ``address`` with.

    Off this machine only mutual TLS is accepted: a ``tls://`` address and the three files
    (the certificate authority that signed the cluster's certificates, and this client's
    own certificate and key); the scheduler and workers must be started with certificates
    of the same authority, and then refuse any client without one.  Plain ``tcp://`` is
    accepted only on a loopback address (``None`` is returned: no TLS).
    """
    from distributed.comm import parse_address, parse_host_port
    from distributed.security import Security

    try:
        scheme, location = parse_address(address)
        host = parse_host_port(location, default_port=8786)[0] if scheme in ("tcp", "tls") else ""
    except (ValueError, TypeError):
        raise GradingError(f"--scheduler: not a Dask address: {display(address)}") from None
    files = {"--tls-ca": tls_ca, "--tls-cert": tls_cert, "--tls-key": tls_key}
    if scheme == "tls":
        missing = [flag for flag, value in files.items() if not value]
        if missing:
            raise GradingError(f"--scheduler tls://... needs {', '.join(missing)} (mutual TLS: "
                               "the cluster's certificate authority, this client's certificate "
                               "and its key)")
        for flag, value in files.items():
            if not Path(value).is_file():
                raise GradingError(f"{flag}: no such file: {display(value)}")
        return Security(tls_ca_file=str(tls_ca), tls_client_cert=str(tls_cert),
                        tls_client_key=str(tls_key), require_encryption=True)
    if scheme == "tcp" and _is_loopback(host):
        if any(files.values()):
            raise GradingError("--tls-ca/--tls-cert/--tls-key need a tls:// scheduler address")
        return None
    raise GradingError(f"--scheduler {display(address)}: refused: off this machine the Dask "
                       "path must be tls:// with client certificates (--tls-ca, --tls-cert, "
                       "--tls-key); plain tcp:// is accepted on a loopback address only")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class _Executor:
    """Local threads (each job is a sandboxed subprocess) or a Dask distributed cluster."""

    def __init__(self, jobs: int, scheduler: str | None, security=None):
        self.client = None
        if scheduler:
            try:
                from distributed import Client
            except ImportError:
                raise GradingError("--scheduler needs the 'distributed' package") from None
            try:
                self.client = Client(scheduler, timeout=30, security=security)
            except (OSError, TimeoutError, ValueError) as exc:
                raise GradingError(f"cannot reach the Dask scheduler at {display(scheduler)}: "
                                   f"{plain(str(exc), 200)}") from None
        else:
            self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=jobs)

    def submit(self, fn, *args, **kwargs):
        if self.client is not None:
            return self.client.submit(fn, *args, pure=False, **kwargs)
        return self.pool.submit(fn, *args, **kwargs)

    def as_completed(self, futures):
        if self.client is not None:
            from distributed import as_completed

            return as_completed(futures)
        return concurrent.futures.as_completed(futures)

    def close(self):
        if self.client is not None:
            self.client.close()
        else:
            self.pool.shutdown(wait=True, cancel_futures=True)


def select(candidates: list[Candidate], assignment: str):
    """One notebook per student, and problem lines for the rest: refused names, extra
    notebooks.  A student's notebook is the one named after the assignment, else the
    shallowest, else the first by name; the others are reported, never graded."""
    chosen: dict[str, Candidate] = {}
    problems: list[str] = []
    by_student: dict[str, list[Candidate]] = {}
    for c in candidates:
        by_student.setdefault(c.student, []).append(c)
    for student, mine in sorted(by_student.items()):
        if not NAME.match(student):
            problems.append(f"{display(student)}: refused: not a safe student name ({NAME_RULE}); "
                            "rename it to grade it")
            continue
        mine.sort(key=lambda c: (c.parts[-1] != f"{assignment}.ipynb", len(c.parts), c.parts))
        chosen[student] = mine[0]
        problems += [f"{student}: extra notebook, not graded: {display(str(c.path))} "
                     f"(graded: {display(str(mine[0].path))})" for c in mine[1:]]
    return chosen, problems


def _same_path(stored: str, new: str) -> bool:
    """Whether a gradebook row's path is the new submission's (rows written before paths
    were stored absolute hold the path as given, relative to an unknown folder)."""
    if stored == new:
        return True
    return not os.path.isabs(stored) and new.endswith(os.sep + os.path.normpath(stored))


def grader_key(solution_data: bytes) -> str:
    """What a gradebook row was graded with: the solution notebook's hash, the grader."""
    return f"{hashlib.sha256(solution_data).hexdigest()}/{GRADER_VERSION}"


def _why_regraded(old: str, new: str) -> str:
    if not old or "/" not in old:
        return "graded by an older grader"
    if old.split("/")[0] != new.split("/")[0]:
        return "solution changed"
    return "grader changed"


def grade_batch(paths, *, assignment: str, gradebook: Gradebook, solutions_dir=None,
                limits: Limits | None = None, jobs: int | None = None, force: bool = False,
                feedback_dir=None, scheduler: str | None = None, tls=(None, None, None),
                sandbox: bool = True, use_reference_cache: bool = True,
                progress: bool = True) -> BatchSummary:
    """Grade every notebook in ``paths`` (files or folders) into ``gradebook``.

    A row is graded again when its notebook, the solution notebook or the grader changed.
    The summary lists every submission that was not graded normally (``problems``: escaped
    one-liners, also for unchanged rows), and rows replaced from another file (``notices``).

    The solution runs once, here; each submission's code then runs in its own sandbox on
    a local thread or a Dask worker (``scheduler``; ``tls``: the certificate authority,
    certificate and key files of :func:`scheduler_security`), which is given the code
    and the check expressions only and returns the raw answers; they are parsed and
    compared with the solution's in this process.
    """
    limits = limits or Limits()
    jobs = (os.cpu_count() or 1) if jobs is None else jobs
    if jobs < 1:
        raise GradingError(f"--jobs must be at least 1, got {jobs}")
    security = scheduler_security(scheduler, *tls) if scheduler else None
    solution_path = solution_for(assignment, solutions_dir)
    questions = load_questions(read_notebook(solution_path))
    gradebook.store_questions(assignment, questions)  # for the grading app
    key = grader_key(solution_path.read_bytes())
    candidates, problems = find_candidates(paths, assignment)
    chosen, more = select(candidates, assignment)
    problems += more
    submissions = []
    for student, c in chosen.items():
        try:
            submissions.append(Submission(student, c.path, read_submission(c)))
        except Unreadable as exc:
            submissions.append(Submission(student, c.path, b"", f"could not be read: {exc}"))
    todo, unchanged, regrading = [], [], {}
    for s in submissions:
        row = gradebook.submission(assignment, s.student)
        if row is None or force or s.problem or row["sha256"] != s.sha256:
            todo.append(s)
        elif row["grader"] != key:
            todo.append(s)
            why = _why_regraded(row["grader"], key)
            regrading[why] = regrading.get(why, 0) + 1
        else:
            unchanged.append(s.student)
            if row["problem"]:
                problems.append(f"{s.student}: {plain(row['problem'], 200)} (unchanged)")
    if sandbox and any(not s.problem for s in todo):
        require_sandbox()
    reference = None
    if any(not s.problem for s in todo):
        reference = reference_run(solution_path, questions, limits, sandbox=sandbox,
                                  use_cache=use_reference_cache,
                                  store=gradebook if use_reference_cache else None)
    feedback_dir = Path(feedback_dir) if feedback_dir else gradebook.path.parent / "feedback" / assignment
    if todo:
        try:
            feedback_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise GradingError(f"cannot create the feedback folder {display(str(feedback_dir))}: "
                               f"{exc.strerror}") from None
    graded: list[tuple[str, GradeReport]] = []
    notices: list[str] = []

    def record(s: Submission, report: GradeReport, problem: str):
        row = gradebook.submission(assignment, s.student)
        if row is not None and not _same_path(row["path"], report.notebook):
            notices.append(f"{s.student}: replaced the gradebook row graded from "
                           f"{display(row['path'])} with {display(report.notebook)}")
        gradebook.record(s.student, s.sha256, report, grader=key, problem=problem)
        write_atomic(feedback_path(feedback_dir, s.student), report.feedback(s.student))
        graded.append((s.student, report))
        if problem:
            problems.append(f"{s.student}: {plain(problem, 200)}")

    for s in todo:
        if s.problem:
            record(s, failed_report(os.path.abspath(s.path), assignment, questions, s.problem),
                   s.problem)
    runnable = []
    for s in todo:
        if s.problem:
            continue
        try:
            runnable.append((s, notebook_from_bytes(s.data)))
        except GradingError as exc:
            reason = f"could not be graded: {exc}"
            record(s, failed_report(os.path.abspath(s.path), assignment, questions, reason),
                   "malformed: " + plain(str(exc), 100))
    exprs = hidden_exprs(questions)
    executor = _Executor(jobs, scheduler, security) if runnable else None
    bar = _progress(len(runnable), progress)
    try:
        futures = {executor.submit(run_job, code_sources(nb), exprs, limits, sandbox=sandbox): (s, nb)
                   for s, nb in runnable}
        for future in (executor.as_completed(list(futures)) if futures else []):
            s, nb = futures[future]
            label = os.path.abspath(s.path)
            try:
                outcome = future.result()
                run = run_from_outcome(outcome, exprs, len(code_sources(nb)), limits)
                report = report_for_run(nb, label, assignment, questions, reference, run,
                                        sandbox=sandbox)
                problem = problem_of(report, nb, assignment)
            except GradingError as exc:
                problem = plain(f"could not be graded: {exc}", 120)
                report = failed_report(label, assignment, questions, problem)
            except Exception as exc:  # a worker lost: this submission only
                problem = f"could not be graded: {type(exc).__name__}"
                report = failed_report(label, assignment, questions, problem)
            record(s, report, problem)
            bar.update(1)
    finally:
        bar.close()
        if executor is not None:
            executor.close()
    return BatchSummary(sorted(graded, key=lambda item: item[0]), unchanged,
                        sorted(problems), notices,
                        [f"{why}: regrading {n}" for why, n in sorted(regrading.items())])


def _progress(total: int, enabled: bool):
    from tqdm import tqdm

    return tqdm(total=total, desc="grading", unit="notebook", file=sys.stderr,
                disable=not enabled or total == 0, leave=False)

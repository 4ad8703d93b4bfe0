"""Grading a whole class: many submissions, in parallel, into the gradebook.

The solution notebook runs once (its answers are cached by content hash, in memory and in
the gradebook); then every submission is graded on its own, each in its own sandbox, by a
pool of ``jobs`` workers on this machine or by the workers of a Dask distributed cluster.
A submission that cannot be read, or that breaks everything it can, gets a zero row with
the reason and never stops or affects the others.  Unchanged submissions (same notebook
hash as the gradebook's row) are skipped unless ``force``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import sys
from pathlib import Path

from ..autograde.grade import Grader
from ..autograde.job import run_job
from ..autograde.sandbox import Limits, require_sandbox
from ..core.notebook import GradingError, notebook_assignment
from ..core.report import GradeReport, QuestionResult, plain, write_atomic
from ..core.submissions import (NAME, NAME_RULE, Candidate, Unreadable, display, feedback_folder,
                               feedback_path, find_candidates, notebook_from_bytes, read_submission)
from .store import Gradebook
from .workers import Executor, scheduler_security


GRADER_VERSION = "3"  # raise when grading changes: every gradebook row is graded again


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
    grader = Grader(assignment, solutions_dir=solutions_dir, limits=limits, sandbox=sandbox)
    questions = grader.questions
    gradebook.store_questions(assignment, questions)  # for the grading app
    key = grader_key(grader.solution_path.read_bytes())
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
    if any(not s.problem for s in todo):
        grader.reference(use_cache=use_reference_cache,
                         store=gradebook if use_reference_cache else None)
    feedback_dir = Path(feedback_dir) if feedback_dir else feedback_folder(gradebook.path, assignment)
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
    executor = Executor(jobs, scheduler, security) if runnable else None
    bar = _progress(len(runnable), progress)
    try:
        futures = {executor.submit(run_job, *grader.job(nb), sandbox=sandbox): (s, nb)
                   for s, nb in runnable}
        for future in (executor.as_completed(list(futures)) if futures else []):
            s, nb = futures[future]
            label = os.path.abspath(s.path)
            try:
                report = grader.report(nb, label, future.result())
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

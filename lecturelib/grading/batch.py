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
import hashlib
import os
import re
import sys
import tempfile
from pathlib import Path

from .gradebook import Gradebook
from .notebook import GradingError, load_questions, read_notebook
from .report import GradeReport, QuestionResult, plain, write_atomic
from .runner import Reference, grade_notebook, reference_run, solution_for
from .sandbox import Limits, require_sandbox


@dataclasses.dataclass(frozen=True)
class Submission:
    student: str
    path: Path
    data: bytes

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


@dataclasses.dataclass
class BatchSummary:
    graded: list[tuple[str, GradeReport]]
    unchanged: list[str]


def find_notebooks(paths) -> list[Path]:
    """Notebook files named on the command line, folders searched recursively."""
    found: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            found += sorted(p for p in path.rglob("*.ipynb")
                            if ".ipynb_checkpoints" not in p.parts and p.is_file())
        elif path.is_file():
            found.append(path)
        else:
            raise GradingError(f"{path}: no such file or folder")
    if not found:
        raise GradingError("no notebooks to grade (no .ipynb file in the given folders)")
    return found


def student_names(paths: list[Path], assignment: str) -> list[str]:
    """A name per submission: the file name (``alice.ipynb``), or the folder's name when
    the file is named after the assignment (``alice/01-bayes.ipynb``); the relative path
    where two would clash."""
    names = [p.parent.name if p.stem == assignment and p.parent.name else p.stem for p in paths]
    clashes = {n for n in names if names.count(n) > 1}
    if clashes:
        root = Path(os.path.commonpath([str(p.resolve().parent) for p in paths]))
        names = [str(p.resolve().relative_to(root).with_suffix("")) if n in clashes else n
                 for p, n in zip(paths, names)]
    if len(set(names)) != len(names):
        raise GradingError("two submissions have the same name: " + ", ".join(sorted(clashes)))
    return names


def failed_report(label: str, assignment: str, questions, reason: str) -> GradeReport:
    results = [QuestionResult(q.id, 0.0, q.points, plain(reason)) for q in questions]
    return GradeReport(label, assignment, results, [], [plain(reason, 300)])


def grade_submission(data: bytes, label: str, assignment: str, questions,
                     reference: Reference | Path, limits: Limits, sandbox: bool = True) -> GradeReport:
    """Grade one notebook given as bytes (what a local or a Dask worker runs).

    ``reference`` is the solution's answers, or the solution notebook's path to run it
    afresh for this submission (no reference cache).
    """
    if isinstance(reference, Path):
        reference = reference_run(reference, questions, limits, sandbox=sandbox, use_cache=False)
    with tempfile.TemporaryDirectory(prefix="lecturelib-submission-") as folder:
        path = Path(folder) / "submission.ipynb"
        path.write_bytes(data)
        try:
            nb = read_notebook(path)
        except GradingError as exc:
            return failed_report(label, assignment, questions,
                                 "could not be graded: " + str(exc).replace(str(path), "the file"))
    try:
        return grade_notebook(nb, label, assignment, questions, reference, limits, sandbox=sandbox)
    except GradingError as exc:
        return failed_report(label, assignment, questions, f"could not be graded: {exc}")


def feedback_path(folder: Path, student: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", student).strip("._") or "student"
    return folder / f"{safe}.md"


class _Executor:
    """Local threads (each job is a sandboxed subprocess) or a Dask distributed cluster."""

    def __init__(self, jobs: int, scheduler: str | None):
        self.client = None
        if scheduler:
            try:
                from distributed import Client
            except ImportError:
                raise GradingError("--scheduler needs the 'distributed' package") from None
            try:
                self.client = Client(scheduler, timeout=30)
            except (OSError, TimeoutError, ValueError) as exc:
                raise GradingError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
        else:
            self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=jobs)

    def submit(self, fn, *args):
        if self.client is not None:
            return self.client.submit(fn, *args, pure=False)
        return self.pool.submit(fn, *args)

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


def grade_batch(paths, *, assignment: str, gradebook: Gradebook, solutions_dir=None,
                limits: Limits | None = None, jobs: int | None = None, force: bool = False,
                feedback_dir=None, scheduler: str | None = None, sandbox: bool = True,
                use_reference_cache: bool = True, progress: bool = True) -> BatchSummary:
    """Grade every notebook in ``paths`` (files or folders) into ``gradebook``."""
    limits = limits or Limits()
    jobs = (os.cpu_count() or 1) if jobs is None else jobs
    if jobs < 1:
        raise GradingError(f"--jobs must be at least 1, got {jobs}")
    solution_path = solution_for(assignment, solutions_dir)
    questions = load_questions(read_notebook(solution_path))
    files = find_notebooks(paths)
    submissions = [Submission(name, p, p.read_bytes())
                   for name, p in zip(student_names(files, assignment), files)]
    todo = [s for s in submissions if force or gradebook.graded_hash(assignment, s.student) != s.sha256]
    unchanged = [s.student for s in submissions if s not in todo]
    if sandbox:
        require_sandbox()
    reference = None
    if todo and use_reference_cache:
        reference = reference_run(solution_path, questions, limits, sandbox=sandbox,
                                  use_cache=use_reference_cache, store=gradebook)
    feedback_dir = Path(feedback_dir) if feedback_dir else gradebook.path.parent / "feedback" / assignment
    if todo:
        feedback_dir.mkdir(parents=True, exist_ok=True)
    graded: list[tuple[str, GradeReport]] = []
    executor = _Executor(jobs, scheduler)
    bar = _progress(len(todo), progress)
    try:
        futures = {}
        for s in todo:
            futures[executor.submit(grade_submission, s.data, str(s.path), assignment, questions,
                                    reference or solution_path, limits, sandbox)] = s
        for future in executor.as_completed(list(futures)):
            s = futures[future]
            try:
                report = future.result()
            except Exception as exc:  # a worker lost: this submission only
                report = failed_report(str(s.path), assignment, questions,
                                       f"could not be graded: {type(exc).__name__}")
            gradebook.record(s.student, s.sha256, report)
            write_atomic(feedback_path(feedback_dir, s.student), report.feedback(s.student))
            graded.append((s.student, report))
            bar.update(1)
    finally:
        bar.close()
        executor.close()
    return BatchSummary(sorted(graded, key=lambda item: item[0]), unchanged)


def _progress(total: int, enabled: bool):
    from tqdm import tqdm

    return tqdm(total=total, desc="grading", unit="notebook", file=sys.stderr,
                disable=not enabled or total == 0, leave=False)

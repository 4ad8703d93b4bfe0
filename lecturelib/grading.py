"""Exercise generator and grader behind the ``lecturelib`` command.

One source per exercise set: ``solutions/NN-topic.ipynb``.  Each graded question is a
code cell tagged ``question:<id>`` whose metadata holds the grading spec::

    "grading": {"points": 2, "checks": ["expr", ...],
                "compare": "allclose", "rtol": 1e-6, "atol": 1e-9}

``lecturelib assign`` writes the student notebook: the lines between ``# BEGIN SOLUTION``
and ``# END SOLUTION`` become ``raise NotImplementedError``, markdown cells tagged
``solution`` become a prompt, outputs are cleared.  The result is a pure function of the
solution notebook, so a test can prove ``exercises/`` is in sync.

``lecturelib grade NOTEBOOK`` runs the student's notebook in a fresh kernel (its own
process, an empty working directory, a memory cap and a per-cell time limit), then
evaluates every check expression there and ships the values back as JSON.  The same is
done with the solution notebook.  The values are decoded and compared here, in the
grader's process, where no student code ever ran: redefining a checker, patching numpy
or printing a fake score inside the notebook changes nothing but the student's own
answers.  A cell that kills the kernel or runs past the time limit is skipped and the
notebook is run again without it; a check that does either fails that question alone.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import numpy as np

__all__ = [
    "GradingError",
    "Question",
    "QuestionResult",
    "GradeReport",
    "load_questions",
    "make_exercise",
    "assign",
    "grade",
    "main",
]

BEGIN = "# BEGIN SOLUTION"
END = "# END SOLUTION"
STUB = "raise NotImplementedError"
ANSWER_PROMPT = "*Write your answer here.*"
QUESTION_TAG = re.compile(r"^question:([A-Za-z0-9_.-]+)$")
ASSIGNMENT_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
MARKER = "@@lecturelib-answer@@"
COMPARISONS = ("allclose", "up_to_sign", "set")
MAX_PAYLOAD = 20_000_000  # characters of JSON accepted from one question


class GradingError(Exception):
    """A notebook that cannot be graded (not a notebook, bad spec, broken solution)."""


# --------------------------------------------------------------------------------------
# Reading notebooks and grading specs
# --------------------------------------------------------------------------------------


def read_notebook(path) -> nbformat.NotebookNode:
    """Read and validate a notebook, or raise :class:`GradingError` saying why not."""
    path = Path(path)
    if not path.is_file():
        raise GradingError(f"{path}: no such file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise GradingError(f"{path} is not a Jupyter notebook (not UTF-8 text)") from None
    try:
        nb = nbformat.reads(text, as_version=4)
    except Exception as exc:  # nbformat raises several unrelated types on bad input
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise GradingError(f"{path} is not a Jupyter notebook: {reason}") from None
    try:
        nbformat.validate(nb)
    except nbformat.ValidationError as exc:
        raise GradingError(f"{path} is not a valid notebook: {exc.message}") from None
    return nb


@dataclasses.dataclass(frozen=True)
class Question:
    """One graded question, read from a solution notebook's cell metadata."""

    id: str
    points: float
    checks: tuple[str, ...]
    compare: str = "allclose"
    rtol: float = 1e-6
    atol: float = 1e-9


def _question_id(cell) -> str | None:
    for tag in cell.get("metadata", {}).get("tags", []):
        match = QUESTION_TAG.match(str(tag))
        if match:
            return match.group(1)
    return None


def load_questions(nb) -> list[Question]:
    """The questions of a solution notebook, in notebook order.

    Raises
    ------
    GradingError
        If a question has no or a malformed ``grading`` spec, or an id is used twice.
    """
    questions: list[Question] = []
    for index, cell in enumerate(nb.cells):
        qid = _question_id(cell)
        if qid is None:
            continue
        spec = cell.get("metadata", {}).get("grading")
        where = f"cell {index} (question {qid})"
        if cell.cell_type != "code" or not isinstance(spec, dict):
            raise GradingError(f"{where}: a question cell must be a code cell with a 'grading' spec")
        points = spec.get("points")
        checks = spec.get("checks")
        compare = spec.get("compare", "allclose")
        if not isinstance(points, (int, float)) or isinstance(points, bool) or points <= 0:
            raise GradingError(f"{where}: 'points' must be a positive number, got {points!r}")
        if not isinstance(checks, list) or not checks or not all(isinstance(c, str) and c.strip() for c in checks):
            raise GradingError(f"{where}: 'checks' must be a non-empty list of expressions")
        for check in checks:
            try:
                compile(check, "<check>", "eval")
            except SyntaxError as exc:
                raise GradingError(f"{where}: check {check!r} is not an expression: {exc.msg}") from None
        if compare not in COMPARISONS:
            raise GradingError(f"{where}: 'compare' must be one of {COMPARISONS}, got {compare!r}")
        if any(q.id == qid for q in questions):
            raise GradingError(f"{where}: question id {qid!r} is used twice")
        questions.append(
            Question(qid, float(points), tuple(checks), compare,
                     float(spec.get("rtol", 1e-6)), float(spec.get("atol", 1e-9)))
        )
    if not questions:
        raise GradingError("the solution notebook has no graded question (no cell tagged question:<id>)")
    return questions


# --------------------------------------------------------------------------------------
# lecturelib assign
# --------------------------------------------------------------------------------------


def _strip_solution(source: str, where: str) -> str:
    out: list[str] = []
    inside = False
    for line in source.splitlines():
        stripped = line.strip()
        if stripped == BEGIN:
            if inside:
                raise GradingError(f"{where}: nested '{BEGIN}'")
            inside = True
            indent = line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}# YOUR CODE HERE")
            out.append(f"{indent}{STUB}")
        elif stripped == END:
            if not inside:
                raise GradingError(f"{where}: '{END}' without '{BEGIN}'")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise GradingError(f"{where}: '{BEGIN}' is never closed")
    return "\n".join(out)


def make_exercise(solution_nb, name: str) -> nbformat.NotebookNode:
    """Turn a solution notebook into the student's notebook (a new object)."""
    load_questions(solution_nb)  # refuse to publish a notebook whose spec is broken
    nb = nbformat.from_dict(json.loads(json.dumps(solution_nb)))
    for index, cell in enumerate(nb.cells):
        tags = cell.get("metadata", {}).get("tags", [])
        cell.metadata.pop("grading", None)
        cell.metadata.pop("execution", None)
        if cell.cell_type == "markdown" and "solution" in tags:
            cell.source = ANSWER_PROMPT
            cell.metadata["tags"] = [t for t in tags if t != "solution"] + ["answer"]
        elif cell.cell_type == "code":
            cell.source = _strip_solution(cell.source, f"cell {index}")
            cell.outputs = []
            cell.execution_count = None
    nb.metadata["lecturelib"] = {"assignment": name}
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


def _dumps(nb) -> str:
    return nbformat.writes(nb) + "\n"


def assign(solution_paths, output_dir="exercises", check=False) -> list[Path]:
    """Write (or with ``check=True`` verify) the student notebook of each solution.

    Returns the paths that were written, or, when checking, the paths that are stale.
    """
    output_dir = Path(output_dir)
    touched: list[Path] = []
    for solution_path in map(Path, solution_paths):
        nb = read_notebook(solution_path)
        text = _dumps(make_exercise(nb, solution_path.stem))
        target = output_dir / solution_path.name
        current = target.read_text(encoding="utf-8") if target.is_file() else None
        if current == text:
            continue
        touched.append(target)
        if not check:
            output_dir.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
    return touched


# --------------------------------------------------------------------------------------
# Running a notebook in a kernel and collecting answers
# --------------------------------------------------------------------------------------

# Executed in the notebook's kernel after the notebook ran.  Only data leaves the kernel.
_EXTRACT = r'''
def __lecturelib_extract(exprs, marker, namespace):
    import json, math, numbers
    import numpy

    def enc(v, depth=0):
        if depth > 50:
            raise TypeError("answer nested too deeply")
        if v is None or isinstance(v, (bool, str)):
            return v
        if isinstance(v, numpy.bool_):
            return bool(v)
        if isinstance(v, numbers.Integral):
            return int(v)
        if isinstance(v, numbers.Real):
            return float(v)
        if isinstance(v, numbers.Complex):
            return {"__complex__": [float(v.real), float(v.imag)]}
        if isinstance(v, numpy.ndarray):
            if v.dtype.kind in "biuf":
                return {"__ndarray__": v.astype(float).ravel().tolist(), "shape": list(v.shape),
                        "kind": v.dtype.kind}
            if v.dtype.kind == "c":
                return {"__ndarray__": v.real.astype(float).ravel().tolist(), "shape": list(v.shape),
                        "imag": v.imag.astype(float).ravel().tolist(), "kind": "c"}
            return {"__list__": [enc(x, depth + 1) for x in v.tolist()]}
        if isinstance(v, (set, frozenset)):
            return {"__set__": [enc(x, depth + 1) for x in v]}
        if isinstance(v, (list, tuple)):
            return {"__list__": [enc(x, depth + 1) for x in v]}
        if isinstance(v, dict):
            return {"__dict__": [[str(k), enc(x, depth + 1)] for k, x in v.items()]}
        raise TypeError(f"an answer of type {type(v).__name__} cannot be graded")

    results = []
    for expr in exprs:
        try:
            results.append({"ok": True, "value": enc(eval(expr, namespace))})
        except BaseException as exc:
            text = f"{type(exc).__name__}: {exc}".splitlines()[0] if str(exc) else type(exc).__name__
            results.append({"ok": False, "error": text[:300]})
    print(marker + json.dumps(results), flush=True)
'''


# Executed first in a student's kernel.  Audit hooks cannot be removed once installed,
# so the student's code can neither open the solution notebooks nor start a process.
_GUARD = r'''
def __lecturelib_install_guard(root):
    import os, sys
    blocked = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn",
               "os.fork", "os.forkpty", "pty.spawn")

    def guard(event, args):
        if event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
            path = os.path.realpath(os.fsdecode(args[0]))
            if path == root or path.startswith(root + os.sep):
                raise PermissionError("the solution notebooks cannot be read while grading")
        elif event in blocked:
            raise PermissionError(f"{event} is not allowed while grading")

    sys.addaudithook(guard)
__lecturelib_install_guard(PROTECTED)
del __lecturelib_install_guard
'''


@dataclasses.dataclass
class _Run:
    """Raw outcome of running one notebook: check values per question, or errors."""

    answers: dict[str, list[dict]]  # question id -> one result dict per check
    question_errors: dict[str, str]  # question id -> why no value could be read
    skipped_cells: list[tuple[int, str]]  # (code cell index, reason)


def _kernel_env() -> dict[str, str]:
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = "1"
    env["MPLBACKEND"] = "Agg"
    env["PYTHONHASHSEED"] = "0"
    return env


def _limit_memory(client, memory_mb: int | None) -> None:
    if not memory_mb:
        return
    try:
        import resource

        pid = client.km.provisioner.pid
        limit = int(memory_mb) * 1024 * 1024
        resource.prlimit(pid, resource.RLIMIT_AS, (limit, limit))
    except (ImportError, AttributeError, OSError, ValueError):
        pass  # no prlimit on this platform: the time limit still applies


def _read_payload(cell) -> list[dict] | None:
    text = "".join(o.get("text", "") for o in cell.outputs if o.get("output_type") == "stream"
                   and o.get("name") == "stdout")
    lines = [ln for ln in text.splitlines() if ln.startswith(MARKER)]
    if not lines or len(lines[-1]) > MAX_PAYLOAD:
        return None
    try:
        payload = json.loads(lines[-1][len(MARKER):])
    except ValueError:
        return None
    if not isinstance(payload, list) or not all(isinstance(r, dict) for r in payload):
        return None
    return payload


class _KernelRunner:
    """Runs code cells of one notebook in a fresh kernel, restarting when it must."""

    def __init__(self, cell_timeout, total_timeout, memory_mb, protected_dir=None):
        from nbclient import NotebookClient

        self.protected_dir = protected_dir
        self.cell_timeout = cell_timeout
        self.deadline = time.monotonic() + total_timeout
        self.memory_mb = memory_mb
        self.workdir = tempfile.TemporaryDirectory(prefix="lecturelib-grade-")
        self._client_class = NotebookClient
        self.client = None

    def _timeout(self):
        left = self.deadline - time.monotonic()
        if left <= 1:
            raise TimeoutError("the notebook ran past its total time limit")
        return max(1, min(self.cell_timeout, int(left)))

    def start(self):
        self.stop()
        scratch = nbformat.v4.new_notebook()
        self.client = self._client_class(
            scratch, kernel_name="python3", timeout=self.cell_timeout, allow_errors=True,
            interrupt_on_timeout=False, record_timing=False,
            resources={"metadata": {"path": self.workdir.name}},
        )
        self.client.km = self.client.create_kernel_manager()
        self.client.start_new_kernel(env=_kernel_env())
        self.client.start_new_kernel_client()
        _limit_memory(self.client, self.memory_mb)
        if self.protected_dir is not None:
            self.run(_GUARD.replace("PROTECTED", repr(str(Path(self.protected_dir).resolve()))))

    def stop(self):
        client, self.client = self.client, None
        if client is None:
            return
        from jupyter_core.utils import run_sync

        if client.kc is not None:
            client.kc.stop_channels()
        if client.km is not None:
            try:
                run_sync(client.km.shutdown_kernel)(now=True)
            except Exception:  # the kernel may already be gone
                pass

    def run(self, source: str):
        """Execute ``source``; return (cell, None) or (None, reason) if the kernel was lost."""
        from nbclient.exceptions import CellTimeoutError, DeadKernelError

        cell = nbformat.v4.new_code_cell(source)
        self.client.nb.cells = [cell]
        self.client.timeout = self._timeout()
        try:
            self.client.execute_cell(cell, 0)
        except CellTimeoutError:
            return None, f"ran longer than {self.client.timeout} s"
        except DeadKernelError:
            return None, "crashed the kernel"
        return cell, None

    def close(self):
        self.stop()
        self.workdir.cleanup()


def run_notebook(nb, questions, *, cell_timeout=60, total_timeout=600, memory_mb=4096,
                 protected_dir=None) -> _Run:
    """Run ``nb`` and evaluate every question's checks in its kernel.

    With ``protected_dir``, the kernel may not open files under it nor start processes.
    """
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    skipped: dict[int, str] = {}
    answers: dict[str, list[dict]] = {}
    errors: dict[str, str] = {}
    runner = _KernelRunner(cell_timeout, total_timeout, memory_mb, protected_dir)
    try:
        pending = list(questions)
        needs_run = True
        while pending:
            if needs_run:
                needs_run = False
                restart = True
                while restart:  # rerun from scratch without the cells that killed the kernel
                    restart = False
                    runner.start()
                    for index, source in enumerate(code):
                        if index in skipped:
                            continue
                        cell, lost = runner.run(source)
                        if lost:
                            skipped[index] = lost
                            restart = True
                            break
                runner.run(_EXTRACT)
            question = pending.pop(0)
            cell, lost = runner.run(
                f"__lecturelib_extract({list(question.checks)!r}, {MARKER!r}, globals())"
            )
            if lost:
                errors[question.id] = f"evaluating the answer {lost}"
                needs_run = True
                continue
            payload = _read_payload(cell)
            if payload is None or len(payload) != len(question.checks):
                errors[question.id] = "the answer could not be read back from the notebook"
            else:
                answers[question.id] = payload
    except TimeoutError as exc:
        for question in questions:
            if question.id not in answers and question.id not in errors:
                errors[question.id] = str(exc)
    finally:
        runner.close()
    return _Run(answers, errors, sorted(skipped.items()))


# --------------------------------------------------------------------------------------
# Decoding and comparing answers (grader process only)
# --------------------------------------------------------------------------------------


class _Mismatch(Exception):
    pass


def _decode(v):
    """JSON payload -> Python/numpy value.  Never evaluates or unpickles anything."""
    if isinstance(v, dict):
        if "__ndarray__" in v:
            shape = tuple(int(s) for s in v.get("shape", []))
            arr = np.asarray(v["__ndarray__"], dtype=float)
            if "imag" in v:
                arr = arr + 1j * np.asarray(v["imag"], dtype=float)
            if v.get("kind") == "b":
                arr = arr.astype(bool)
            return arr.reshape(shape)
        if "__complex__" in v:
            re_, im = v["__complex__"]
            return complex(float(re_), float(im))
        if "__list__" in v:
            return [_decode(x) for x in v["__list__"]]
        if "__set__" in v:
            return {"__set__": [_decode(x) for x in v["__set__"]]}
        if "__dict__" in v:
            return {str(k): _decode(x) for k, x in v["__dict__"]}
        raise _Mismatch("malformed answer")
    return v


def _numeric_array(v):
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return None
    if isinstance(v, dict):
        return None
    try:
        arr = np.asarray(v)
    except (ValueError, TypeError):
        return None
    if arr.dtype.kind not in "iufc" or arr.dtype == object:
        return None
    return arr


def _describe(v) -> str:
    if isinstance(v, np.ndarray):
        return f"array of shape {v.shape}"
    if isinstance(v, list):
        return f"list of length {len(v)}"
    return type(v).__name__


def _compare_allclose(got, want, rtol, atol, path="answer"):
    want_arr = _numeric_array(want)
    if want_arr is not None:
        got_arr = _numeric_array(got)
        if got_arr is None:
            raise _Mismatch(f"{path}: expected a number or numeric array, got {_describe(got)}")
        if got_arr.shape != want_arr.shape:
            raise _Mismatch(f"{path}: expected shape {want_arr.shape}, got {got_arr.shape}")
        if not np.allclose(got_arr, want_arr, rtol=rtol, atol=atol, equal_nan=True):
            with np.errstate(invalid="ignore"):
                diff = np.nanmax(np.abs(got_arr - want_arr)) if got_arr.size else 0.0
            raise _Mismatch(f"{path}: values differ (largest difference {float(diff):.3g})")
        return
    if isinstance(want, dict) and "__set__" not in want:
        if not isinstance(got, dict) or set(got) != set(want):
            raise _Mismatch(f"{path}: expected a dict with keys {sorted(want)}")
        for key in want:
            _compare_allclose(got[key], want[key], rtol, atol, f"{path}[{key!r}]")
        return
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            raise _Mismatch(f"{path}: expected a list of length {len(want)}, got {_describe(got)}")
        for i, (g, w) in enumerate(zip(got, want)):
            _compare_allclose(g, w, rtol, atol, f"{path}[{i}]")
        return
    if isinstance(want, dict):  # a set
        _compare_set(got, want, path)
        return
    if type(got) is not type(want) or got != want:
        raise _Mismatch(f"{path}: expected {want!r}, got {got!r}"[:200])


def _hashable(v):
    if isinstance(v, np.ndarray):
        return ("array", v.shape, tuple(v.ravel().tolist()))
    if isinstance(v, list):
        return tuple(_hashable(x) for x in v)
    if isinstance(v, dict):
        if "__set__" in v:
            return frozenset(_hashable(x) for x in v["__set__"])
        return tuple(sorted((k, _hashable(x)) for k, x in v.items()))
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def _compare_set(got, want, path="answer"):
    def members(v):
        if isinstance(v, dict) and "__set__" in v:
            return v["__set__"]
        if isinstance(v, list):
            return v
        if isinstance(v, np.ndarray):
            return list(v) if v.ndim else [v]
        raise _Mismatch(f"{path}: expected a collection, got {_describe(v)}")

    g = {_hashable(x) for x in members(got)}
    w = {_hashable(x) for x in members(want)}
    if g != w:
        raise _Mismatch(f"{path}: {len(w - g)} expected element(s) missing, {len(g - w)} unexpected")


def _compare_up_to_sign(got, want, rtol, atol, path="answer"):
    want_arr, got_arr = _numeric_array(want), _numeric_array(got)
    if want_arr is None or got_arr is None:
        raise _Mismatch(f"{path}: expected a numeric array, got {_describe(got)}")
    if got_arr.shape != want_arr.shape:
        raise _Mismatch(f"{path}: expected shape {want_arr.shape}, got {got_arr.shape}")
    g = got_arr.reshape(got_arr.shape[0], -1) if got_arr.ndim else got_arr.reshape(1, 1)
    w = want_arr.reshape(want_arr.shape[0], -1) if want_arr.ndim else want_arr.reshape(1, 1)
    for j in range(w.shape[1]):
        if not (np.allclose(g[:, j], w[:, j], rtol=rtol, atol=atol)
                or np.allclose(g[:, j], -w[:, j], rtol=rtol, atol=atol)):
            raise _Mismatch(f"{path}: column {j} differs even after flipping its sign")


def compare(got, want, how="allclose", rtol=1e-6, atol=1e-9) -> str | None:
    """``None`` if ``got`` matches ``want`` under ``how``, else a one-line reason."""
    try:
        got, want = _decode(got), _decode(want)
        if how == "set":
            _compare_set(got, want)
        elif how == "up_to_sign":
            _compare_up_to_sign(got, want, rtol, atol)
        else:
            _compare_allclose(got, want, rtol, atol)
    except _Mismatch as exc:
        return str(exc)
    except (TypeError, ValueError) as exc:
        return f"answer could not be compared: {exc}"[:200]
    return None


# --------------------------------------------------------------------------------------
# Grading
# --------------------------------------------------------------------------------------


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
        }

    def table(self) -> str:
        width = max([8] + [len(q.id) for q in self.questions])
        lines = [f"Grading {self.notebook} (assignment {self.assignment})", ""]
        lines.append(f"{'question':<{width}}  {'points':>6}  {'max':>4}  result")
        for q in self.questions:
            lines.append(f"{q.id:<{width}}  {_fmt(q.points):>6}  {_fmt(q.max):>4}  {q.reason}")
        lines.append(f"{'total':<{width}}  {_fmt(self.score):>6}  {_fmt(self.total):>4}")
        for index, reason in self.skipped_cells:
            lines.append(f"note: code cell {index} was skipped: it {reason}")
        return "\n".join(lines)


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


_REFERENCE_CACHE: dict[str, _Run] = {}


def _reference_run(solution_path: Path, questions, **limits) -> _Run:
    key = hashlib.sha256(solution_path.read_bytes()).hexdigest()
    if key not in _REFERENCE_CACHE:
        run = run_notebook(read_notebook(solution_path), questions, **limits)
        problems = [f"{qid}: {why}" for qid, why in run.question_errors.items()]
        for qid, results in run.answers.items():
            problems += [f"{qid}: check {i + 1}: {r.get('error')}" for i, r in enumerate(results)
                         if not r.get("ok")]
        if run.skipped_cells or problems:
            detail = "; ".join(problems + [f"cell {i} {r}" for i, r in run.skipped_cells])
            raise GradingError(f"the solution notebook {solution_path} does not run cleanly: {detail}")
        _REFERENCE_CACHE[key] = run
    return _REFERENCE_CACHE[key]


def default_solutions_dir() -> Path:
    env = os.environ.get("LECTURELIB_SOLUTIONS")
    if env:
        return Path(env)
    return Path(__file__).resolve().parent.parent / "solutions"


def _assignment_name(nb, path: Path, forced: str | None) -> str:
    name = forced or nb.metadata.get("lecturelib", {}).get("assignment") or path.stem
    if not isinstance(name, str) or not ASSIGNMENT_NAME.match(name):
        raise GradingError(f"{path}: invalid assignment name {name!r}")
    return name


def grade(notebook, *, solutions_dir=None, assignment=None, cell_timeout=60,
          total_timeout=600, memory_mb=4096) -> GradeReport:
    """Grade a student notebook against its solution notebook.

    The grading spec, the points and the reference answers come only from the solution
    notebook in ``solutions_dir`` (never from the student's file).
    """
    path = Path(notebook)
    nb = read_notebook(path)
    name = _assignment_name(nb, path, assignment)
    solutions_dir = Path(solutions_dir) if solutions_dir else default_solutions_dir()
    solution_path = solutions_dir / f"{name}.ipynb"
    if not solution_path.is_file():
        raise GradingError(f"no solution notebook for assignment {name!r} in {solutions_dir}")
    questions = load_questions(read_notebook(solution_path))
    limits = dict(cell_timeout=cell_timeout, total_timeout=total_timeout, memory_mb=memory_mb)
    reference = _reference_run(solution_path, questions, **limits)
    student = run_notebook(nb, questions, protected_dir=solutions_dir, **limits)

    results = []
    for q in questions:
        reason = student.question_errors.get(q.id)
        if reason is None:
            for i, (got, want) in enumerate(zip(student.answers[q.id], reference.answers[q.id])):
                label = f"check {i + 1} `{_short(q.checks[i])}`"
                if not got.get("ok"):
                    reason = f"{label} raised {got.get('error')}"
                    break
                mismatch = compare(got.get("value"), want["value"], q.compare, q.rtol, q.atol)
                if mismatch:
                    reason = f"{label}: {mismatch}"
                    break
        results.append(QuestionResult(q.id, 0.0 if reason else q.points, q.points, reason or "ok"))
    return GradeReport(str(path), name, results, student.skipped_cells)


def _short(expr: str, width: int = 40) -> str:
    expr = " ".join(expr.split())
    return expr if len(expr) <= width else expr[: width - 3] + "..."


# --------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------


def main(argv=None) -> int:
    """The ``lecturelib`` command line: ``lecturelib assign ...`` and ``lecturelib grade ...``.

    Returns the process exit status: 0 on success, 2 when a notebook cannot be graded or
    generated (the message says why).  Run ``lecturelib grade --help`` for the options.
    """
    parser = argparse.ArgumentParser(
        prog="lecturelib", description="Generate and grade the course's exercise notebooks."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p_assign = sub.add_parser("assign", help="write student notebooks from solution notebooks")
    p_assign.add_argument("solutions", nargs="*", help="solution notebooks (default: solutions/*.ipynb)")
    p_assign.add_argument("--output-dir", default="exercises")
    p_assign.add_argument("--check", action="store_true",
                          help="write nothing; exit 1 if any student notebook is out of date")

    p_grade = sub.add_parser("grade", help="grade a student notebook")
    p_grade.add_argument("notebook")
    p_grade.add_argument("--json", dest="json_path", help="also write the result as JSON to this file")
    p_grade.add_argument("--solutions", help="folder of solution notebooks (default: the course's solutions/)")
    p_grade.add_argument("--assignment", help="assignment name (default: read from the notebook)")
    p_grade.add_argument("--timeout", type=int, default=60, help="time limit per cell, seconds")
    p_grade.add_argument("--total-timeout", type=int, default=600, help="time limit per notebook run")
    p_grade.add_argument("--memory", type=int, default=4096, help="memory limit of the kernel, MiB")

    args = parser.parse_args(argv)
    try:
        if args.command == "assign":
            paths = args.solutions or sorted(str(p) for p in Path("solutions").glob("*.ipynb"))
            if not paths:
                raise GradingError("no solution notebooks given and none in solutions/")
            touched = assign(paths, args.output_dir, check=args.check)
            verb = "out of date" if args.check else "written"
            for path in touched:
                print(f"{path}: {verb}")
            if not touched:
                print("all student notebooks are up to date")
            return 1 if (args.check and touched) else 0
        report = grade(args.notebook, solutions_dir=args.solutions, assignment=args.assignment,
                       cell_timeout=args.timeout, total_timeout=args.total_timeout,
                       memory_mb=args.memory)
        print(report.table())
        if args.json_path:
            Path(args.json_path).write_text(json.dumps(report.as_dict(), indent=2) + "\n")
        return 0
    except GradingError as exc:
        print(f"lecturelib: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

"""Public checks: check your own answers to an exercise set, without the solutions.

Every graded question of an exercise notebook carries a few *public checks* written by the
instructor: assertions that reveal no answer (a type, a shape, probabilities that sum to
one, a value the question itself states).  In the exercise notebook::

    from lecturelib.checks import public_checks
    check = public_checks("01-bayes")
    ...
    check("q1")   # prints which public checks of question 1 hold, and why

``.venv/bin/lecturelib check NOTEBOOK`` runs the notebook and all of its public checks.
Public checks never count for the grade: the graded checks are different and hidden, and
grading (``lecturelib grade``) is the instructor's command.  See the page "How to use this
course".

The checks are stored in the exercise notebook's metadata (``lecturelib.public_checks``).
:func:`public_checks` reads them from the course's own copy of the exercise
(``exercises/<set>.ipynb`` in the course folder lecturelib is installed from), and only when
the course has no such notebook from the notebook beside the running kernel (Jupyter starts
a kernel in the notebook's folder).  They run in the student's own kernel: they are a
convenience for the student, not a barrier against anyone.
"""

from __future__ import annotations

import inspect
import json
import os
from dataclasses import dataclass
from pathlib import Path

from ._validation import InstanceOf, validate_params

__all__ = ["CheckResult", "PublicChecks", "public_checks"]

METADATA_KEY = "lecturelib"
MAX_NOTEBOOK_BYTES = 64 * 2**20
MAX_PROBLEM_CHARS = 160
COURSE = Path(__file__).resolve().parent.parent  # the course folder (``pip install -e .``)
_NAME = InstanceOf(str, "the exercise set's name, e.g. '01-bayes'", example="01-bayes")


@dataclass(frozen=True)
class CheckResult:
    """One public check after it ran: what it checks, and the problem if it failed.

    Examples
    --------
    >>> from lecturelib.checks import CheckResult
    >>> CheckResult("p is a probability").holds
    True
    >>> CheckResult("p is a probability", problem="does not hold").holds
    False
    """

    why: str
    problem: str = ""

    @property
    def holds(self) -> bool:
        return not self.problem


def _problem(expr: str, namespace: dict) -> str:
    """Evaluate one check; ``""`` when it holds, else a short account of what went wrong."""
    try:
        value = eval(expr, namespace)  # noqa: S307 - the student's own kernel and checks
    except Exception as exc:  # the student's code may raise anything
        message = str(exc).splitlines()[0] if str(exc) else ""
        return f"{type(exc).__name__}: {message}".rstrip(": ")[:MAX_PROBLEM_CHARS]
    try:
        return "" if bool(value) else "does not hold"
    except Exception as exc:  # an array with several values, an object refusing bool()
        return f"gave a value that is neither true nor false ({type(exc).__name__})"


def format_results(question: str, results: list[CheckResult]) -> str:
    """The text ``check()`` prints: a headline, then one line per public check."""
    held = sum(r.holds for r in results)
    lines = [f"{question}: {held} of {len(results)} public checks hold"]
    for r in results:
        lines.append(f"  pass  {r.why}" if r.holds else f"  FAIL  {r.why} ({r.problem})")
    return "\n".join(lines)


def _validated(checks) -> dict[str, list[dict]]:
    if not isinstance(checks, dict):
        raise TypeError(f"public checks must be a dict of question ids, got {type(checks).__name__}")
    for qid, items in checks.items():
        if not isinstance(items, list) or not all(
                isinstance(i, dict) and isinstance(i.get("expr"), str) and isinstance(i.get("why"), str)
                for i in items):
            raise ValueError(f"the public checks of {qid!r} must be a list of {{'expr', 'why'}} dicts")
    return checks


def _notebook_candidates(folder: Path, assignment: str) -> list[Path]:
    """Notebooks that may be this exercise: the one Jupyter names, its usual name, the rest."""
    found = []
    session = os.environ.get("JPY_SESSION_NAME", "")
    if session.endswith(".ipynb"):
        found.append(Path(session))
    found.append(folder / f"{assignment}.ipynb")
    found += sorted(folder.glob("*.ipynb"))
    return list(dict.fromkeys(p for p in found if p.is_file()))


def checks_in_metadata(metadata, assignment: str | None = None):
    """The public checks a notebook's metadata holds (for ``assignment``, if given), or None."""
    meta = metadata.get(METADATA_KEY) if isinstance(metadata, dict) else None
    if not isinstance(meta, dict) or (assignment is not None and meta.get("assignment") != assignment):
        return None
    return meta.get("public_checks")


def _stored_checks(path: Path, assignment: str):
    """The public checks stored in the notebook at ``path`` for ``assignment``, or None."""
    try:
        if path.stat().st_size > MAX_NOTEBOOK_BYTES:
            return None
        notebook = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return checks_in_metadata(notebook.get("metadata") if isinstance(notebook, dict) else None, assignment)


def _course_exercises() -> set[str]:
    """The file names of the course's own exercise notebooks."""
    return {p.name for p in (COURSE / "exercises").glob("*.ipynb")}


class PublicChecks:
    """The public checks of one exercise set, callable as ``check("q1")``.

    Parameters
    ----------
    assignment : str
        The exercise set, e.g. ``"01-bayes"``.
    checks : dict, optional
        ``{question id: [{"expr": ..., "why": ...}, ...]}``.  When omitted, they are read
        (at the first call) from the exercise notebook in ``folder``.
    folder : path-like, optional
        Where to look for the notebook; default the working directory at the first call.

    Examples
    --------
    >>> from lecturelib.checks import PublicChecks
    >>> q1 = [{"expr": "0 <= p <= 1", "why": "p is a probability"}]
    >>> check = PublicChecks("01-bayes", checks={"q1": q1})
    >>> p = 0.3
    >>> check("q1")
    q1: 1 of 1 public checks hold
      pass  p is a probability
    >>> p = 1.5
    >>> check("q1")
    q1: 0 of 1 public checks hold
      FAIL  p is a probability (does not hold)
    """

    @validate_params({
        "assignment": [_NAME],
        "checks": [InstanceOf(dict, "a dict {question: [checks]}", example={}), None],
        "folder": [InstanceOf((str, os.PathLike), "a folder path", example="."), None],
    })
    def __init__(self, assignment: str, checks: dict | None = None, folder=None):
        if not assignment:
            raise ValueError(f"assignment must be the exercise set's name, e.g. '01-bayes', got {assignment!r}")
        self.assignment = assignment
        self._checks = None if checks is None else _validated(checks)
        self._folder = None if folder is None else Path(folder)

    @property
    def checks(self) -> dict[str, list[dict]]:
        if self._checks is None and self._folder is None:
            own = COURSE / "exercises" / f"{self.assignment}.ipynb"
            stored = _stored_checks(own, self.assignment) if own.name in _course_exercises() else None
            self._checks = None if stored is None else _validated(stored)
        if self._checks is None:
            folder = self._folder or Path.cwd()
            for path in _notebook_candidates(folder, self.assignment):
                stored = _stored_checks(path, self.assignment)
                if stored is not None:
                    self._checks = _validated(stored)
                    break
            else:
                raise LookupError(
                    f"the public checks of {self.assignment} are stored in its exercise notebook, "
                    f"and no such notebook is in {folder}: start the notebook from its own folder, "
                    f"or run .venv/bin/lecturelib check NOTEBOOK from the course's root")
        return self._checks

    def run(self, question: str, namespace: dict) -> list[CheckResult]:
        """Evaluate the public checks of ``question`` in ``namespace`` (a module's globals)."""
        if question not in self.checks:
            known = ", ".join(self.checks) or "none"
            raise ValueError(f"{self.assignment} has no question {question!r} (its questions: {known})")
        return [CheckResult(item["why"], _problem(item["expr"], namespace))
                for item in self.checks[question]]

    def __call__(self, question: str) -> None:
        """Run the public checks of ``question`` in the caller's namespace and print them."""
        frame = inspect.currentframe()
        namespace = frame.f_back.f_globals if frame is not None and frame.f_back is not None else {}
        try:
            results = self.run(question, namespace)
        except LookupError as exc:
            print(f"check({question!r}): {exc}")
            return
        print(format_results(question, results))

    def __repr__(self) -> str:
        return f"PublicChecks({self.assignment!r})"


@validate_params({"assignment": [_NAME]})
def public_checks(assignment: str) -> PublicChecks:
    """The ``check`` function of an exercise notebook; see :class:`PublicChecks`.

    Examples
    --------
    >>> from lecturelib.checks import public_checks
    >>> check = public_checks("01-bayes")
    >>> check
    PublicChecks('01-bayes')
    """
    return PublicChecks(assignment)


def results_json(checks: PublicChecks, namespace: dict) -> str:
    """Every question's results as JSON, ``{qid: [[why, problem], ...]}`` (for ``lecturelib check``)."""
    return json.dumps({qid: [[r.why, r.problem] for r in checks.run(qid, namespace)]
                       for qid in checks.checks})

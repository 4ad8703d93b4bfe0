"""Reading notebooks safely, the grading spec of a solution notebook, and ``lecturelib assign``.

One source per exercise set: ``solutions/NN-topic.ipynb``.  Each graded question is a
code cell tagged ``question:<id>`` whose metadata holds the grading spec::

    "grading": {"points": 2,
                "checks": ["expr", {"expr": "f(Z)", "post": "value @ value.T"}, ...],
                "public": [{"expr": "f(Z).shape == (3,)", "why": "f returns one value per row"}],
                "compare": "allclose", "rtol": 1e-6, "atol": 1e-9}

A check is an expression evaluated in the sandboxed kernel after the notebook ran; the
plain data it returns is compared in the grader with the solution's.  A check with a
``post`` expression has that expression applied *in the grader* to the decoded data (the
name ``value`` and ``np`` are defined), so that operations such as ``@`` or ``np.sin`` are
computed by the grader, never by an object the student controls.  ``public`` checks are
the ones a student may see and run (``check("q1")``); they never count for the grade.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import re
from pathlib import Path

import nbformat

from .safejson import PayloadError, check_depth

BEGIN = "# BEGIN SOLUTION"
END = "# END SOLUTION"
STUB = "raise NotImplementedError"
ANSWER_PROMPT = "*Write your answer here.*"
QUESTION_TAG = re.compile(r"^question:([A-Za-z0-9_.-]+)$")
ASSIGNMENT_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
COMPARISONS = ("allclose", "up_to_sign", "set")
MAX_NOTEBOOK_BYTES = 64 * 2**20
MAX_JSON_DEPTH = 64


class GradingError(Exception):
    """A notebook that cannot be graded (not a notebook, bad spec, broken solution)."""


# --------------------------------------------------------------------------------------
# Reading notebooks
# --------------------------------------------------------------------------------------


def read_notebook(path) -> nbformat.NotebookNode:
    """Read and validate a notebook, or raise :class:`GradingError` saying why not.

    The file is treated as hostile: its size and nesting depth are bounded before it is
    parsed, and every cell's text must be valid Unicode.
    """
    path = Path(path)
    if not path.is_file():
        raise GradingError(f"{path}: no such file")
    if path.stat().st_size > MAX_NOTEBOOK_BYTES:
        raise GradingError(f"{path} is larger than {MAX_NOTEBOOK_BYTES // 2**20} MiB")
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise GradingError(f"{path} is not a Jupyter notebook (not UTF-8 text)") from None
    try:
        check_depth(text, MAX_JSON_DEPTH)
        nb = nbformat.reads(text, as_version=4)
    except PayloadError as exc:
        raise GradingError(f"{path} is not a Jupyter notebook: {exc}") from None
    except Exception as exc:  # nbformat raises several unrelated types on bad input
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise GradingError(f"{path} is not a Jupyter notebook: {reason[:200]}") from None
    try:
        nbformat.validate(nb)
    except nbformat.ValidationError as exc:
        raise GradingError(f"{path} is not a valid notebook: {str(exc.message)[:200]}") from None
    for index, cell in enumerate(nb.cells):
        try:
            cell.source.encode("utf-8")
        except UnicodeEncodeError:
            raise GradingError(f"{path}: cell {index} contains a character that is not valid "
                               "Unicode (a lone surrogate)") from None
    return nb


def cell_tags(cell) -> list[str]:
    """The string tags of a cell (anything else in a hostile file is ignored)."""
    metadata = cell.get("metadata")
    tags = metadata.get("tags") if isinstance(metadata, dict) else None
    return [t for t in tags if isinstance(t, str)] if isinstance(tags, list) else []


def notebook_assignment(nb) -> str | None:
    """The assignment a notebook says it belongs to, or ``None`` (never trusted for grading)."""
    meta = nb.get("metadata", {}).get("lecturelib")
    name = meta.get("assignment") if isinstance(meta, dict) else None
    return name if isinstance(name, str) else None


def check_assignment_name(name) -> str:
    if not isinstance(name, str) or not ASSIGNMENT_NAME.match(name):
        raise GradingError(f"invalid assignment name {name!r}: use letters, digits, '.', '_', '-'")
    return name


def code_sources(nb) -> list[str]:
    """The code cells' sources, in order."""
    return [c.source for c in nb.cells if c.cell_type == "code"]


# --------------------------------------------------------------------------------------
# The grading spec
# --------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Check:
    """One hidden check: ``expr`` runs in the sandbox; ``post`` (optional) in the grader."""

    expr: str
    post: str | None = None


@dataclasses.dataclass(frozen=True)
class PublicCheck:
    """A check a student may run: ``expr`` must be true; ``why`` says what it tests."""

    expr: str
    why: str


@dataclasses.dataclass(frozen=True)
class Question:
    """One graded question, read from a solution notebook's cell metadata."""

    id: str
    points: float
    checks: tuple[Check, ...]
    compare: str = "allclose"
    rtol: float = 1e-6
    atol: float = 1e-9
    public: tuple[PublicCheck, ...] = ()


def question_id(cell) -> str | None:
    for tag in cell_tags(cell):
        match = QUESTION_TAG.match(tag)
        if match:
            return match.group(1)
    return None


def _expression(text, where, what) -> str:
    if not isinstance(text, str) or not text.strip():
        raise GradingError(f"{where}: {what} must be a non-empty expression")
    try:
        compile(text, "<check>", "eval")
    except SyntaxError as exc:
        raise GradingError(f"{where}: {what} {text!r} is not an expression: {exc.msg}") from None
    return text


def _check(item, where) -> Check:
    if isinstance(item, str):
        return Check(_expression(item, where, "check"))
    if isinstance(item, dict) and set(item) <= {"expr", "post"} and "expr" in item:
        post = item.get("post")
        return Check(_expression(item["expr"], where, "check"),
                     None if post is None else _expression(post, where, "post"))
    raise GradingError(f"{where}: a check is an expression or {{'expr': ..., 'post': ...}}, "
                       f"got {item!r}"[:300])


def _public_check(item, where) -> PublicCheck:
    if not (isinstance(item, dict) and set(item) == {"expr", "why"}
            and isinstance(item["why"], str) and item["why"].strip()):
        raise GradingError(f"{where}: a public check is {{'expr': ..., 'why': ...}}, got {item!r}"[:300])
    return PublicCheck(_expression(item["expr"], where, "public check"), item["why"])


def _number(spec, key, default, where) -> float:
    value = spec.get(key, default)
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not value >= 0:
        raise GradingError(f"{where}: {key!r} must be a non-negative number, got {value!r}")
    return float(value)


def _as_notebook(nb, caller) -> nbformat.NotebookNode:
    """``nb`` as a valid nbformat-4 notebook, or a :class:`GradingError` saying what it is.

    A notebook object (``read_notebook``'s result) or its plain-dict form is accepted; a path
    is refused with a pointer to ``read_notebook``, which reads a file safely.
    """
    if isinstance(nb, (str, bytes, os.PathLike)):
        raise GradingError(f"{caller} takes a notebook, not a path: read the file first with "
                           f"read_notebook({os.fsdecode(nb)!r})")
    if not isinstance(nb, dict):
        raise GradingError(f"{caller} expected a notebook (nbformat.NotebookNode, e.g. from "
                           f"read_notebook), got {type(nb).__name__}")
    if nb.get("nbformat") != 4:
        raise GradingError(f"{caller}: not an nbformat-4 notebook (its 'nbformat' field is "
                           f"{str(nb.get('nbformat'))[:20]!r}; read notebooks with read_notebook)")
    if not isinstance(nb, nbformat.NotebookNode):
        nb = nbformat.from_dict(nb)
    try:
        # on a copy: nbformat's validator "repairs" (mutates) what it can, such as missing ids
        nbformat.validate(copy.deepcopy(nb))
    except nbformat.ValidationError as exc:
        raise GradingError(f"{caller}: not a valid nbformat-4 notebook: "
                           f"{str(exc.message)[:200]}") from None
    except Exception as exc:  # the validator fails with other types on malformed cells
        raise GradingError(f"{caller}: not a valid nbformat-4 notebook "
                           f"({type(exc).__name__} while validating it)") from None
    return nb


def load_questions(nb) -> list[Question]:
    """The questions of a solution notebook, in notebook order.

    ``nb`` is a notebook (see :func:`read_notebook`), or its plain-dict form.

    Raises
    ------
    GradingError
        If ``nb`` is not a valid notebook (a path, say), a question has no or a malformed
        ``grading`` spec, or an id is used twice.
    """
    return _questions(_as_notebook(nb, "load_questions"))


def _questions(nb: nbformat.NotebookNode) -> list[Question]:
    """``load_questions`` on a notebook already checked by ``_as_notebook``."""
    questions: list[Question] = []
    for index, cell in enumerate(nb.cells):
        qid = question_id(cell)
        if qid is None:
            continue
        spec = cell.get("metadata", {}).get("grading")
        where = f"cell {index} (question {qid})"
        if cell.cell_type != "code" or not isinstance(spec, dict):
            raise GradingError(f"{where}: a question cell must be a code cell with a 'grading' spec")
        points, checks = spec.get("points"), spec.get("checks")
        compare = spec.get("compare", "allclose")
        if not isinstance(points, (int, float)) or isinstance(points, bool) or not points > 0:
            raise GradingError(f"{where}: 'points' must be a positive number, got {points!r}")
        if not isinstance(checks, list) or not checks:
            raise GradingError(f"{where}: 'checks' must be a non-empty list of expressions")
        public = spec.get("public", [])
        if not isinstance(public, list):
            raise GradingError(f"{where}: 'public' must be a list of public checks")
        if compare not in COMPARISONS:
            raise GradingError(f"{where}: 'compare' must be one of {COMPARISONS}, got {compare!r}")
        if any(q.id == qid for q in questions):
            raise GradingError(f"{where}: question id {qid!r} is used twice")
        questions.append(Question(
            qid, float(points), tuple(_check(c, where) for c in checks), compare,
            _number(spec, "rtol", 1e-6, where), _number(spec, "atol", 1e-9, where),
            tuple(_public_check(p, where) for p in public)))
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


def public_checks_metadata(questions) -> dict:
    """The public checks of every question, as stored in the student notebook's metadata."""
    return {q.id: [dataclasses.asdict(p) for p in q.public] for q in questions}


def check_setup_source(name: str) -> str:
    """The code cell that defines ``check`` in a student notebook (after its first code cell)."""
    return (f"# check(\"q1\") runs question 1's public checks: they reveal no answer and\n"
            f"# do not count for the grade (see \"How to use this course\").\n"
            f"from lecturelib.checks import public_checks\n\n"
            f"check = public_checks({name!r})")


def _code_cell(source: str, tag: str, cell_id: str) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(source, metadata={"tags": [tag]})
    cell["id"] = re.sub(r"[^A-Za-z0-9-]", "-", cell_id)  # deterministic, so assign is reproducible
    return cell


def make_exercise(solution_nb, name: str) -> nbformat.NotebookNode:
    """Turn a solution notebook into the student's notebook (a new object).

    Solution code and solution text are removed, outputs cleared, and the hidden checks
    dropped; the public checks are kept in the notebook's metadata for ``check()``, which
    a cell after the first code cell defines and a cell after each question calls.
    """
    check_assignment_name(name)
    solution_nb = _as_notebook(solution_nb, "make_exercise")
    questions = _questions(solution_nb)  # refuse to publish a notebook whose spec is broken
    has_public = {q.id for q in questions if q.public}
    nb = nbformat.from_dict(json.loads(json.dumps(solution_nb)))
    cells, setup_pending = [], bool(has_public)
    for index, cell in enumerate(nb.cells):
        tags = cell_tags(cell)
        qid = question_id(cell)
        cell.metadata.pop("grading", None)
        cell.metadata.pop("execution", None)
        if cell.cell_type == "markdown" and "solution" in tags:
            cell.source = ANSWER_PROMPT
            cell.metadata["tags"] = [t for t in tags if t != "solution"] + ["answer"]
        elif cell.cell_type == "code":
            cell.source = _strip_solution(cell.source, f"cell {index}")
            cell.outputs = []
            cell.execution_count = None
        cells.append(cell)
        if cell.cell_type == "code" and setup_pending:
            cells.append(_code_cell(check_setup_source(name), "public-checks", f"{name}-check-setup"))
            setup_pending = False
        if cell.cell_type == "code" and qid in has_public:
            cells.append(_code_cell(f'check("{qid}")', f"check:{qid}", f"{name}-check-{qid}"))
    nb.cells = cells
    nb.metadata["lecturelib"] = {"assignment": name, "public_checks": public_checks_metadata(questions)}
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

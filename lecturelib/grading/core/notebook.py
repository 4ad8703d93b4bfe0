"""Reading notebooks safely, and the grading spec of a solution notebook.

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
A code question may give partial credit: ``"check_points": [1, 0.5, 0.5]``, one entry per
check, summing to ``points``.

A **written** question (a proof or a derivation, graded by people with a rubric) is a
Markdown cell tagged ``question:<id>`` whose text is the model answer::

    "grading": {"written": true, "points": 4,
                "rubric": [{"id": "a", "points": 2, "text": "..."},
                           {"id": "x1", "points": -1, "text": "a common mistake"}]}

``lecturelib assign`` (:mod:`.exercise`) turns it into the answer prompt (tagged
``question:<id>`` and ``answer``, with only ``written`` and ``points``); the grader never
scores it by a check (see :func:`written_answer`).
"""

from __future__ import annotations

import copy
import dataclasses
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
MAX_ANSWER_CHARS = 200_000  # a written answer (5 to 15 lines) kept for the grading app
MAX_CODE_CHARS = 50_000     # a code question's cell, kept to show beside its checks
MAX_RUBRIC_ITEMS = 40
RUBRIC_ID = re.compile(r"^[A-Za-z0-9_-]{1,16}$")


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


def code_cell_ids(nb) -> list[str]:
    """The code cells' ids, in order ("" for a cell without one)."""
    return [c.get("id") if isinstance(c.get("id"), str) else "" for c in nb.cells
            if c.cell_type == "code"]


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
class RubricItem:
    """One rubric item of a written question: positive points earn credit, negative ones
    are a common mistake."""

    id: str
    points: float
    text: str


@dataclasses.dataclass(frozen=True)
class Question:
    """One graded question, read from a solution notebook's cell metadata.

    ``kind`` is ``"auto"`` (scored by its checks; ``check_points`` gives partial credit,
    one entry per check) or ``"written"`` (graded by a person with ``rubric``;
    ``model_answer`` is the solution's text).  Neither the rubric nor the model answer
    ever reaches the student's notebook.
    """

    id: str
    points: float
    checks: tuple[Check, ...]
    compare: str = "allclose"
    rtol: float = 1e-6
    atol: float = 1e-9
    public: tuple[PublicCheck, ...] = ()
    kind: str = "auto"
    check_points: tuple[float, ...] | None = None
    rubric: tuple[RubricItem, ...] = ()
    model_answer: str = ""

    @property
    def written(self) -> bool:
        return self.kind == "written"


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


def as_notebook(nb, caller) -> nbformat.NotebookNode:
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
    return _questions(as_notebook(nb, "load_questions"))


def _positive(value, where, what) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not value > 0:
        raise GradingError(f"{where}: {what} must be a positive number, got {value!r}"[:300])
    return float(value)


def _rubric_item(item, where) -> RubricItem:
    if not (isinstance(item, dict) and set(item) == {"id", "points", "text"}):
        raise GradingError(f"{where}: a rubric item is {{'id': ..., 'points': ..., 'text': ...}}, "
                           f"got {item!r}"[:300])
    points = item["points"]
    if (not isinstance(item["id"], str) or not RUBRIC_ID.match(item["id"])
            or not isinstance(points, (int, float)) or isinstance(points, bool) or points == 0
            or not abs(points) < 1e6 or not isinstance(item["text"], str) or not item["text"].strip()):
        raise GradingError(f"{where}: rubric item {item!r} needs an id of letters, digits, '_' "
                           "or '-' (at most 16), non-zero points and a text"[:300])
    return RubricItem(item["id"], float(points), item["text"].strip())


def _written_question(qid, cell, spec, where) -> Question:
    """A written question of a solution notebook: its points, rubric and model answer."""
    if cell.cell_type != "markdown":
        raise GradingError(f"{where}: a written question is a Markdown cell")
    unknown = set(spec) - {"written", "points", "rubric"}
    if unknown:
        raise GradingError(f"{where}: a written question's spec has only 'written', 'points' and "
                           f"'rubric', not {sorted(unknown)!r}"[:300])
    points = _positive(spec.get("points"), where, "'points'")
    rubric = spec.get("rubric")
    if not isinstance(rubric, list) or not 0 < len(rubric) <= MAX_RUBRIC_ITEMS:
        raise GradingError(f"{where}: 'rubric' must be a list of 1 to {MAX_RUBRIC_ITEMS} items")
    items = tuple(_rubric_item(item, where) for item in rubric)
    if len({i.id for i in items}) != len(items):
        raise GradingError(f"{where}: a rubric item id is used twice")
    earned = sum(i.points for i in items if i.points > 0)
    if abs(earned - points) > 1e-9:
        raise GradingError(f"{where}: the positive rubric items sum to {earned:g}, "
                           f"not to the question's {points:g} points")
    if not cell.source.strip():
        raise GradingError(f"{where}: the written question's cell holds no model answer")
    return Question(qid, points, (), kind="written", rubric=items, model_answer=cell.source)


def _check_points(spec, checks, points, where) -> tuple[float, ...] | None:
    value = spec.get("check_points")
    if value is None:
        return None
    if not isinstance(value, list) or len(value) != len(checks):
        raise GradingError(f"{where}: 'check_points' must list one number per check "
                           f"({len(checks)})")
    shares = tuple(_positive(v, where, "each entry of 'check_points'") for v in value)
    if abs(sum(shares) - points) > 1e-9:
        raise GradingError(f"{where}: 'check_points' sum to {sum(shares):g}, not to the "
                           f"question's {points:g} points")
    return shares


def _questions(nb: nbformat.NotebookNode) -> list[Question]:
    """``load_questions`` on a notebook already checked by ``as_notebook``."""
    questions: list[Question] = []
    for index, cell in enumerate(nb.cells):
        qid = question_id(cell)
        if qid is None:
            continue
        spec = cell.get("metadata", {}).get("grading")
        where = f"cell {index} (question {qid})"
        if any(q.id == qid for q in questions):
            raise GradingError(f"{where}: question id {qid!r} is used twice")
        if isinstance(spec, dict) and spec.get("written") is True:
            questions.append(_written_question(qid, cell, spec, where))
            continue
        if cell.cell_type != "code" or not isinstance(spec, dict):
            raise GradingError(f"{where}: a question cell must be a code cell with a 'grading' spec "
                               "(or a Markdown cell with a written question's spec)")
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
        questions.append(Question(
            qid, float(points), tuple(_check(c, where) for c in checks), compare,
            _number(spec, "rtol", 1e-6, where), _number(spec, "atol", 1e-9, where),
            tuple(_public_check(p, where) for p in public),
            check_points=_check_points(spec, checks, points, where)))
    if not questions:
        raise GradingError("the solution notebook has no graded question (no cell tagged question:<id>)")
    return questions


# --------------------------------------------------------------------------------------
# Reading a submission's written answers and question cells
# --------------------------------------------------------------------------------------


def _source(cell) -> str:
    """A cell's source as text ("" when it is not text)."""
    source = cell.get("source", "")
    if isinstance(source, list):  # a hostile file may skip nbformat's joining
        source = "".join(s for s in source if isinstance(s, str))
    return source if isinstance(source, str) else ""


def _tagged_cells(nb, qid: str) -> list[tuple[str, str]]:
    """``(cell type, source)`` of every cell of ``nb`` tagged ``question:<qid>``, in order
    (a type other than code, markdown or raw is ``"other"``; a source that is not text, "")."""
    tag = f"question:{qid}"
    return [(cell.get("cell_type") if cell.get("cell_type") in ("code", "markdown", "raw") else "other",
             _source(cell)) for cell in nb.get("cells", []) if tag in cell_tags(cell)]


def question_cell_text(nb, qid: str, limit: int) -> tuple[str | None, bool]:
    """The text of the first cell of ``nb`` tagged ``question:<qid>`` (``None`` if there is
    none), cut at ``limit`` characters, and whether it was cut."""
    cells = _tagged_cells(nb, qid)
    if not cells:
        return None, False
    source = cells[0][1]
    return source[:limit], len(source) > limit


def question_code(nb, qid: str, limit: int) -> tuple[str | None, str]:
    """The code that ran for code question ``qid``, and a note for the person who reads it.

    The code is every *code* cell tagged ``question:<qid>``, in notebook order, separated by
    a blank line and cut at ``limit`` characters (``None`` when there is none).  Cells of
    another type tagged for the question never ran: a Markdown cell that looks like code
    could otherwise pass for the code that was graded.  The note ("" when there is nothing
    to say) counts them, and says when several code cells are shown together.
    """
    cells = _tagged_cells(nb, qid)
    code = [source for kind, source in cells if kind == "code"]
    notes = []
    if len(code) > 1:
        notes.append(f"{len(code)} code cells are tagged question:{qid}: all of them are shown, in order")
    others = [kind for kind, _ in cells if kind != "code"]
    if others:
        notes.append(f"also tagged question:{qid}, not code: {_counted(others)}; they did not run "
                     "and are not shown (check that the code shown is the answer)")
    text = "\n\n".join(code)
    return (text[:limit] if code else None), "; ".join(notes)


def _counted(kinds: list[str]) -> str:
    """``["markdown", "raw", "markdown"]`` as ``"2 markdown cells, 1 raw cell"``."""
    return ", ".join(f"{kinds.count(k)} {k} cell{'s' if kinds.count(k) > 1 else ''}"
                     for k in sorted(set(kinds)))


def written_answer_note(nb, qid: str) -> str:
    """What the grader should know about the cells tagged for written question ``qid``
    beyond the first (the answer): how many more there are, and of which types ("" if none)."""
    more = [kind for kind, _ in _tagged_cells(nb, qid)[1:]]
    if not more:
        return ""
    return (f"{len(more)} more cell{'s are' if len(more) > 1 else ' is'} tagged question:{qid} "
            f"({_counted(more)}), not shown: the answer is the first cell tagged for the question")


MAX_EXERCISE_CELLS = 10_000


def exercise_cell_ids(nb) -> frozenset[str] | None:
    """The ids of the cells ``lecturelib assign`` wrote into an exercise notebook, as its
    metadata lists them (``None`` when it lists none: a solution, or an older exercise)."""
    meta = nb.get("metadata", {}).get("lecturelib")
    ids = meta.get("cells") if isinstance(meta, dict) else None
    if not isinstance(ids, list) or len(ids) > MAX_EXERCISE_CELLS:
        return None
    return frozenset(i for i in ids if isinstance(i, str))


def cells_below_answer(nb, qid: str, exercise_ids) -> list[str]:
    """The sources of the Markdown cells a student added under the answer cell of ``qid``:
    those after it whose ids are not among ``exercise_ids`` (the exercise's own cells), up
    to the first cell of the exercise, code cell or tagged cell.  Without ``exercise_ids``
    (nothing says which cells are the exercise's), none."""
    cells = nb.get("cells", [])
    tag = f"question:{qid}"
    start = next((i for i, c in enumerate(cells) if tag in cell_tags(c)), None)
    found = []
    for cell in cells[start + 1:] if start is not None and exercise_ids else []:
        cell_id = cell.get("id")
        if (cell.get("cell_type") != "markdown" or cell_tags(cell) or not isinstance(cell_id, str)
                or cell_id in exercise_ids):
            break
        found.append(_source(cell))
    return found


def written_answer(nb, qid: str, exercise_ids=None) -> tuple[str, str]:
    """A student's answer to written question ``qid``: ``(state, text)``.

    The answer is the first cell tagged ``question:<qid>`` and the Markdown cells a
    student added under it (:func:`cells_below_answer`: those not among ``exercise_ids``,
    the ids of the exercise's own cells), the prompt left out.  ``state`` is
    ``"missing"`` (no cell tagged ``question:<qid>``), ``"empty"`` (blank or still the
    prompt), ``"present"``, ``"below"`` (present, at least partly in cells under the answer
    cell) or ``"cut"`` (longer than :data:`MAX_ANSWER_CHARS` characters: the text is its
    beginning).  The text is never run or interpreted here.
    """
    text, cut = question_cell_text(nb, qid, MAX_ANSWER_CHARS)
    if text is None:
        return "missing", ""
    own = "" if text.strip() == ANSWER_PROMPT.strip() else text
    below = [s.strip() for s in cells_below_answer(nb, qid, exercise_ids) if s.strip()]
    if not below:  # the answer cell alone, as it is (its hash is what a grade was given to)
        return ("empty", "") if not own.strip() else (("cut" if cut else "present"), own)
    answer = "\n\n".join([own.strip(), *below] if own.strip() else below)
    if cut or len(answer) > MAX_ANSWER_CHARS:
        return "cut", answer[:MAX_ANSWER_CHARS]
    return "below", answer

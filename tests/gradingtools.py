"""A small, self-contained exercise set used to test the grader (and its cheating variants)."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook


def question(qid, source, points, checks, **spec):
    cell = new_code_cell(source)
    cell.metadata["tags"] = [f"question:{qid}"]
    cell.metadata["grading"] = {"points": points, "checks": checks, **spec}
    return cell


def toy_solution() -> nbformat.NotebookNode:
    """Three questions: a value, a function probed on several inputs, an eigenvector."""
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [
        new_markdown_cell("# Toy exercise set"),
        new_code_cell("import numpy as np"),
        new_markdown_cell("**q1 (2 points).** The posterior of class 0 when P(x|h)=(0.9, 0.2), P(h)=(0.01, 0.99)."),
        question("q1", "lik = np.array([0.9, 0.2])\nprior = np.array([0.01, 0.99])\n"
                 "# BEGIN SOLUTION\np0 = lik[0] * prior[0] / (lik @ prior)\n# END SOLUTION\nprint(round(p0, 4))",
                 2, ["p0"]),
        new_markdown_cell("**q2 (3 points).** Write `normalise(v)` returning v / v.sum()."),
        question("q2", "def normalise(v):\n    v = np.asarray(v, dtype=float)\n"
                 "    # BEGIN SOLUTION\n    return v / v.sum()\n    # END SOLUTION",
                 3, ["normalise([1, 3])", "normalise(np.random.default_rng(0).random(5))"]),
        new_markdown_cell("**q3 (1 point).** The leading eigenvector of [[2, 1], [1, 2]]."),
        question("q3", "# BEGIN SOLUTION\nw, V = np.linalg.eigh(np.array([[2.0, 1.0], [1.0, 2.0]]))\n"
                 "top = V[:, -1]\n# END SOLUTION", 1, ["top"], compare="up_to_sign"),
        new_markdown_cell("Explain why the posterior is small.", metadata={"tags": ["solution"]}),
    ]
    return nb


def cell_with(cells, text):
    """Index of the first cell whose source contains ``text``."""
    return next(i for i, c in enumerate(cells) if text in c.source)


def break_q3(cells):
    """An honest mistake: the smallest eigenvector instead of the largest (q3 earns 0)."""
    i = cell_with(cells, "top = V[:, -1]")
    cells[i].source = cells[i].source.replace("V[:, -1]", "V[:, 0]")


def write_variant(folder, name, edit, solution=None):
    """A student notebook made from the toy solution by ``edit(cells)``; returns its path."""
    nb = solution if solution is not None else toy_solution()
    nb.metadata["lecturelib"] = {"assignment": "toy"}
    edit(nb.cells)
    path = folder / f"{name}.ipynb"
    nbformat.write(nb, path)
    return path


def course_of(root: Path, solution) -> Path:
    """``root`` made a small course: ``solutions/toy.ipynb`` (``solution``) and the student
    notebook ``lecturelib assign`` writes from it in ``exercises/``; returns ``root``."""
    from lecturelib import grading

    (root / "solutions").mkdir()
    nbformat.write(solution, root / "solutions" / "toy.ipynb")
    grading.assign([root / "solutions" / "toy.ipynb"], root / "exercises")
    return root


def everyday_and_full(values, everyday, ids=None) -> list:
    """``values`` as pytest parameters: those named in ``everyday`` run in make test, the
    others are marked ``full`` (make test-all) -- the variants of one attack or of one check
    that re-test the same mechanism."""
    import pytest

    ids = ids or [str(v) for v in values]
    unknown = set(everyday) - set(ids)
    assert not unknown, f"no such parameter: {sorted(unknown)}"
    return [pytest.param(v, id=i, marks=() if i in everyday else pytest.mark.full)
            for v, i in zip(values, ids)]


# Two sets stand for all twelve in the everyday tier (make test); make test-all grades
# every set.  01-bayes is the first a student meets, 07-pac the one the release tests use.
EVERYDAY_SETS = ("01-bayes", "07-pac")


def every_set(solutions: list[Path]) -> list:
    """``solutions`` as pytest parameters named by set; all but EVERYDAY_SETS marked full."""
    return everyday_and_full(solutions, EVERYDAY_SETS, ids=[p.stem for p in solutions])

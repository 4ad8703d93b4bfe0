"""Appendix A's worked KKT problem: the multipliers the text states, computed independently."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent


def f(x):
    return (x[0] - 2) ** 2 + (x[1] - 1) ** 2


def g1(x):
    return x[0] ** 2 - x[1]


def g2(x):
    return x[0] + x[1] - 2


def gradient(fun, x, h=1e-6):
    x = np.asarray(x, dtype=float)
    return np.array([(fun(x + h * e) - fun(x - h * e)) / (2 * h) for e in np.eye(len(x))])


def multipliers(x):
    """Solve grad f + mu1 grad g1 + mu2 grad g2 = 0 at a point where both constraints are active."""
    A = np.column_stack([gradient(g1, x), gradient(g2, x)])
    return np.linalg.solve(A, -gradient(f, x))


@pytest.mark.parametrize("point, values, wording", [
    ((1, 1), (Fraction(2, 3), Fraction(2, 3)), ["\\mu_1 = \\mu_2 = \\tfrac23"]),
    ((-2, 4), (Fraction(-14, 3), Fraction(-32, 3)), ["\\mu_1 = -\\tfrac{14}{3}", "\\mu_2 = -\\tfrac{32}{3}"]),
])
def test_worked_kkt_multipliers_are_the_ones_the_text_states(point, values, wording):
    assert g1(point) == 0 and g2(point) == 0, "both constraints are active"
    np.testing.assert_allclose(multipliers(point), [float(v) for v in values], atol=1e-6)
    cells = json.loads((ROOT / "chapters" / "A-optimisation.ipynb").read_text())["cells"]
    text = next(
        "".join(cell["source"]) for cell in cells
        if cell["cell_type"] == "markdown" and "### A worked problem" in "".join(cell["source"])
    )
    for words in wording:
        assert words in text

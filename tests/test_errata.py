"""Errata of issue 35, chapters 10-12: each corrected statement is checked against a
number computed here or stored in the chapter's outputs (which nbval reproduces).

The notebooks are read as JSON (no execution), so the whole file runs in well under a
second.
"""

import json
import math
import re
from functools import lru_cache
from pathlib import Path

import pytest
from scipy.special import comb

ROOT = Path(__file__).resolve().parents[1]


@lru_cache(maxsize=None)
def notebook(name):
    return json.loads((ROOT / "chapters" / name).read_text(encoding="utf-8"))


def markdown(name):
    """The chapter's Markdown, cells joined, lines joined with spaces."""
    cells = notebook(name)["cells"]
    text = "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return re.sub(r"\s+", " ", text)


def stored_output(name, needle):
    """The text output of the one code cell whose source contains ``needle``."""
    cells = [c for c in notebook(name)["cells"]
             if c["cell_type"] == "code" and needle in "".join(c["source"])]
    assert len(cells) == 1, f"{name}: {len(cells)} code cells contain {needle!r}"
    out = []
    for o in cells[0]["outputs"]:
        if o["output_type"] == "stream":
            out.append("".join(o["text"]))
        elif "text/plain" in o.get("data", {}):
            out.append("".join(o["data"]["text/plain"]))
    return "".join(out)


# ------------------------------------------------------------------ chapter 10

CH10 = "10-subspace.ipynb"


def sparsity_bound(residual, k, m, delta=0.05, R=1.0):
    """The compression bound with the exact union term ln C(m, k) and R^2."""
    union = math.log(comb(m, k, exact=True)) + math.log(2 / delta)
    return residual + R**2 * math.sqrt(union / (2 * (m - k)))


def test_ch10_sparsity_bound_has_ln_binomial_and_r_squared():
    text = markdown(CH10)
    display = re.search(r"\$\$([^$]*)\$\$ \(ch10-eq-sparsity\)", text)
    assert display, "the sparsity bound is a labelled display"
    assert r"\ln\binom mk" in display.group(1) and "R^2" in display.group(1)
    assert r"k\ln(m/k) + \ln(2/\delta)" not in display.group(1)
    out = stored_output(CH10, "gs_bound = subspace.gram_schmidt_bound")
    residual, bound = map(float, re.search(
        r"residual on non-pivots ([0-9.]+), on test [0-9.]+, bound ([0-9.]+)", out).groups())
    assert bound == pytest.approx(sparsity_bound(residual, 20, 400), abs=1e-3)
    lecture_form = residual + math.sqrt((20 * math.log(20) + math.log(40)) / 760)
    # the residual is printed to 3 decimals: both values are known to within 5e-4
    assert lecture_form == pytest.approx(0.665, abs=1e-3)
    assert bound == pytest.approx(0.701, abs=1e-3)
    # the summary and the correction box quote the corrected value
    assert text.count(f"{bound:.3f}") >= 2


def test_ch10_greedy_over_optimal_ratio_is_what_the_text_says():
    out = stored_output(CH10, "gs = IncompleteCholesky(tol=0.0, max_rank=60)")
    rows = re.findall(r"(\d+) directions: residual trace greedy ([0-9.]+), "
                      r"optimal ([0-9.]+), ratio ([0-9.]+)", out)
    ratios = {int(j): (float(g), float(o), float(r)) for j, g, o, r in rows}
    assert set(ratios) == {5, 20, 60}
    for greedy, optimal, ratio in ratios.values():
        assert greedy / optimal == pytest.approx(ratio, abs=0.01)
    text = markdown(CH10)
    assert "two to three times" not in text
    assert f"{ratios[5][2]:.2f} at 5 directions" in text
    assert f"{ratios[60][2]:.2f} at 60" in text

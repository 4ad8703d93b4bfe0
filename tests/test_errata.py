"""Errata of issue 35, chapters 10-12: each corrected statement is checked against a
number computed here or stored in the chapter's outputs (which nbval reproduces).

The notebooks are read as JSON (no execution), so the whole file runs in well under a
second.
"""

import ast
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


# ------------------------------------------------------------------ chapter 11

CH11 = "11-hpca.ipynb"


def risk_table(text):
    """{(pairs, eta): [risk at each d]} from the stored DataFrame's text form."""
    lines = text.strip().splitlines()
    ds = [int(v) for v in lines[0].split()[1:]]
    table, group = {}, None
    for line in lines[2:]:
        parts = line.split()
        try:
            float(parts[0])
        except ValueError:  # a new group label ("held-out", "training")
            group, parts = parts[0], parts[1:]
        table[group, float(parts[0])] = dict(zip(ds, map(float, parts[1:])))
    return table


def test_ch11_training_and_held_out_curves_are_described_by_their_values():
    table = risk_table(stored_output(CH11, 'pd.concat({"held-out"'))
    train, held = table["training", 1.0][40], table["held-out", 1.0][40]
    text = markdown(CH11)
    assert "nearly coincide" not in text
    assert (f"at $d = 40$ the training risk is {train:.2f} and the held-out risk "
            f"{held:.2f}") in text
    assert held - train > 0.05  # the gap the text describes is real
    small = [abs(table["training", eta][d] - table["held-out", eta][d])
             for eta in (0.03, 0.1, 0.3) for d in (1, 2, 4, 10, 40)]
    assert max(small) <= 0.005 + 1e-9 and "agree to within 0.005" in text


# ------------------------------------------------------------------ chapter 12

CH12 = "12-metric.ipynb"
METHODS = ["Eucl-NN", "LMNN", "Kernel-NN", "MENN"]


@pytest.fixture(scope="module")
def table1():
    return json.loads((ROOT / "benchmarks" / "table1.json").read_text(encoding="utf-8"))


def test_ch12_wine_sentence_matches_the_papers_table(table1):
    paper = dict(zip(METHODS, table1["paper"]["Wine"]["Test"]))
    # the paper's table as the benchmark stores it twice: both copies agree
    assert {m: list(v) for m, v in table1["table"]["Wine"]["paper"]["Test"].items()} == \
        {m: list(v) for m, v in paper.items()}
    order = sorted(METHODS, key=lambda m: paper[m][0])
    assert order[:2] == ["LMNN", "MENN"] and order.index("MENN") < order.index("Kernel-NN")
    text = markdown(CH12)
    assert "worse than Kernel-NN" not in text
    wine = re.search(r"\*\*Wine\.\*\*(.*?)- \*\*", text).group(1)
    assert f"LMNN first ({paper['LMNN'][0]:.2f}%)" in wine
    assert (f"MENN second, ahead of Kernel-NN ({paper['MENN'][0]:.2f}% against "
            f"{paper['Kernel-NN'][0]:.2f}%)") in wine


def test_ch12_names_the_exact_and_the_default_solver():
    text = markdown(CH12)
    assert "SCS" not in text
    assert "Clarabel through cvxpy" in text
    assert 'solver="lowrank"' in text
    # the default the text names (read from the source: importing cvxpy costs seconds)
    source = (ROOT / "lecturelib" / "metric.py").read_text(encoding="utf-8")
    menn = source[source.index("class MetricEmbeddingNN"):]
    init = re.search(r"def __init__\(self[^)]*\)", menn).group(0)
    assert 'solver="lowrank"' in init


def test_ch12_smallest_gamma_is_called_the_widest_kernel(table1):
    text = markdown(CH12)
    assert "smallest width" not in text
    assert r"smallest $\gamma = 2^{-4}$, which is the *widest* kernel" in text
    # the width most often chosen on iris is the grid's smallest gamma ...
    log = table1["datasets"]["Iris"]["log"]
    chosen = ast.literal_eval(re.search(r"MENN rho chosen: (\{[^}]*\})", log).group(1))
    assert max(chosen, key=chosen.get) == 2.0**-4 == min(2.0**k for k in range(-4, 5))
    # ... and exp(-gamma t^2) decays slowest for the smallest gamma: the widest kernel
    t = 1.0
    assert math.exp(-(2.0**-4) * t * t) > math.exp(-(2.0**4) * t * t)

"""Three parts of the MENN paper's Table 1 come from a file, ``benchmarks/table1.json``,
written by ``benchmarks/table1.py`` (more than an hour of computing): Balance's row,
MENN with eta chosen too, and LMNN with the paper's 100 splits on the cancer rows.
Chapter 12 prints the file without re-running it.  These tests check that it was made by
the chapter's current protocol code on the current data: the paper's numbers of splits,
every chosen MENN fit certified, and a sample of splits recomputed (the baselines' first
ten on Balance, the first eta-tuned MENN split on iris, LMNN's first two on the cancer
rows)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import matplotlib
import numpy as np
import pytest

from lecturelib import datasets

ROOT = Path(__file__).resolve().parents[1]
BASELINES = ("Eucl-NN", "LMNN", "Kernel-NN")
RECOMPUTED_SPLITS = 10


@pytest.fixture(scope="module")
def table1():
    spec = importlib.util.spec_from_file_location("table1", ROOT / "benchmarks" / "table1.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def protocol(table1):
    with matplotlib.rc_context():        # the chapter's imports set the book's plot style
        return table1.protocol_namespace()


@pytest.fixture(scope="module")
def stored():
    return json.loads((ROOT / "benchmarks" / "table1.json").read_text())


def test_balance_has_the_papers_splits_and_certified_chosen_menn_fits(protocol, stored):
    balance = stored["balance"]
    assert [len(balance["results"][m]) for m in protocol["methods"]] == [100, 100, 100, 5]
    # the chosen MENN fits (one per split) are certified; the run's log counts the
    # warnings of all fits, chosen or not, and chapter 12 prints it
    assert "MENN certified gap below 0.1%: True, fit size 371" in balance["log"]
    for m in protocol["methods"]:
        errors = np.array(balance["results"][m])[:, :2]
        assert np.all((errors >= 0) & (errors <= 1))


def test_balance_baselines_first_splits_are_reproduced(protocol, stored):
    X, y = datasets.balance_scale()
    for seed in range(RECOMPUTED_SPLITS):
        out, menn = protocol["paper_split"](X.astype(float), y, seed, with_menn=False)
        assert menn is None
        for m in BASELINES:
            loo_and_test = stored["balance"]["results"][m][seed][:2]
            assert out[m][:2] == pytest.approx(loo_and_test, abs=1e-12), (m, seed)


def test_eta_part_covers_the_chapters_data_and_splits(table1, protocol, stored):
    eta = stored["eta"]
    assert eta["etas"] == list(table1.ETAS)
    assert list(eta["data"]) == list(protocol["data"])
    for name, part in eta["data"].items():
        rows = np.array(part["splits"])
        assert len(rows) == protocol["FEWER_SPLITS"][name]["MENN"]
        assert np.all(rows[:, 5] <= 1e-3)          # every chosen fit certified within 0.1%
        assert set(rows[:, 4]) <= set(table1.ETAS)


def test_eta_first_iris_split_is_reproduced(table1, protocol, stored):
    X, y = protocol["data"]["Iris"]
    row = table1.menn_split_with_eta(protocol, X, y, seed=0)
    first = stored["eta"]["data"]["Iris"]["splits"][0]
    assert row[:2] == pytest.approx(first[:2], abs=1e-12)        # LOO and test errors
    assert row[3:5] == first[3:5]                                # the chosen (rho, eta)


def test_lmnn_part_has_the_papers_splits_on_the_cancer_rows(table1, stored):
    part = stored["lmnn"]
    assert part["data"] == "Cancer"
    rows = np.array(part["splits"])
    assert rows.shape == (table1.LMNN_SPLITS, 3) and table1.LMNN_SPLITS == 100
    assert np.all((rows[:, :2] >= 0) & (rows[:, :2] <= 1))


def test_lmnn_first_cancer_splits_are_reproduced(table1, protocol, stored):
    X, y = protocol["data"]["Cancer"]
    for seed in range(2):
        row = table1.lmnn_split(protocol, X, y, seed)
        assert row[:2] == pytest.approx(stored["lmnn"]["splits"][seed][:2], abs=1e-12), seed


def test_unknown_part_is_refused_in_one_line():
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "table1.py"), "ionosphere"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        "table1: unknown part 'ionosphere'; the parts are balance, eta, lmnn ('report' "
        "rewrites TABLE1.md from the stored results)"]

"""Table 1 of the MENN paper where chapter 12 cannot pay for it: Balance, eta tuned, LMNN.

Usage::

    .venv/bin/python benchmarks/table1.py [balance] [eta] [lmnn]   # all parts by default
    .venv/bin/python benchmarks/table1.py report              # TABLE1.md from table1.json

Chapter 12 reproduces the paper's Table 1 on iris, wine and a stand-in for Ionosphere, with
the paper's splits and MENN's kernel width chosen on a held-out part, but within what a
page re-executed by the tests can spend.  Two parts of the paper's protocol are beyond that
and run here, with the chapter's own code: the code cells of ``chapters/12-metric.ipynb``
tagged ``table1-protocol`` (imports, data, split, the four methods, ``run_protocol``,
the summary) are executed, so the page and this script cannot drift apart.

- ``balance``: Balance (rebuilt exactly by ``datasets.balance_scale``; MENN learns from
  371 points), with the paper's numbers of splits (100, and 5 for MENN).  Over an hour.
- ``eta``: MENN's model selection over eta as well as rho, on the chapter's three data
  sets and MENN splits: eta = 1/lambda for lambda in {0.1, 1, 10, 100, 1000}, five of
  the paper's seven values (lambda = 0.01 and 0.001, eta = 100 and 1000, take over a
  minute per fit and are left out).  About 20 minutes.
- ``lmnn``: LMNN on the chapter's stand-in for Ionosphere with the paper's 100 splits (the
  chapter runs 5 of them).  A few minutes.

Results go to ``benchmarks/table1.json`` (every split; chapter 12 prints it) and
``benchmarks/TABLE1.md``; a run of some parts keeps the others' stored results.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import time
import warnings
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHAPTER = HERE.parent / "chapters" / "12-metric.ipynb"
RESULTS = HERE / "table1.json"
TAG = "table1-protocol"
BALANCE_SPLITS = {"LMNN": 100, "MENN": 5}      # the paper's counts for Balance
ETAS = (1e-3, 1e-2, 1e-1, 1.0, 10.0)           # eta = 1 / lambda, lambda = 1000 .. 0.1
LMNN_SPLITS = 100                              # the paper's count for Ionosphere
PARTS = ("balance", "eta", "lmnn")


def protocol_namespace() -> dict:
    """Execute the chapter's cells tagged ``table1-protocol``; return their namespace."""
    import nbformat

    cells = [c for c in nbformat.read(CHAPTER, as_version=4).cells
             if c.cell_type == "code" and TAG in c.metadata.get("tags", [])]
    if not cells:
        raise SystemExit(f"table1: no code cell of {CHAPTER.name} is tagged {TAG!r}")
    namespace: dict = {}
    for cell in cells:
        exec(compile(cell.source, f"{CHAPTER.name}[{TAG}]", "exec"), namespace)
    return namespace


def run_balance(ns) -> dict:
    from lecturelib import datasets

    ns["data"] = {"Balance": datasets.balance_scale()}
    ns["FEWER_SPLITS"]["Balance"] = BALANCE_SPLITS
    start = time.perf_counter()
    with io.StringIO() as out, contextlib.redirect_stdout(out):
        ns["run_protocol"]("Balance")         # prints splits, warnings, widths, certificate
        log = out.getvalue()
    print(log, end="")
    return {"minutes": (time.perf_counter() - start) / 60, "log": log,
            "columns": ["LOO error", "test error", "seconds"],
            "results": {m: ns["results"]["Balance"][m].tolist() for m in ns["methods"]}}


def menn_split_with_eta(ns, X, y, seed) -> list:
    """One MENN split with (rho, eta) chosen on the held-out part: the chapter's code."""
    parts = ns["split_and_scale"](X.astype(float), y, seed)
    (loo, test, seconds), menn = ns["menn_selected"](*parts, etas=ETAS)
    return [loo, test, seconds, menn.gamma, menn.eta, float(menn.duality_gap_)]


def warning_record(caught) -> dict:
    """How many warnings a part raised, and their distinct messages, for the JSON file."""
    return {"warnings": len(caught), "warning_messages": sorted({str(w.message) for w in caught})}


def run_eta(ns) -> dict:
    start, out = time.perf_counter(), {}
    for name, (X, y) in ns["data"].items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ns["ConvergenceWarning"])
            rows = [menn_split_with_eta(ns, X, y, seed)
                    for seed in range(ns["FEWER_SPLITS"][name]["MENN"])]
        out[name] = {"splits": rows, **warning_record(caught)}
        chosen = Counter((r[3], r[4]) for r in rows)
        print(f"{name}: {len(rows)} splits, {len(caught)} solver warnings, (rho, eta) chosen "
              f"{dict(chosen)}, largest gap {max(r[5] for r in rows):.1e}", flush=True)
    return {"minutes": (time.perf_counter() - start) / 60, "etas": list(ETAS),
            "columns": ["LOO error", "test error", "seconds", "rho", "eta", "certified gap"],
            "data": out}


def lmnn_split(ns, X, y, seed) -> list:
    """LMNN's LOO error, test error and seconds on one split: the chapter's code."""
    X_fit, y_fit, _, _, X_te, y_te = ns["split_and_scale"](X.astype(float), y, seed)
    return list(ns["eucl_and_lmnn"](X_fit, y_fit, X_te, y_te)["LMNN"])


def run_lmnn(ns) -> dict:
    name = "Cancer"                           # the chapter's stand-in for Ionosphere
    X, y = ns["data"][name]
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ns["ConvergenceWarning"])
        rows = [lmnn_split(ns, X, y, seed) for seed in range(LMNN_SPLITS)]
    print(f"LMNN on {name}: {len(rows)} splits, {len(caught)} solver warnings", flush=True)
    return {"minutes": (time.perf_counter() - start) / 60, "data": name,
            "columns": ["LOO error", "test error", "seconds"], "splits": rows,
            **warning_record(caught)}


def mean_sd(values) -> str:
    import numpy as np

    v = 100 * np.asarray(values)
    return f"{v.mean():.2f} ± {v.std(ddof=1):.2f}"


def report(ns, stored) -> list[str]:
    import numpy as np

    lines = ["# Table 1 of the MENN paper: the parts chapter 12 does not run", "",
             "Written by `benchmarks/table1.py` from chapter 12's own protocol cells (70/30 "
             "splits, 15% of the training part held out for model selection, 3-NN, one BLAS "
             "thread). Errors in %, mean ± sd over the splits."]
    if "balance" in stored:
        b, methods = stored["balance"], ns["methods"]
        lines += ["", f"## Balance (625 points, 4 features, 3 classes; {b['minutes']:.0f} "
                  "minutes)", "", "| error | method | splits | ours | paper | seconds per split |",
                  "|---|---|---|---|---|---|"]
        for col, kind in enumerate(["LOO", "Test"]):
            for m, paper in zip(methods, ns["paper"]["Balance"][kind]):
                r = np.array(b["results"][m])
                lines.append(f"| {kind} | {m} | {len(r)} | {mean_sd(r[:, col])} | "
                             f"{paper[0]:.2f} ± {paper[1]:.2f} | {r[:, 2].mean():.2f} |")
    if "eta" in stored:
        e = stored["eta"]
        lines += ["", f"## MENN with eta chosen too ({e['minutes']:.0f} minutes)", "",
                  f"eta in {e['etas']} (lambda = 1/eta), rho in 2^-4 .. 2^4.", "",
                  "| data | splits | LOO | test | paper's test | (rho, eta) chosen | "
                  "largest certified gap | solver warnings | seconds per split |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for name, d in e["data"].items():
            r = np.array(d["splits"])
            chosen = dict(Counter((row[3], row[4]) for row in d["splits"]))
            lines.append(f"| {name} | {len(r)} | {mean_sd(r[:, 0])} | {mean_sd(r[:, 1])} | "
                         f"{ns['paper'][name]['Test'][3][0]:.2f} | {chosen} | "
                         f"{r[:, 5].max():.1e} | {d['warnings']} | {r[:, 2].mean():.1f} |")
    if "lmnn" in stored:
        part = stored["lmnn"]
        r, paper = np.array(part["splits"]), ns["paper"][part["data"]]
        lmnn = ns["methods"].index("LMNN")
        lines += ["", f"## LMNN on {part['data']} (the stand-in for Ionosphere) with the "
                  f"paper's {len(r)} splits ({part['minutes']:.0f} minutes)", "",
                  "| error | ours | paper | solver warnings | seconds per split |",
                  "|---|---|---|---|---|"]
        for col, kind in enumerate(["LOO", "Test"]):
            lines.append(f"| {kind} | {mean_sd(r[:, col])} | {paper[kind][lmnn][0]:.2f} ± "
                         f"{paper[kind][lmnn][1]:.2f} | {part['warnings']} | "
                         f"{r[:, 2].mean():.2f} |")
    return lines


def main(argv=None) -> int:
    parts = (argv if argv is not None else sys.argv[1:]) or list(PARTS)
    unknown = sorted(set(parts) - {*PARTS, "report"})
    if unknown:
        print(f"table1: unknown part {unknown[0]!r}; the parts are {', '.join(PARTS)} "
              "('report' rewrites TABLE1.md from the stored results)", file=sys.stderr)
        return 2
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.environ.setdefault("MPLBACKEND", "Agg")
    sys.path.insert(0, str(HERE.parent))
    stored = json.loads(RESULTS.read_text()) if RESULTS.is_file() else {}
    ns = protocol_namespace()
    if "eta" in parts:                    # before balance, which replaces ns["data"]
        stored["eta"] = run_eta(ns)
    if "lmnn" in parts:
        stored["lmnn"] = run_lmnn(ns)
    if "balance" in parts:
        stored["balance"] = run_balance(ns)
    RESULTS.write_text(json.dumps(stored, indent=1) + "\n")
    (HERE / "TABLE1.md").write_text("\n".join(report(ns, stored)) + "\n")
    print(f"wrote {RESULTS} and {HERE / 'TABLE1.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

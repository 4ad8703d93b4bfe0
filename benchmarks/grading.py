"""Grading throughput: a class graded at once against one command per submission.

Usage::

    python benchmarks/grading.py [--submissions 30] [--assignment 01-bayes] [--jobs N]

Builds ``--submissions`` notebooks of one exercise set (a third full solutions, a third
untouched exercises, a third with one answer broken), then grades them three ways, each
from a cold start (a fresh gradebook):

- one ``lecturelib grade NOTEBOOK`` command per submission, one after the other (every
  command runs the solution notebook again): the reference;
- one batch command with ``--no-reference-cache`` (the solution runs once per submission,
  but ``--jobs`` at a time);
- one batch command with the reference cache (the solution runs once).

All three must give the same scores.  Results (submissions per minute and the speed-up
over the reference) go to ``benchmarks/GRADING.md`` and ``benchmarks/grading.json``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
LECTURELIB = [sys.executable, "-m", "lecturelib.grading"]


def make_submissions(folder: Path, assignment: str, count: int) -> None:
    import nbformat

    solution = nbformat.read(ROOT / "solutions" / f"{assignment}.ipynb", as_version=4)
    exercise = (ROOT / "exercises" / f"{assignment}.ipynb").read_bytes()
    broken = nbformat.from_dict(json.loads(json.dumps(solution)))
    first = next(c for c in broken.cells if "question:q1" in c.metadata.get("tags", []))
    first.source = first.source.replace("# BEGIN SOLUTION", "# BEGIN SOLUTION\nraise ValueError('broken')")
    for i in range(count):
        path = folder / f"student{i:02d}.ipynb"
        if i % 3 == 0:
            nbformat.write(solution, path)
        elif i % 3 == 1:
            path.write_bytes(exercise)
        else:
            nbformat.write(broken, path)


def totals_from_csv(book: Path, assignment: str) -> dict[str, str]:
    out = subprocess.run(LECTURELIB + ["gradebook", "export", "--assignment", assignment,
                                       "--gradebook", str(book)], capture_output=True, text=True,
                         check=True).stdout
    return {row["student"]: row["total"] for row in csv.DictReader(out.splitlines())}


def one_command_each(folder: Path, assignment: str, work: Path) -> tuple[float, dict]:
    """One ``lecturelib grade NOTEBOOK --json`` per submission (no shared cache at all)."""
    totals = {}
    start = time.perf_counter()
    for path in sorted(folder.glob("*.ipynb")):
        out = work / f"{path.stem}.json"
        subprocess.run(LECTURELIB + ["grade", str(path), "--assignment", assignment, "--json", str(out)],
                       check=True, capture_output=True)
        totals[path.stem] = json.loads(out.read_text())["score"]
    elapsed = time.perf_counter() - start
    return elapsed, {k: f"{v:g}" for k, v in totals.items()}


def batch(folder: Path, assignment: str, work: Path, jobs: int, cache: bool) -> tuple[float, dict]:
    book = work / f"batch-{'cache' if cache else 'nocache'}.sqlite"
    args = ["grade", str(folder), "--assignment", assignment, "--gradebook", str(book),
            "--jobs", str(jobs)] + ([] if cache else ["--no-reference-cache"])
    start = time.perf_counter()
    subprocess.run(LECTURELIB + args, check=True, capture_output=True)
    return time.perf_counter() - start, totals_from_csv(book, assignment)


def report(results: dict) -> str:
    n = results["submissions"]
    lines = ["# Grading throughput", "",
             f"{n} submissions of `{results['assignment']}` on {results['machine']}, "
             f"`--jobs {results['jobs']}`, every notebook in the bubblewrap sandbox, each way "
             "from a cold start. Produced by `python benchmarks/grading.py`.", "",
             "| how | seconds | submissions per minute | speed-up |", "|---|---:|---:|---:|"]
    base = results["modes"]["one command per submission"]
    for mode, seconds in results["modes"].items():
        lines.append(f"| {mode} | {seconds:.1f} | {60 * n / seconds:.1f} | {base / seconds:.2f}x |")
    lines += ["", "All three ways gave the same score to every submission."
              if results["same_scores"] else "**The three ways disagreed on some score.**", ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=30)
    parser.add_argument("--assignment", default="01-bayes")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)
    if shutil.which("bwrap") is None:
        print("benchmarks/grading.py: bubblewrap is not installed", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        folder = work / "submissions"
        folder.mkdir()
        make_submissions(folder, args.assignment, args.submissions)
        t_one, s_one = one_command_each(folder, args.assignment, work)
        t_nocache, s_nocache = batch(folder, args.assignment, work, args.jobs, cache=False)
        t_cache, s_cache = batch(folder, args.assignment, work, args.jobs, cache=True)
    results = {
        "assignment": args.assignment, "submissions": args.submissions, "jobs": args.jobs,
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores",
        "modes": {"one command per submission": t_one, "batch, no reference cache": t_nocache,
                  "batch, reference cache": t_cache},
        "same_scores": s_one == s_nocache == s_cache,
    }
    (HERE / "grading.json").write_text(json.dumps(results, indent=2) + "\n")
    (HERE / "GRADING.md").write_text(report(results))
    print(report(results))
    return 0 if results["same_scores"] else 1


if __name__ == "__main__":
    sys.exit(main())

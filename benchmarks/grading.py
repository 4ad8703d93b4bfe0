"""Grading throughput: a class graded at once against one command per submission.

Usage::

    python benchmarks/grading.py [--submissions 30] [--assignment 01-bayes] [--jobs N]
                                 [--baseline REV]

Builds ``--submissions`` notebooks of one exercise set (a third full solutions, a third
untouched exercises, a third with one answer broken), then grades them three ways, each
from a cold start (a fresh gradebook):

- one ``lecturelib grade NOTEBOOK`` command per submission, one after the other (every
  command runs the solution notebook again): the reference;
- one batch command with ``--no-reference-cache`` (the solution runs afresh, once);
- one batch command with the reference cache (the solution's answers from the cache).

All three must give the same scores.  Then the cost of the grader's hardening: the batch
with the reference cache, run by the grader of ``--baseline`` (a git revision, by default
the last one before issue 33's hardening, checked out into a temporary worktree, grading
the same number of submissions made from that revision's own exercise set) and by this
one, alternately, twice each; the ratio of the better times of each is the cost.
Results go to ``benchmarks/GRADING.md`` and ``benchmarks/grading.json``.

``--large 300 --hanging 10`` measures instead one batch (reference cache) of a large class
with hanging submissions added (an answer cell that loops for ever), the case that each
cell's time limit from the solution's own run (README, "Time limits") is for; its result
is kept beside the others in ``grading.json`` and GRADING.md.
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


BASELINE = "3c6e08e"  # the last commit before issue 33's hardening of the grader


def make_hanging(folder: Path, assignment: str, count: int, course: Path = ROOT) -> None:
    """``count`` submissions whose first graded answer loops for ever."""
    import nbformat

    solution = nbformat.read(course / "solutions" / f"{assignment}.ipynb", as_version=4)
    first = next(c for c in solution.cells if "question:q1" in c.metadata.get("tags", []))
    first.source = first.source.replace("# BEGIN SOLUTION", "# BEGIN SOLUTION\nwhile True:\n    pass")
    for i in range(count):
        nbformat.write(solution, folder / f"hanging{i:02d}.ipynb")


def make_submissions(folder: Path, assignment: str, count: int, course: Path = ROOT) -> None:
    import nbformat

    solution = nbformat.read(course / "solutions" / f"{assignment}.ipynb", as_version=4)
    exercise = (course / "exercises" / f"{assignment}.ipynb").read_bytes()
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


def totals_from_csv(book: Path, assignment: str, env=None) -> dict[str, str]:
    out = subprocess.run(LECTURELIB + ["gradebook", "export", "--assignment", assignment,
                                       "--gradebook", str(book), "--allow-pending"],
                         capture_output=True, text=True, check=True, env=env).stdout
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


def batch(folder: Path, assignment: str, work: Path, jobs: int, cache: bool,
          course: Path = ROOT, tag: str = "") -> tuple[float, dict | None]:
    """One batch command on a fresh gradebook, by the grader of ``course`` (its own
    ``lecturelib`` and solutions).  A submission that cannot be graded normally (the
    untouched exercises time out on nothing; the broken ones raise) is accepted."""
    book = work / f"batch-{'cache' if cache else 'nocache'}{tag}.sqlite"
    args = ["grade", str(folder), "--assignment", assignment, "--gradebook", str(book),
            "--jobs", str(jobs), "--solutions", str(course / "solutions")]
    args += [] if cache else ["--no-reference-cache"]
    env = {**os.environ, "PYTHONPATH": str(course)}
    start = time.perf_counter()
    proc = subprocess.run(LECTURELIB + args, capture_output=True, text=True, env=env, cwd=work)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):  # 1: some submissions listed as not graded normally
        raise SystemExit(f"benchmarks/grading.py: the batch failed: {proc.stderr[-500:]}")
    # the baseline's export knows no pending written answers (nor --allow-pending)
    return elapsed, totals_from_csv(book, assignment, env) if course == ROOT else None


def hardening_cost(args, work: Path) -> dict:
    """The batch (reference cache) by the baseline's grader and by this one, alternately."""
    base = work / "baseline"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(base),
                    args.baseline], check=True)
    try:
        folders = {}
        for name, course in (("baseline", base), ("now", ROOT)):
            folders[name] = work / f"class-{name}"
            folders[name].mkdir()
            make_submissions(folders[name], args.assignment, args.submissions, course)
        times = {"baseline": [], "now": []}
        for round_ in range(2):
            for name, course in (("baseline", base), ("now", ROOT)):
                seconds, _ = batch(folders[name], args.assignment, work, args.jobs, True,
                                   course, f"-{name}-{round_}")
                times[name].append(seconds)
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)],
                       check=False)
    best = {name: min(values) for name, values in times.items()}
    return {"baseline": args.baseline, "seconds": times,
            "throughput_ratio": best["baseline"] / best["now"]}


def team_section() -> str:
    """The section benchmarks/grading_team.py keeps in GRADING.md, as it stands."""
    path = HERE / "GRADING.md"
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    marker = "## A grading team at once"
    return "\n" + marker + text.split(marker, 1)[1] if marker in text else ""


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
    cost = results.get("hardening")
    if cost:
        now, base = (", ".join(f"{t:.1f}" for t in cost["seconds"][k]) for k in ("now", "baseline"))
        lines += ["## What the grader's hardening costs", "",
                  f"The batch with the reference cache, by this grader and by the grader of "
                  f"commit `{cost['baseline']}` (before issue 33: no fixed-vocabulary reasons, "
                  "no shape check before `post`, links followed, no dedicated sandbox user, no "
                  "seccomp filter, no file-count watchdog), alternately on the same machine in "
                  f"one run: {now} s against {base} s. Throughput now is "
                  f"{cost['throughput_ratio']:.2f} times the baseline's (better times compared; "
                  "each grades its own revision's exercise set, whose code cells are the same "
                  "computations).", ""]
    large = results.get("large_class")
    if large:
        n, hanging = large["submissions"], large["hanging"]
        lines += ["## A large class with hanging submissions", "",
                  f"{n} submissions of `{large['assignment']}` ({n - hanging} as above, {hanging} "
                  f"whose first answer loops for ever), one batch with the reference cache, "
                  f"`--jobs {large['jobs']}` on {large['machine']}: {large['seconds']:.1f} s, "
                  f"{60 * n / large['seconds']:.1f} submissions per minute. Each cell's time limit "
                  "is ten times the solution's time for it, at least 10 s (README, \"Time "
                  "limits\"), so a hanging answer costs its worker about 10 s, not the 60 s of "
                  f"`--timeout`. Load average at the start and end: {large['load'][0]:.1f}, "
                  f"{large['load'][1]:.1f}.", ""]
    return "\n".join(lines)


def large_class(args) -> dict:
    """One batch of ``--large`` submissions, ``--hanging`` of them hanging, cold start."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        folder = work / "submissions"
        folder.mkdir()
        make_submissions(folder, args.assignment, args.large - args.hanging)
        make_hanging(folder, args.assignment, args.hanging)
        load = os.getloadavg()[0]
        seconds, _ = batch(folder, args.assignment, work, args.jobs, cache=True)
    return {"assignment": args.assignment, "submissions": args.large, "hanging": args.hanging,
            "jobs": args.jobs, "seconds": seconds, "load": [load, os.getloadavg()[0]],
            "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=30)
    parser.add_argument("--assignment", default="01-bayes")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--baseline", default=BASELINE,
                        help="git revision whose grader the hardening is measured against")
    parser.add_argument("--large", type=int, default=0, metavar="N",
                        help="measure only one batch of a class of N (kept beside the other results)")
    parser.add_argument("--hanging", type=int, default=0, help="with --large: how many hang")
    args = parser.parse_args(argv)
    if shutil.which("bwrap") is None:
        print("benchmarks/grading.py: bubblewrap is not installed", file=sys.stderr)
        return 2
    if args.large:
        if not 0 <= args.hanging <= args.large:
            print("benchmarks/grading.py: --hanging must be between 0 and --large", file=sys.stderr)
            return 2
        results = json.loads((HERE / "grading.json").read_text())
        results["large_class"] = large_class(args)
        (HERE / "grading.json").write_text(json.dumps(results, indent=2) + "\n")
        (HERE / "GRADING.md").write_text(report(results) + team_section())
        print(report(results))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        folder = work / "submissions"
        folder.mkdir()
        make_submissions(folder, args.assignment, args.submissions)
        t_one, s_one = one_command_each(folder, args.assignment, work)
        t_nocache, s_nocache = batch(folder, args.assignment, work, args.jobs, cache=False)
        t_cache, s_cache = batch(folder, args.assignment, work, args.jobs, cache=True)
        hardening = hardening_cost(args, work)
    results = {
        "assignment": args.assignment, "submissions": args.submissions, "jobs": args.jobs,
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores",
        "modes": {"one command per submission": t_one, "batch, solution run afresh": t_nocache,
                  "batch, reference cache": t_cache},
        "same_scores": s_one == s_nocache == s_cache,
        "hardening": hardening,
    }
    previous = HERE / "grading.json"
    if previous.is_file() and "large_class" in json.loads(previous.read_text()):
        results["large_class"] = json.loads(previous.read_text())["large_class"]  # measured apart
    (HERE / "grading.json").write_text(json.dumps(results, indent=2) + "\n")
    (HERE / "GRADING.md").write_text(report(results) + team_section())
    print(report(results))
    return 0 if results["same_scores"] else 1


if __name__ == "__main__":
    sys.exit(main())

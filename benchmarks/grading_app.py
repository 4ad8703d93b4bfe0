"""How fast the grading app's pages are with a large class: ``python benchmarks/grading_app.py``.

Builds a gradebook of ``--students`` (300) students of set 1, whose two written questions
(q7w and q8) are answered with proofs of a typical length (a dozen lines with inline and
display math), runs ``lecturelib gradebook serve`` as the README spells it, opens the
printed address as a browser would (it sets the session cookie), then requests each page
a grader opens, several times, and records the server's time for each (the full request,
rendering and sanitising the answer included; MathJax then typesets in the browser).
Results go to ``benchmarks/APP.md`` and ``benchmarks/app.json``.
"""

from __future__ import annotations

import argparse
import http.cookiejar
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
ASSIGNMENT = "01-bayes"
PROOF = ("The log posterior is $\\ell(q) = (k + a - 1)\\log q + (n - k + b - 1)\\log(1 - q)$ up "
         "to a constant.\n\nIts derivative is\n\n$$\\ell'(q) = \\frac{k + a - 1}{q} - "
         "\\frac{n - k + b - 1}{1 - q},$$\n\nwhich vanishes at $$\\hat q = \\frac{k + a - 1}"
         "{n + a + b - 2}.$$\n\nThe second derivative, $-\\frac{k+a-1}{q^2} - \\frac{n-k+b-1}"
         "{(1-q)^2}$, is negative for $a, b > 1$, so this is a maximum. Student {i} checks the "
         "boundary cases $k = 0$ and $k = n$ separately, where the formula still holds.\n")


def make_gradebook(path: Path, students: int) -> list[str]:
    """The class in a new gradebook; returns the written questions' ids."""
    sys.path.insert(0, str(ROOT))
    from lecturelib.grading import load_questions, read_notebook
    from lecturelib.grading.core.report import GradeReport, QuestionResult
    from lecturelib.grading.gradebook import Gradebook

    questions = load_questions(read_notebook(ROOT / "solutions" / f"{ASSIGNMENT}.ipynb"))
    with Gradebook(path) as book:
        book.store_questions(ASSIGNMENT, questions)
        for i in range(students):
            rows = [QuestionResult(q.id, 0.0, q.points, "pending", pending=True, kind="written",
                                   answer=PROOF.replace("{i}", str(i))) if q.written
                    else QuestionResult(q.id, q.points, q.points, "ok", checks=[True] * len(q.checks))
                    for q in questions]
            book.record(f"s{i:03d}", f"sha{i}", GradeReport(f"s{i:03d}.ipynb", ASSIGNMENT, rows, []))
    return [q.id for q in questions if q.written]


def timed(opener, url: str) -> float:
    start = time.perf_counter()
    with opener.open(url, timeout=60) as response:
        response.read()
        assert response.status == 200, (url, response.status)
    return time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=20, help="requests of each page")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        book = Path(tmp) / "gradebook.sqlite"
        written = make_gradebook(book, args.students)
        app = subprocess.Popen([str(ROOT / ".venv" / "bin" / "lecturelib"), "gradebook", "serve",
                                "--gradebook", str(book)], stdout=subprocess.PIPE, text=True)
        try:
            url = next(line.strip() for line in app.stdout if "token=" in line)
            opener = urllib.request.build_opener(
                urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
            timed(opener, url)  # the printed address: sets the session cookie
            base = url.split("/?")[0]
            pages = {"start page": "/", "results": f"/stats/{ASSIGNMENT}"}
            for qid in written:
                pages[f"an answer of {qid} (first)"] = f"/grade/{ASSIGNMENT}/{qid}/1"
                pages[f"an answer of {qid} (last)"] = f"/grade/{ASSIGNMENT}/{qid}/{args.students}"
                pages[f"the groups of {qid}"] = f"/groups/{ASSIGNMENT}/{qid}"
            times = {}
            for name, path in pages.items():
                timed(opener, base + path)  # a first request warms caches (and makes the groups)
                times[name] = [timed(opener, base + path) for _ in range(args.repeats)]
            for qid in written:  # each answer opened once: rendered afresh, as a grader moves on
                times[f"answers of {qid}, each opened once"] = [
                    timed(opener, f"{base}/grade/{ASSIGNMENT}/{qid}/{k}") for k in range(2, 2 + args.repeats)]
        finally:
            app.terminate()
            app.wait(10)
    results = {"students": args.students, "written_questions": len(written),
               "repeats": args.repeats, "load": os.getloadavg()[0],
               "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores",
               "milliseconds": {name: {"median": 1000 * statistics.median(t), "max": 1000 * max(t)}
                                for name, t in times.items()}}
    (HERE / "app.json").write_text(json.dumps(results, indent=2) + "\n")
    lines = ["# The grading app's pages with a large class", "",
             f"{args.students} students of `{ASSIGNMENT}`, each with {len(written)} written answers "
             f"pending (a dozen lines with math), on {results['machine']} (load average "
             f"{results['load']:.1f}); each page requested {args.repeats} times after one "
             "warm-up, server time of the whole request. Produced by "
             "`python benchmarks/grading_app.py`.", "",
             "| page | median ms | max ms |", "|---|---:|---:|"]
    lines += [f"| {name} | {v['median']:.0f} | {v['max']:.0f} |"
              for name, v in results["milliseconds"].items()]
    (HERE / "APP.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

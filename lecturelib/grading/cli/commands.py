"""The ``lecturelib`` command line.

::

    lecturelib check NOTEBOOK ... [--timeout SECONDS]
    lecturelib assign [SOLUTION ...] [--output-dir exercises] [--check]
    lecturelib grade SUBMISSION ... --assignment NAME [--json FILE] [--gradebook FILE]
                                    [--accept-failures] ...
    lecturelib gradebook export --assignment NAME [--gradebook FILE] [--output FILE] [--allow-pending]
    lecturelib gradebook feedback --assignment NAME [--gradebook FILE] [--output DIR]
    lecturelib gradebook serve --gradebook FILE [--port N] [--host 127.0.0.1] [--anonymous]
        [--roster CSV] [--graders "Ann Lee,Bo Chen"] [--double-mark PERCENT]
        [--tls-cert PEM --tls-key PEM | --tls-self-signed | --insecure-http] [--instructor NAME]
    lecturelib gradebook staff add NAME --role ta|instructor [--address URL] --gradebook FILE
    lecturelib gradebook staff list|revoke NAME|link NAME --gradebook FILE

and the course operations of :mod:`.course` (``collect``, ``gradebook export --format
canvas|moodle``, ``gradebook late``, ``gradebook similarity``, ``gradebook summary``).

Every error is one line on standard error (``lecturelib: error: ...``) and exit status 2;
never a traceback.  Grading a class exits 1 when some submissions could not be graded
normally (they are listed at the end of the output), unless ``--accept-failures``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..autograde.grade import grade
from ..autograde.sandbox import Limits
from ..autograde.selfcheck import self_check
from ..core.exercise import assign
from ..core.notebook import GradingError
from ..core.report import fmt, plain, write_atomic, write_json
from ..core.submissions import feedback_folder
from ..gradebook.batch import grade_batch
from ..gradebook.store import Gradebook
from . import review
from .course import add_course_commands, handles, run_collect, run_gradebook_action

DEFAULT_GRADEBOOK = "gradebook.sqlite"


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose refusal of an argument is one line like every other error
    (argparse prints its usage block first) and shows no control character a file name put
    in an unrecognised argument."""

    def error(self, message):
        self.exit(2, f"lecturelib: error: {plain(message, 500)} (see {plain(self.prog)} --help)\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="lecturelib", description="Generate and grade the course's exercise notebooks.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("check", help="run notebooks and their public checks (students: no solutions needed)",
                       description="Run each notebook in a fresh kernel, then the public checks of every "
                                   "question. They reveal no answer and do not count for the grade. "
                                   "Each written answer is reported as there or missing (people "
                                   "grade it, not a check). Exit status 0 when every check holds "
                                   "and every written answer is there, 1 otherwise.")
    p.add_argument("notebooks", nargs="+", metavar="NOTEBOOK")
    p.add_argument("--timeout", type=int, default=120, help="time limit per cell, seconds")
    p.add_argument("--course", metavar="DIR", default=None,
                   help="the course's folder, whose exercises/ (or solutions/) hold the public checks "
                        "(default: the folder lecturelib is installed from); a notebook's own "
                        "metadata is never used")

    p = sub.add_parser("assign", help="write student notebooks from solution notebooks")
    p.add_argument("solutions", nargs="*", help="solution notebooks (default: solutions/*.ipynb)")
    p.add_argument("--output-dir", default="exercises")
    p.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 if any student notebook is out of date")

    p = sub.add_parser("grade", help="grade submissions (instructors: needs the solutions)",
                       description="Grade one notebook (a table, and --json) or a whole class "
                                   "(several files or folders: into the gradebook). In a folder, "
                                   "each top-level entry is one student: alice.ipynb, or a folder "
                                   "alice/ with one notebook. Exit status: 0 when every "
                                   "submission was graded normally, 1 when some could not be "
                                   "(listed at the end; see --accept-failures), 2 on an error.")
    p.add_argument("submissions", nargs="+", metavar="SUBMISSION",
                   help="notebooks, or folders of notebooks")
    p.add_argument("--assignment", required=True,
                   help="the exercise set to grade against, e.g. 01-bayes (never read from the notebook)")
    p.add_argument("--json", dest="json_path", help="one notebook: also write the result as JSON here")
    p.add_argument("--solutions", help="folder of solution notebooks (default: the course's solutions/)")
    p.add_argument("--gradebook", help=f"SQLite gradebook (default for a class: {DEFAULT_GRADEBOOK})")
    p.add_argument("--feedback", help="folder for the students' feedback files "
                                      "(default: feedback/ASSIGNMENT beside the gradebook)")
    p.add_argument("--jobs", type=int, default=None, help="submissions graded at once (default: the cores)")
    p.add_argument("--force", action="store_true", help="grade again submissions that have not changed")
    p.add_argument("--accept-failures", action="store_true",
                   help="a class: exit 0 even when some submissions could not be graded normally "
                        "(unreadable or refused files, unsafe names, extra notebooks, malformed "
                        "notebooks, another assignment's notebooks, timeouts); they are listed "
                        "at the end of the output either way, and make the exit status 1 "
                        "without this flag")
    p.add_argument("--scheduler", help="address of a Dask distributed scheduler to grade on: "
                                       "tls://HOST:PORT with the three --tls-* files "
                                       "(plain tcp:// is refused, on loopback too)")
    p.add_argument("--tls-ca", help="with --scheduler tls://: the certificate authority (PEM) "
                                    "that signed the cluster's and this client's certificates")
    p.add_argument("--tls-cert", help="with --scheduler tls://: this client's certificate (PEM)")
    p.add_argument("--tls-key", help="with --scheduler tls://: this client's private key (PEM)")
    p.add_argument("--no-reference-cache", action="store_true",
                   help="run the solution notebook afresh instead of taking its answers from "
                        "the cache")
    p.add_argument("--no-sandbox", action="store_true",
                   help="run without the OS sandbox (untrustworthy: only to check your own work)")
    p.add_argument("--timeout", type=int, default=60,
                   help="the longest a cell may run, seconds (each cell gets ten times the "
                        "solution's time for it, at least 10 s, at most this)")
    p.add_argument("--total-timeout", type=int, default=600, help="time limit per notebook run, seconds")
    p.add_argument("--memory", type=int, default=4096, help="memory limit of a notebook run, MiB")
    p.add_argument("--max-processes", type=int, default=64, help="processes a notebook may run at once")

    p = sub.add_parser("gradebook", help="read the gradebook")
    gsub = p.add_subparsers(dest="action", required=True)
    e = gsub.add_parser("export", help="CSV: one row per student, one column per question, total")
    e.add_argument("--assignment", help="one assignment (required by --format csv for its questions)")
    e.add_argument("--gradebook", default=DEFAULT_GRADEBOOK)
    e.add_argument("--output", help="write the CSV here (default: standard output)")
    e.add_argument("--allow-pending", action="store_true",
                   help="export written answers nobody has graded yet as 'pending' (refused otherwise)")
    f = gsub.add_parser("feedback", help="write every student's feedback (Markdown and JSON) with "
                                          "the rubric items, comments and overrides of manual grading")
    f.add_argument("--assignment", required=True)
    f.add_argument("--gradebook", default=DEFAULT_GRADEBOOK)
    f.add_argument("--output", help="folder (default: feedback/ASSIGNMENT beside the gradebook); "
                                    "with --format, the zip to write")
    f.add_argument("--format", choices=("canvas", "moodle"),
                   help="one HTML page per student in a zip named for the LMS's bulk feedback "
                        "upload (Canvas: Re-Upload Submissions; Moodle: Upload multiple feedback "
                        "files in a zip), for notebooks collected from that LMS's download")
    f.add_argument("--course", help="with --format: the course file (late policy, points, time zone)")
    f.add_argument("--allow-pending", action="store_true",
                   help="with --format: write the pages although written answers are pending")
    s = gsub.add_parser("serve", help="the grading web app: rubric grading of written answers, "
                                       "overrides, the class's results (instructors only)")
    s.add_argument("--gradebook", required=True)
    s.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    s.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: this machine only)")
    s.add_argument("--anonymous", action="store_true", help="hide the students' names while grading")
    s.add_argument("--roster", help="CSV of student ids and names: show the names, not the LMS ids "
                                    "(not with --anonymous)")
    s.add_argument("--graders", help='the graders sharing each question, e.g. "Ann Lee,Bo Chen": '
                                     '"next ungraded" takes each to the answers of their share')
    s.add_argument("--double-mark", type=float, default=0.0, metavar="PERCENT",
                   help="with --graders: the share of answers marked a second time, blind (e.g. 10)")
    s.add_argument("--tls-cert", metavar="PEM", help="HTTPS with this certificate (and --tls-key)")
    s.add_argument("--tls-key", metavar="PEM", help="the private key of --tls-cert")
    s.add_argument("--tls-self-signed", action="store_true",
                   help="HTTPS with a certificate made now; its SHA-256 fingerprint is printed")
    s.add_argument("--insecure-http", action="store_true",
                   help="allow plain HTTP off this machine (--host): grades and links travel in clear")
    s.add_argument("--instructor", default="instructor", metavar="NAME",
                   help="without staff: the name the single-token mode records changes under")
    t = gsub.add_parser("staff", help="the grading staff, each with a personal sign-in link: "
                                      "add, list, revoke, link")
    t.add_argument("staff_action", choices=("add", "list", "revoke", "link"))
    t.add_argument("name", nargs="?", help="the person (add, revoke, link)")
    t.add_argument("--role", choices=("ta", "instructor"), help="with add: what they may do")
    t.add_argument("--address", metavar="URL", help="with add and link: the app's address "
                                                    "(https://HOST:PORT) the link starts with")
    t.add_argument("--gradebook", default=DEFAULT_GRADEBOOK)
    add_course_commands(sub, gsub)
    review.add_review_commands(gsub, DEFAULT_GRADEBOOK)
    return parser


def _assign(args) -> int:
    paths = args.solutions or sorted(str(p) for p in Path("solutions").glob("*.ipynb"))
    if not paths:
        raise GradingError("no solution notebooks given and none in solutions/")
    touched = assign(paths, args.output_dir, check=args.check)
    verb = "out of date" if args.check else "written"
    for path in touched:
        print(f"{path}: {verb}")
    if not touched:
        print("all student notebooks are up to date")
    return 1 if (args.check and touched) else 0


def _check(args) -> int:
    if args.timeout <= 0:
        raise GradingError(f"--timeout must be a positive number of seconds, got {args.timeout}")
    passed = True
    for path in args.notebooks:
        result = self_check(path, cell_timeout=args.timeout, course=args.course)
        print(result.text())
        passed &= result.passed
    return 0 if passed else 1


def _limits(args) -> Limits:
    return Limits(cell_timeout=args.timeout, total_timeout=args.total_timeout,
                  memory_mb=args.memory, max_processes=args.max_processes)


def _warn_no_sandbox(args):
    if args.no_sandbox:
        print("lecturelib: warning: grading without the sandbox: the notebook runs with your "
              "permissions and this score is not trustworthy", file=sys.stderr)


def _grade(args) -> int:
    limits = _limits(args)
    _warn_no_sandbox(args)
    single = len(args.submissions) == 1 and not Path(args.submissions[0]).is_dir()
    if args.json_path and not single:
        raise GradingError("--json takes one notebook; a class goes to the gradebook")
    if single and not args.gradebook:
        report = grade(args.submissions[0], assignment=args.assignment, solutions_dir=args.solutions,
                       limits=limits, sandbox=not args.no_sandbox)
        print(report.table())
        if args.json_path:
            write_json(args.json_path, report)
        return 0
    with Gradebook(args.gradebook or DEFAULT_GRADEBOOK) as book:
        summary = grade_batch(args.submissions, assignment=args.assignment, gradebook=book,
                              solutions_dir=args.solutions, limits=limits, jobs=args.jobs,
                              force=args.force or bool(args.json_path), feedback_dir=args.feedback,
                              scheduler=args.scheduler, tls=(args.tls_ca, args.tls_cert, args.tls_key),
                              sandbox=not args.no_sandbox,
                              use_reference_cache=not args.no_reference_cache)
        for line in summary.regrading:
            print(line)
        for student, report in summary.graded:
            print(f"{plain(student, 100)}: {fmt(report.score)} / {fmt(report.total)}")
        if summary.unchanged:
            print(f"{len(summary.unchanged)} unchanged submission(s) not graded again (use --force)")
        for line in summary.notices:
            print(f"note: {plain(line, 400)}")
        print(f"gradebook: {book.path}")
        if single and args.json_path:
            write_json(args.json_path, summary.graded[0][1])
        if summary.problems:
            print(f"{len(summary.problems)} submission(s) could not be graded normally:")
            for line in summary.problems:
                print(f"  {plain(line, 400)}")
            if not args.accept_failures:
                print(f"lecturelib: {len(summary.problems)} submission(s) could not be graded "
                      "normally (listed above); fix them, or pass --accept-failures to accept "
                      "these rows as they are", file=sys.stderr)
                return 1
    return 0


def _gradebook(args) -> int:
    if not Path(args.gradebook).is_file():
        raise GradingError(f"{args.gradebook}: no such gradebook")
    if args.action == "serve":
        return _serve(args)
    if args.action == "staff":
        return _staff(args)
    if handles(args):
        return run_gradebook_action(args)
    if review.handles(args):
        return review.run(args)
    if args.action == "feedback":
        return _feedback(args)
    with Gradebook(args.gradebook) as book:
        text = book.export_csv(args.assignment, allow_pending=args.allow_pending)
    if args.output:
        write_atomic(args.output, text)
    else:
        sys.stdout.write(text)
    return 0


def _feedback(args) -> int:
    from ..gradebook.manual import write_feedback

    if args.format:
        return _lms_feedback(args)

    from ..gradebook.regrades import requests, write_student_feedback

    with Gradebook(args.gradebook) as book:
        folder = Path(args.output) if args.output else feedback_folder(book.path, args.assignment)
        written = write_feedback(book, args.assignment, folder)
        for student in sorted({r["student"] for r in requests(book.db, args.assignment)
                               if r["status"] == "resolved"}):
            write_student_feedback(book.db, args.assignment, student, folder)
    print(f"{len(written)} feedback file(s) written in {plain(str(folder), 200)}")
    return 0


def _lms_feedback(args) -> int:
    from ..course.lmsfeedback import feedback_zip
    from ..course.policy import read_course

    if not args.output or not args.output.endswith(".zip"):
        raise GradingError("--format needs --output FILE.zip (the zip to upload to the LMS)")
    course = read_course(args.course) if args.course else None
    with Gradebook(args.gradebook) as book:
        written, left_out = feedback_zip(book, args.assignment, args.format, args.output,
                                         course=course, allow_pending=args.allow_pending)
    for line in left_out:
        print(f"left out: {line}", file=sys.stderr)
    print(f"{len(written)} feedback page(s) in {plain(args.output, 200)}, named for {args.format}'s "
          "bulk feedback upload")
    return 0


def _serve(args) -> int:
    import importlib.util

    grading = __package__.rpartition(".")[0]  # lecturelib.grading, beside this cli package
    if importlib.util.find_spec(f"{grading}.webapp") is None:  # the student edition
        raise GradingError("the grading app is not part of this edition of the course "
                           "(it is the instructors' tool)")
    try:
        from ..webapp import serve
    except ImportError as exc:
        raise GradingError(f"the grading app needs the package {exc.name!r}: install "
                           "requirements.txt") from None
    if args.roster and args.anonymous:
        raise GradingError("--roster shows the students' names: leave it out with --anonymous")
    roster = None
    if args.roster:
        from ..course.roster import read_roster

        roster = read_roster(args.roster)
    return serve(args.gradebook, host=args.host, port=args.port, anonymous=args.anonymous,
                 roster=roster, graders=review.graders_option(args.graders),
                 double_mark=args.double_mark, instructor=args.instructor, tls_cert=args.tls_cert,
                 tls_key=args.tls_key, tls_self_signed=args.tls_self_signed,
                 insecure_http=args.insecure_http)


def _staff(args) -> int:
    from ..gradebook import staff

    if args.staff_action != "list" and not args.name:
        raise GradingError(f"staff {args.staff_action} needs the person's name")
    if args.staff_action == "add" and not args.role:
        raise GradingError("staff add needs --role ta or --role instructor")
    address = (args.address or "").rstrip("/")
    if address and not address.startswith(("https://", "http://")):
        raise GradingError("--address is the app's address, e.g. https://10.0.0.5:8443")
    with Gradebook(args.gradebook) as book:
        if args.staff_action == "list":
            sys.stdout.write(staff.staff_table(staff.members(book.db)))
            return 0
        if args.staff_action == "revoke":
            staff.revoke(book.db, args.name)
            print(f"{plain(args.name, 40)}'s access ended (their link and open pages)")
            return 0
        secret = (staff.add(book.db, args.name, args.role) if args.staff_action == "add"
                  else staff.new_link(book.db, args.name))
    print(f"{plain(args.name, 40)}'s personal sign-in link (shown this once: send it to them "
          "privately; the gradebook keeps only its hash):")
    print(f"    {address or 'https://HOST:PORT'}/?token={secret}")
    if not address:
        print("(HOST:PORT: the address `lecturelib gradebook serve` prints)")
    return 0


def main(argv=None) -> int:
    """Run the ``lecturelib`` command; return its exit status (0 ok, 1 stale or failed
    checks or submissions not graded normally, 2 error)."""
    args = _parser().parse_args(argv)
    commands = {"check": _check, "assign": _assign, "grade": _grade, "gradebook": _gradebook,
                "collect": run_collect}
    try:
        return commands[args.command](args)
    except GradingError as exc:
        print(f"lecturelib: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("lecturelib: interrupted", file=sys.stderr)
        return 130

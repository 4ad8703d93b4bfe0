"""The course-operation commands of the ``lecturelib`` command line::

    lecturelib collect DOWNLOAD --assignment NAME --output DIR [--roster CSV] [--course TOML]
                                [--gradebook FILE]
    lecturelib gradebook export [--assignment NAME] --format canvas|moodle|csv [--roster CSV]
                                [--course TOML] [--output FILE] [--allow-unknown-extensions]
    lecturelib gradebook late --assignment NAME --course TOML [--roster CSV] [--feedback DIR]
                              [--allow-unknown-extensions]
    lecturelib gradebook similarity --assignment NAME [--solutions DIR] [--output FILE]
    lecturelib gradebook summary --assignment NAME [--roster CSV] [--course TOML] [--output FILE]
                                 [--allow-unknown-extensions]

:mod:`.cli` adds these parsers (:func:`add_course_commands`) and hands the parsed
arguments over (:func:`run_collect`, :func:`run_gradebook_action`).  Errors are
:class:`~.notebook.GradingError`, which the command line prints as one line.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ..core.notebook import GradingError, check_assignment_name
from ..core.report import fmt, plain, write_atomic
from ..core.submissions import display, feedback_folder, feedback_path
from ..gradebook.store import Gradebook

DEFAULT_GRADEBOOK = "gradebook.sqlite"
ACTIONS = ("late", "similarity", "summary")


def add_course_commands(sub, gsub) -> None:
    """Add ``collect`` to the commands, and the export options and the ``late``,
    ``similarity`` and ``summary`` actions to ``gradebook``."""
    c = sub.add_parser("collect", help="an LMS bulk download (Canvas or Moodle zip) or a folder in, "
                                       "one notebook per student out, with submission times",
                       description="Collect the latest submission of every student from a Canvas "
                                   "or Moodle bulk-download zip, or a folder, into a new folder "
                                   "(STUDENT.ipynb each) and record the submission times in the "
                                   "gradebook. Refused zip entries and unmapped files are listed; "
                                   "exit status 1 when there are any.")
    c.add_argument("download", help="the zip file or folder")
    c.add_argument("--assignment", required=True)
    c.add_argument("--output", required=True, help="a new or empty folder")
    c.add_argument("--roster", help="CSV of student ids and names (see the README)")
    c.add_argument("--course", help="the course file: its time zone reads the zip's times, and "
                                    "its max_submissions limits the submissions kept")
    c.add_argument("--gradebook", default=DEFAULT_GRADEBOOK)

    e = gsub.choices["export"]
    e.add_argument("--format", choices=("canvas", "moodle", "csv"), default="csv",
                   help="canvas or moodle: the LMS's grade import layout; csv: with --assignment "
                        "the per-question scores, without one final score per assignment")
    e.add_argument("--roster", help="CSV of student ids and names: the LMS ids in the export")
    e.add_argument("--course", help="the course file: late policy, extensions and points")
    _allow_unknown(e)

    late = gsub.add_parser("late", help="apply the course's deadlines and late policy: a table, "
                                        "and a section in every feedback file")
    late.add_argument("--assignment", required=True)
    late.add_argument("--course", required=True)
    late.add_argument("--roster", help="CSV of student ids and names: students with an extension "
                                       "who have no graded submission yet")
    _allow_unknown(late)
    late.add_argument("--gradebook", default=DEFAULT_GRADEBOOK)
    late.add_argument("--feedback", help="the feedback folder (default: feedback/ASSIGNMENT "
                                         "beside the gradebook)")

    s = gsub.add_parser("similarity", help="pairs of unusually similar submissions, for review "
                                           "(an offline HTML report; changes no grade)")
    s.add_argument("--assignment", required=True)
    s.add_argument("--gradebook", default=DEFAULT_GRADEBOOK)
    s.add_argument("--solutions", help="folder of solution notebooks (the released exercise's "
                                       "code is made from it and ignored)")
    s.add_argument("--output", help="the HTML report (default: reports/ASSIGNMENT-similarity.html "
                                    "beside the gradebook)")

    m = gsub.add_parser("summary", help="one assignment's results as an offline HTML page")
    m.add_argument("--assignment", required=True)
    m.add_argument("--gradebook", default=DEFAULT_GRADEBOOK)
    m.add_argument("--roster")
    m.add_argument("--course")
    _allow_unknown(m)
    m.add_argument("--output", help="default: reports/ASSIGNMENT-summary.html beside the gradebook")


def _allow_unknown(parser) -> None:
    parser.add_argument("--allow-unknown-extensions", action="store_true",
                        help="apply the course file even when it gives extensions to students "
                             "neither in the gradebook nor on the roster (they are listed)")


def _extensions(args, book, assignments, course, roster) -> None:
    """Refuse (or, when allowed, list) extensions for students nobody knows."""
    from ..course.policy import check_extensions

    lines = check_extensions(book, assignments, course, roster,
                             allow_unknown=args.allow_unknown_extensions)
    if lines:
        print(f"lecturelib: note: {len(lines)} extension(s) for students neither in the gradebook "
              f"nor on the roster, not applied to anyone: {'; '.join(lines[:20])}", file=sys.stderr)


def handles(args) -> bool:
    """Whether a ``gradebook`` action is one of this module's."""
    return args.action in ACTIONS or (args.action == "export" and
                                      (args.format != "csv" or not args.assignment))


def _roster(args):
    from ..course.roster import read_roster

    return read_roster(args.roster) if getattr(args, "roster", None) else None


def _course(args):
    from ..course.policy import read_course

    return read_course(args.course) if getattr(args, "course", None) else None


def run_collect(args) -> int:
    from ..course.collect import collect

    check_assignment_name(args.assignment)
    if not Path(args.download).exists():
        raise GradingError(f"{display(args.download)}: no such file or folder")
    roster, course = _roster(args), _course(args)
    with Gradebook(args.gradebook) as book:
        done = collect(args.download, args.output, assignment=args.assignment, roster=roster,
                       timezone=course.timezone if course else None, gradebook=book,
                       max_submissions=course.policy(args.assignment).max_submissions if course else None)
    print(done.report())
    print(f"submission times recorded in {plain(str(args.gradebook), 200)}; grade with: "
          f"lecturelib grade {plain(str(args.output), 200)} --assignment {args.assignment}")
    if done.problems:
        print(f"lecturelib: {done.problems} file(s) refused or not mapped to a student (listed "
              "above)", file=sys.stderr)
        return 1
    return 0


def run_gradebook_action(args) -> int:
    if args.assignment is not None:
        check_assignment_name(args.assignment)
    with Gradebook(args.gradebook) as book:
        return {"export": _export, "late": _late, "similarity": _similarity,
                "summary": _summary}[args.action](args, book)


def _write(args, text: str, default: Path | None = None) -> None:
    target = Path(args.output) if args.output else default
    if target is None:
        sys.stdout.write(text)
        return
    if not args.output:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise GradingError(f"cannot create {display(str(target.parent))}: {exc.strerror}") from None
    write_atomic(target, text)
    print(f"written: {plain(str(target), 300)}")


def _export(args, book) -> int:
    from ..course.export import export_grades

    roster, course = _roster(args), _course(args)
    if course is not None:
        names = [args.assignment] if args.assignment else \
            [r[0] for r in book.db.execute("SELECT DISTINCT assignment FROM submissions")]
        _extensions(args, book, names, course, roster)
    text = export_grades(book, args.format, roster=roster, course=course,
                         assignment=args.assignment, allow_pending=args.allow_pending)
    if roster is not None:
        known = {s.id for s in roster}
        extra = sorted({r[0] for r in book.db.execute("SELECT student FROM submissions")} - known)
        if extra:
            how = "left out" if args.format == "moodle" else "exported without SIS ids"
            print(f"lecturelib: note: {len(extra)} graded student(s) not on the roster, {how}: "
                  f"{', '.join(extra[:20])}", file=sys.stderr)
    _write(args, text)
    return 0


def _late(args, book) -> int:
    from ..course.policy import outcomes, read_course, with_late_section

    course = read_course(args.course)
    if args.assignment not in course.assignments:
        raise GradingError(f"the course file has no assignment {args.assignment!r}")
    _extensions(args, book, [args.assignment], course, _roster(args))
    results = outcomes(book, args.assignment, course)
    if not results:
        raise GradingError(f"the gradebook {book.path} has no results for assignment {args.assignment!r}")
    folder = Path(args.feedback) if args.feedback else feedback_folder(book.path, args.assignment)
    updated = 0
    for student, o in sorted(results.items()):
        if o.reason:
            print(f"{student}: {fmt(o.raw)} - {fmt(round(o.penalty, 2))} = {fmt(round(o.final, 2))}"
                  f" / {fmt(o.total)}: {plain(o.reason, 300)}")
        path = feedback_path(folder, student)
        try:
            old = path.read_text(encoding="utf-8") if path.is_file() and not path.is_symlink() else ""
        except (OSError, UnicodeDecodeError):
            old = ""
        if old:
            write_atomic(path, with_late_section(old, o))
            updated += 1
    disagree = [o for _, o in sorted(results.items()) if o.lms_disagreement]
    for o in disagree:
        print(f"{o.student}: {o.lms_disagreement}")
    late = sum(o.late for o in results.values())
    print(f"{len(results)} graded, {late} late, {len(disagree)} where the LMS's late flag "
          f"disagrees; {updated} feedback file(s) updated in {plain(str(folder), 200)}")
    return 0


def _similarity(args, book) -> int:
    from ..autograde.reference import solution_for
    from ..course.similarity import (default_report_path, exercise_boilerplate, gradebook_codes,
                                     html_report, screen, screen_texts, written_answers)

    codes, unread = gradebook_codes(book, args.assignment)
    boilerplate = exercise_boilerplate(solution_for(args.assignment, args.solutions), args.assignment)
    result = screen(codes, boilerplate)
    result.skipped[:0] = unread
    flagged = [p for p in result.pairs if p.flagged]
    for p in result.pairs[:10]:
        print(f"{p.score:.2f}  {p.a}  {p.b}{'  flagged' if p.flagged else ''}")
    print(f"{len(flagged)} pair(s) flagged for review among {len(result.pairs)}; no grade changed")
    answers = written_answers(book, args.assignment)
    written = {qid: screen_texts(texts, model) for qid, (model, texts) in answers.items()}
    for qid, screening in written.items():
        print(f"written answers to {qid}: {sum(p.flagged for p in screening.pairs)} pair(s) "
              f"flagged among {len(screening.pairs)}")
    page = html_report(result, args.assignment, written=written,
                       texts={qid: texts for qid, (_, texts) in answers.items()})
    _write(args, page, default_report_path(book, args.assignment))
    return 0


def _summary(args, book) -> int:
    from ..course.summary import summary_page

    roster, course = _roster(args), _course(args)
    _extensions(args, book, [args.assignment], course, roster)
    page = summary_page(book, args.assignment, roster=roster, course=course)
    _write(args, page, book.path.parent / "reports" / f"{args.assignment}-summary.html")
    return 0

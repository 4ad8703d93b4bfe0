"""The commands that help people grade and review their grading: ``lecturelib gradebook
analyze`` and ``lecturelib gradebook groups``."""

from __future__ import annotations

import json
import sys

from ..core.notebook import GradingError, check_assignment_name
from ..gradebook.store import Gradebook

ACTIONS = ("analyze", "groups")


def add_review_commands(gsub, default_gradebook: str) -> None:
    a = gsub.add_parser("analyze", help="item and grader analysis of one assignment: mean, "
                                        "spread and discrimination of every question, "
                                        "Cronbach's alpha, each grader's share of points",
                        description="Pending answers (not graded yet) are left out, not "
                                    "counted as 0. See the README's instructor's week.")
    a.add_argument("--assignment", required=True)
    a.add_argument("--gradebook", default=default_gradebook)
    a.add_argument("--json", action="store_true", help="print the analysis as JSON")

    g = gsub.add_parser("groups", help="answers of one written question grouped by what they "
                                       "say; split, merge, or grade a group in one action",
                        description="Groups are made the first time and kept in the gradebook "
                                    "(with their splits and merges) until --recompute.")
    g.add_argument("--assignment", required=True)
    g.add_argument("--question", required=True, help="a written question's id, e.g. q8")
    g.add_argument("--gradebook", default=default_gradebook)
    g.add_argument("--json", action="store_true", help='print {"groups": [...]} as JSON')
    g.add_argument("--recompute", action="store_true",
                   help="make the groups afresh (drops earlier splits and merges)")
    g.add_argument("--split", action="append", metavar="STUDENT",
                   help="move this student's answer to a new group (repeat for several)")
    g.add_argument("--merge", action="append", type=int, metavar="GROUP",
                   help="merge these groups into the first named (repeat: at least two)")
    g.add_argument("--grade", type=int, metavar="GROUP", help="grade every answer of this group")
    g.add_argument("--items", default="", help="with --grade: the rubric items that apply, "
                                               "comma-separated (none: an empty list)")
    g.add_argument("--grader", help="with --grade: your name, recorded in the audit")
    g.add_argument("--comment", default="", help="with --grade: the comment for every member")


def handles(args) -> bool:
    return args.action in ACTIONS


def run(args) -> int:
    check_assignment_name(args.assignment)
    with Gradebook(args.gradebook) as book:
        return {"analyze": _analyze, "groups": _groups}[args.action](args, book)


def _analyze(args, book) -> int:
    from ..gradebook.analysis import analysis_table, analyze

    result = analyze(book, args.assignment)
    sys.stdout.write(json.dumps(result, indent=2) + "\n" if args.json else analysis_table(result))
    return 0


def _groups(args, book) -> int:
    from ..gradebook import groups

    changes = [bool(args.split), bool(args.merge), args.grade is not None]
    if sum(changes) > 1:
        raise GradingError("--split, --merge and --grade are one change at a time")
    if args.grade is not None and not args.grader:
        raise GradingError("--grade needs --grader NAME (recorded in the audit)")
    result = groups.groups(book.db, args.assignment, args.question, recompute=args.recompute)
    if args.split:
        number = groups.split(book.db, args.assignment, args.question, args.split)
        print(f"split off into group {number}", file=sys.stderr)
    elif args.merge:
        number = groups.merge(book.db, args.assignment, args.question, args.merge)
        print(f"merged into group {number}", file=sys.stderr)
    elif args.grade is not None:
        items = [i for i in args.items.split(",") if i]
        states = groups.grade_group(book.db, args.assignment, args.question, args.grade,
                                    who=args.grader, applied=items, comment=args.comment)
        scores = ", ".join(sorted({f"{s['score']:g}" for s in states}))
        print(f"graded {len(states)} answer(s) of group {args.grade}: {scores} points",
              file=sys.stderr)
    if any(changes):
        result = groups.groups(book.db, args.assignment, args.question)
    if args.json:
        sys.stdout.write(json.dumps({"groups": result}, indent=2) + "\n")
    else:
        sys.stdout.write(groups.groups_table(result))
    return 0



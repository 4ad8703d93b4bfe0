"""The commands that help people grade and review their grading: ``lecturelib gradebook
analyze``, ``groups``, ``regrade``, and the graders' shares and double marking: ``next``,
``second-mark``, ``disagreements``."""

from __future__ import annotations

import json
import sys

from ..core.notebook import GradingError, check_assignment_name
from ..gradebook.store import Gradebook

ACTIONS = ("analyze", "groups", "regrade", "second-mark", "disagreements", "next")


def add_review_commands(gsub, default_gradebook: str) -> None:
    a = gsub.add_parser("analyze", help="item and grader analysis of one assignment: mean, "
                                        "spread and discrimination of every question, "
                                        "Cronbach's alpha, each grader's share of points",
                        description="Pending answers (not graded yet) are left out, not "
                                    "counted as 0. See the README's instructor's week.")
    a.add_argument("--assignment", required=True)
    a.add_argument("--gradebook", default=default_gradebook)
    a.add_argument("--json", action="store_true", help="print the analysis as JSON")
    a.add_argument("--plot", metavar="FILE", help="also draw the score distributions and the "
                                                  "discrimination per question (.png, .svg or .pdf)")

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
    g.add_argument("--grade", type=int, metavar="GROUP",
                   help="grade every answer of this group (only a group whose answers are the "
                        "same after folding spacing, case and notation; grade others in the app)")
    g.add_argument("--items", default="", help="with --grade: the rubric items that apply, "
                                               "comma-separated (none: an empty list)")
    g.add_argument("--grader", help="with --grade: your name, recorded in the audit")
    g.add_argument("--comment", default="", help="with --grade: the comment for every member")

    r = gsub.add_parser("regrade", help="regrade requests: record one (from the LMS), list the "
                                        "queue, or resolve one with a decision",
                        description="Record: --student, --question, --reason, --by. List: "
                                    "--list. Resolve: --resolve N --grader NAME --decision TEXT "
                                    "[--items a,b | --override POINTS]; the resolver must not be "
                                    "who graded the answer; the student's feedback is written again.")
    r.add_argument("--assignment", required=True)
    r.add_argument("--gradebook", default=default_gradebook)
    r.add_argument("--student")
    r.add_argument("--question")
    r.add_argument("--reason", help="the student's reason, as the LMS passed it on")
    r.add_argument("--by", help="your name: who recorded the request")
    r.add_argument("--list", action="store_true", help="every request, open ones first")
    r.add_argument("--resolve", type=int, metavar="N", help="resolve request N")
    r.add_argument("--grader", help="with --resolve: your name")
    r.add_argument("--decision", help="with --resolve: the decision and its reason (the student reads it)")
    r.add_argument("--items", help="with --resolve: the rubric items that apply now, comma-separated")
    r.add_argument("--override", type=float, help="with --resolve: a code question's new points")
    r.add_argument("--feedback", help="the feedback folder (default: feedback/ASSIGNMENT beside "
                                      "the gradebook)")

    n = gsub.add_parser("next", help="the next answer a grader should grade: the first pending one "
                                     "of their share (a fair, fixed pseudo-random order), then the "
                                     "sampled answers they owe a blind second mark")
    n.add_argument("--assignment", required=True)
    n.add_argument("--question", required=True)
    n.add_argument("--gradebook", default=default_gradebook)
    n.add_argument("--grader", help="your name (one of --graders)")
    n.add_argument("--graders", help='the graders sharing the question, e.g. "Ann Lee,Bo Chen"')
    n.add_argument("--double-mark", type=float, default=0, metavar="PERCENT",
                   help="the share of answers marked twice, blind (e.g. 10)")

    s = gsub.add_parser("second-mark", help="a blind second mark of a sampled written answer "
                                            "(changes no grade; see disagreements)")
    s.add_argument("--assignment", required=True)
    s.add_argument("--question", required=True)
    s.add_argument("--student", required=True)
    s.add_argument("--grader", required=True, help="your name: not the first mark's grader")
    s.add_argument("--items", default="", help="the rubric items that apply, comma-separated")
    s.add_argument("--adjustment", type=float, default=0.0)
    s.add_argument("--gradebook", default=default_gradebook)

    d = gsub.add_parser("disagreements", help="double-marked answers whose two marks differ, "
                                              "for a third grader to resolve",
                        description="List: the unresolved disagreements. Resolve: --question Q "
                                    "--resolve STUDENT --keep first|second --grader NAME (neither "
                                    "of the two who marked): the grade stands, or the second mark "
                                    "becomes the grade.")
    d.add_argument("--assignment", required=True)
    d.add_argument("--question")
    d.add_argument("--gradebook", default=default_gradebook)
    d.add_argument("--json", action="store_true")
    d.add_argument("--resolve", metavar="STUDENT", help="resolve the disagreement on this answer")
    d.add_argument("--keep", choices=("first", "second"),
                   help="with --resolve: the grade as it stands (first) or the second mark")
    d.add_argument("--grader", help="with --resolve: your name, recorded in the audit")


def handles(args) -> bool:
    return args.action in ACTIONS


def run(args) -> int:
    check_assignment_name(args.assignment)
    with Gradebook(args.gradebook) as book:
        return {"analyze": _analyze, "groups": _groups, "regrade": _regrade, "next": _next,
                "second-mark": _second_mark, "disagreements": _disagreements}[args.action](args, book)


def _analyze(args, book) -> int:
    from ..gradebook.analysis import analysis_table, analyze

    result = analyze(book, args.assignment)
    if args.plot:
        from ..gradebook.analysis import save_analysis_figure

        save_analysis_figure(book, args.assignment, args.plot)
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
        chosen = [g for g in result if g["group"] == args.grade]
        refusal = groups.why_not_at_once(chosen[0]) if chosen else ""
        if refusal:  # nobody has seen its members: the app shows them all
            raise GradingError(refusal)
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




def _regrade(args, book) -> int:
    from pathlib import Path

    from ..core.report import plain
    from ..core.submissions import feedback_folder
    from ..gradebook import regrades

    if args.resolve is not None:
        if not (args.grader and args.decision):
            raise GradingError("--resolve needs --grader NAME and --decision TEXT")
        if args.items is not None and args.override is not None:
            raise GradingError("--items (a written answer) or --override (a code question), not both")
        folder = Path(args.feedback) if args.feedback else feedback_folder(book.path, args.assignment)
        items = None if args.items is None else [i for i in args.items.split(",") if i]
        state = regrades.resolve(book.db, args.resolve, who=args.grader, decision=args.decision,
                                 applied=items, override=args.override, feedback_dir=folder)
        print(f"regrade request {args.resolve} resolved: {state['score']:g} points; feedback "
              f"written again in {plain(str(folder), 200)}")
        return 0
    if args.list:
        rows = sorted(regrades.requests(book.db, args.assignment), key=lambda r: (r["status"] != "open", r["id"]))
        for r in rows:
            decided = f" -> {plain(r['decision'], 200)} ({plain(r['decided_by'], 40)})" if r["decision"] else ""
            print(f"{r['id']:>4} {r['status']:<8} {plain(r['student'], 60)} {r['question']}: "
                  f"{plain(r['reason'], 200)}{decided}")
        return 0
    missing = [flag for flag, value in (("--student", args.student), ("--question", args.question),
                                        ("--reason", args.reason), ("--by", args.by)) if not value]
    if missing:
        raise GradingError(f"recording a regrade request needs {', '.join(missing)} "
                           "(or --list, or --resolve N)")
    number = regrades.request(book.db, args.assignment, args.student, args.question,
                              reason=args.reason, who=args.by)
    print(f"regrade request {number} recorded")
    return 0


def graders_option(text: str | None) -> list[str]:
    """The names of ``--graders "Ann Lee,Bo Chen"`` (checked by
    :func:`..gradebook.allocation.check_graders`: an empty name is refused, not dropped)."""
    return [g.strip() for g in text.split(",")] if text else []


def _next(args, book) -> int:
    from ..gradebook.allocation import check_graders, next_ungraded

    graders = check_graders(graders_option(args.graders), args.double_mark)
    if graders and args.grader not in graders:
        raise GradingError("--grader must be one of --graders")
    student = next_ungraded(book.db, args.assignment, args.question, grader=args.grader,
                            graders=graders, percent=args.double_mark)
    print(student if student is not None else "nothing left to grade")
    return 0


def _second_mark(args, book) -> int:
    from ..gradebook.allocation import save_second_mark

    items = [i for i in args.items.split(",") if i]
    save_second_mark(book.db, args.assignment, args.student, args.question, who=args.grader,
                     applied=items, adjustment=args.adjustment)
    print("second mark recorded (no grade changed)")
    return 0


def _disagreements(args, book) -> int:
    from ..core.report import plain
    from ..gradebook.allocation import disagreements, resolve_disagreement

    if args.resolve is not None:
        missing = [flag for flag, value in (("--question", args.question), ("--keep", args.keep),
                                            ("--grader", args.grader)) if not value]
        if missing:
            raise GradingError(f"--resolve needs {', '.join(missing)}")
        state = resolve_disagreement(book.db, args.assignment, args.resolve, args.question,
                                     who=args.grader, keep=args.keep)
        print(f"disagreement resolved: the {args.keep} mark kept, {state['score']:g} points")
        return 0
    found = disagreements(book.db, args.assignment, args.question)
    if args.json:
        sys.stdout.write(json.dumps({"disagreements": found}, indent=2) + "\n")
        return 0
    for d in found:
        first, second = d["first"], d["second"]
        print(f"{d['question']} {plain(d['student'], 60)}: {plain(first['grader'], 40)} "
              f"{first['score']:g} ({','.join(first['applied']) or '-'}) against "
              f"{plain(second['grader'], 40)} {second['score']:g} ({','.join(second['applied']) or '-'})")
    print(f"{len(found)} disagreement(s)")
    return 0

"""The commands that review grading by people: ``lecturelib gradebook analyze``."""

from __future__ import annotations

import json
import sys

from ..core.notebook import check_assignment_name
from ..gradebook.store import Gradebook

ACTIONS = ("analyze",)


def add_review_commands(gsub, default_gradebook: str) -> None:
    a = gsub.add_parser("analyze", help="item and grader analysis of one assignment: mean, "
                                        "spread and discrimination of every question, "
                                        "Cronbach's alpha, each grader's share of points",
                        description="Pending answers (not graded yet) are left out, not "
                                    "counted as 0. See the README's instructor's week.")
    a.add_argument("--assignment", required=True)
    a.add_argument("--gradebook", default=default_gradebook)
    a.add_argument("--json", action="store_true", help="print the analysis as JSON")


def handles(args) -> bool:
    return args.action in ACTIONS


def run(args) -> int:
    from ..gradebook.analysis import analysis_table, analyze

    check_assignment_name(args.assignment)
    with Gradebook(args.gradebook) as book:
        result = analyze(book, args.assignment)
    sys.stdout.write(json.dumps(result, indent=2) + "\n" if args.json else analysis_table(result))
    return 0

"""Grades out, in the layout each LMS imports (``lecturelib gradebook export --format``).

- ``canvas``: Canvas's gradebook CSV.  The columns ``Student, ID, SIS User ID, SIS Login ID,
  Section`` (Canvas finds the student by ``ID``, the Canvas user id), then one column per
  assignment (its ``lms_name`` in the course file, e.g. ``Exercise 1 (123456)`` to update an
  existing Canvas assignment, else its name, which makes a new one), and a second row
  ``Points Possible`` with each assignment's points.
- ``moodle``: for Moodle's "Import grades from CSV file": a header row and one row per student;
  the identifier columns ``ID number`` and ``Email address`` (map either to the user field of
  the same name in the import form), ``Full name``, then one column per assignment (map it to
  the grade item).  No points row: Moodle takes the maximum from the grade item.  Students
  with neither an ID number nor an e-mail (graded, not on the roster) are left out.
- ``csv``: with ``--assignment``, the gradebook's per-question CSV (raw scores); without,
  one row per student with the final score of every assignment.

Students are the roster's, in roster order, then graded students who are not on it (their
gradebook name as ``ID``).  Scores are final scores (after the course's late policy) in
the LMS's points, to two decimals; a student with no graded submission gets an empty cell
(the LMS leaves the grade as it is).  Every field is written by the gradebook's CSV
writer's rules: quoted, formula-leading text neutralised.
"""

from __future__ import annotations

import csv
import io

from ..core.notebook import GradingError
from ..gradebook.store import csv_number, csv_safe
from .policy import Course, outcomes
from .roster import Roster, Student

FORMATS = ("canvas", "moodle", "csv")
CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
MOODLE_COLUMNS = ("Full name", "ID number", "Email address")


def _assignments(book, assignment: str | None) -> list[str]:
    names = [r[0] for r in book.db.execute("SELECT DISTINCT assignment FROM submissions ORDER BY assignment")]
    if assignment is not None:
        if assignment not in names:
            raise GradingError(f"the gradebook {book.path} has no results for assignment {assignment!r}")
        return [assignment]
    if not names:
        raise GradingError(f"the gradebook {book.path} has no results")
    return names


def _students(roster: Roster | None, graded: set[str]) -> list[Student]:
    listed = list(roster) if roster is not None else []
    known = {s.id for s in listed}
    return listed + [Student(s, "") for s in sorted(graded - known)]


def _cell(value) -> str:
    return "" if value is None else csv_number(value)


def export_grades(book, fmt: str, *, roster: Roster | None = None, course: Course | None = None,
                  assignment: str | None = None, allow_pending: bool = False) -> str:
    """The CSV text of the grades in format ``fmt`` (see the module's docstring).  Written
    answers nobody has graded yet are refused unless ``allow_pending`` (then they count 0)."""
    if fmt not in FORMATS:
        raise GradingError(f"unknown export format {fmt!r}: use one of {', '.join(FORMATS)}")
    if fmt == "csv" and assignment is not None:
        return book.export_csv(assignment, allow_pending=allow_pending)
    if fmt == "moodle" and roster is None:
        raise GradingError("the moodle format needs a roster (--roster): Moodle finds students by "
                           "their ID number or e-mail address, which only the roster knows")
    names = _assignments(book, assignment)
    pending = sum(len(book.pending(a)) for a in names)
    if pending and not allow_pending:
        raise GradingError(f"{pending} written answer(s) are still pending (grade them with "
                           "`lecturelib gradebook serve`, or pass --allow-pending to count them as 0)")
    results = {a: outcomes(book, a, course) for a in names}
    graded = {s for table in results.values() for s in table}
    students = _students(roster, graded)
    titles = [(course.policy(a).lms_name if course is not None else "") or a for a in names]
    possible = []
    for a in names:
        values = {o.points_possible for o in results[a].values()}
        if len(values) > 1:
            raise GradingError(f"assignment {a!r}: the gradebook's rows have different totals "
                               f"({', '.join(map(csv_number, sorted(values)))}); regrade them or set "
                               "'points' in the course file")
        possible.append(values.pop())
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_ALL)

    def row(cells):
        writer.writerow([csv_safe(c) for c in cells])

    def scores(s: Student):
        return [_cell(results[a][s.id].lms_score if s.id in results[a] else None) for a in names]

    if fmt == "canvas":
        row([*CANVAS_COLUMNS, *titles])
        row(["Points Possible", "", "", "", "", *map(csv_number, possible)])
        for s in students:
            row([s.name, s.id, s.sis_id, s.login, s.section, *scores(s)])
    elif fmt == "moodle":
        row([*MOODLE_COLUMNS, *titles])
        for s in students:
            if s.sis_id or s.email:  # Moodle cannot find a student without either: left out
                row([s.name, s.sis_id, s.email, *scores(s)])
    else:
        row(["student", "name", *titles])
        for s in students:
            row([s.id, s.name, *scores(s)])
    return out.getvalue()

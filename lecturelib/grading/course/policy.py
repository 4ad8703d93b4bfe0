"""The course file: due dates, late policy, extensions and points, applied to raw scores.

A TOML file in the course folder (``course.toml``)::

    timezone = "Europe/Zurich"          # times without an offset are read in this zone (default UTC)

    [assignments.01-bayes]
    due = 2026-10-05T23:59:00
    points = 10                         # points possible in the LMS (default: the notebook's total)
    grace_minutes = 5                   # handed in this late still counts as on time
    penalty_per_day = 0.10              # either: a share of the score per started day late,
    max_late_days = 5                   #   and no credit after this many days (optional)
    # credit = [{until = 2026-10-06T23:59:00, percent = 80},   # or: credit windows after the
    #           {until = 2026-10-09T23:59:00, percent = 50}]   #   due date, as PrairieLearn's
    max_submissions = 3                 # lecturelib collect keeps the last of the first three
    [assignments.01-bayes.extensions]
    "12345" = 2026-10-08T23:59:00       # a new due date for this student
    "67890" = 2                         # or a number of days

Every policy gives a credit factor :math:`c \\in [0, 1]` for a submission handed in at time
:math:`t` against the (possibly extended) due date :math:`d`:

- per day: :math:`c = 1 - \\min(1, r \\lceil (t - d - g) / 1\\,\\mathrm{day} \\rceil)` for
  :math:`t > d + g` (rate :math:`r`, grace :math:`g`), and :math:`c = 0` beyond
  ``max_late_days``;
- credit windows: :math:`c` is the percent of the first window whose end is not before
  :math:`t`, and 0 after the last (an extension moves every window by as much as the due
  date).

The final score is :math:`c \\cdot s` for the raw score :math:`s`, the penalty
:math:`(1 - c)\\, s`; in the LMS's points, :math:`c \\cdot s \\cdot P / T` for ``points``
:math:`P` and the notebook's total :math:`T`.  The submission time is the one recorded by
``lecturelib collect`` for the notebook that was graded (same SHA-256); without one, no
policy is applied and the reason says so.
"""

from __future__ import annotations

import dataclasses
import datetime
import math
import tomllib
from pathlib import Path

from ..core.notebook import ASSIGNMENT_NAME, GradingError
from ..core.report import fmt
from ..core.submissions import NAME, display
from .collect import SubmissionTime, submission_times, time_zone

UTC = datetime.timezone.utc
MAX_COURSE_BYTES = 2**20
EARLIEST = datetime.datetime(1970, 1, 1, tzinfo=UTC)   # every date of a course file lies
LATEST = datetime.datetime(2200, 1, 1, tzinfo=UTC)     # between these (no overflow after)
MAX_POINTS = 1e6
MAX_DAYS = 365
COURSE_KEYS = {"timezone", "assignments", "name"}
ASSIGNMENT_KEYS = {"due", "points", "grace_minutes", "penalty_per_day", "max_late_days", "credit",
                   "extensions", "lms_name", "max_submissions"}


@dataclasses.dataclass(frozen=True)
class Window:
    until: datetime.datetime
    credit: float


@dataclasses.dataclass(frozen=True)
class Policy:
    """One assignment's deadline and late policy (times in UTC; ``zone``, the course's time
    zone, is the one its reasons show times in)."""

    name: str
    due: datetime.datetime | None = None
    points: float | None = None
    grace: datetime.timedelta = datetime.timedelta(0)
    penalty_per_day: float | None = None
    max_late_days: int | None = None
    windows: tuple[Window, ...] = ()
    extensions: dict = dataclasses.field(default_factory=dict)  # student -> due (UTC)
    lms_name: str = ""
    max_submissions: int | None = None  # applied by lecturelib collect
    zone: datetime.tzinfo = UTC

    def due_for(self, student: str) -> datetime.datetime | None:
        return self.extensions.get(student, self.due)

    def credit(self, student: str, submitted: datetime.datetime) -> tuple[float, str]:
        """The credit factor of a submission and why (empty when on time)."""
        due = self.due_for(student)
        if due is None:
            return 1.0, ""
        extended = student in self.extensions
        late = submitted - due - self.grace
        if late <= datetime.timedelta(0):
            return 1.0, ""
        when = f"handed in {_show(submitted, self.zone)}, after the due date {_show(due, self.zone)}"
        if extended:
            when += f" (extended from {_show(self.due, self.zone)})"
        if self.windows:
            shift = due - self.due
            for w in self.windows:
                if submitted <= w.until + shift + self.grace:
                    return w.credit, f"{when}: {fmt(round(100 * w.credit, 2))}% credit " \
                                     f"(late window until {_show(w.until + shift, self.zone)})"
            last = _show(self.windows[-1].until + shift, self.zone)
            return 0.0, f"{when}: after the last late window ({last}): no credit"
        if self.penalty_per_day is None:
            return 1.0, f"{when}: no late penalty in this course"
        days = math.ceil(late / datetime.timedelta(days=1))
        if self.max_late_days is not None and days > self.max_late_days:
            return 0.0, f"{when}: {days} days late, more than {self.max_late_days}: no credit"
        share = min(1.0, days * self.penalty_per_day)
        return 1.0 - share, (f"{when}: {days} day(s) late, penalty {fmt(round(100 * share, 2))}% "
                             f"of the score")


@dataclasses.dataclass(frozen=True)
class Course:
    timezone: str
    assignments: dict[str, Policy]

    def policy(self, assignment: str) -> Policy:
        return self.assignments.get(assignment, Policy(assignment))


def _show(when: datetime.datetime, zone: datetime.tzinfo = UTC) -> str:
    """A time as the course shows it: in its time zone, with the zone's abbreviation."""
    return when.astimezone(zone).strftime("%Y-%m-%d %H:%M %Z").replace("UTC+00:00", "UTC")


def _time(value, zone, where) -> datetime.datetime:
    if not isinstance(value, datetime.datetime):
        raise GradingError(f"{where} must be a date and time (e.g. 2026-10-05T23:59:00), got {value!r}"[:200])
    if not EARLIEST.year <= value.year < LATEST.year:
        raise GradingError(f"{where}: {value.isoformat()} is not between {EARLIEST.year} and "
                           f"{LATEST.year - 1}")
    try:
        when = (value if value.tzinfo else value.replace(tzinfo=zone)).astimezone(UTC)
    except (OverflowError, ValueError):
        when = None
    if when is None or not EARLIEST <= when < LATEST:
        raise GradingError(f"{where}: {value.isoformat()} is not between {EARLIEST.year} and "
                           f"{LATEST.year - 1}")
    return when


def _number(spec, key, where, low, high, integer=False):
    value = spec.get(key)
    if value is None:
        return None
    ok = isinstance(value, int if integer else (int, float)) and not isinstance(value, bool)
    if not ok or not low <= value <= high:   # NaN and infinities fail here too
        kind = "a whole number" if integer else "a number"
        raise GradingError(f"{where}: {key!r} must be {kind} from {low:g} to {high:g}, got "
                           f"{value!r}"[:200])
    return value


def _policy(name, spec, zone) -> Policy:
    where = f"the course file, assignment {name!r}"
    if not isinstance(spec, dict):
        raise GradingError(f"{where} must be a table")
    unknown = sorted(set(spec) - ASSIGNMENT_KEYS)
    if unknown:
        raise GradingError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(ASSIGNMENT_KEYS))})")
    due = _time(spec["due"], zone, f"{where}: 'due'") if "due" in spec else None
    if ("penalty_per_day" in spec) and ("credit" in spec):
        raise GradingError(f"{where}: give either 'penalty_per_day' or 'credit' windows, not both")
    if due is None and any(k in spec for k in ("penalty_per_day", "credit", "extensions")):
        raise GradingError(f"{where}: a late policy or an extension needs a 'due' date")
    points = _number(spec, "points", where, 0, MAX_POINTS)
    if points is not None and points <= 0:
        raise GradingError(f"{where}: 'points' must be positive, got {points!r}")
    windows = []
    credit = spec.get("credit", [])
    if not isinstance(credit, list):
        raise GradingError(f"{where}: 'credit' must be a list of {{until = ..., percent = ...}}")
    for i, w in enumerate(credit):
        here = f"{where}, credit window {i + 1}"
        if not isinstance(w, dict) or set(w) != {"until", "percent"}:
            raise GradingError(f"{here} must be {{until = DATE-TIME, percent = NUMBER}}")
        until = _time(w["until"], zone, f"{here}: 'until'")
        if until <= due or (windows and until <= windows[-1].until):
            raise GradingError(f"{here}: windows must end after the due date and after each other")
        windows.append(Window(until, _number(w, "percent", here, 0, 100) / 100))
    extensions = {}
    raw_ext = spec.get("extensions", {})
    if not isinstance(raw_ext, dict):
        raise GradingError(f"{where}: 'extensions' must be a table of student = date or days")
    for student, value in raw_ext.items():
        here = f"{where}, extension of {display(student)}"
        if not NAME.match(student):
            raise GradingError(f"{here}: not a student id")
        if isinstance(value, int) and not isinstance(value, bool):
            if not 0 < value <= MAX_DAYS:
                raise GradingError(f"{here}: days must be from 1 to {MAX_DAYS}, got {value}")
            extensions[student] = due + datetime.timedelta(days=value)
        else:
            extensions[student] = _time(value, zone, here)
            if extensions[student] < due:
                raise GradingError(f"{here}: earlier than the due date")
    lms_name = spec.get("lms_name", "")
    if not isinstance(lms_name, str) or len(lms_name) > 200:
        raise GradingError(f"{where}: 'lms_name' must be a short text")
    return Policy(name, due, points,
                  datetime.timedelta(minutes=_number(spec, "grace_minutes", where, 0,
                                                     MAX_DAYS * 24 * 60) or 0),
                  _number(spec, "penalty_per_day", where, 0, 1),
                  _number(spec, "max_late_days", where, 0, MAX_DAYS, integer=True),
                  tuple(windows), extensions, lms_name,
                  _number(spec, "max_submissions", where, 1, 1000, integer=True), zone)


def parse_course(text: str) -> Course:
    """A :class:`Course` from TOML text, validated up front."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise GradingError(f"the course file is not valid TOML: {exc}") from None
    except RecursionError:
        raise GradingError("the course file is nested too deeply to be a course file") from None
    except ValueError:  # an integer longer than Python's limit on reading digits (4300)
        raise GradingError("the course file holds a number with too many digits to be read") from None
    unknown = sorted(set(data) - COURSE_KEYS)
    if unknown:
        raise GradingError(f"the course file: unknown key {unknown[0]!r} (known: "
                           f"{', '.join(sorted(COURSE_KEYS))})")
    zone_name = data.get("timezone", "UTC")
    if not isinstance(zone_name, str):
        raise GradingError("the course file: 'timezone' must be a text such as 'Europe/Zurich'")
    zone = time_zone(zone_name)
    assignments = data.get("assignments", {})
    if not isinstance(assignments, dict):
        raise GradingError("the course file: 'assignments' must be a table")
    for name in assignments:
        if not ASSIGNMENT_NAME.match(name):
            raise GradingError(f"the course file: {display(name)} is not an assignment name")
    return Course(zone_name, {name: _policy(name, spec, zone) for name, spec in assignments.items()})


def read_course(path) -> Course:
    path = Path(path)
    if not path.is_file() or path.is_symlink():
        raise GradingError(f"{display(str(path))}: no such course file")
    if path.stat().st_size > MAX_COURSE_BYTES:
        raise GradingError(f"{display(str(path))} is larger than {MAX_COURSE_BYTES} bytes")
    try:
        text = path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        raise GradingError(f"{display(str(path))} is not readable UTF-8 text") from None
    return parse_course(text)


# --------------------------------------------------------------------------------------
# Applying it to the gradebook
# --------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Outcome:
    """A student's score on one assignment after the late policy."""

    student: str
    raw: float            # the grader's score
    total: float          # the notebook's points
    credit: float
    reason: str           # why the credit is below 1 or unknown ("" when on time)
    submitted: datetime.datetime | None
    points_possible: float  # in the LMS
    lms_late: bool | None = None   # the LMS's own late flag (Canvas's _late_), if it wrote one
    due: datetime.datetime | None = None  # the student's due date, extension applied
    grace: datetime.timedelta = datetime.timedelta(0)
    zone: datetime.tzinfo = UTC  # the course's, for the times its reasons show

    @property
    def final(self) -> float:
        return self.raw * self.credit

    @property
    def penalty(self) -> float:
        return self.raw - self.final

    @property
    def late(self) -> bool:
        return self.credit < 1

    @property
    def after_due(self) -> bool | None:
        """Whether the course file counts the submission late (after the due date and
        the grace), or ``None`` without a due date or a submission time."""
        if self.submitted is None or self.due is None:
            return None
        return self.submitted > self.due + self.grace

    @property
    def lms_disagreement(self) -> str:
        """Why the LMS's late flag and the course file disagree ("" when they agree, or
        when either says nothing)."""
        if self.lms_late is None or self.submitted is None:
            return ""
        when = f"handed in {_show(self.submitted, self.zone)}"
        if self.due is None:
            return f"the LMS marks it late; the course file has no due date ({when})" \
                if self.lms_late else ""
        if self.after_due == self.lms_late:
            return ""
        grace = f" + {fmt(self.grace.total_seconds() / 60)} min grace" if self.grace else ""
        if self.lms_late:
            return (f"the LMS marks it late; the course file counts it on time ({when}, due "
                    f"{_show(self.due, self.zone)}{grace})")
        return (f"the LMS does not mark it late; the course file does ({when}, due "
                f"{_show(self.due, self.zone)}{grace}): check the due dates and extensions in both")

    @property
    def lms_score(self) -> float:
        """The final score in the LMS's points, to two decimals."""
        if self.total <= 0:
            return 0.0
        return round(self.final * self.points_possible / self.total, 2)


def graded(book, assignment: str) -> dict[str, tuple[float, float, str]]:
    """student -> (score, total, sha256) of the gradebook's rows for ``assignment``; the
    score is the gradebook's sum over the questions (manual grades counted)."""
    points = book.scores(assignment)
    rows = book.db.execute("SELECT student, total, sha256 FROM submissions WHERE "
                           "assignment=? ORDER BY student", (assignment,)).fetchall()
    return {s: (sum(points.get(s, {}).values()), total, sha) for s, total, sha in rows}


def unknown_extensions(book, assignment: str, course: Course | None, roster=None) -> list[str]:
    """The students the course file extends ``assignment`` for who are neither in the
    gradebook (any assignment) nor on the roster: typos, most likely."""
    if course is None:
        return []
    known = {r[0] for r in book.db.execute("SELECT DISTINCT student FROM submissions")}
    known |= {s.id for s in roster} if roster is not None else set()
    return sorted(s for s in course.policy(assignment).extensions if s not in known)


def check_extensions(book, assignments, course: Course | None, roster=None, *,
                     allow_unknown: bool = False) -> list[str]:
    """Refuse extensions for unknown students (see :func:`unknown_extensions`) unless
    ``allow_unknown``; return them as lines to list."""
    lines = [f"{a}: {display(s)}" for a in assignments
             for s in unknown_extensions(book, a, course, roster)]
    if lines and not allow_unknown:
        raise GradingError(f"the course file gives extensions to students neither in the gradebook "
                           f"nor on the roster ({'; '.join(lines[:10])}"
                           f"{'; ...' if len(lines) > 10 else ''}): a typo? Fix the course file, give "
                           "--roster, or pass --allow-unknown-extensions")
    return lines


def outcomes(book, assignment: str, course: Course | None) -> dict[str, Outcome]:
    """Every graded student's :class:`Outcome` for ``assignment``."""
    policy = course.policy(assignment) if course is not None else Policy(assignment)
    times = submission_times(book, assignment)
    result = {}
    for student, (raw, total, sha) in graded(book, assignment).items():
        when: SubmissionTime | None = times.get(student)
        possible = policy.points if policy.points is not None else total
        if when is None or when.sha256 != sha:
            reason = ("" if policy.due is None else
                      "no submission time recorded for the graded notebook: no late policy applied")
            result[student] = Outcome(student, raw, total, 1.0, reason, None, possible)
            continue
        credit, reason = policy.credit(student, when.submitted)
        result[student] = Outcome(student, raw, total, credit, reason, when.submitted, possible,
                                  when.lms_flag if course is not None else None,
                                  policy.due_for(student), policy.grace, policy.zone)
    return result


LATE_MARK = "<!-- lecturelib: late policy -->"


def late_section(outcome: Outcome) -> str:
    """The Markdown a student's feedback file ends with: the late policy's effect."""
    lines = [LATE_MARK, "", "## Deadline", ""]
    if outcome.reason:
        lines.append(f"{outcome.reason}.")
    else:
        lines.append("Handed in on time." if outcome.submitted else "No deadline applied.")
    lines += ["", f"Raw score {fmt(outcome.raw)} / {fmt(outcome.total)}, penalty "
                  f"{fmt(round(outcome.penalty, 2))}, final score {fmt(round(outcome.final, 2))} / "
                  f"{fmt(outcome.total)}"
                  + (f" ({fmt(outcome.lms_score)} / {fmt(outcome.points_possible)} in the course's "
                     "grade book)." if outcome.points_possible != outcome.total else ".")]
    return "\n".join(lines) + "\n"


def with_late_section(feedback: str, outcome: Outcome) -> str:
    """``feedback`` with its late-policy section replaced (or added)."""
    head = feedback.split(LATE_MARK)[0].rstrip("\n")
    return f"{head}\n\n{late_section(outcome)}"

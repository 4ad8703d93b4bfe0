"""Feedback back through the LMS: ``lecturelib gradebook feedback --format canvas|moodle``.

One self-contained HTML page per student, with no script: every question's points and
reason, every rubric item of each written question with the applied ones marked, the
graders' comments, the decision of each regrade request, the late policy's effect and the
score on the LMS's scale beside the notebook's points, times in the course's time zone.  Math in rubric items and comments is
typeset on our side as MathML (latex2mathml), which every current browser shows without a
script; the MathML is cleaned to a list of MathML elements with no link, style, class or
id attribute, and everything else on the page is escaped text.

The pages are zipped under the names the LMS's bulk feedback upload maps back to
students: the part of the downloaded file's name the LMS wrote (kept by ``lecturelib
collect``), followed by ``feedback.html``, i.e. ``login_ID_SUBMISSION_feedback.html``
for Canvas's "Re-Upload Submissions" and ``Full Name_ID_assignsubmission_file_feedback.html``
for Moodle's "Upload multiple feedback files in a zip".  A student whose notebook was
not collected from that LMS's download has no such name and is listed, not guessed.
Control, format and bidirectional characters of a name (a full name's right-to-left
override) are left out of the entry's name, and every name is read back with the LMS's
own rule (:func:`~lecturelib.grading.course.collect.lms_reads`): a name it would file under
another participant stops the whole zip, naming the student.
"""

from __future__ import annotations

import datetime
import html
import re
import unicodedata
import zipfile
from pathlib import Path

import nh3

from ..core.notebook import GradingError
from ..core.report import fmt, plain
from ..gradebook import manual, regrades
from .collect import lms_reads, submission_times, time_zone
from .policy import Course, outcomes

FORMATS = ("canvas", "moodle")
FILE_NAME = "feedback.html"
MAX_MATH = 2000  # characters of one formula typeset; a longer one is shown as its source
MATH = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$", re.S)
MATHML_TAGS = {"math", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace", "mfrac", "msqrt",
               "mroot", "msub", "msup", "msubsup", "munder", "mover", "munderover", "mtable",
               "mtr", "mtd", "mstyle", "mpadded", "mphantom", "menclose", "semantics",
               "annotation"}
MATHML_ATTRIBUTES = {tag: {"display", "mathvariant", "stretchy", "fence", "separator", "accent",
                           "lspace", "rspace", "columnalign", "xmlns"} for tag in MATHML_TAGS}
STYLE = ("body{font-family:sans-serif;margin:2em auto;max-width:48em;line-height:1.5}"
         "table{border-collapse:collapse}td,th{border:1px solid #bbb;padding:.2em .5em;"
         "text-align:left}.applied{font-weight:bold}.missed{color:#666}")


def math_html(latex: str, display: bool) -> str:
    """A formula as cleaned MathML, or its source as escaped text when it does not convert."""
    from latex2mathml.converter import convert

    if len(latex) > MAX_MATH:
        return f"<code>{html.escape(latex[:MAX_MATH])}</code>"
    try:
        mathml = convert(latex, display="block" if display else "inline")
    except Exception:  # noqa: BLE001 -- TeX it cannot read: show the source
        return f"<code>{html.escape(latex)}</code>"
    return nh3.clean(mathml, tags=MATHML_TAGS, attributes=MATHML_ATTRIBUTES, url_schemes=set(),
                     strip_comments=True)


def text_html(text: str) -> str:
    """Escaped text, with ``$...$`` and ``$$...$$`` typeset as MathML."""
    out, last = [], 0
    for match in MATH.finditer(text):
        out.append(html.escape(text[last:match.start()]))
        out.append(math_html(match.group(1) or match.group(2), display=bool(match.group(1))))
        last = match.end()
    out.append(html.escape(text[last:]))
    return "".join(out)


def _when(moment: datetime.datetime | None, zone) -> str:
    return moment.astimezone(zone).strftime("%Y-%m-%d %H:%M %Z") if moment else "not recorded"


def student_page(db, assignment: str, student: str, outcome, zone) -> str:
    """The feedback page of one student (an HTML document, no script)."""
    rows = [r for r in manual.effective_results(db, assignment) if r["student"] == student]
    order = {q["id"]: i for i, q in enumerate(manual.questions(db, assignment))}
    rows.sort(key=lambda r: order.get(r["question"], len(order)))
    esc = html.escape
    parts = ['<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
             "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
             "style-src 'unsafe-inline'\">",
             f"<title>Feedback: {esc(assignment)}</title><style>{STYLE}</style></head><body>",
             f"<h1>Feedback: {esc(assignment)}</h1>",
             f"<p>Student: {esc(plain(student, 100))}</p>"]
    score, total = sum(r["points"] for r in rows), sum(r["max"] for r in rows)
    if outcome is not None:
        scale = outcome.points_possible / outcome.total if outcome.total else 0.0
        parts.append(f"<p><strong>Score: {fmt(round(outcome.final, 2))} / {fmt(outcome.total)} "
                     f"points ({fmt(round(outcome.final * scale, 2))} / "
                     f"{fmt(outcome.points_possible)} in the course's grade book)</strong></p>")
        late = outcome.reason or ("Handed in on time." if outcome.submitted else "No deadline applied.")
        parts.append(f"<p>Handed in: {esc(_when(outcome.submitted, zone))}. {esc(plain(late, 300))} "
                     f"Raw score {fmt(outcome.raw)}, late penalty {fmt(round(outcome.penalty, 2))}.</p>")
    else:
        parts.append(f"<p><strong>Score: {fmt(score)} / {fmt(total)} points</strong></p>")
    parts.append("<table><tr><th>question</th><th>points</th><th>max</th><th>result</th></tr>")
    for r in rows:
        points = "pending" if r["pending"] else fmt(r["points"])
        parts.append(f"<tr><td>{esc(r['question'])}</td><td>{points}</td><td>{fmt(r['max'])}</td>"
                     f"<td>{esc(plain(r['reason'], 400))}</td></tr>")
    parts.append("</table>")
    for r in rows:
        if r["kind"] != "written":
            continue
        applied = {item["id"] for item in r["rubric"]}
        parts.append(f"<h2>{esc(r['question'])}: {'pending' if r['pending'] else fmt(r['points'])}"
                     f" / {fmt(r['max'])}</h2><ul>")
        for item in manual.rubric(db, assignment, r["question"]):
            mark = "applied" if item["id"] in applied else "missed"
            sign = "+" if item["points"] > 0 else ""
            parts.append(f'<li class="{mark}">{"&#10003;" if mark == "applied" else "&#9744;"} '
                         f"{sign}{fmt(item['points'])}: {text_html(item['text'])}</li>")
        parts.append("</ul>")
        if r["comment"]:
            parts.append(f"<p>Comment: {text_html(r['comment'])}</p>")
    decisions = regrades.decided(db, assignment, student)
    if decisions:
        parts.append("<h2>Regrade requests</h2><ul>")
        parts += [f"<li>{esc(r['question'])}: {esc(plain(r['decision'], 600))}</li>" for r in decisions]
        parts.append("</ul>")
    parts.append("</body></html>\n")
    return "\n".join(parts)


def page_name(fmt_name: str, prefix: str, student: str) -> str:
    """The zip entry name of ``student``'s page: the LMS's part of the downloaded name with
    no control, format or bidirectional character, then ``feedback.html``; refused unless
    the LMS's own rule reads ``student`` back from it."""
    name = "".join(ch for ch in prefix if unicodedata.category(ch)[0] != "C") + FILE_NAME
    read = lms_reads(fmt_name, name)
    if read != student:
        raise GradingError(f"the feedback page of {plain(student, 60)} would be named {plain(name, 120)!r}, "
                           f"which {fmt_name.capitalize()} files under {read or 'no participant'}: "
                           "no zip written (collect this student's download again)")
    return name


def feedback_zip(book, assignment: str, fmt_name: str, output, *, course: Course | None = None,
                 allow_pending: bool = False) -> tuple[list[str], list[str]]:
    """Write the zip of every student's page for ``fmt_name`` (``canvas`` or ``moodle``) to
    ``output``; returns the names written and the students left out (with why)."""
    if fmt_name not in FORMATS:
        raise GradingError(f"--format must be one of {', '.join(FORMATS)}")
    pending = book.pending(assignment)
    if pending and not allow_pending:
        raise GradingError(f"{len(pending)} written answer(s) of {assignment} are not graded yet: "
                           "grade them first, or pass --allow-pending")
    times = submission_times(book, assignment)
    results = outcomes(book, assignment, course)
    zone = time_zone(course.timezone) if course is not None else datetime.timezone.utc
    students = manual.students(book.db, assignment)
    ours = [s for s in students if times.get(s) is not None and times[s].layout == fmt_name
            and times[s].lms_prefix]
    if not ours:  # an empty zip would upload nothing, silently
        raise GradingError(f"no student of {assignment} ({len(students)} in the gradebook) was "
                           f"collected from a {fmt_name} download, so no page can be named for its upload: "
                           "no zip written (collect the class from the LMS's download first, or "
                           "leave out --format for feedback files in a folder)")
    left_out = [f"{plain(s, 60)}: not collected from a {fmt_name} download"
                for s in students if s not in ours]
    names = {student: page_name(fmt_name, times[student].lms_prefix, student) for student in ours}
    written = []
    with zipfile.ZipFile(Path(output), "w", zipfile.ZIP_DEFLATED) as archive:
        for student, name in names.items():
            archive.writestr(name, student_page(book.db, assignment, student, results.get(student), zone))
            written.append(name)
    return written, left_out

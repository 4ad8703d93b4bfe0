"""The summary page of one assignment (``lecturelib gradebook summary``): offline HTML.

From the gradebook (and the course file and roster when given): the distribution of the
final scores as a share of the notebook's points, each question's mean and the share of
students with full marks on it, the written answers still pending (which count 0 in every
score here, and the page says so), the late submissions with their penalty, every
submission whose LMS late flag (Canvas's ``_late_``) disagrees with the course file, the
students of the roster with no graded submission, and the submissions that were not graded
normally.
One self-contained file: no script, no network, every name and reason escaped.
"""

from __future__ import annotations

import html
import statistics

from ..core.notebook import GradingError
from ..core.report import fmt, plain
from .policy import Course, outcomes
from .roster import Roster

BINS = 10
STYLE = """body{font-family:sans-serif;margin:2em;max-width:60em}table{border-collapse:collapse;
margin-bottom:1.5em}td,th{border:1px solid #bbb;padding:.2em .5em;text-align:left}
td.n{text-align:right}svg text{font-size:11px}"""
HEAD = ('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'">'
        '<title>{title}</title><style>{style}</style></head><body>')


def histogram(shares: list[float], bins: int = BINS) -> list[int]:
    """Counts of ``shares`` (in [0, 1]) in ``bins`` equal bins; 1.0 falls in the last."""
    counts = [0] * bins
    for s in shares:
        counts[min(bins - 1, max(0, int(s * bins)))] += 1
    return counts


def _svg(counts: list[int]) -> str:
    width, height, bar = 420, 160, 40
    top = max(counts) or 1
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height + 30}" '
             'role="img" aria-label="distribution of final scores">']
    for i, c in enumerate(counts):
        h = round(height * c / top)
        x = 10 + i * bar
        parts.append(f'<rect x="{x}" y="{height - h}" width="{bar - 4}" height="{h}" fill="#4a78b0"/>'
                     f'<text x="{x}" y="{height + 14}">{100 * i // len(counts)}%</text>'
                     f'<text x="{x}" y="{max(12, height - h - 3)}">{c}</text>')
    parts.append("</svg>")
    return "".join(parts)


def question_stats(book, assignment: str) -> list[tuple[str, float, float, float]]:
    """``(question, max, mean points, share with full marks)`` per question; a pending
    written answer counts 0."""
    points = book.scores(assignment)  # manual grades counted
    rows = book.db.execute("SELECT student, question, max FROM results WHERE assignment=?",
                           (assignment,)).fetchall()
    by_q: dict[str, list[tuple[float, float]]] = {}
    for student, q, top in rows:
        by_q.setdefault(q, []).append((top, points.get(student, {}).get(q, 0.0)))
    stats = []
    for q in book.questions(assignment):
        items = by_q[q]
        top = max(t for t, _ in items)
        stats.append((q, top, statistics.fmean(p for _, p in items),
                      sum(p >= t for t, p in items) / len(items)))
    return stats


def summary_page(book, assignment: str, *, roster: Roster | None = None,
                 course: Course | None = None) -> str:
    """The HTML summary of ``assignment`` (see the module's docstring)."""
    results = outcomes(book, assignment, course)
    if not results:
        raise GradingError(f"the gradebook {book.path} has no results for assignment {assignment!r}")
    esc = html.escape
    problems = book.db.execute("SELECT student, problem FROM submissions WHERE assignment=? AND "
                               "problem != '' ORDER BY student", (assignment,)).fetchall()
    shares = [o.final / o.total if o.total else 0.0 for o in results.values()]
    finals = [o.final for o in results.values()]
    late = [o for o in results.values() if o.reason]
    disagree = sorted((o for o in results.values() if o.lms_disagreement), key=lambda o: o.student)
    pending = book.pending(assignment)
    waiting = {q: sum(1 for _, pq in pending if pq == q) for _, q in pending}
    missing = [s for s in roster if s.id not in results] if roster is not None else []
    name = (lambda sid: roster.get(sid).name if roster is not None and sid in roster else "")

    def who(sid: str) -> str:
        return esc(sid) + (f" ({esc(name(sid))})" if name(sid) else "")

    total = statistics.mode(o.total for o in results.values())
    title = f"Summary: {assignment}"
    out = [HEAD.format(title=esc(title), style=STYLE), f"<h1>{esc(title)}</h1>",
           f"<p>{len(results)} graded"
           + (f"; {len(roster)} on the roster, {len(missing)} of them with no submission" if roster else "")
           + f"; {sum(o.late for o in results.values())} late; {len(problems)} not graded normally."
           + (f" <strong>{len(pending)} written answer(s) of {len({s for s, _ in pending})} "
              "student(s) are still pending: they count as 0 in every score on this page.</strong>"
              if pending else "")
           + f" Final scores (after the late policy) out of {fmt(total)}: mean "
           f"{statistics.fmean(finals):.2f}, median {statistics.median(finals):.2f}, "
           f"min {fmt(round(min(finals), 2))}, max {fmt(round(max(finals), 2))}.</p>",
           "<h2>Distribution of final scores</h2>", _svg(histogram(shares)),
           "<h2>Questions</h2><table><tr><th>question</th><th>max</th><th>mean</th>"
           "<th>full marks</th><th>pending (counted 0)</th></tr>"]
    for q, top, mean, full in question_stats(book, assignment):
        out.append(f'<tr><td>{esc(q)}</td><td class="n">{fmt(top)}</td><td class="n">{mean:.2f}</td>'
                   f'<td class="n">{100 * full:.0f}%</td><td class="n">{waiting.get(q, 0)}</td></tr>')
    out.append("</table>")
    if pending:
        out.append("<h2>Pending written answers (counted 0 above)</h2><ul>")
        out += [f"<li>{who(s)}: {esc(', '.join(sorted(q for p, q in pending if p == s)))}</li>"
                for s in sorted({s for s, _ in pending})]
        out.append("</ul>")
    if late:
        out.append("<h2>Late or without a submission time</h2><table><tr><th>student</th><th>name</th>"
                   "<th>raw</th><th>penalty</th><th>final</th><th>why</th></tr>")
        for o in sorted(late, key=lambda o: o.student):
            out.append(f"<tr><td>{esc(o.student)}</td><td>{esc(name(o.student))}</td>"
                       f'<td class="n">{fmt(o.raw)}</td><td class="n">{fmt(round(o.penalty, 2))}</td>'
                       f'<td class="n">{fmt(round(o.final, 2))}</td><td>{esc(plain(o.reason, 300))}</td></tr>')
        out.append("</table>")
    if disagree:
        out.append("<h2>The LMS's late flag disagrees with the course file</h2><ul>")
        out += [f"<li>{who(o.student)}: {esc(o.lms_disagreement)}</li>" for o in disagree]
        out.append("</ul>")
    if missing:
        out.append("<h2>No submission</h2><ul>")
        out += [f"<li>{esc(s.id)} {esc(s.name)}</li>" for s in missing]
        out.append("</ul>")
    if problems:
        out.append("<h2>Not graded normally</h2><ul>")
        out += [f"<li>{esc(s)}: {esc(plain(p, 300))}</li>" for s, p in problems]
        out.append("</ul>")
    out.append("</body></html>\n")
    return "\n".join(out)

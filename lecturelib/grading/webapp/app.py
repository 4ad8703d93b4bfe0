"""The grading web app (``lecturelib gradebook serve``): a Tornado application.

Security, in the order a request meets it:

- the server listens on 127.0.0.1 unless told otherwise, and answers only requests whose
  ``Host`` is the address it listens on (against DNS rebinding);
- every request needs a sign-in link's secret: with staff in the gradebook
  (:mod:`..gradebook.staff`), a person's own link, else the random token printed at start
  (one person, the instructor).  The address with ``?token=`` sets an HttpOnly,
  SameSite=Strict cookie (Secure under TLS) holding a session id (never the secret) and
  redirects to the same page without it, handing the browser the session's *change key*
  in the address's fragment, which the page keeps in the origin's ``localStorage``;
- who the request is and what they may do (``instructor`` or ``ta``) come from the link
  alone, checked against the gradebook on every request (:meth:`Base.get_current_user`):
  a revoked or replaced link stops at its next request, open pages included; a handler
  an instructor alone may call says so (:func:`instructor_only`), and refuses others (403);
- every state change is a POST with a JSON body, an ``Origin`` equal to the app's own,
  Tornado's XSRF token (double-submit cookie, in the ``X-XSRFToken`` header) and the change
  key in the ``X-Lecturelib-Key`` header.  Cookies ignore ports, so a program listening on
  another port of this machine may see the cookies (a link clicked in an answer, say); the
  change key lives only in storage bound to the app's own origin (port included) and is
  given out only on the printed address, so the cookies alone read pages but change nothing;
- every change names the version of the grade and the SHA-256 of the answer the page
  showed: a grade changed by someone else, or an answer handed in again since, is a
  conflict (409), shown to the grader, and nothing is saved;
- every page carries a Content-Security-Policy that allows scripts, styles and fonts from
  the app's own static files only, no frames, no form posts elsewhere;
- the app serves its templates and its static folder (with MathJax, from the
  ``sphinx-mathjax-offline`` package) and nothing else; students' answers are rendered by
  :mod:`.render` (Markdown, then the nh3 sanitiser, links to this machine or a private
  network as text) in a worker process with a time budget;
- an API error never names a student (anonymous mode): the question is checked before the
  answer is looked up, and the gradebook's messages name assignments and questions only.

Students are named in URLs and requests by an opaque id (an HMAC of the name with a random
key kept in the gradebook), never by their names; anonymous mode shows "Student N" in their
place (a number stored in the gradebook, the same after a restart), otherwise the roster's name
(``serve --roster``) or the LMS id.  The answers of a question come in its fair order
(:func:`..gradebook.allocation.fair_order`); "next ungraded" follows the grader's share
(``serve --graders``).  An answer's page is also where a regrade request is resolved and
where a third grader resolves the disagreement of two blind marks (``serve --double-mark``).
A rubric key is an operation on the stored grade (:func:`..gradebook.manual.change_grade`),
so keys pressed faster than the saves come back all land.
"""

from __future__ import annotations

import asyncio
import collections
import functools
import hashlib
import hmac
import importlib.metadata
import json
import re
import secrets
from pathlib import Path
from urllib.parse import urlsplit

import tornado.web
from jinja2 import Environment, FileSystemLoader, select_autoescape

from ..core.notebook import GradingError
from ..core.report import plain
from ..core.submissions import feedback_folder
from ..gradebook import allocation, groups, manual, regrades, staff
from ..gradebook.analysis import analyze
from ..gradebook.store import Gradebook
from .groups_page import current_groups, page_groups
from .render import BudgetedRenderer, math_text, student_text

HERE = Path(__file__).resolve().parent
TOKEN_COOKIE = "lecturelib_token"
MAX_SESSIONS = 2000  # sign-ins kept in memory; the oldest is forgotten first (sign in again)
KEY_HEADER = "X-Lecturelib-Key"
MAX_BODY = 64 * 1024
CSP = ("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
       "font-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; "
       "frame-ancestors 'none'; base-uri 'none'")


def mathjax_folder() -> Path:
    """MathJax as the book bundles it (the ``sphinx-mathjax-offline`` distribution)."""
    dist = importlib.metadata.distribution("sphinx-mathjax-offline")
    folder = Path(dist.locate_file("sphinx-mathjax-offline/static/mathjax"))
    if not (folder / "tex-chtml.js").is_file():
        raise GradingError("MathJax is missing from sphinx-mathjax-offline (reinstall the environment)")
    return folder


class Context:
    """What every handler shares: the gradebook, the token, the key of student ids."""

    def __init__(self, gradebook_path, token: str, anonymous: bool, allowed_hosts: set[str],
                 renderer: BudgetedRenderer | None = None, *, roster=None, graders=(),
                 double_mark: float = 0.0, instructor: str = "instructor", tls: bool = False):
        self.book = Gradebook(gradebook_path)
        self.token = token  # the single-token mode's, when the gradebook has no staff
        self.instructor = instructor  # that mode's one person
        self.tls = tls
        self.save_delay = 0.0  # seconds a grade's save waits before it answers (a test hook)
        # cookie value -> the link's secret hash (None: the single token) and the change key
        self.sessions: dict[str, dict] = {}
        self.sids: dict[str, dict[str, str]] = {}  # assignment -> opaque id -> student
        self.renderer = renderer or BudgetedRenderer()
        self.anonymous = anonymous
        self.allowed_hosts = allowed_hosts
        self.key = allocation.stored_key(self.book.db, "student ids")  # the same after a restart
        self.templates = Environment(loader=FileSystemLoader(HERE / "templates"),
                                     autoescape=select_autoescape(default=True))
        self.templates.filters.update(math_text=math_text, student_text=student_text)
        self.names = roster_names(roster) if roster is not None else {}
        self.graders = list(graders)
        self.double_mark = double_mark

    def sign_in(self, secret: str) -> tuple[str, dict] | None:
        """A new session for a sign-in link's secret: ``(cookie value, session)``, or None
        when no link holds it.  With staff, only a person's own link signs in."""
        if staff.has_staff(self.book.db):
            sha = staff.secret_sha(secret)
            if staff.signed_in(self.book.db, sha) is None:
                return None
        elif hmac.compare_digest(secret.encode(), self.token.encode()):
            sha = None
        else:
            return None
        while len(self.sessions) >= MAX_SESSIONS:
            self.sessions.pop(next(iter(self.sessions)))
        cookie = secrets.token_urlsafe(32)  # the cookie's value: not the secret
        self.sessions[cookie] = {"sha": sha, "key": secrets.token_urlsafe(32)}  # the key: never in a cookie
        return cookie, self.sessions[cookie]

    def person(self, session: dict) -> dict | None:
        """Who a session is, checked against the gradebook on every request (a revoked or
        replaced link ends its sessions at once): ``name`` and ``role``, or None."""
        if session["sha"] is None:
            return None if staff.has_staff(self.book.db) else {"name": self.instructor, "role": "instructor"}
        return staff.signed_in(self.book.db, session["sha"])

    def student_of(self, assignment: str, sid: str) -> str | None:
        """The student an opaque id names in ``assignment`` (None: none), from a table made
        again when an id is not in it (a student graded since)."""
        table = self.sids.get(assignment, {})
        if sid not in table:
            table = self.sids[assignment] = {self.sid(s): s for s in manual.students(self.book.db, assignment)}
        return table.get(sid)

    def sid(self, student: str) -> str:
        return hmac.new(self.key, student.encode(), hashlib.sha256).hexdigest()[:16]

    def labels(self, assignment: str) -> dict[str, str]:
        """What the pages call each student: "Student N" when anonymous, else the roster's
        name, or the id when the roster has none."""
        students = manual.students(self.book.db, assignment)
        if self.anonymous:
            numbers = allocation.anonymous_numbers(self.book.db, assignment, students)
            return {s: f"Student {numbers[s]}" for s in students}
        return {s: self.names.get(s, s) for s in students}

    def order(self, assignment: str, qid: str) -> list[tuple[str, str, str]]:
        """``(sid, student, label)`` of every answer of ``qid``, in the question's fair order."""
        labels = self.labels(assignment)
        return [(self.sid(s), s, labels[s]) for s in allocation.fair_order(self.book.db, assignment, qid, labels)]


def roster_names(roster) -> dict[str, str]:
    """id -> the roster's name; a name two students share gets the id added."""
    names = {s.id: s.name for s in roster if s.name}
    shared = {n for n, count in collections.Counter(names.values()).items() if count > 1}
    return {i: f"{n} ({i})" if n in shared else n for i, n in names.items()}


class Base(tornado.web.RequestHandler):
    def initialize(self, ctx: Context):
        self.ctx = ctx

    def set_default_headers(self):
        self.set_header("Content-Security-Policy", CSP)
        self.set_header("X-Content-Type-Options", "nosniff")
        self.set_header("Referrer-Policy", "no-referrer")
        self.set_header("X-Frame-Options", "DENY")
        self.set_header("Cache-Control", "no-store")
        self.set_header("Cross-Origin-Opener-Policy", "same-origin")
        self.set_header("Cross-Origin-Resource-Policy", "same-origin")

    # ------------------------------------------------------------ authentication
    def prepare(self):
        if self.request.host not in self.ctx.allowed_hosts:
            raise tornado.web.HTTPError(403, reason="Unknown host")
        given = self.get_query_argument("token", None)
        self.session = None
        if given is not None:
            signed = self.ctx.sign_in(given)
            if signed is None:
                raise tornado.web.HTTPError(403, reason="Missing or wrong token: this sign-in link is "
                                            "not (or no longer) valid")
            cookie, self.session = signed
            self.set_cookie(TOKEN_COOKIE, cookie, httponly=True, samesite="Strict", path="/",
                            secure=self.ctx.tls)
            if self.request.method == "GET":
                # the secret leaves the address bar; the change key goes to the page's script
                self.redirect(f"{self.request.path}#key={self.session['key']}")
                return
        else:
            self.session = self.ctx.sessions.get(self.get_cookie(TOKEN_COOKIE) or "")
        if self.session is None:
            raise tornado.web.HTTPError(403, reason="Missing or wrong token")
        if self.current_user is None:
            raise tornado.web.HTTPError(403, reason="Your access ended (sign-in link revoked or "
                                        "replaced): ask the instructor for a new link")
        if self.request.method not in ("GET", "HEAD"):
            origin = self.request.headers.get("Origin", "")
            if origin != f"{self.request.protocol}://{self.request.host}":
                raise tornado.web.HTTPError(403, reason="Cross-origin request refused")
            key = self.request.headers.get(KEY_HEADER, "")
            if not hmac.compare_digest(key.encode(), self.session["key"].encode()):
                raise tornado.web.HTTPError(
                    403, reason="Missing or wrong change key: open your sign-in link again")

    def get_current_user(self) -> dict | None:
        """The person signed in (``name``, ``role``), from their credential alone."""
        return None if self.session is None else self.ctx.person(self.session)

    @property
    def grader(self) -> str:
        return self.current_user["name"]

    @property
    def instructor(self) -> bool:
        return self.current_user["role"] == "instructor"

    def write_error(self, status_code, **kwargs):
        reason = self._reason if status_code in (400, 403, 404, 405, 409) else "Server error"
        self.set_header("Content-Type", "text/plain; charset=utf-8")
        self.finish(f"{status_code}: {reason}\n")

    def page(self, template: str, **values):
        values.update(grader=self.grader, role=self.current_user["role"], xsrf=self.xsrf_token.decode(),
                      anonymous=self.ctx.anonymous)
        self.finish(self.ctx.templates.get_template(template).render(**values))

    def owes_second_mark(self, assignment: str, qid: str, student: str) -> bool:
        try:
            return allocation.owes_second_mark(self.ctx.book.db, assignment, qid, student,
                                               grader=self.grader, graders=self.ctx.graders,
                                               percent=self.ctx.double_mark)
        except GradingError:  # no result of this student for that question any more
            return False

    def assignment(self, name: str) -> str:
        if name not in manual.assignments(self.ctx.book.db):
            raise tornado.web.HTTPError(404, reason="No such assignment")
        return name

    def question(self, assignment: str, qid) -> dict:
        try:
            return manual.question(self.ctx.book.db, assignment, str(qid))
        except GradingError:
            raise tornado.web.HTTPError(404, reason="No such question") from None


class Index(Base):
    def get(self):
        db = self.ctx.book.db
        assignments = manual.assignments(db)
        rows = []
        for a in assignments:
            for q in manual.questions(db, a):
                graded, total = manual.progress(db, a, q["id"])
                rows.append({"assignment": a, **q, "graded": graded, "total": total})
        waiting = {a: (len(regrades.requests(db, a, open_only=True)), len(allocation.disagreements(db, a)))
                   for a in assignments}
        done = self.get_query_argument("done", "")
        self.page("index.html", rows=rows, assignments=assignments, waiting=waiting,
                  done=done if re.fullmatch(r"[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}", done) else "",
                  share=", ".join(self.ctx.graders) if self.grader in self.ctx.graders else "")


class Grade(Base):
    async def get(self, assignment, qid, position):
        assignment = self.assignment(assignment)
        db = self.ctx.book.db
        question = self.question(assignment, qid)
        roster = self.ctx.order(assignment, qid)
        index = int(position) - 1
        if not 0 <= index < len(roster):
            raise tornado.web.HTTPError(404, reason="No such answer")
        sid, student, label = roster[index]
        state = manual.grade_state(db, assignment, student, qid)
        items = manual.rubric(db, assignment, qid) if question["kind"] == "written" else []
        model_html = ((await self.ctx.renderer.render(question["model_answer"]))[0]
                      if question["model_answer"] else "")  # first: a slow answer restarts the worker
        answer_html, note = (await self.ctx.renderer.render(state["answer"])
                             if question["kind"] == "written" else ("", ""))
        graded, total = manual.progress(db, assignment, qid)
        base = f"/grade/{assignment}/{qid}/"
        second = self.owes_second_mark(assignment, qid, student)
        client = (blind_state(state, sid, assignment, qid) if second
                  else client_state(state, sid, assignment, qid))
        regrade = None if second else self.regrade(assignment, student, qid)
        if regrade:
            client["regrade"] = regrade["id"]
        double = None if second else self.double_marking(assignment, student, qid)
        self.page("grade.html", assignment=assignment, question=question, items=items,
                  state=state, client=client, label=label, second=second, double=double,
                  answer_html=answer_html, note=note, model_html=model_html,
                  graded=graded, total=total, position=index + 1, count=len(roster),
                  previous=base + str(index) if index else "",
                  next=base + str(index + 2) if index + 1 < len(roster) else "",
                  next_ungraded=f"/next/{assignment}/{qid}" if question["kind"] == "written" else "",
                  below=state["reason"].endswith(BELOW), regrade=regrade)

    def regrade(self, assignment: str, student: str, qid: str) -> dict | None:
        """The open regrade request on this answer, and whether this grader may resolve it
        (not if they graded the answer before the request, nor without a name)."""
        db = self.ctx.book.db
        req = regrades.open_request(db, assignment, student, qid)
        if req is None:
            return None
        why_not = (INSTRUCTOR_DECIDES if not self.instructor else
                   "you graded this answer before the request: another grader resolves it"
                   if self.grader in regrades.first_graders(db, req) else "")
        return {**req, "why_not": why_not}

    def double_marking(self, assignment: str, student: str, qid: str) -> dict | None:
        """The unresolved disagreement of this answer's two blind marks, and whether this
        grader may resolve it (a third grader, with a name)."""
        pair = allocation.disagreement(self.ctx.book.db, assignment, student, qid)
        if pair is None:
            return None
        db = self.ctx.book.db
        why_not = (INSTRUCTOR_DECIDES if not self.instructor else
                   "you gave one of the two marks: a third grader resolves it"
                   if self.grader in manual.graders_of(db, assignment, student, qid) | {pair["second"]["grader"]}
                   else "")
        return {**pair, "why_not": why_not}


BELOW = "(taken from the Markdown cells under the answer cell)"  # autograde.score's reason
# why a teaching assistant may not decide a regrade request or a double-marking disagreement
INSTRUCTOR_DECIDES = "an instructor decides it"


def instructor_only(what: str):
    """A handler method only an instructor may call: anyone else gets a 403 saying so."""
    def decorate(method):
        @functools.wraps(method)
        def checked(self, *args, **kwargs):
            if not self.instructor:
                raise tornado.web.HTTPError(403, reason=f"Only an instructor {what}")
            return method(self, *args, **kwargs)
        return checked
    return decorate


def blind_state(state: dict, sid: str, assignment: str, qid: str) -> dict:
    """What a blind second mark's page may know: the answer, never the first mark."""
    return {"sid": sid, "assignment": assignment, "question": qid, "second": True, "applied": [],
            "answer_sha": manual.answer_sha(state["answer"]), "kind": state["kind"], "max": state["max"]}


def answer_sha_of(db, assignment: str, student: str, qid: str) -> str:
    return manual.answer_sha(manual.grade_state(db, assignment, student, qid)["answer"])


class Groups(Base):
    """The answers of a written question grouped by what they say (:mod:`..gradebook.groups`):
    every member of every group shown, a form that grades the whole group, a walk through
    its members one key each, splits and merges (:mod:`.groups_page`: made off the event
    loop, rendered within one budget for the page)."""

    async def get(self, assignment, qid):
        assignment = self.assignment(assignment)
        question = self.question(assignment, qid)
        if question["kind"] != "written":
            raise tornado.web.HTTPError(404, reason="Only written answers are grouped")
        shown = await page_groups(self.ctx, assignment, question["id"])
        self.page("groups.html", assignment=assignment, question=question, groups=shown,
                  items=manual.rubric(self.ctx.book.db, assignment, question["id"]))


class NextUngraded(Base):
    """The next answer the grader should grade (:func:`..gradebook.allocation.next_ungraded`):
    in their share with ``serve --graders``, else in the whole question."""

    def get(self, assignment, qid):
        assignment = self.assignment(assignment)
        qid = self.question(assignment, qid)["id"]
        mine = self.grader in self.ctx.graders
        try:
            student = allocation.next_ungraded(
                self.ctx.book.db, assignment, qid, grader=self.grader if mine else None,
                graders=self.ctx.graders if mine else None, percent=self.ctx.double_mark if mine else 0)
        except GradingError:
            student = None
        order = [s for _, s, _ in self.ctx.order(assignment, qid)]
        if student is None or student not in order:
            self.redirect(f"/?done={assignment}/{qid}")
            return
        self.redirect(f"/grade/{assignment}/{qid}/{order.index(student) + 1}")


def client_state(state: dict, sid: str, assignment: str, qid: str) -> dict:
    keys = ("applied", "comment", "adjustment", "adjustment_reason", "override", "override_reason",
            "version", "score", "pending", "stale", "grader", "updated_at", "max", "kind",
            "graded", "decided")
    return {"sid": sid, "assignment": assignment, "question": qid,
            "answer_sha": manual.answer_sha(state["answer"]), **{k: state[k] for k in keys}}


class Stats(Base):
    """The class's results: each question's distribution and most missed items, its item
    analysis (:mod:`..gradebook.analysis`), the graders' shares, double marking, and the
    queue of regrade requests (:mod:`..gradebook.regrades`)."""

    def get(self, assignment):
        assignment = self.assignment(assignment)
        db = self.ctx.book.db
        stats = manual.statistics(db, assignment)
        analysis = analyze(self.ctx.book, assignment)
        by_id = {q["id"]: q for q in analysis["questions"]}
        for s in stats:
            s["bars"] = [(points, count, round(100 * count / max(s["histogram"].values())))
                         for points, count in s["histogram"].items()]
            s["item"] = by_id.get(s["id"], {})
            r = s["item"].get("discrimination")
            s["discrimination_bar"] = None if r is None else round(100 * min(abs(r), 1))
        labels = self.ctx.labels(assignment)
        requests = regrades.requests(db, assignment)
        disagreements = allocation.disagreements(db, assignment)
        links = self.answer_links(assignment, {r["question"] for r in requests + disagreements})
        # a student's own words may name them: not shown in anonymous mode (the answer's
        # page, where the request is resolved, shows them beside the answer)
        queue = [dict(r, label=labels.get(r["student"], ""), link=links.get((r["question"], r["student"]), ""),
                      reason=r["reason"] if not self.ctx.anonymous else "(hidden: anonymous mode)") for r in
                 sorted(requests, key=lambda r: (r["status"] != "open", r["id"]))]
        disagreements = [dict(d, label=labels.get(d["student"], ""),
                              link=links.get((d["question"], d["student"]), "")) for d in disagreements]
        self.page("stats.html", assignment=assignment, stats=stats, analysis=analysis, queue=queue,
                  disagreements=disagreements)

    def answer_links(self, assignment: str, qids) -> dict[tuple[str, str], str]:
        """``(question, student)`` -> the address of the answer's grading page."""
        return {(qid, s): f"/grade/{assignment}/{qid}/{i + 1}" for qid in qids
                for i, (_, s, _) in enumerate(self.ctx.order(assignment, qid))}


def shown_value(value) -> str:
    """A value of the audit trail as a grader reads it (a list as its items, a number
    without trailing zeros), on one line of at most 300 characters without control or
    format characters (a regrade reason is the student's text)."""
    if value is None or value == [] or value == "":
        text = "none"
    elif isinstance(value, bool):
        text = "yes" if value else "no"
    elif isinstance(value, float):
        text = f"{value:g}"
    elif isinstance(value, list):
        text = ", ".join(shown_value(v) for v in value)
    elif isinstance(value, dict):
        text = json.dumps(value, sort_keys=True)
    else:
        text = str(value)
    return plain(text, 300)


def changed_fields(before: dict, after: dict) -> tuple[list, list]:
    """What an audit entry changed: ``(field, value)`` pairs before and after, of the
    fields whose value differs (the stored version number left out)."""
    fields = [k for k in sorted(set(before) | set(after))
              if k != "version" and before.get(k) != after.get(k)]
    return ([(k.replace("_", " "), shown_value(before[k])) for k in fields if k in before],
            [(k.replace("_", " "), shown_value(after[k])) for k in fields if k in after])


class Audit(Base):
    def get(self, assignment):
        assignment = self.assignment(assignment)
        labels = self.ctx.labels(assignment)
        owed = {}  # the answers this grader owes a blind second mark: their changes are hidden
        entries = [e for e in manual.audit_log(self.ctx.book.db, assignment)
                   if not (e["student"] and owed.setdefault(
                       (e["student"], e["question"]),
                       self.owes_second_mark(assignment, e["question"], e["student"])))]
        for e in entries:
            e["label"] = labels.get(e["student"], "") if e["student"] else ""
            e["before"], e["after"] = changed_fields(e["before"], e["after"])
        self.page("audit.html", assignment=assignment, entries=entries[-500:])


class Api(Base):
    """POST endpoints: a JSON body in, the new state (200), the current state on a
    conflict (409), or an error message (400)."""

    def body(self) -> dict:
        if len(self.request.body) > MAX_BODY:
            raise tornado.web.HTTPError(400, reason="Request too large")
        if not self.request.headers.get("Content-Type", "").startswith("application/json"):
            raise tornado.web.HTTPError(400, reason="Expected JSON")
        try:
            data = json.loads(self.request.body)
        except ValueError:
            raise tornado.web.HTTPError(400, reason="Expected JSON") from None
        if not isinstance(data, dict):
            raise tornado.web.HTTPError(400, reason="Expected a JSON object")
        return data

    def target(self, data) -> tuple[str, str, str, str]:
        assignment = self.assignment(str(data.get("assignment")))
        qid = self.question(assignment, data.get("question"))["id"]
        sid = data.get("sid")
        student = self.ctx.student_of(assignment, sid) if isinstance(sid, str) else None
        if student is None:
            raise tornado.web.HTTPError(404, reason="No such answer")
        return assignment, qid, student, sid


    def version(self, data) -> int:
        version = data.get("version")
        if not isinstance(version, int) or isinstance(version, bool) or version < 0:
            raise tornado.web.HTTPError(400, reason="Missing version")
        return version

    def shown_sha(self, data) -> str:
        """The SHA-256 of the answer the page showed (every change to a grade carries it)."""
        sha = data.get("answer_sha")
        if not isinstance(sha, str) or not re.fullmatch(r"[0-9a-f]{64}", sha):
            raise tornado.web.HTTPError(400, reason="Missing the answer's hash")
        return sha

    def _wrap(self, change, assignment, student, qid, sid):
        """``change`` whose conflict carries the state as the page knows it."""
        def wrapped():
            try:
                return change()
            except manual.Conflict as conflict:
                raise manual.Conflict(client_state(conflict.current, sid, assignment, qid),
                                      conflict.why) from None
        return wrapped

    def run(self, change):
        try:
            result = change()
        except manual.Conflict as conflict:
            self.set_status(409)
            self.finish({"conflict": conflict.why, "state": conflict.current})
            return
        except GradingError as exc:
            self.set_status(400)
            self.finish({"error": str(exc)[:300]})
            return
        self.finish({"state": result})


class GradeApi(Api):
    """A grade's change: an operation (``op``: ``apply`` or ``remove`` an ``item``, or
    ``save`` the comment and adjustment) on the grade as stored, from the version the page
    last showed (:func:`..gradebook.manual.change_grade`); or, without ``op``, the whole
    grade the page shows, from that version."""

    async def post(self):
        data = self.body()
        assignment, qid, student, sid = self.target(data)
        version, shown = self.version(data), self.shown_sha(data)
        if self.owes_second_mark(assignment, qid, student):
            raise tornado.web.HTTPError(403, reason="This answer waits for your blind second mark: "
                                        "you do not grade it")
        if self.ctx.save_delay:
            await asyncio.sleep(self.ctx.save_delay)
        op = data.get("op")
        if op is not None:
            if op not in ("apply", "remove", "save"):
                raise tornado.web.HTTPError(400, reason="Unknown operation")
            item = data.get("item") if op != "save" else None
            if op != "save" and not isinstance(item, str):
                raise tornado.web.HTTPError(400, reason="Name the rubric item")
            fields = ({k: data.get(k, "" if k != "adjustment" else 0)
                       for k in ("comment", "adjustment", "adjustment_reason")} if op == "save" else {})

            def operation():
                state = manual.change_grade(
                    self.ctx.book.db, assignment, student, qid, who=self.grader, seen=version,
                    shown_sha=shown, apply=item if op == "apply" else None,
                    remove=item if op == "remove" else None, fields=fields, confirmed=op == "save")
                return client_state(state, sid, assignment, qid)
            self.run(self._wrap(operation, assignment, student, qid, sid))
            return

        def change():
            state = manual.save_grade(self.ctx.book.db, assignment, student, qid, who=self.grader,
                                      version=version, shown_sha=shown, applied=data.get("applied"),
                                      comment=data.get("comment", ""),
                                      adjustment=data.get("adjustment", 0),
                                      adjustment_reason=data.get("adjustment_reason", ""),
                                      confirmed=data.get("confirm") is True)
            return client_state(state, sid, assignment, qid)
        self.run(self._wrap(change, assignment, student, qid, sid))


class OverrideApi(GradeApi):
    def post(self):
        data = self.body()
        assignment, qid, student, sid = self.target(data)
        version, shown = self.version(data), self.shown_sha(data)

        def change():
            state = manual.save_override(self.ctx.book.db, assignment, student, qid,
                                         who=self.grader, version=version, shown_sha=shown,
                                         points=data.get("points"), reason=data.get("reason", ""))
            return client_state(state, sid, assignment, qid)
        self.run(self._wrap(change, assignment, student, qid, sid))


class GroupsApi(Api):
    """Grade a group, split answers off, or merge groups.  A change names the members the
    page showed with their answers' hashes: a group that changed since is a conflict (409)."""

    async def post(self):
        data = self.body()
        assignment = self.assignment(str(data.get("assignment")))
        qid = self.question(assignment, data.get("question"))["id"]
        db = self.ctx.book.db
        by_sid = {self.ctx.sid(s): s for s in manual.students(db, assignment)}
        action = data.get("action")
        try:  # made off the event loop if they were never made
            current = await current_groups(self.ctx, assignment, qid)
        except GradingError as exc:
            raise tornado.web.HTTPError(400, reason=str(exc)[:200]) from None
        if action == "grade":
            number = data.get("group")
            shown, versions = data.get("members"), data.get("versions")
            if not (isinstance(shown, dict) and isinstance(versions, dict)) or number not in current:
                raise tornado.web.HTTPError(400, reason="Name a group, its members and their grades' versions")
            members = {self.ctx.sid(s): answer_sha_of(db, assignment, s, qid) for s in current[number]}
            if members != shown or set(versions) != set(members):
                self.set_status(409)
                self.finish({"conflict": "group"})
                return
            seen = {by_sid[sid]: v for sid, v in versions.items()}

            def grade():
                try:
                    return {"graded": len(groups.grade_group(
                        db, assignment, qid, number, who=self.grader, applied=data.get("applied"),
                        comment=data.get("comment", ""), adjustment=data.get("adjustment", 0),
                        adjustment_reason=data.get("adjustment_reason", ""), versions=seen))}
                except manual.Conflict:  # a member graded by someone else since the page: no names
                    raise manual.Conflict({}, "graded") from None
            self.run(grade)
        elif action == "split":
            sids = data.get("sids")
            if not isinstance(sids, list) or not sids or not all(s in by_sid for s in sids):
                raise tornado.web.HTTPError(400, reason="Name the answers to split off")
            self.run(lambda: {"group": groups.split(db, assignment, qid, [by_sid[s] for s in sids])})
        elif action == "merge":
            numbers = data.get("groups")
            if not isinstance(numbers, list) or not all(isinstance(n, int) and n in current for n in numbers):
                raise tornado.web.HTTPError(400, reason="Name the groups to merge")
            self.run(lambda: {"group": groups.merge(db, assignment, qid, numbers)})
        else:
            raise tornado.web.HTTPError(400, reason="Unknown action")


class SecondMarkApi(Api):
    """A blind second mark (``serve --double-mark``): rubric items and an adjustment that
    change no grade, from the grader the rotation names, on the answer the page showed."""

    def post(self):
        data = self.body()
        assignment, qid, student, _ = self.target(data)
        shown = self.shown_sha(data)
        if not self.owes_second_mark(assignment, qid, student):
            raise tornado.web.HTTPError(400, reason="This answer waits for no second mark from you")
        if shown != answer_sha_of(self.ctx.book.db, assignment, student, qid):
            self.set_status(409)
            self.finish({"conflict": "answer", "state": {}})
            return
        self.run(lambda: {k: v for k, v in allocation.save_second_mark(
            self.ctx.book.db, assignment, student, qid, who=self.grader, applied=data.get("applied"),
            adjustment=data.get("adjustment", 0)).items() if k != "student"})


class RegradeApi(Api):
    """Resolve a regrade request from the answer's page: keep the grade, or give the rubric
    items (written) or the points (code) the page names, with a decision for the student;
    the student's feedback file is written again (:func:`..gradebook.regrades.resolve`)."""

    @instructor_only("resolves regrade requests")
    def post(self):
        data = self.body()
        assignment, qid, student, sid = self.target(data)
        version, shown = self.version(data), self.shown_sha(data)
        db = self.ctx.book.db
        req = regrades.open_request(db, assignment, student, qid)
        if req is None or req["id"] != data.get("request"):
            raise tornado.web.HTTPError(400, reason="No open regrade request on this answer")
        who = self.grader
        outcome = data.get("outcome")
        if outcome not in ("keep", "change"):
            raise tornado.web.HTTPError(400, reason="Say whether the grade is kept or changed")
        change = outcome == "change"
        written = self.question(assignment, qid)["kind"] == "written"
        given = data.get("applied") if written else data.get("points")
        if change and not (isinstance(given, list) if written else
                           isinstance(given, (int, float)) and not isinstance(given, bool)):
            raise tornado.web.HTTPError(400, reason="Name the rubric items (or the points) the grade changes to")

        def resolve():
            state = regrades.resolve(
                db, req["id"], who=who, decision=data.get("decision"),
                applied=data.get("applied") if change and written else None,
                override=data.get("points") if change and not written else None,
                version=version, shown_sha=shown,
                feedback_dir=feedback_folder(self.ctx.book.path, assignment))
            return client_state(state, sid, assignment, qid)
        self.run(self._wrap(resolve, assignment, student, qid, sid))


class DoubleMarkApi(Api):
    """Resolve the disagreement of an answer's two blind marks from its page: the grade
    stands, or the second mark becomes the grade
    (:func:`..gradebook.allocation.resolve_disagreement`)."""

    @instructor_only("resolves a disagreement of double marking")
    def post(self):
        data = self.body()
        assignment, qid, student, sid = self.target(data)
        version, shown = self.version(data), self.shown_sha(data)
        who = self.grader
        keep = data.get("keep")
        if keep not in allocation.KEEP:
            raise tornado.web.HTTPError(400, reason="Say which mark is kept: first or second")

        def resolve():
            state = allocation.resolve_disagreement(self.ctx.book.db, assignment, student, qid,
                                                    who=who, keep=keep, version=version,
                                                    shown_sha=shown)
            return client_state(state, sid, assignment, qid)
        self.run(self._wrap(resolve, assignment, student, qid, sid))


class RubricApi(Api):
    @instructor_only("edits the rubric")
    def post(self):
        data = self.body()
        assignment = self.assignment(str(data.get("assignment")))
        qid = self.question(assignment, data.get("question"))["id"]
        version = self.version(data)
        self.run(lambda: manual.edit_rubric_item(
            self.ctx.book.db, assignment, qid, str(data.get("item")),
            who=self.grader, version=version, points=data.get("points"), text=data.get("text")))


class Static(Base, tornado.web.StaticFileHandler):
    """The app's own static files (and MathJax), behind the token like every page."""

    def initialize(self, ctx: Context, path: str):
        Base.initialize(self, ctx)
        tornado.web.StaticFileHandler.initialize(self, path)

    def set_extra_headers(self, path):
        self.set_header("Cache-Control", "private, max-age=3600")


class NotFound(Base):
    def get(self, *args):
        raise tornado.web.HTTPError(404, reason="Not found")

    post = get


def make_app(gradebook_path, *, token: str, anonymous: bool = False, host: str = "127.0.0.1",
             port: int, renderer: BudgetedRenderer | None = None, roster=None, graders=(),
             double_mark: float = 0.0, instructor: str = "instructor", tls: bool = False,
             names=()) -> tuple[tornado.web.Application, Context]:
    """The application for a gradebook, answering on ``host:port`` (and the loopback names).
    ``roster`` (a :class:`..course.roster.Roster`) names the students when not anonymous;
    ``graders`` share each question's answers, ``double_mark`` percent of them marked twice;
    ``names`` are this machine's other names and addresses (listening on all of them)."""
    hosts = {f"{h}:{port}" for h in (host, "127.0.0.1", "localhost", "[::1]", *names)}
    ctx = Context(gradebook_path, token, anonymous, hosts, renderer, roster=roster,
                  graders=graders, double_mark=double_mark, instructor=instructor, tls=tls)
    ctx.renderer.start()
    a = {"ctx": ctx}
    name = r"([A-Za-z0-9_][A-Za-z0-9_.-]*)"
    app = tornado.web.Application([
        (r"/", Index, a),
        (rf"/grade/{name}/([A-Za-z0-9_.-]+)/([0-9]{{1,6}})", Grade, a),
        (rf"/next/{name}/([A-Za-z0-9_.-]+)", NextUngraded, a),
        (rf"/groups/{name}/([A-Za-z0-9_.-]+)", Groups, a),
        (r"/api/groups", GroupsApi, a),
        (rf"/stats/{name}", Stats, a),
        (rf"/audit/{name}", Audit, a),
        (r"/api/grade", GradeApi, a),
        (r"/api/override", OverrideApi, a),
        (r"/api/rubric", RubricApi, a),
        (r"/api/second-mark", SecondMarkApi, a),
        (r"/api/regrade", RegradeApi, a),
        (r"/api/double-mark", DoubleMarkApi, a),
        (r"/static/mathjax/(.*)", Static, {"ctx": ctx, "path": str(mathjax_folder())}),
        (r"/static/(app\.js|app\.css|mathjax-config\.js|groups\.js)", Static, {"ctx": ctx, "path": str(HERE / "static")}),
        (r"/(.*)", NotFound, a),
    ], xsrf_cookies=True, xsrf_cookie_kwargs={"samesite": "Strict", "httponly": True, "secure": tls},
        compress_response=True,
        static_path=None, serve_traceback=False)
    return app, ctx


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"

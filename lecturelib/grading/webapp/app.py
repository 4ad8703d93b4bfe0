"""The grading web app (``lecturelib gradebook serve``): a Tornado application.

Security, in the order a request meets it:

- the server listens on 127.0.0.1 unless told otherwise, and answers only requests whose
  ``Host`` is the address it listens on (against DNS rebinding);
- every request needs the random token printed at start: the address with ``?token=``
  sets an HttpOnly, SameSite=Strict cookie and redirects to the same page without it;
- every state change is a POST with a JSON body, an ``Origin`` equal to the app's own and
  Tornado's XSRF token (double-submit cookie, in the ``X-XSRFToken`` header);
- every page carries a Content-Security-Policy that allows scripts, styles and fonts from
  the app's own static files only, no frames, no form posts elsewhere;
- the app serves its templates and its static folder (with MathJax, from the
  ``sphinx-mathjax-offline`` package) and nothing else; students' answers are rendered by
  :mod:`.render` (Markdown, then the nh3 sanitiser).

Students are named in URLs and requests by an opaque id (an HMAC of the name with a key
made at start), never by their names; anonymous mode shows "Student N" in their place.
"""

from __future__ import annotations

import hashlib
import hmac
import importlib.metadata
import json
import secrets
from pathlib import Path
from urllib.parse import urlsplit

import tornado.web
from jinja2 import Environment, FileSystemLoader, select_autoescape

from ..core.notebook import GradingError
from ..gradebook import manual
from ..gradebook.store import Gradebook
from .render import render_answer

HERE = Path(__file__).resolve().parent
TOKEN_COOKIE = "lecturelib_token"
GRADER_COOKIE = "lecturelib_grader"
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

    def __init__(self, gradebook_path, token: str, anonymous: bool, allowed_hosts: set[str]):
        self.book = Gradebook(gradebook_path)
        self.token = token
        self.anonymous = anonymous
        self.allowed_hosts = allowed_hosts
        self.key = secrets.token_bytes(32)
        self.templates = Environment(loader=FileSystemLoader(HERE / "templates"),
                                     autoescape=select_autoescape(default=True))

    def sid(self, student: str) -> str:
        return hmac.new(self.key, student.encode(), hashlib.sha256).hexdigest()[:16]

    def roster(self, assignment: str) -> list[tuple[str, str, str]]:
        """``(sid, student, label)`` in grading order: by name, or by id when anonymous."""
        names = manual.students(self.book.db, assignment)
        rows = sorted(((self.sid(s), s) for s in names),
                      key=lambda r: r[0] if self.anonymous else r[1])
        return [(sid, s, f"Student {i + 1}" if self.anonymous else s) for i, (sid, s) in enumerate(rows)]


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

    def prepare(self):
        if self.request.host not in self.ctx.allowed_hosts:
            raise tornado.web.HTTPError(403, reason="Unknown host")
        given = self.get_query_argument("token", None)
        by_address = given is not None and hmac.compare_digest(given.encode(), self.ctx.token.encode())
        if by_address:
            self.set_cookie(TOKEN_COOKIE, self.ctx.token, httponly=True, samesite="Strict", path="/")
            grader = self.get_query_argument("grader", None)
            if grader is not None and manual.GRADER_NAME.match(grader):
                self.set_cookie(GRADER_COOKIE, grader, samesite="Strict", path="/")
            if self.request.method == "GET":
                self.redirect(self.request.path)  # the token leaves the address bar
                return
        cookie = self.get_cookie(TOKEN_COOKIE) or ""
        if not (by_address or hmac.compare_digest(cookie.encode(), self.ctx.token.encode())):
            raise tornado.web.HTTPError(403, reason="Missing or wrong token")
        if self.request.method not in ("GET", "HEAD"):
            origin = self.request.headers.get("Origin", "")
            if origin != f"{self.request.protocol}://{self.request.host}":
                raise tornado.web.HTTPError(403, reason="Cross-origin request refused")

    def write_error(self, status_code, **kwargs):
        reason = self._reason if status_code in (400, 403, 404, 405, 409) else "Server error"
        self.set_header("Content-Type", "text/plain; charset=utf-8")
        self.finish(f"{status_code}: {reason}\n")

    @property
    def grader(self) -> str:
        name = self.get_cookie(GRADER_COOKIE) or ""
        return name if manual.GRADER_NAME.match(name) else "grader"

    def page(self, template: str, **values):
        values.update(grader=self.grader, xsrf=self.xsrf_token.decode(), anonymous=self.ctx.anonymous)
        self.finish(self.ctx.templates.get_template(template).render(**values))

    def assignment(self, name: str) -> str:
        if name not in manual.assignments(self.ctx.book.db):
            raise tornado.web.HTTPError(404, reason="No such assignment")
        return name


class Index(Base):
    def get(self):
        db = self.ctx.book.db
        rows = []
        for a in manual.assignments(db):
            for q in manual.questions(db, a):
                graded, total = manual.progress(db, a, q["id"])
                rows.append({"assignment": a, **q, "graded": graded, "total": total})
        self.page("index.html", rows=rows, assignments=manual.assignments(db))


class Grade(Base):
    def get(self, assignment, qid, position):
        assignment = self.assignment(assignment)
        db = self.ctx.book.db
        try:
            question = manual.question(db, assignment, qid)
        except GradingError:
            raise tornado.web.HTTPError(404, reason="No such question") from None
        roster = self.ctx.roster(assignment)
        index = int(position) - 1
        if not 0 <= index < len(roster):
            raise tornado.web.HTTPError(404, reason="No such answer")
        sid, student, label = roster[index]
        state = manual.grade_state(db, assignment, student, qid)
        items = manual.rubric(db, assignment, qid) if question["kind"] == "written" else []
        answer_html, note = render_answer(state["answer"]) if question["kind"] == "written" else ("", "")
        model_html = render_answer(question["model_answer"])[0] if question["model_answer"] else ""
        graded, total = manual.progress(db, assignment, qid)
        base = f"/grade/{assignment}/{qid}/"
        self.page("grade.html", assignment=assignment, question=question, items=items,
                  state=state, client=client_state(state, sid, assignment, qid), label=label,
                  answer_html=answer_html, note=note, model_html=model_html,
                  graded=graded, total=total, position=index + 1, count=len(roster),
                  previous=base + str(index) if index else "",
                  next=base + str(index + 2) if index + 1 < len(roster) else "")


def client_state(state: dict, sid: str, assignment: str, qid: str) -> dict:
    keys = ("applied", "comment", "adjustment", "adjustment_reason", "override", "override_reason",
            "version", "score", "pending", "stale", "grader", "updated_at", "max", "kind")
    return {"sid": sid, "assignment": assignment, "question": qid, **{k: state[k] for k in keys}}


class Stats(Base):
    def get(self, assignment):
        assignment = self.assignment(assignment)
        stats = manual.statistics(self.ctx.book.db, assignment)
        for s in stats:
            s["bars"] = [(points, count, round(100 * count / max(s["histogram"].values())))
                         for points, count in s["histogram"].items()]
        self.page("stats.html", assignment=assignment, stats=stats)


class Audit(Base):
    def get(self, assignment):
        assignment = self.assignment(assignment)
        labels = {student: label for _, student, label in self.ctx.roster(assignment)}
        entries = manual.audit_log(self.ctx.book.db, assignment)
        for e in entries:
            e["label"] = labels.get(e["student"], "") if e["student"] else ""
            e["before"] = json.dumps(e["before"], sort_keys=True)[:400]
            e["after"] = json.dumps(e["after"], sort_keys=True)[:400]
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
        qid = str(data.get("question"))
        found = [(sid, s) for sid, s, _ in self.ctx.roster(assignment) if sid == data.get("sid")]
        if not found:
            raise tornado.web.HTTPError(404, reason="No such answer")
        return assignment, qid, found[0][1], found[0][0]

    def version(self, data) -> int:
        version = data.get("version")
        if not isinstance(version, int) or isinstance(version, bool) or version < 0:
            raise tornado.web.HTTPError(400, reason="Missing version")
        return version

    def run(self, change):
        try:
            result = change()
        except manual.Conflict as conflict:
            self.set_status(409)
            self.finish({"conflict": True, "state": conflict.current})
            return
        except GradingError as exc:
            self.set_status(400)
            self.finish({"error": str(exc)[:300]})
            return
        self.finish({"state": result})


class GradeApi(Api):
    def post(self):
        data = self.body()
        assignment, qid, student, sid = self.target(data)
        version = self.version(data)

        def change():
            state = manual.save_grade(self.ctx.book.db, assignment, student, qid, who=self.grader,
                                      version=version, applied=data.get("applied"),
                                      comment=data.get("comment", ""),
                                      adjustment=data.get("adjustment", 0),
                                      adjustment_reason=data.get("adjustment_reason", ""))
            return client_state(state, sid, assignment, qid)
        self.run(self._wrap(change, assignment, student, qid, sid))

    def _wrap(self, change, assignment, student, qid, sid):
        def wrapped():
            try:
                return change()
            except manual.Conflict as conflict:
                raise manual.Conflict(client_state(conflict.current, sid, assignment, qid)) from None
        return wrapped


class OverrideApi(GradeApi):
    def post(self):
        data = self.body()
        assignment, qid, student, sid = self.target(data)
        version = self.version(data)

        def change():
            state = manual.save_override(self.ctx.book.db, assignment, student, qid,
                                         who=self.grader, version=version,
                                         points=data.get("points"), reason=data.get("reason", ""))
            return client_state(state, sid, assignment, qid)
        self.run(self._wrap(change, assignment, student, qid, sid))


class RubricApi(Api):
    def post(self):
        data = self.body()
        assignment = self.assignment(str(data.get("assignment")))
        version = self.version(data)
        self.run(lambda: manual.edit_rubric_item(
            self.ctx.book.db, assignment, str(data.get("question")), str(data.get("item")),
            who=self.grader, version=version, points=data.get("points"), text=data.get("text")))


class GraderName(Base):
    def post(self):
        name = self.get_body_argument("grader", "")
        if not manual.GRADER_NAME.match(name):
            raise tornado.web.HTTPError(400, reason="A name is 1 to 40 letters, digits, spaces or ._@+-")
        self.set_cookie(GRADER_COOKIE, name, samesite="Strict", path="/")
        self.redirect("/")


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
             port: int) -> tuple[tornado.web.Application, Context]:
    """The application for a gradebook, answering on ``host:port`` (and the loopback names)."""
    hosts = {f"{h}:{port}" for h in (host, "127.0.0.1", "localhost", "[::1]")}
    ctx = Context(gradebook_path, token, anonymous, hosts)
    a = {"ctx": ctx}
    name = r"([A-Za-z0-9_][A-Za-z0-9_.-]*)"
    app = tornado.web.Application([
        (r"/", Index, a),
        (rf"/grade/{name}/([A-Za-z0-9_.-]+)/([0-9]{{1,6}})", Grade, a),
        (rf"/stats/{name}", Stats, a),
        (rf"/audit/{name}", Audit, a),
        (r"/api/grade", GradeApi, a),
        (r"/api/override", OverrideApi, a),
        (r"/api/rubric", RubricApi, a),
        (r"/grader", GraderName, a),
        (r"/static/mathjax/(.*)", Static, {"ctx": ctx, "path": str(mathjax_folder())}),
        (r"/static/(app\.js|app\.css|mathjax-config\.js)", Static, {"ctx": ctx, "path": str(HERE / "static")}),
        (r"/(.*)", NotFound, a),
    ], xsrf_cookies=True, xsrf_cookie_kwargs={"samesite": "Strict"}, compress_response=True,
        static_path=None, serve_traceback=False)
    return app, ctx


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"

"""The grading web app (``lecturelib gradebook serve``), served for real and driven in Chromium.

One gradebook of a class of 20 (the toy set of tests/test_written.py with its written
question q4), one server and one browser for the module; the server's staff (TEAM) sign in
with their personal links.  Two teaching assistants (two browser contexts) grade q4 at
once, by keys and by clicks; a stale write is refused and shown; the instructor's rubric
edit changes earlier grades; an override is audited; hostile answers neither run
nor break the page; anonymous mode hides names; axe-core finds no serious or critical
violation; and the CSV and the feedback files say what was graded in the browser,
recomputed here from the plan of the test (the rubric's points, summed and clipped).

The HTTP tests (token, origin, host, XSRF) need no browser and run in the everyday tier.
"""

from __future__ import annotations

import asyncio
import csv
import dataclasses
import html
import http.client
import io
import json
import os
import re
import threading
import urllib.parse
from pathlib import Path

import pytest

from lecturelib import grading
from lecturelib.grading.gradebook import allocation, manual
from lecturelib.grading.gradebook import staff as staff_module
from lecturelib.grading.gradebook import Gradebook
from lecturelib.grading.core.notebook import MAX_CODE_CHARS, question_code, written_answer_note
from lecturelib.grading.core.report import GradeReport, QuestionResult
from test_book import launched_chromium
from test_written import QUESTIONS, REFERENCE, _run, decoyed_toy, written_toy

ROOT = Path(__file__).resolve().parent.parent
STUDENTS = [f"{first}_{last}" for first, last in zip(
    ["ada", "boris", "chen", "dora", "emil", "fatou", "gita", "hugo", "iris", "jonas",
     "kemal", "lena", "mira", "nils", "olga", "pavel", "qiu", "rosa", "sven", "tara"],
    ["quillfeather", "marchbank", "oxleyward", "penhallow", "truscott", "vandermeer",
     "wexcombe", "yarrowby", "zellweger", "ashgrove", "brackley", "cowdrey", "dunsmore",
     "elphick", "fairbrass", "gosling", "hartigan", "ingleby", "jessop", "kettleby"])]
PWN = "window.__pwned = 1"
HOSTILE = {
    "boris_marchbank": f"<script>{PWN}</script> and <img src=x onerror=\"{PWN}\"> "
                       f"<svg onload=\"{PWN}\"></svg>",
    "chen_oxleyward": f"[click me](javascript:{PWN}) <a href=\"javascript:{PWN}\">raw</a> "
                      "[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "dora_penhallow": "".join("  " * (i % 400) + "- item\n" for i in range(40_000))[:1_000_000],
    "emil_truscott": "Bomb: $\\def\\a{\\a\\a}\\a$ and $\\newcommand{\\b}[1]{#1#1}"
                     + "\\b{" * 30 + "x" + "}" * 30 + "$ and $\\href{javascript:alert(1)}{x}$",
}
NO_ANSWER = "tara_kettleby"
ITEMS = {"a": 2.0, "b": 2.0, "x1": -1.0}


def answer(student: str) -> str:
    return HOSTILE.get(student, f"Proof {STUDENTS.index(student)}: the derivative $\\frac{{a-1}}{{q}} - "
                                f"\\frac{{b-1}}{{1-q}} = 0$ gives $q = \\frac{{a-1}}{{a+b-2}}$.")


def plan(i: int) -> tuple[list[str], str]:
    """The rubric items and comment the graders give student ``i`` (in name order)."""
    applied = [["a", "b"], ["a"], ["b", "x1"], [], ["a", "x1"]][i % 5]
    return applied, (f"Comment {i}: see the second step." if i % 3 == 0 else "")


@pytest.fixture(scope="module")
def gradebook(tmp_path_factory):
    path = tmp_path_factory.mktemp("webapp") / "gradebook.sqlite"
    with Gradebook(path) as book:
        book.store_questions("toy", QUESTIONS)
        for i, student in enumerate(STUDENTS):
            q1 = 2.0 if i % 4 else 0.0
            rows = [QuestionResult("q1", q1, 2, "ok" if q1 else "check 1: the value is not the expected one",
                                   checks=[bool(q1)], answer=f"p0 = {0.0425 if q1 else 0.5}"),
                    QuestionResult("q2", 3 if i % 2 else 1, 3, "ok", checks=[True, bool(i % 2)]),
                    QuestionResult("q3", 1, 1, "ok", checks=[True])]
            if student == NO_ANSWER:
                rows.append(QuestionResult("q4", 0, 4, "no answer", kind="written"))
            else:
                rows.append(QuestionResult("q4", 0, 4, "pending", pending=True, kind="written",
                                           answer=answer(student)))
            book.record(student, f"sha-{i}", GradeReport(f"{student}.ipynb", "toy", rows, []))
    return path


# the sign-in links' secrets the tests made, by gradebook file: {path: {name: secret}}
LINKS: dict[str, dict[str, str]] = {}
TEAM = {"Ines Ward": "instructor", "ta_anna": "ta", "ta_ben": "ta"}  # the module server's staff


class Server:
    """The app on a thread of its own (its own asyncio loop), as the command runs it.
    ``staff`` (name -> role) are added to the gradebook first; with staff, ``url`` is the
    first instructor's personal link, else the single-token address."""

    def __init__(self, gradebook, anonymous=False, staff=None, **options):
        from lecturelib.grading.webapp import start

        self.path = Path(gradebook)
        self.links = LINKS.setdefault(str(self.path.resolve()), {})
        for name, role in (staff or {}).items():
            self.secret(name, role)
        ready = threading.Event()

        def run():
            async def main():
                self.url, self.server, self.ctx = start(gradebook, anonymous=anonymous, **options)
                self.loop, self.stop = asyncio.get_running_loop(), asyncio.Event()
                ready.set()
                await self.stop.wait()
                self.server.stop()
                self.ctx.book.close()
            asyncio.run(main())
            self.ctx.renderer.close()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        assert ready.wait(30)
        parts = urllib.parse.urlsplit(self.url)
        self.base, self.host, self.port = f"{parts.scheme}://{parts.netloc}", parts.hostname, parts.port
        if "?token=" not in self.url:  # staff: the first instructor signs in
            with Gradebook(self.path) as book:
                first = next(p["name"] for p in staff_module.members(book.db) if p["role"] == "instructor")
            self.url = self.link(first)
        self.token = urllib.parse.parse_qs(urllib.parse.urlsplit(self.url).query)["token"][0]

    def secret(self, name: str, role: str = "ta") -> str:
        """The secret of ``name``'s link: added to the staff with ``role`` if not on it, a
        new link if on it with a secret the tests do not know (a copied gradebook)."""
        if name not in self.links:
            with Gradebook(self.path) as book:
                known = {p["name"] for p in staff_module.members(book.db)}
                self.links[name] = (staff_module.new_link(book.db, name) if name in known
                                    else staff_module.add(book.db, name, role))
        return self.links[name]

    def link(self, name: str, role: str = "ta") -> str:
        return f"{self.base}/?token={self.secret(name, role)}"

    def close(self):
        self.loop.call_soon_threadsafe(self.stop.set)
        self.thread.join(10)


@pytest.fixture(scope="module")
def server(gradebook):
    s = Server(gradebook, staff=TEAM)
    yield s
    s.close()


def copy_gradebook(source, path):
    """A copy of a gradebook another connection may hold open: SQLite's backup (in WAL mode
    the file alone may miss the latest changes)."""
    import sqlite3

    with sqlite3.connect(source) as src, sqlite3.connect(path) as dst:
        src.backup(dst)
    src.close()
    dst.close()
    return path


def solo_copy(gradebook, path):
    """A copy of ``gradebook`` without its staff: the single-token mode."""
    copy_gradebook(gradebook, path)
    with Gradebook(path) as book, book.db:
        staff_module.create_table(book.db)
        book.db.execute("DELETE FROM staff")
    return path


def request(server, method, path, body=None, headers=None, host=None, timeout=10):
    conn = http.client.HTTPConnection(server.host, server.port, timeout=timeout)
    conn.request(method, path, body=body, headers={"Host": host or f"{server.host}:{server.port}",
                                                   **(headers or {})})
    response = conn.getresponse()
    return response.status, response.read().decode(errors="replace"), response


def sign_in(server, secret=None) -> tuple[str, str]:
    """Open a sign-in link (the server's ``url`` by default): the session cookie it sets
    (its value, not the secret) and the change key it hands the page."""
    _, _, response = request(server, "GET", "/?token=" + (secret or server.token))
    cookie = next(c for c in response.headers.get_all("Set-Cookie") if c.startswith("lecturelib_token="))
    return cookie.split(";")[0], response.getheader("Location").partition("#key=")[2]


def session_cookie(server) -> str:
    return sign_in(server)[0]


# ------------------------------------------------------------------------ HTTP, no browser


def test_url_is_loopback_with_a_random_token(server):
    assert server.url.startswith("http://127.0.0.1:") and len(server.token) >= 40


def test_the_results_page_shows_the_item_analysis_and_the_regrade_queue(gradebook, tmp_path):
    """Issue 43: the app's Results page shows what ``gradebook analyze`` computes (alpha,
    each question's discrimination and fifths) and the queue of regrade requests, with a
    student's reason escaped, and hidden in anonymous mode."""

    from lecturelib.grading.gradebook import regrades
    from lecturelib.grading.gradebook.analysis import analyze

    path = solo_copy(gradebook, tmp_path / "gradebook.sqlite")
    with Gradebook(path) as book:
        regrades.request(book.db, "toy", STUDENTS[1], "q1", reason="<b>My value</b> is right \u202eTHGIR",
                         who="Instructor")
        for student in STUDENTS[:6]:  # some proofs graded, so that alpha is defined
            if student != NO_ANSWER:
                state = manual.grade_state(book.db, "toy", student, "q4")
                manual.save_grade(book.db, "toy", student, "q4", who="Ann Lee", version=state["version"],
                                  applied=["a"] if len(student) % 2 else ["a", "b"])
        expected = analyze(book, "toy")
        assert expected["alpha"] is not None
    for anonymous in (False, True):
        s = Server(path, anonymous=anonymous)
        try:
            status, page, _ = request(s, "GET", "/stats/toy", headers={"Cookie": session_cookie(s)})
        finally:
            s.close()
        assert status == 200
        alpha = f"{expected['alpha']:.2f}" if expected["alpha"] is not None else "not defined yet"
        assert f"Cronbach's alpha of the set: {alpha}" in html.unescape(page), page[page.find("alpha"):][:300]
        q2 = next(q for q in expected["questions"] if q["id"] == "q2")
        assert "Discrimination of q2" in page and f"{q2['discrimination']:.2f}" in page
        assert 'id="regrade-queue"' in page and "<b>My value</b>" not in page
        assert ("&lt;b&gt;My value&lt;/b&gt; is right" in page) != anonymous
        assert (STUDENTS[1] in page) != anonymous
        # issue 49: the reason's right-to-left override is dropped and the reason isolated
        assert "\u202e" not in page
        assert ("<bdi>&lt;b&gt;My value&lt;/b&gt; is right THGIR</bdi>" in page) != anonymous


def test_requests_without_the_token_are_refused(server):
    for path in ("/", "/grade/toy/q4/1", "/stats/toy", "/static/app.js", "/static/mathjax/tex-chtml.js"):
        status, text, _ = request(server, "GET", path)
        assert status == 403 and "token" in text, path
    status, _, _ = request(server, "GET", "/?token=" + "x" * len(server.token))
    assert status == 403
    status, _, response = request(server, "GET", "/?token=" + server.token)
    key = response.getheader("Location").partition("#key=")[2]
    assert status == 302 and response.getheader("Location") == f"/#key={key}" and len(key) >= 40
    cookie = next(c for c in response.headers.get_all("Set-Cookie") if c.startswith("lecturelib_token="))
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Secure" not in cookie  # plain HTTP
    assert server.token not in cookie and key not in cookie
    status, _, _ = request(server, "GET", "/", headers={"Cookie": session_cookie(server)})
    assert status == 200
    # the token is not a cookie's value
    status, _, _ = request(server, "GET", "/", headers={"Cookie": f"lecturelib_token={server.token}"})
    assert status == 403
    # another Host (DNS rebinding) is refused even with the token
    status, _, _ = request(server, "GET", "/", headers={"Cookie": session_cookie(server)},
                           host=f"evil.example:{server.port}")
    assert status == 403


XSRF = "2|00000000|0123456789abcdef0123456789abcdef|1700000000"  # Tornado's format, mask 0


def api_headers(server, secret=None) -> dict:
    """Everything a change needs: the session cookie, the XSRF token, the app's own Origin
    and the change key (of the server's ``url``, or of the link with ``secret``)."""
    cookie, key = sign_in(server, secret)
    return {"Cookie": f"{cookie}; _xsrf={XSRF}", "Content-Type": "application/json",
            "X-XSRFToken": XSRF, "Origin": server.base, "X-Lecturelib-Key": key}


def test_state_changes_need_the_origin_the_xsrf_token_and_the_change_key(server, gradebook):
    sid = server.ctx.sid(STUDENTS[5])
    body = json.dumps({"assignment": "toy", "question": "q4", "sid": sid, "version": 0, "applied": ["a"],
                       "answer_sha": "not a hash"})
    good = api_headers(server)
    status, text, _ = request(server, "POST", "/api/grade", body, good)
    assert status == 400 and "hash" in text  # let through, refused for its body: nothing written
    without = lambda name: {k: v for k, v in good.items() if k != name}  # noqa: E731
    refused = [{**good, "Origin": "http://evil.example"}, without("Origin"), {**good, "Origin": "null"},
               {**good, "X-XSRFToken": "2|ffff|00|1"},  # XSRF mismatch
               {**good, "Cookie": f"_xsrf={XSRF}"},  # no session cookie
               {**good, "Cookie": f"lecturelib_token={server.token}; _xsrf={XSRF}"},  # the token as cookie
               # the cookies alone (a program on another port of this machine that a click in an
               # answer sent them to): no change key, or a wrong one
               without("X-Lecturelib-Key"), {**good, "X-Lecturelib-Key": "x" * 43}]
    for headers in refused:
        status, _, _ = request(server, "POST", "/api/grade", body, headers)
        assert status == 403, headers
    status, text, _ = request(server, "POST", "/api/rubric", json.dumps({"assignment": "toy"}),
                              without("X-Lecturelib-Key"))
    assert status == 403 and "change key" in text
    with Gradebook(gradebook) as book:  # nothing was written by any of them
        assert manual.audit_log(book.db, "toy") == []


def test_nothing_outside_the_app_is_served(server):
    cookie = {"Cookie": session_cookie(server)}
    for path in ("/static/../app.py", "/static/mathjax/../../../../../etc/passwd",
                 "/static/%2e%2e/app.py", "/static/mathjax/%2e%2e/%2e%2e/__init__.py",
                 "/templates/base.html", "/gradebook.sqlite", "/static/render.py"):
        status, text, _ = request(server, "GET", path, headers=cookie)
        assert status in (403, 404), (path, status)
        assert "import" not in text and "SQLite" not in text


# ------------------------------------------------------------------------ the browser


@pytest.fixture(scope="module")
def browser():
    with launched_chromium() as chrome:
        yield chrome


EXPECTED = ("status of 409 (Conflict)", "status of 400 (Bad Request)")  # the API's own refusals


class Watch:
    """A page's dialogs, console errors and uncaught exceptions (but the network log line
    Chromium writes for a refused change, which the tests provoke on purpose)."""

    def __init__(self, page):
        self.problems = []
        page.on("dialog", lambda d: (self.problems.append(f"dialog: {d.message}"), d.dismiss()))
        page.on("console", self.console)
        page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))

    def console(self, message):
        if message.type == "error" and not message.text.endswith(EXPECTED):
            self.problems.append(f"console: {message.text}")


def grader(browser, server, name, role="ta"):
    """A browser context signed in with ``name``'s personal link (on the staff as ``role``)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    watch = Watch(page)
    page.goto(server.link(urllib.parse.unquote(name), role))
    return context, page, watch


def typeset(page):
    page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise",
                           timeout=30_000)
    page.evaluate("() => MathJax.startup.promise")


def open_answer(page, server, qid, position, math=True):
    page.goto(f"{server.base}/grade/toy/{qid}/{position}")
    if qid == "q4" and math:
        typeset(page)


def roster(server, qid="q4"):
    """The grading order of a question: its fair order (a keyed hash of the assignment,
    question and student, the same after a restart)."""
    return fair_order(server.ctx.book.path, "toy", qid, STUDENTS)


def fair_order(path, assignment, qid, students):
    with Gradebook(path) as book:
        return allocation.fair_order(book.db, assignment, qid, students)


@pytest.fixture(scope="module")
def graded(browser, server, gradebook):
    """Two graders grade q4 of the class at once: A by keys (the first half), B by clicks
    (the second half), interleaved.  Returns the two pages and their watchers."""
    a_context, a, a_watch = grader(browser, server, "ta_anna")
    b_context, b, b_watch = grader(browser, server, "ta_ben")
    names = roster(server)
    half = len(names) // 2
    for k in range(half):
        for page, position, by_keys in ((a, k + 1, True), (b, half + k + 1, False)):
            i = STUDENTS.index(names[position - 1])
            if names[position - 1] == NO_ANSWER:
                continue
            open_answer(page, server, "q4", position, math=False)
            applied, comment = plan(i)
            for item in applied:
                before = page.locator("#status").text_content()
                if by_keys:
                    page.keyboard.press(str(list(ITEMS).index(item) + 1))
                else:
                    page.click(f"button.item[data-item='{item}']")
                page.wait_for_selector(f"button.item[data-item='{item}'][aria-pressed='true']")
            if comment:
                page.fill("#comment", comment)
                page.click("#grade-form button[type=submit]")
                page.wait_for_function("() => document.getElementById('status').textContent"
                                       ".includes('comment and adjustment')")
            if not applied and not comment:  # graded with nothing earned: save it as such
                page.click("#grade-form button[type=submit]")
                page.wait_for_function("() => document.getElementById('status').textContent"
                                       ".startsWith('Saved')")
    yield {"a": a, "b": b, "watch": [a_watch, b_watch], "names": names}
    a_context.close()
    b_context.close()


@pytest.mark.full
@pytest.mark.browser
def test_two_graders_and_a_conflict_lose_nothing(graded, server, gradebook):
    a, b, names = graded["a"], graded["b"], graded["names"]
    position = next(p for p, s in enumerate(names, 1)  # graded with nothing and no comment
                    if plan(STUDENTS.index(s)) == ([], ""))
    student = names[position - 1]
    open_answer(a, server, "q4", position)
    open_answer(b, server, "q4", position)  # both see version 1
    a.keyboard.press("1")  # A applies item a
    a.wait_for_selector("button.item[data-item='a'][aria-pressed='true']")
    b.click("button.item[data-item='b']")  # B, from the stale page, applies item b
    b.wait_for_selector("#conflict:not([hidden])")
    text = b.locator("#conflict").text_content()
    assert "Conflict" in text and "ta_anna" in text and "NOT saved" in text
    # B's page now shows A's grade; B applies b again, on top of it
    assert b.get_attribute("button.item[data-item='a']", "aria-pressed") == "true"
    assert b.get_attribute("button.item[data-item='b']", "aria-pressed") == "false"
    b.click("button.item[data-item='b']")
    b.wait_for_selector("#conflict[hidden]", state="attached")
    with Gradebook(gradebook) as book:
        state = manual.grade_state(book.db, "toy", student, "q4")
        assert state["applied"] == ["a", "b"] and state["score"] == 4 and state["grader"] == "ta_ben"
        # put it back to the plan (nothing earned) for the CSV test
        manual.save_grade(book.db, "toy", student, "q4", who="ta_ben", version=state["version"], applied=[])
    problems = [p for w in graded["watch"] for p in w.problems]
    assert not problems, problems


@pytest.mark.full
@pytest.mark.browser
def test_rubric_edit_changes_earlier_grades(browser, graded, server, gradebook):
    """The instructor's edit (a teaching assistant is not offered it)."""
    assert graded["a"].locator("details.edit").count() == 0
    context, a, _ = grader(browser, server, "Ines Ward", "instructor")
    with Gradebook(gradebook) as book:
        before = book.scores("toy")
    open_answer(a, server, "q4", 1)
    a.click("details.edit summary >> nth=0")
    form = a.locator("form.edit-item[data-item='a']")
    form.locator("input[name=points]").fill("1.5")
    form.locator("input[name=text]").fill("writes the log posterior and differentiates it")
    with a.expect_navigation():
        form.locator("button[type=submit]").click()
    typeset(a)
    assert "+1.5" in a.locator("button.item[data-item='a']").text_content()
    with Gradebook(gradebook) as book:
        after = book.scores("toy")
        edit = [e for e in manual.audit_log(book.db, "toy") if e["action"] == "rubric item a"][-1]
    context.close()
    assert edit["who"] == "Ines Ward" and edit["before"]["points"] == 2 and edit["after"]["points"] == 1.5
    changed = {s for s in STUDENTS if after[s]["q4"] != before[s]["q4"]}
    with_a = {s for i, s in enumerate(STUDENTS) if "a" in plan(i)[0] and s != NO_ANSWER}
    assert changed and changed <= with_a
    for s in with_a:
        assert after[s]["q4"] == expected_q4(STUDENTS.index(s), {**ITEMS, "a": 1.5}), s


def expected_q4(i: int, items: dict) -> float:
    """The plan's items with ``items``' points, summed and clipped to [0, 4]."""
    if STUDENTS[i] == NO_ANSWER:
        return 0.0
    return min(max(sum(items[item] for item in plan(i)[0]), 0.0), 4.0)


@pytest.mark.full
@pytest.mark.browser
def test_the_changes_page_shows_what_changed_as_one_clean_line_each():
    """An audit entry is shown as the fields whose value changed (not the stored version);
    a student's text (a regrade reason) loses its control and bidirectional characters."""
    from lecturelib.grading.webapp.app import changed_fields

    before = {"applied": ["a"], "adjustment": 0.0, "comment": "", "decided": False, "version": 1}
    after = {"applied": ["a", "b"], "adjustment": -1.0, "comment": "", "decided": True, "version": 2}
    assert changed_fields(before, after) == (
        [("adjustment", "0"), ("applied", "a"), ("decided", "no")],
        [("adjustment", "-1"), ("applied", "a, b"), ("decided", "yes")])
    _, (reason,) = changed_fields({}, {"reason": "right\u202e<b>x</b>\nplease" + "!" * 400})
    assert reason[1].startswith("right <b>x</b> please!") and len(reason[1]) == 300
    assert not any(ord(c) < 32 or c == "\u202e" for c in reason[1])


def test_override_is_recorded_in_the_audit(graded, server, gradebook):
    a, names = graded["a"], roster(server, "q1")
    position = next(p for p, s in enumerate(names, 1) if STUDENTS.index(s) % 4 == 0)  # q1 scored 0
    student = names[position - 1]
    open_answer(a, server, "q1", position)
    assert "check 1: does not match" in a.locator("ul.checks").text_content()
    assert "p0 = 0.5" in a.locator("#answer").text_content()  # the student's code, read only
    a.fill("#override", "1.5")
    a.click("#override-form button[type=submit]")
    a.wait_for_selector("#conflict:not([hidden])")  # no reason given: refused and said so
    assert "needs a reason" in a.locator("#conflict").text_content()
    a.fill("#override-reason", "right formula, rounded too early")
    a.click("#override-form button[type=submit]")
    a.wait_for_function("() => document.getElementById('score').textContent === '1.5'")
    with Gradebook(gradebook) as book:
        entry = manual.audit_log(book.db, "toy")[-1]
        assert book.scores("toy")[student]["q1"] == 1.5
    assert (entry["who"], entry["student"], entry["question"], entry["action"]) == (
        "ta_anna", student, "q1", "override")
    assert entry["before"]["score"] == 0 and entry["after"]["override_reason"] == "right formula, rounded too early"
    a.goto(f"{server.base}/audit/toy")
    row = a.locator("table.audit tbody tr").last  # the fields that changed, as a grader reads them
    assert row.locator("td").nth(4).text_content() == "override"
    before, after = (row.locator("td").nth(i).locator("li").all_text_contents() for i in (5, 6))
    assert before == ["decided: no", "override: none", "override reason: none", "score: 0"], before
    assert after == ["decided: yes", "override: 1.5", "override reason: right formula, rounded too early",
                     "score: 1.5"], after


@pytest.mark.full
@pytest.mark.browser
def test_hostile_answers_neither_run_nor_break_the_page(graded, server):
    a, names = graded["a"], graded["names"]
    watch = graded["watch"][0]
    for student in HOSTILE:
        watch.problems.clear()
        open_answer(a, server, "q4", names.index(student) + 1)
        assert a.evaluate("() => window.__pwned") is None, student
        assert a.locator("#answer script, #answer img, #answer svg, #answer [onerror], "
                         "#answer [onload], #answer a[href^='javascript'], "
                         "#answer a[href^='data']").count() == 0, student
        for link in a.locator("#answer a").all():
            link.click(no_wait_after=True)
        assert a.evaluate("() => window.__pwned") is None, student
        # the page still works: the rubric answers, the score is shown
        assert a.locator("button.item").count() == 3 and a.locator("#score").is_visible()
        assert not watch.problems, (student, watch.problems)
    open_answer(a, server, "q4", names.index("dora_penhallow") + 1)
    assert "shown as plain text" in a.content() and "only the first" in a.content()
    open_answer(a, server, "q4", names.index("emil_truscott") + 1)
    assert a.locator("#answer mjx-container").count() == 3  # typeset, with MathJax's own errors
    assert a.locator("#answer mjx-merror").count() >= 2 and a.locator("#answer a").count() == 0
    open_answer(a, server, "q4", names.index("ada_quillfeather") + 1)
    assert a.locator("#answer mjx-container").count() == 2  # ordinary math is typeset offline


@pytest.mark.full
@pytest.mark.browser
def test_anonymous_mode_hides_names(browser, gradebook, graded):
    anonymous = Server(gradebook, anonymous=True)
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(anonymous.url)
        pages = ["/", "/stats/toy", "/audit/toy"]
        pages += [f"/grade/toy/{q}/{n}" for q in ("q4", "q1") for n in (1, 7, 20)]
        for path in pages:
            page.goto(anonymous.base + path)
            html = page.content()
            leaked = [s for s in STUDENTS if s in html or s.split("_")[1] in html]
            assert not leaked, (path, leaked)
        assert re.search(r"Student ([1-9]|1[0-9]|20)\b", html) and "anonymous mode" in html
    finally:
        context.close()
        anonymous.close()


@pytest.mark.full
@pytest.mark.browser
def test_pages_pass_axe(graded, server, tmp_path):
    from axe_playwright_python.sync_playwright import Axe

    a = graded["a"]
    axe = Axe()
    # the first answers, and the longest (its box scrolls: it must take the keyboard's focus)
    longest = f"/grade/toy/q4/{roster(server).index('dora_penhallow') + 1}"
    for path in ("/", "/grade/toy/q4/1", longest, "/grade/toy/q1/1", "/stats/toy", "/audit/toy"):
        a.goto(server.base + path)
        if "/q4/" in path:
            typeset(a)
        violations = axe.run(a).response["violations"]
        bad = [(v["id"], v["impact"], v["help"], [n["target"] for n in v["nodes"]][:3]) for v in violations
               if v["impact"] in ("serious", "critical")]
        assert not bad, (path, bad)
    shot = os.environ.get("LECTURELIB_WEBAPP_SCREENSHOT")
    if shot:  # the README's picture: tools/ may set this to refresh it
        open_answer(a, server, "q4", 1)
        a.screenshot(path=shot, full_page=False)


@pytest.mark.full
@pytest.mark.browser
def test_csv_and_feedback_match_what_was_graded(graded, gradebook, tmp_path, capsys,
                                                 request):
    assert grading.main(["gradebook", "export", "--assignment", "toy", "--gradebook", str(gradebook)]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["student"] for r in rows] == sorted(STUDENTS)
    with Gradebook(gradebook) as book:  # what the other tests did: the edit of item a, an override
        overridden = {e["student"] for e in manual.audit_log(book.db, "toy") if e["action"] == "override"}
        items = {i["id"]: i["points"] for i in manual.rubric(book.db, "toy", "q4")}
    for row in rows:
        i = STUDENTS.index(row["student"])
        assert float(row["q4"]) == expected_q4(i, items), row
        q1 = 1.5 if row["student"] in overridden else (2.0 if i % 4 else 0.0)
        total = q1 + (3 if i % 2 else 1) + 1 + expected_q4(i, items)
        assert float(row["q1"]) == q1 and float(row["total"]) == total, row
    assert grading.main(["gradebook", "feedback", "--assignment", "toy", "--gradebook", str(gradebook),
                         "--output", str(tmp_path)]) == 0
    for i, student in enumerate(STUDENTS):
        data = json.loads((tmp_path / f"{student}.json").read_text())
        q4 = data["questions"][-1]
        applied, comment = plan(i)
        assert q4["pending"] is False and q4["points"] == expected_q4(i, items)
        if student != NO_ANSWER:
            assert [item["id"] for item in q4.get("rubric", [])] == applied
            assert q4.get("comment", "") == comment
            text = (tmp_path / f"{student}.md").read_text()
            assert all(f"- {items[item]:+g}: " in text for item in applied)
            assert (comment in text) if comment else "Comment:" not in text


# ------------------------------------------------------------------------ round three (issue 42)
# A gradebook of its own, so that what these tests save and hand in again leaves the class
# above as its plan says.

LOCAL_LINKS = ["http://127.0.0.1:{port}/steal", "http://localhost:{port}/", "http://127.1:{port}/",
               "http://2130706433:{port}/", "http://0x7f.0.0.1:{port}/", "http://[::1]:{port}/",
               "http://[::ffff:127.0.0.1]:{port}/", "http:127.0.0.1:{port}/", "http:\\\\127.0.0.1:{port}/",
               "http://user@127.0.0.1:{port}/", "http://192.168.1.1/", "http://10.0.0.8/",
               "http://169.254.169.254/latest", "http://intranet/", "http://printer.local/",
               "http://0.0.0.0:{port}/", "http://%31%32%37.0.0.1:{port}/", "/api/grade", "page.html"]
PUBLIC_LINKS = ["https://en.wikipedia.org/wiki/Maximum_a_posteriori_estimation", "http://93.184.215.14/",
                "mailto:ta@example.org"]
ESCAPES = {  # every way TeX may set an attribute or a style (MathJax's base package and extensions)
    "mmltoken": r"$\mmlToken{mi}[id='adjustment' class='item' href='http://evil.example/' "
                r"style='position:fixed;left:0;top:0;width:100vw;height:100vh;background:#fff;z-index:9']{A}$",
    "mmltoken_comment": r"$\mmlToken{mi}[id='comment']{C}$",
    "bbox": r"$\bbox[position:fixed;left:0;top:0;width:100vw;height:100vh;background:#fff]{B}$",
    "unicode": r"$\unicode[Comic Sans MS]{x41}$",
    "style": r"$\style{position:fixed;left:0;top:0;width:100vw;height:100vh}{D}$",
    "class": r"$\class{item}{E}$",
    "cssId": r"$\cssId{adjustment-reason}{F}$",
    "href": r"$\href{http://evil.example/}{G}$",
    "enclose": r"$\enclose{box}[style='position:fixed;left:0;top:0;width:100vw;height:100vh']{H}$",
    "toggle": r"$\toggle{I}{J}\endtoggle$ $\mathtip{K}{Already graded: 3/3}$",
}
DECOY = "for i in range(3):\n    p0 = 0.0425  # the loop the grader is meant to see"


def round3_answers(port: int) -> dict[str, str]:
    return {
        "escape": "Already graded: 3/3. " + " ".join(ESCAPES.values()),
        "links": "\n\n".join(f"[link {i}]({link.format(port=port)}) <{link.format(port=port)}>"
                             for i, link in enumerate(LOCAL_LINKS))
                 + "\n\n" + " ".join(f"[public {i}]({link})" for i, link in enumerate(PUBLIC_LINKS)),
        "resubmits": "Proof: the derivative vanishes at $q = \\frac{a-1}{a+b-2}$.",
        # the answer: link reference definitions, 22 s of markdown-it here
        "references": "".join(f"[r{i}]: /u{i}\n" for i in range(3000))[:50_000],
        "plain": "Proof: as in the notes.",
        "handin": "Proof: first version, $q = a / (a + b)$.",
        "decoy": "Proof: see the code.",
    }


def round3_record(book, student: str, answer_text: str, sha: str = "1") -> None:
    code, note, written_note = ("p0 = 0.5", "", "")
    if student == "decoy":  # what the grader makes of a notebook with a decoy for q1
        code, note = question_code(decoyed_toy(), "q1", MAX_CODE_CHARS)
        written_note = written_answer_note(decoyed_toy(), "q1")  # the decoy after the first
    book.record(student, sha, GradeReport(f"{student}.ipynb", "r3", [
        QuestionResult("q1", 0.0, 2, "check 1: the value is not the expected one", checks=[False],
                       answer=code, answer_note=note),
        QuestionResult("q4", 0, 4, "pending", pending=True, kind="written", answer=answer_text,
                       answer_note=written_note)], []))


@pytest.fixture(scope="module")
def round3(tmp_path_factory):
    path = tmp_path_factory.mktemp("round3") / "gradebook.sqlite"
    with Gradebook(path) as book:
        book.store_questions("r3", [q for q in QUESTIONS if q.id in ("q1", "q4")])
    server = Server(path, anonymous=True)
    with Gradebook(path) as book:
        for student, text in round3_answers(server.port).items():
            round3_record(book, student, text)
    server.path = path
    server.order = {q: fair_order(path, "r3", q, round3_answers(0)) for q in ("q1", "q4")}
    yield server
    server.close()


def position(server, student: str, qid: str = "q4") -> int:
    return server.order[qid].index(student) + 1


def change(server, path: str, **body):
    status, text, _ = request(server, "POST", path, json.dumps(body), api_headers(server))
    return status, (json.loads(text) if text.startswith("{") else text)


def grade_body(server, student: str, **extra) -> dict:
    with Gradebook(server.path) as book:
        state = manual.grade_state(book.db, "r3", student, "q4")
    return {"assignment": "r3", "question": "q4", "sid": server.ctx.sid(student), "version": state["version"],
            "answer_sha": manual.answer_sha(state["answer"]), "applied": ["a"], **extra}


def test_api_errors_never_name_a_student(round3):
    """Class 7: a made-up question (or item, or answer) is refused without a name, also
    where the gradebook has no result of that student for a real question."""
    names = list(round3_answers(0))
    sid = round3.ctx.sid("plain")
    attempts = [("/api/grade", {"assignment": "r3", "question": "zz", "sid": sid, "version": 0,
                                "applied": [], "answer_sha": "0" * 64}),
                ("/api/override", {"assignment": "r3", "question": "q9", "sid": sid, "version": 0,
                                   "points": 1, "reason": "r", "answer_sha": "0" * 64}),
                ("/api/rubric", {"assignment": "r3", "question": "zz", "item": "a", "version": 1,
                                 "points": 1, "text": "t"}),
                ("/api/grade", {"assignment": "r3", "question": "q4", "sid": "f" * 16, "version": 0,
                                "applied": [], "answer_sha": "0" * 64})]
    for path, body in attempts:
        status, reply = change(round3, path, **body)
        assert status in (400, 404), (path, body, status)
        assert not any(name in str(reply) for name in names), (path, reply)
    with Gradebook(round3.path) as book:  # a question of the notebook this student's run lacks
        book.store_questions("r3", [q for q in QUESTIONS if q.id in ("q1", "q2", "q4")])
        try:
            with pytest.raises(grading.GradingError) as error:
                manual.save_override(book.db, "r3", "plain", "q2", who="ta", version=0, points=1,
                                     reason="r")
            assert "plain" not in str(error.value)
        finally:
            book.store_questions("r3", [q for q in QUESTIONS if q.id in ("q1", "q4")])


def test_a_grade_for_an_answer_handed_in_again_is_a_conflict(round3):
    """Class 5: the page's answer hash must be the answer's; else 409 and nothing saved."""
    body = grade_body(round3, "resubmits")
    with Gradebook(round3.path) as book:
        round3_record(book, "resubmits", "Proof: a different argument, $q = 1/2$.", sha="2")
    status, reply = change(round3, "/api/grade", **body)
    assert status == 409 and reply["conflict"] == "answer"
    with Gradebook(round3.path) as book:
        state = manual.grade_state(book.db, "r3", "resubmits", "q4")
        assert state["version"] == 0 and state["pending"]
        assert not [e for e in manual.audit_log(book.db, "r3") if e["student"] == "resubmits"]
    status, reply = change(round3, "/api/grade", **{**body, "answer_sha": "x"})
    assert status == 400  # no hash, no change
    status, reply = change(round3, "/api/grade", **grade_body(round3, "resubmits"))
    assert status == 200 and reply["state"]["applied"] == ["a"]


def test_links_to_this_machine_or_a_private_network_are_text():
    """Class 4: however the address is spelled, as a browser reads it."""
    from lecturelib.grading.webapp.render import public_link, render_answer

    for link in LOCAL_LINKS:
        href = link.format(port=8888)
        assert not public_link(href), href
        html, _ = render_answer(f"[click]({href}) and <{href}>")
        assert "<a" not in html and "not followed" in html, (href, html)
    for link in PUBLIC_LINKS:
        assert public_link(link), link
        html, _ = render_answer(f"[see]({link})")
        assert html.count("<a ") == 1, (link, html)


def test_an_answer_slow_to_parse_does_not_stop_the_app(round3):
    """Class 6: the issue's answer (3000 link reference definitions) is rendered while the
    app goes on answering; a page of it and the start page both come back."""
    results = {}

    def fetch(name, path, timeout=10):
        results[name] = request(round3, "GET", path, headers={"Cookie": session_cookie(round3)},
                                timeout=timeout)[:2]

    slow = threading.Thread(target=fetch, args=("slow", f"/grade/r3/q4/{position(round3, 'references')}", 30))
    slow.start()
    fetch("index", "/")  # the HTTP client's 10 s timeout: an app busy parsing would miss it
    slow.join(30)
    assert results["index"][0] == 200 and results["slow"][0] == 200
    assert "[r2999]: /u2999" in results["slow"][1]  # shown as written, not taken as definitions


def test_rendering_past_its_budget_is_plain_text_and_the_loop_goes_on():
    """Class 6: past the budget the worker is killed, the answer shown as escaped text, and
    the event loop was never blocked meanwhile."""
    from lecturelib.grading.webapp.render import BudgetedRenderer
    from slow_render import slow_render

    renderer = BudgetedRenderer(budget=1.0, work=slow_render)

    async def main():
        ticks = 0

        async def tick():
            nonlocal ticks
            while True:
                await asyncio.sleep(0.05)
                ticks += 1

        ticker = asyncio.ensure_future(tick())
        await asyncio.get_running_loop().run_in_executor(None, renderer._ready)  # started
        first = renderer._process
        ticks = 0
        result = await renderer.render("<b>x</b> $y$")
        ticker.cancel()
        return result, ticks, first

    outcome = []  # a thread of its own: Playwright's sync API may hold this thread's loop
    try:
        thread = threading.Thread(target=lambda: outcome.append(asyncio.run(main())))
        thread.start()
        thread.join(90)
        (html, note), ticks, first = outcome[0]
        assert html == '<pre class="plain">&lt;b&gt;x&lt;/b&gt; $y$</pre>'
        assert "longer than 1 s" in note and ticks >= 5
        assert not first.is_alive()  # the slow worker was killed (a new one is starting)
    finally:
        renderer.close()


@pytest.fixture
def r3_page(browser, round3):
    """A grader's page on the round-three app (anonymous), opened from the printed address."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    watch = Watch(page)
    page.goto(round3.link("ta_rita"))
    yield page, watch
    context.close()


def open_r3(page, server, student):
    page.goto(f"{server.base}/grade/r3/q4/{position(server, student)}")
    typeset(page)


OUTSIDE_HITS = """() => {
  const box = document.querySelector("#answer").getBoundingClientRect();
  const hits = [];
  for (let x = 3; x < window.innerWidth; x += 25) for (let y = 3; y < window.innerHeight; y += 25) {
    if (x >= box.left && x <= box.right && y >= box.top && y <= box.bottom) continue;
    const e = document.elementFromPoint(x, y);
    if (e && e.closest("#answer")) hits.push([x, y, e.tagName]);
  }
  return hits;
}"""


@pytest.mark.browser
def test_tex_cannot_escape_the_answer_box_or_change_a_save(r3_page, round3):
    """Class 3: \\mmlToken, \\bbox, \\unicode, \\style, \\class, \\cssId, \\href, \\enclose,
    \\toggle: nothing the answer draws reaches outside its box, nothing in it takes a form
    field's id, a class of the page or a link, and a save sends what the grader typed."""
    page, watch = r3_page
    open_r3(page, round3, "escape")
    assert page.locator("#answer mjx-container").count() == sum(v.count("$") // 2 for v in ESCAPES.values())
    assert page.locator("#answer [id], #answer a, #answer [href], #answer .item").count() == 0
    styled = page.evaluate("""() => [...document.querySelectorAll("#answer *")].filter(e =>
        ["fixed", "absolute", "sticky"].includes(getComputedStyle(e).position)
        && !e.tagName.startsWith("MJX-")).map(e => e.tagName)""")
    assert styled == []
    assert page.evaluate(OUTSIDE_HITS) == []
    for control in ("button.item[data-item='a']", "#grade-form button[type=submit]", "#score"):
        assert page.evaluate("(s) => { const e = document.querySelector(s); e.scrollIntoView({block: 'center'});"
                             " const r = e.getBoundingClientRect();"
                             " const hit = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);"
                             " return e.contains(hit); }", control), control
    page.fill("#comment", "Careful with the second step.")
    page.fill("#adjustment", "1")
    page.fill("#adjustment-reason", "a neat argument")
    page.click("button.item[data-item='a']")
    page.wait_for_function("() => document.getElementById('status').textContent === 'Saved: applied item a.'")
    page.click("#grade-form button[type=submit]")  # a key saves its item; Save, what is typed
    page.wait_for_function("() => document.getElementById('status').textContent.includes('comment')")
    with Gradebook(round3.path) as book:
        state = manual.grade_state(book.db, "r3", "escape", "q4")
    assert (state["applied"], state["comment"], state["adjustment"], state["adjustment_reason"]) == (
        ["a"], "Careful with the second step.", 1.0, "a neat argument")
    assert page.locator("#score").text_content() == "3" and not watch.problems, watch.problems


@pytest.mark.browser
def test_links_to_this_machine_are_shown_as_text(r3_page, round3):
    """Class 4: in the page, only the public links are links; the others are their text."""
    page, watch = r3_page
    open_r3(page, round3, "links")
    hrefs = page.eval_on_selector_all("#answer a", "links => links.map(a => a.href)")
    assert len(hrefs) == len(PUBLIC_LINKS) and all("127.0.0.1" not in h and "localhost" not in h
                                                    for h in hrefs), hrefs
    text = page.locator("#answer").text_content()
    assert all(f"link {i} (link to a local or relative address, not followed: " in text
               for i in range(len(LOCAL_LINKS))), text
    assert not watch.problems, watch.problems


@pytest.mark.browser
def test_a_page_on_an_answer_handed_in_again_saves_nothing(r3_page, round3):
    """Class 5: the grader is told that the answer changed, and the new one is graded only
    once it has been read."""
    page, watch = r3_page
    open_r3(page, round3, "handin")
    with Gradebook(round3.path) as book:
        round3_record(book, "handin", "Proof: second version, $q = (a-1)/(a+b-2)$.", sha="2")
    page.click("button.item[data-item='b']")
    page.wait_for_selector("#conflict:not([hidden])")
    text = page.locator("#conflict").text_content()
    assert "handed in a new answer" in text and "NOT saved" in text
    assert page.get_attribute("button.item[data-item='b']", "aria-pressed") == "false"
    with Gradebook(round3.path) as book:
        assert manual.grade_state(book.db, "r3", "handin", "q4")["version"] == 0
    page.reload()
    typeset(page)
    assert "second version" in page.locator("#answer").text_content()
    page.click("button.item[data-item='b']")
    page.wait_for_selector("button.item[data-item='b'][aria-pressed='true']")
    with Gradebook(round3.path) as book:
        assert manual.grade_state(book.db, "r3", "handin", "q4")["applied"] == ["b"]
    assert not watch.problems, watch.problems


@pytest.mark.browser
def test_a_code_question_shows_the_code_that_ran_not_a_decoy(r3_page, round3):
    """Class 8: beside the checks, the code cells that ran, and a note on the Markdown (and
    raw) cells tagged for the question, which did not run."""
    page, watch = r3_page
    page.goto(f"{round3.base}/grade/r3/q1/{position(round3, 'decoy', 'q1')}")
    code = page.locator("#answer").text_content()
    assert "p0 = lik[0] * prior[0]" in code and "p0 = float(p0)" in code and "range(3)" not in code
    note = page.locator(".answer-col p.warn").text_content()
    assert "1 markdown cell, 1 raw cell" in note and "did not run" in note
    open_r3(page, round3, "decoy")  # and a written answer with more cells tagged for it
    assert "3 more cells are tagged question:q1" in page.locator(".answer-col p.warn").text_content()
    assert not watch.problems, watch.problems


@pytest.mark.full  # a second interpreter starting lecturelib: seconds on a loaded machine
def test_the_command_serves_the_app(gradebook, tmp_path):
    """``lecturelib gradebook serve`` as the README spells it: the address it prints opens the
    app (the command had lost the app's package in issue 41's move)."""
    import subprocess

    proc = subprocess.Popen([str(ROOT / ".venv" / "bin" / "lecturelib"), "gradebook", "serve",
                             "--gradebook", str(solo_copy(gradebook, tmp_path / "solo.sqlite"))],
                            stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        lines = [proc.stdout.readline() for _ in range(2)]
        url = lines[1].strip()
        assert url.startswith("http://127.0.0.1:") and "?token=" in url, (lines, proc.poll())
        parts = urllib.parse.urlsplit(url)
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
        conn.request("GET", f"/?{parts.query}")
        response = conn.getresponse()
        assert response.status == 302 and response.getheader("Location").startswith("/#key=")
    finally:
        proc.terminate()
        proc.wait(10)


# ------------------------------------------------------------------------ round four (issue 43)
# The teaching assistant's round: a class of LMS ids with a roster of names, two named
# graders, every answer made from a notebook by the grader's own scoring (so an answer typed
# under the prompt is what the batch would store).

ROSTER = {"1001": "Zoë Ångström", "1002": "Bo Lindqvist", "1003": "Chidi Okafor",
          "1004": "Dana Ferreira", "1005": "Émile Durand", "1006": "Farah Haddad"}
INLINE_DISPLAY = ("The log posterior is $$\\log p(q) = (a-1)\\log q + (b-1)\\log(1-q)$$ and its "
                  "derivative vanishes where $$\\frac{a-1}{q} = \\frac{b-1}{1-q},$$ that is at the MAP.")
UNDER_PROMPT = ["Let $f(q) = \\log p(q)$, the *log posterior*.", "Setting $f'(q) = 0$ gives "
                "$$q = \\frac{a-1}{a+b-2}.$$"]


def r4_notebook(student: str):
    """The student's notebook: the toy set with q4 answered in its cell, or (1002) in two
    new Markdown cells under the untouched prompt."""
    from nbformat.v4 import new_markdown_cell

    nb = written_toy()
    cell = next(c for c in nb.cells if "question:q4" in c.metadata.get("tags", []))
    if student == "1002":
        cell.source = grading.ANSWER_PROMPT
        nb.cells += [new_markdown_cell(text) for text in UNDER_PROMPT]
    else:
        cell.source = INLINE_DISPLAY if student == "1001" else f"Proof {student}: $q = (a-1)/(a+b-2)$."
    return nb


@pytest.fixture(scope="module")
def round4(tmp_path_factory):
    from lecturelib.grading.autograde.score import score_questions
    from lecturelib.grading.course.roster import read_roster

    folder = tmp_path_factory.mktemp("round4")
    path, roster_file = folder / "gradebook.sqlite", folder / "roster.csv"
    roster_file.write_text("id,name\n" + "".join(f"{i},{n}\n" for i, n in ROSTER.items()), encoding="utf-8")
    with Gradebook(path) as book:
        book.store_questions("r4", QUESTIONS)
        for student in ROSTER:
            nb = r4_notebook(student)
            # the exercise's own cells, as the grader knows them from the solution's exercise
            ours = frozenset(c.id for c in nb.cells if c.source not in UNDER_PROMPT)
            reference = dataclasses.replace(REFERENCE, exercise_ids=ours)
            rows = score_questions(QUESTIONS, _run([1.0, 1.0]), reference, nb)
            book.record(student, "1", GradeReport(f"{student}.ipynb", "r4", rows, []))
    server = Server(path, roster=read_roster(roster_file), graders=["Ann Lee", "Bo Chen"],
                    staff={"Ines Ward": "instructor", "Ann Lee": "ta", "Bo Chen": "ta"})
    server.path, server.order = path, fair_order(path, "r4", "q4", ROSTER)
    server.roster, server.pristine = read_roster(roster_file), folder / "pristine.sqlite"
    copy_gradebook(path, server.pristine)  # before any test grades: each of Ann Lee's answers pending
    yield server
    server.close()


def ann_lee_page(browser, server):
    """Ann Lee's page, in Auckland's time zone, opened from the printed address."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-GB",
                                  timezone_id="Pacific/Auckland")
    page = context.new_page()
    watch = Watch(page)
    page.goto(server.link("Ann Lee"))
    return context, page, watch


@pytest.fixture
def r4_page(browser, round4):
    """Ann Lee's page on round four's app: (page, watch)."""
    context, page, watch = ann_lee_page(browser, round4)
    yield page, watch
    context.close()


def open_r4(page, server, student):
    page.goto(f"{server.base}/grade/r4/q4/{server.order.index(student) + 1}")
    typeset(page)


def r4_state(server, student):
    with Gradebook(server.path) as book:
        return manual.grade_state(book.db, "r4", student, "q4")


@pytest.mark.browser
def test_display_math_inside_a_paragraph_is_typeset_as_display(r4_page, round4):
    """Item 1: ``$$...$$`` inside a paragraph, as students write in Jupyter, is display
    math within the paragraph: no stray dollar, no raw TeX, no run-together italics."""
    page, watch = r4_page
    open_r4(page, round4, "1001")
    assert page.locator("#answer mjx-container[display='true']").count() == 2
    assert page.locator("#answer mjx-container").count() == 2
    assert page.locator("#answer > p").count() == 1 and page.locator("#answer em").count() == 0
    shown = page.evaluate("""() => { const copy = document.querySelector("#answer").cloneNode(true);
        copy.querySelectorAll("mjx-container").forEach(m => m.remove()); return copy.textContent; }""")
    assert "$" not in shown and "\\" not in shown and "at the MAP" in shown, shown
    assert not watch.problems, watch.problems


@pytest.mark.browser
def test_a_name_with_spaces_and_accents_comes_from_the_link(browser, round4):
    """Issue 50: the name every change is recorded under is the one of the personal link
    ("Zoë van Dijk", added by the instructor), never typed: the start page has no name form."""
    context, page, watch = grader(browser, round4, "Zoë van Dijk")
    try:
        assert "Signed in as Zoë van Dijk (teaching assistant)" in page.locator("header.top").text_content()
        assert page.locator("form.grader-name").count() == 0 and page.locator("#grader").count() == 0
        open_r4(page, round4, "1006")
        page.keyboard.press("2")
        page.wait_for_selector("button.item[data-item='b'][aria-pressed='true']")
        page.wait_for_function("() => document.getElementById('status').textContent.startsWith('Saved')")
        assert "Zoë van Dijk" in page.locator("#graded-by").text_content()
        page.goto(f"{round4.base}/audit/r4")
        assert "Zoë van Dijk" in page.locator("table.audit").text_content()
        with Gradebook(round4.path) as book:
            assert manual.audit_log(book.db, "r4")[-1]["who"] == "Zoë van Dijk"
        assert not watch.problems, watch.problems
    finally:
        context.close()


@pytest.mark.browser
def test_typed_text_survives_leaving_and_a_conflict(r4_page, round4):
    """Item 3: a comment typed and left by "next" is not dropped: leaving warns first, the
    text comes back with the answer, and on a conflict the refused text is shown beside the
    grade that won, to be put back."""
    page, watch = r4_page
    open_r4(page, round4, "1001")
    page.click("#comment")
    mine = "Step 2 divides by q without saying q > 0."
    page.keyboard.type(mine)
    page.keyboard.press("Escape")
    away, back = ("n", "p") if page.locator("a#next").count() else ("p", "n")  # the last answer has no next
    page.keyboard.press(away)
    page.wait_for_selector("#unsaved:not([hidden])")
    assert "not saved" in page.locator("#unsaved").text_content()
    assert page.url.endswith(f"/{round4.order.index('1001') + 1}")  # still here
    with page.expect_navigation():
        page.keyboard.press(away)  # leaving after the warning: the text stays a draft
    typeset(page)
    with page.expect_navigation():
        page.keyboard.press(back)
    typeset(page)
    assert page.input_value("#comment") == mine
    assert "Restored" in page.locator("#unsaved").text_content()
    assert r4_state(round4, "1001")["version"] == 0  # nothing was saved on the way
    # another grader saves first; the save from this page is refused and shows both texts
    with Gradebook(round4.path) as book:
        manual.save_grade(book.db, "r4", "1001", "q4", who="Bo Chen", version=0, applied=["a"],
                          comment="Theirs: fine.")
    page.focus("#comment")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("#conflict:not([hidden])")
    assert "Bo Chen" in page.locator("#conflict").text_content()
    assert page.locator("#conflict pre.mine").text_content() == mine
    assert page.input_value("#comment") == "Theirs: fine."
    page.click("#conflict .refused button")
    assert page.input_value("#comment") == mine
    page.focus("#comment")
    page.keyboard.press("Control+Enter")
    page.wait_for_function("() => document.getElementById('status').textContent.startsWith('Saved')")
    state = r4_state(round4, "1001")
    assert state["comment"] == mine and state["applied"] == ["a"] and state["grader"] == "Ann Lee"
    assert page.evaluate("() => Object.keys(localStorage).filter(k => k.startsWith('lecturelib-draft'))") == []
    assert not watch.problems, watch.problems


def csv_q4(server, student) -> str:
    out = io.StringIO()
    with Gradebook(server.path) as book:
        out.write(book.export_csv("r4", allow_pending=True))
    return next(r for r in csv.DictReader(io.StringIO(out.getvalue())) if r["student"] == student)["q4"]


@pytest.mark.browser
def test_an_item_applied_and_removed_leaves_the_answer_pending(r4_page, round4):
    """Item 4: "graded" means a grader decided.  An item toggled on and off leaves the answer
    pending (the export's pending check still catches it); Save decides, 0 included."""
    page, watch = r4_page
    open_r4(page, round4, "1004")
    page.keyboard.press("1")
    page.wait_for_selector("button.item[data-item='a'][aria-pressed='true']")
    assert not r4_state(round4, "1004")["pending"] and csv_q4(round4, "1004") == "2"
    page.keyboard.press("1")
    page.wait_for_selector("button.item[data-item='a'][aria-pressed='false']")
    page.wait_for_function("() => document.getElementById('status').textContent.includes('removed')")
    state = r4_state(round4, "1004")
    assert state["pending"] and state["version"] == 2
    assert csv_q4(round4, "1004") == "pending"
    assert "Not graded yet" in page.locator("#graded-by").text_content()
    page.click("#grade-form button[type=submit]")  # the grader decides: 0 points
    # the status said "Saved: removed item a." already: wait for this save's own message
    page.wait_for_function("() => document.getElementById('status').textContent.includes('comment and adjustment')")
    assert not r4_state(round4, "1004")["pending"] and csv_q4(round4, "1004") == "0"
    assert not watch.problems, watch.problems


@pytest.mark.browser
def test_an_answer_written_under_the_prompt_is_shown_and_pending(r4_page, round4):
    """Item 5: the Markdown cells typed under the untouched prompt are the answer: pending,
    shown typeset, and the page says where they came from."""
    page, watch = r4_page
    open_r4(page, round4, "1002")
    text = page.locator("#answer").text_content()
    assert "the log posterior" in text and "Setting" in text and "No answer" not in page.content()
    assert page.locator("#answer mjx-container").count() == 3
    assert "under the answer cell" in page.locator("#below").text_content()
    assert "Not graded yet" in page.locator("#graded-by").text_content()
    assert r4_state(round4, "1002")["pending"]
    assert not watch.problems, watch.problems


@pytest.mark.browser
def test_roster_names_next_ungraded_and_local_times(browser, round4, tmp_path):
    """Item 6: roster names instead of LMS ids, "next ungraded" in the grader's share (Ann
    Lee of Ann Lee and Bo Chen), times in the browser's zone (Auckland here), the comment
    box in one key (it took 18 Tab presses).  On round four's gradebook as it was before the
    other tests graded, when all of Ann Lee's share was pending (they may grade all of it)."""
    import datetime
    import zoneinfo

    path = tmp_path / "gradebook.sqlite"
    copy_gradebook(round4.pristine, path)
    server = Server(path, roster=round4.roster, graders=["Ann Lee", "Bo Chen"])
    server.path, server.order = path, round4.order
    context, page, watch = ann_lee_page(browser, server)
    try:
        open_r4(page, server, "1002")
        assert page.locator("#student").text_content() == "Bo Lindqvist"
        assert "1002" not in page.locator("main").text_content()
        with page.expect_navigation():
            page.keyboard.press("u")
        with Gradebook(server.path) as book:
            share = allocation.shares(book.db, "r4", "q4", list(ROSTER), ["Ann Lee", "Bo Chen"])["Ann Lee"]
        expected = share[0]  # the first of her share in the fair order
        assert page.locator("#student").text_content() == ROSTER[expected]
        typeset(page)
        page.keyboard.press("c")
        assert page.evaluate("() => document.activeElement.id") == "comment"
        page.keyboard.press("Escape")
        page.keyboard.press("2")
        page.wait_for_selector("button.item[data-item='b'][aria-pressed='true']")
        # the button shows the item at once; the grade is stored when the reply says so
        page.wait_for_function("() => document.getElementById('status').textContent === 'Saved: applied item b.'")
        saved = datetime.datetime.fromisoformat(r4_state(server, expected)["updated_at"])
        local = saved.astimezone(zoneinfo.ZoneInfo("Pacific/Auckland"))
        shown = page.locator("#graded-by").text_content()
        assert f"{local:%H:%M}" in shown and f"{saved:%H:%M}" not in shown, shown
        page.goto(f"{server.base}/audit/r4")
        assert f"{local:%H:%M}" in page.locator("table.audit tbody tr:last-child time").text_content()
        assert not watch.problems, watch.problems
    finally:
        context.close()
        server.close()


def test_anonymous_numbers_are_the_same_after_a_restart(round4):
    """Item 6: "Student N" names the same student after the app is started again."""
    def labels() -> dict[str, str]:
        """student -> the label the app shows on the student's page (found by the page's id)."""
        server = Server(round4.path, anonymous=True)
        try:
            cookie = {"Cookie": session_cookie(server)}
            pages = [request(server, "GET", f"/grade/r4/q4/{n}", headers=cookie)[1] for n in range(1, 7)]
            student = {server.ctx.sid(s): s for s in ROSTER}
        finally:
            server.close()
        return {student[re.search(r'"sid": "([0-9a-f]+)"', html)[1]]:
                re.search(r'id="student">(Student \d+)<', html)[1] for html in pages}

    first = labels()
    assert sorted(first.values()) == sorted(f"Student {n}" for n in range(1, 7))
    assert labels() == first
    # the students' opaque ids too: a page (and its unsaved text) outlives a restart
    ids = []
    for _ in range(2):
        server = Server(round4.path)
        ids.append([server.ctx.sid(s) for s in ROSTER])
        server.close()
    assert ids[0] == ids[1] and len(set(ids[0])) == len(ROSTER)


def test_serve_refuses_bad_graders_and_roster_with_anonymous(round4, capsys):
    base = ["gradebook", "serve", "--gradebook", str(round4.path)]
    for extra, message in [(["--double-mark", "10"], "at least two --graders"),
                           (["--graders", "Ann Lee,Ann Lee"], "twice"),
                           (["--graders", "Ann\u202eLee,Bo"], "not a grader's name"),
                           (["--anonymous", "--roster", "x.csv"], "--anonymous"),
                           (["--roster", str(round4.path.parent / "missing.csv")], "could not be read")]:
        assert grading.main(base + extra) == 2, extra
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, (extra, err)


def graded_by_ann_owed_by_bo(round4, tmp_path, applied, comment=""):
    """A copy of round four's gradebook (the other tests' answers left as they are) where
    Ann Lee has graded an answer that Bo Chen owes a blind second mark: (path, student)."""
    path = tmp_path / "gradebook.sqlite"
    copy_gradebook(round4.path, path)
    with Gradebook(path) as book:
        allocation.create_table(book.db)
        student = next(s for s in ROSTER if allocation.second_grader(
            book.db, "r4", "q4", s, list(ROSTER), ["Ann Lee", "Bo Chen"]) == "Bo Chen" and not
            book.db.execute("SELECT 1 FROM second_marks WHERE student=?", (s,)).fetchone()
            and not {"Bo Chen", "Ines Ward"} & manual.graders_of(book.db, "r4", s, "q4"))  # another test's grade
        # (Ines Ward, the instructor, resolves disagreements: never on an answer she graded)
        state = manual.grade_state(book.db, "r4", student, "q4")
        manual.save_grade(book.db, "r4", student, "q4", who="Ann Lee", version=state["version"],
                          applied=applied, comment=comment)
    return path, student


@pytest.mark.browser
def test_a_blind_second_mark_hides_the_first_and_changes_no_grade(browser, round4, tmp_path):
    """``serve --graders "Ann Lee,Bo Chen" --double-mark 100``: the answer Ann Lee graded is
    Bo Chen's to mark again; his page shows the answer and the rubric, never her mark, and
    his mark is stored beside hers (a disagreement), her grade unchanged."""
    path, student = graded_by_ann_owed_by_bo(round4, tmp_path, ["a"],
                                             comment="First mark: the second step is missing.")
    with Gradebook(path) as book:
        first = manual.grade_state(book.db, "r4", student, "q4")
    server = Server(path, graders=["Ann Lee", "Bo Chen"], double_mark=100)
    context, page, watch = grader(browser, server, urllib.parse.quote("Bo Chen"))
    try:
        page.goto(f"{server.base}/grade/r4/q4/{round4.order.index(student) + 1}")
        typeset(page)
        assert page.locator("#grade-h").text_content() == "Blind second mark"
        html = page.content()
        assert "First mark" not in html and "Ann Lee" not in html and page.locator("#score").count() == 0
        page.goto(f"{server.base}/audit/r4")
        assert "First mark" not in page.content()
        page.goto(f"{server.base}/grade/r4/q4/{round4.order.index(student) + 1}")
        typeset(page)
        page.keyboard.press("1")
        page.keyboard.press("2")
        page.click("#second-form button[type=submit]")
        page.wait_for_function("() => document.getElementById('status').textContent === 'Saved: second mark.'")
        with Gradebook(path) as book:
            after = manual.grade_state(book.db, "r4", student, "q4")
            (pair,) = [d for d in allocation.disagreements(book.db, "r4", "q4") if d["student"] == student]
        assert (after["applied"], after["version"], after["grader"]) == (["a"], first["version"], "Ann Lee")
        assert pair["second"] == {"grader": "Bo Chen", "applied": ["a", "b"], "adjustment": 0.0, "score": 4.0}
        page.goto(f"{server.base}/audit/r4")  # the Changes page held her mark back until then
        assert "First mark" in page.content()
        page.goto(f"{server.base}/grade/r4/q4/{round4.order.index(student) + 1}")
        assert page.locator("#score").count() == 1
        assert not watch.problems, watch.problems
    finally:
        context.close()
        server.close()


# answer groups in the app: tests/test_webapp_groups.py


@pytest.mark.browser
def test_leaving_with_unsaved_text_asks_first(browser, round4):
    """Item 3: closing or leaving the page another way than the app's links (the address
    bar, a bookmark) with unsaved text brings the browser's "leave this page?" question,
    and the text is there again when the answer is opened again."""
    context = browser.new_context()
    try:
        page = context.new_page()
        asked = []
        page.on("dialog", lambda d: (asked.append(d.type), d.accept()))
        page.goto(round4.link("ta_ann"))
        open_r4(page, round4, "1006")
        page.click("#comment")
        page.keyboard.type("Half a thought")
        page.goto(f"{round4.base}/")
        assert asked == ["beforeunload"]
        open_r4(page, round4, "1006")
        assert page.input_value("#comment") == "Half a thought"
        page.keyboard.press("Control+Enter")  # saved: leaving asks nothing
        page.wait_for_function("() => document.getElementById('status').textContent.startsWith('Saved')")
        # and the box was left: the next key is a shortcut, not a letter typed into the comment
        assert page.evaluate("() => document.activeElement.id") != "comment"
        page.keyboard.press("c")
        assert page.evaluate("() => document.activeElement.id") == "comment"
        assert page.input_value("#comment") == "Half a thought"
        page.keyboard.press("Escape")
        page.goto(f"{round4.base}/")
        assert asked == ["beforeunload"]
    finally:
        context.close()


@pytest.mark.browser
def test_a_regrade_request_is_resolved_on_the_answers_page(browser, round4):
    """Regrade requests in the app: the Results page's queue opens the answer; the grader
    who graded it first is told to leave it to another; another grader changes the rubric
    items with a decision; the request is resolved, the audit keeps request, change and
    decision, and the student's feedback file is written again.  A decision on a grade
    that changed since the page is a conflict."""
    from lecturelib.grading.core.submissions import feedback_folder
    from lecturelib.grading.gradebook import regrades

    with Gradebook(round4.path) as book:
        version = manual.grade_state(book.db, "r4", "1003", "q4")["version"]
        manual.save_grade(book.db, "r4", "1003", "q4", who="Ann Lee", version=version, applied=["a"])
        number = regrades.request(book.db, "r4", "1003", "q4", who="Instructor",
                                  reason="I <b>did</b> show the second step.")
    server = Server(round4.path, graders=["Ann Lee", "Bo Chen"])
    try:
        context, page, watch = grader(browser, server, urllib.parse.quote("Ann Lee"))
        assert "1 open regrade request" in page.locator("span.waiting").text_content()
        page.goto(f"{server.base}/stats/r4")
        with page.expect_navigation():
            page.click("#regrade-queue a")
        typeset(page)
        assert page.locator("section.regrade blockquote").text_content() == "I <b>did</b> show the second step."
        assert "an instructor decides it" in page.locator("section.regrade").text_content()  # a TA
        assert page.locator("#regrade-form").count() == 0
        context.close()
        context, page, watch = grader(browser, server, "Ines Ward", "instructor")
        answer = f"{server.base}/grade/r4/q4/{round4.order.index('1003') + 1}"
        page.goto(answer)
        typeset(page)
        form = page.locator("#regrade-form")
        assert form.locator("input[value='a']").is_checked() and not form.locator("input[value='b']").is_checked()
        form.locator("input[value='change']").check()
        form.locator("input[value='b']").check()
        form.locator("textarea").fill("Agreed: the second step is on the second line.")
        with Gradebook(round4.path) as book:  # meanwhile, a change by someone else
            state = manual.grade_state(book.db, "r4", "1003", "q4")
            manual.save_grade(book.db, "r4", "1003", "q4", who="Cy Dorn", version=state["version"],
                              applied=["a"], comment="A comment first.", adjustment=0)
        form.locator("button[type=submit]").click()
        page.wait_for_selector("#conflict:not([hidden])")
        assert "Cy Dorn" in page.locator("#conflict").text_content()
        with Gradebook(round4.path) as book:
            assert regrades.open_request(book.db, "r4", "1003", "q4")["id"] == number
        with Gradebook(round4.path) as book:  # a change with no items named changes nothing
            current = manual.grade_state(book.db, "r4", "1003", "q4")
        headers = api_headers(server)
        status, text, _ = request(server, "POST", "/api/regrade", json.dumps(dict(
            assignment="r4", question="q4", sid=server.ctx.sid("1003"), version=current["version"],
            answer_sha=manual.answer_sha(current["answer"]), request=number, outcome="change",
            decision="No items named.")), headers)
        assert status == 400 and "rubric items" in text, text
        with page.expect_navigation():
            form.locator("button[type=submit]").click()  # again, on the grade now shown
        assert page.locator("section.regrade").count() == 0
        assert page.locator("#score").text_content() == "4"
        with Gradebook(round4.path) as book:
            state = manual.grade_state(book.db, "r4", "1003", "q4")
            actions = [e["action"] for e in manual.audit_log(book.db, "r4") if e["student"] == "1003"]
            (done,) = [r for r in regrades.requests(book.db, "r4") if r["id"] == number]
        assert (state["applied"], state["comment"], state["grader"]) == (["a", "b"], "A comment first.", "Ines Ward")
        assert actions[-2:] == [f"grade (regrade {number})", f"regrade {number} resolved"]
        assert (done["status"], done["decided_by"]) == ("resolved", "Ines Ward")
        feedback = (feedback_folder(round4.path, "r4") / "1003.md").read_text(encoding="utf-8")
        assert "Agreed: the second step is on the second line." in feedback
        assert not watch.problems, watch.problems
        context.close()
    finally:
        server.close()


@pytest.mark.browser
def test_a_disagreement_of_two_blind_marks_is_resolved_by_a_third_grader(browser, round4, tmp_path):
    """The Results page lists the answers whose blind marks differ; the answer's page shows
    both marks item by item; neither marker may resolve; a third grader takes the second
    mark (after a conflict with a change made meanwhile), and the answer leaves the list."""
    graders = ["Ann Lee", "Bo Chen"]
    path, student = graded_by_ann_owed_by_bo(round4, tmp_path, ["a", "b"], comment="Both steps are there.")
    with Gradebook(path) as book:
        allocation.save_second_mark(book.db, "r4", student, "q4", who="Bo Chen", applied=["a"])
    server = Server(path, graders=graders, double_mark=100)
    try:
        headers = api_headers(server, server.secret("Cy Dorn"))  # a teaching assistant: refused
        with Gradebook(path) as book:
            current = manual.grade_state(book.db, "r4", student, "q4")
        status, text, _ = request(server, "POST", "/api/double-mark", json.dumps(dict(
            assignment="r4", question="q4", sid=server.ctx.sid(student), version=current["version"],
            answer_sha=manual.answer_sha(current["answer"]), keep="second")), headers)
        assert status == 403 and "Only an instructor" in text, text
        context, page, watch = grader(browser, server, urllib.parse.quote("Bo Chen"))
        page.goto(f"{server.base}/grade/r4/q4/{round4.order.index(student) + 1}")
        assert "an instructor decides it" in page.locator("section.double").text_content()
        assert page.locator("#double-form").count() == 0
        context.close()
        context, page, watch = grader(browser, server, "Ines Ward", "instructor")
        waiting = page.locator("span.waiting").text_content()  # the start page says so
        page.goto(f"{server.base}/stats/r4")
        rows = page.locator("#disagreements tbody tr")
        listed = rows.count()
        assert f"{listed} disagreement{'s' if listed > 1 else ''} of double marking" in waiting, waiting
        row = rows.filter(has=page.get_by_role("link", name=student, exact=True))
        assert row.locator("td").all_text_contents()[2:] == ["4 (Ann Lee)", "2 (Bo Chen)"]
        with page.expect_navigation():
            row.locator("a").click()
        typeset(page)
        from axe_playwright_python.sync_playwright import Axe

        violations = Axe().run(page).response["violations"]
        assert not [v["id"] for v in violations if v["impact"] in ("serious", "critical")]
        panel = page.locator("section.double")
        assert panel.locator("tr.differs th").all_text_contents() == [page.locator(
            "ol.rubric button[data-item='b'] .pts").text_content() + " " + page.locator(
            "ol.rubric button[data-item='b'] .txt").text_content()]
        with Gradebook(path) as book:  # meanwhile, Ann Lee changes her grade
            state = manual.grade_state(book.db, "r4", student, "q4")
            manual.save_grade(book.db, "r4", student, "q4", who="Ann Lee", version=state["version"],
                              applied=["a", "b"], comment="Both steps are there, the second barely.")
        take = panel.locator("button[value='second']")
        assert take.text_content() == "Take the second mark (2 points)"
        take.click()
        page.wait_for_selector("#conflict:not([hidden])")
        assert "Ann Lee" in page.locator("#conflict").text_content()
        with page.expect_navigation():
            take.click()  # again, on the grade now shown
        assert page.locator("section.double").count() == 0 and page.locator("#score").text_content() == "2"
        with Gradebook(path) as book:
            state = manual.grade_state(book.db, "r4", student, "q4")
            actions = [e["action"] for e in manual.audit_log(book.db, "r4") if e["student"] == student]
        assert (state["applied"], state["grader"]) == (["a"], "Ines Ward")
        assert state["comment"] == "Both steps are there, the second barely."
        assert actions[-2:] == ["grade (double marking)", "double marking resolved"]
        page.goto(f"{server.base}/stats/r4")
        assert rows.count() == listed - 1 and row.count() == 0
        assert not watch.problems, watch.problems
        context.close()
    finally:
        server.close()


@pytest.mark.browser
def test_a_second_mark_not_saved_warns_before_leaving(browser, round4, tmp_path):
    """A blind second mark started and not saved: the first "next" warns and stays, the
    second goes on; closing the page asks first."""
    graders = ["Ann Lee", "Bo Chen"]
    path, student = graded_by_ann_owed_by_bo(round4, tmp_path, ["a"])
    server = Server(path, graders=graders, double_mark=100)
    context = browser.new_context()
    try:
        page = context.new_page()
        asked = []
        page.on("dialog", lambda d: (asked.append(d.type), d.accept()))
        page.goto(server.link("Bo Chen"))
        where = f"{server.base}/grade/r4/q4/{round4.order.index(student) + 1}"
        page.goto(where)
        typeset(page)
        assert page.locator("#grade-h").text_content() == "Blind second mark"
        page.keyboard.press("1")
        key = "n" if page.locator("a#next").count() else "p"
        page.keyboard.press(key)
        page.wait_for_selector("#unsaved:not([hidden])")
        assert page.url == where and "not saved" in page.locator("#unsaved").text_content()
        with page.expect_navigation():
            page.keyboard.press(key)
        assert page.url != where and asked == []
        page.goto(where)
        typeset(page)
        page.keyboard.press("1")
        page.goto(f"{server.base}/")
        assert asked == ["beforeunload"]
    finally:
        context.close()
        server.close()


# ------------------------------------------------------------------------ issue 50: the grading team
# Personal sign-in links and roles, a revoked link refused at once, keys that never race,
# HTTPS.  The module server's staff is TEAM (Ines Ward the instructor, two teaching assistants).


def test_a_personal_link_alone_signs_in_with_staff(server):
    """With staff, the single token signs nobody in, nor a made-up or typed name: only a
    person's own link, and the pages say who they are from it."""
    for secret in (server.ctx.token, "x" * 43):
        status, text, _ = request(server, "GET", "/?token=" + secret)
        assert status == 403 and "token" in text
    cookie, _ = sign_in(server, server.secret("ta_anna"))
    status, page, _ = request(server, "GET", "/?grader=Ines%20Ward", headers={"Cookie": cookie})
    assert status == 200 and "Signed in as <strong>ta_anna</strong> (teaching assistant)" in page
    assert 'class="grader-name"' not in page


def test_a_teaching_assistants_rubric_edit_is_refused_and_the_instructors_accepted(server):
    with Gradebook(server.path) as book:
        item = manual.rubric(book.db, "toy", "q4")[0]
    body = json.dumps({"assignment": "toy", "question": "q4", "item": item["id"], "version": item["version"],
                       "points": item["points"], "text": item["text"]})
    status, text, _ = request(server, "POST", "/api/rubric", body, api_headers(server, server.secret("ta_ben")))
    assert status == 403 and "Only an instructor edits the rubric" in text
    cookie, _ = sign_in(server, server.secret("ta_ben"))
    # the first answer's page: the rendering process may still be starting (seconds, on 2 cores)
    status, page, _ = request(server, "GET", "/grade/toy/q4/1", headers={"Cookie": cookie}, timeout=60)
    assert status == 200 and "edit-item" not in page  # not offered
    status, text, _ = request(server, "POST", "/api/rubric", body, api_headers(server))  # Ines Ward
    assert status == 200 and json.loads(text)["state"]["version"] == item["version"] + 1
    status, page, _ = request(server, "GET", "/grade/toy/q4/1", headers={"Cookie": sign_in(server)[0]}, timeout=60)
    assert page.count('class="edit-item"') == len(ITEMS)
    with Gradebook(server.path) as book:
        assert manual.audit_log(book.db, "toy")[-1]["who"] == "Ines Ward"


def test_a_revoked_link_is_refused_on_its_next_request(server):
    secret = server.secret("ta_temp")
    headers = api_headers(server, secret)
    cookie = headers["Cookie"].split(";")[0]
    assert request(server, "GET", "/", headers={"Cookie": cookie})[0] == 200
    with Gradebook(server.path) as book:
        staff_module.revoke(book.db, "ta_temp")
    status, text, _ = request(server, "GET", "/", headers={"Cookie": cookie})
    assert status == 403 and "access ended" in text
    status, text, _ = request(server, "POST", "/api/rubric", json.dumps({"assignment": "toy"}), headers)
    assert status == 403 and "access ended" in text
    assert request(server, "GET", "/?token=" + secret)[0] == 403


@pytest.fixture
def owed(round4, tmp_path):
    """Round four's app (double marking of every answer) where Bo Chen owes a blind second
    mark on an answer Ann Lee graded: (server, student)."""
    path, student = graded_by_ann_owed_by_bo(round4, tmp_path, ["a"])
    server = Server(path, graders=["Ann Lee", "Bo Chen"], double_mark=100)
    server.order = round4.order
    yield server, student
    server.close()


def test_the_owed_second_marker_neither_grades_nor_group_grades_the_answer(owed):
    """Red team: the grader who owed the blind second mark graded the answer (or its group)
    instead, replacing the first mark; no disagreement was ever listed."""
    server, student = owed
    with Gradebook(server.path) as book:
        state = manual.grade_state(book.db, "r4", student, "q4")
    body = {"assignment": "r4", "question": "q4", "sid": server.ctx.sid(student), "version": state["version"],
            "answer_sha": manual.answer_sha(state["answer"])}
    bo = server.secret("Bo Chen")
    for extra in ({"op": "apply", "item": "b"}, {"applied": ["a", "b"]}):
        status, text, _ = request(server, "POST", "/api/grade", json.dumps({**body, **extra}), api_headers(server, bo))
        assert status == 403 and "second mark" in text, text
    with Gradebook(server.path) as book:
        after = manual.grade_state(book.db, "r4", student, "q4")
        assert (after["applied"], after["grader"], after["version"]) == (["a"], "Ann Lee", state["version"])


def test_plain_http_off_this_machine_is_refused(gradebook, tmp_path, capsys):
    from lecturelib.grading.webapp import start

    with pytest.raises(grading.GradingError, match="without TLS"):
        start(gradebook, host="0.0.0.0")
    base = ["gradebook", "serve", "--gradebook", str(gradebook), "--host", "0.0.0.0"]
    assert grading.main(base) == 2
    err = capsys.readouterr().err
    assert "--tls-self-signed" in err and err.count("\n") == 1
    assert grading.main(base + ["--tls-cert", str(tmp_path / "missing.pem")]) == 2
    assert "go together" in capsys.readouterr().err


@pytest.mark.browser
def test_a_teaching_assistant_grades_with_her_link_and_is_not_offered_the_rubric_edit(browser, server):
    """In Chromium: the TA's link opens her pages under her name; her key saves a grade
    recorded under it; the rubric's edit is not on her page but is on the instructor's."""
    context, page, watch = grader(browser, server, "ta_cleo")
    try:
        assert "Signed in as ta_cleo" in page.locator("header.top").text_content()
        position = roster(server).index(STUDENTS[3]) + 1
        open_answer(page, server, "q4", position, math=False)
        assert page.locator("form.edit-item").count() == 0 and page.locator("details.edit").count() == 0
        pressed = page.locator("button.item[data-item='a']").get_attribute("aria-pressed") == "true"
        page.keyboard.press("1")
        page.wait_for_function("() => document.getElementById('status').textContent.startsWith('Saved')")
        with Gradebook(server.path) as book:
            state = manual.grade_state(book.db, "toy", STUDENTS[3], "q4")
            assert ("a" in state["applied"]) != pressed and state["grader"] == "ta_cleo"
            assert manual.audit_log(book.db, "toy")[-1]["who"] == "ta_cleo"
        page.goto(server.url)  # the instructor's link, in the same browser: now she is Ines Ward
        open_answer(page, server, "q4", position, math=False)
        assert page.locator("form.edit-item").count() == len(ITEMS)
        assert not watch.problems, watch.problems
    finally:
        context.close()


@pytest.mark.browser
def test_an_open_page_stops_at_once_when_its_link_is_revoked(browser, server):
    context, page, watch = grader(browser, server, "ta_dev")
    try:
        open_answer(page, server, "q4", 2, math=False)
        with Gradebook(server.path) as book:
            staff_module.revoke(book.db, "ta_dev")
            before = len(manual.audit_log(book.db, "toy"))
        page.keyboard.press("2")
        page.wait_for_selector("#conflict:not([hidden])")
        assert "access ended" in page.locator("#conflict").text_content()
        with Gradebook(server.path) as book:
            assert len(manual.audit_log(book.db, "toy")) == before
        page.reload()
        assert "access ended" in page.content()
    finally:
        context.close()


@pytest.mark.browser
def test_three_rubric_keys_20_ms_apart_on_a_slow_save_all_land(browser, gradebook, tmp_path):
    """Red team: keys 1, 2, 3 in quick succession each sent a whole grade computed from the
    page before the previous save came back, and some were lost (or shown as a conflict
    with oneself).  Each save here waits 300 ms before it answers."""
    path = solo_copy(gradebook, tmp_path / "keys.sqlite")
    with Gradebook(path) as book, book.db:
        book.db.execute("DELETE FROM manual_grades")
        book.db.execute("DELETE FROM audit")
    server = Server(path)
    server.ctx.save_delay = 0.3
    context = browser.new_context()
    page = context.new_page()
    watch = Watch(page)
    try:
        page.goto(server.url)  # the single token's one person, the instructor
        position = fair_order(path, "toy", "q4", STUDENTS).index(STUDENTS[2]) + 1
        open_answer(page, server, "q4", position, math=False)
        for key in "123":
            page.keyboard.press(key)
            page.wait_for_timeout(20)
        page.wait_for_function("() => document.querySelectorAll(\"button.item[aria-pressed='true']\").length === 3")
        with Gradebook(path) as book:
            for _ in range(100):  # the three replies come back within about a second
                if len(manual.audit_log(book.db, "toy")) == 3:
                    break
                page.wait_for_timeout(50)
            state = manual.grade_state(book.db, "toy", STUDENTS[2], "q4")
            audit = manual.audit_log(book.db, "toy")
        assert sorted(state["applied"]) == ["a", "b", "x1"] and state["version"] == 3
        assert [e["who"] for e in audit] == ["instructor"] * 3
        page.wait_for_function("() => document.getElementById('status').textContent.startsWith('Saved')")
        assert page.locator("#conflict").is_hidden()
        assert page.locator("#score").text_content() == f"{state['score']:g}"  # a + b + x1
        assert not watch.problems, watch.problems
    finally:
        context.close()
        server.close()


@pytest.mark.browser
def test_the_app_over_a_self_signed_certificate_with_a_secure_cookie(browser, gradebook):
    """``serve --tls-self-signed``: Chromium trusting that certificate (its public key's
    hash, as a grader who checked the printed fingerprint would) loads the page; the
    certificate is the one whose fingerprint was printed; the cookies are Secure and
    HttpOnly."""
    import hashlib
    import ssl

    from test_book import chromium

    server = Server(gradebook, tls_self_signed=True)
    try:
        assert server.url.startswith("https://127.0.0.1:")
        unverified = ssl._create_unverified_context()  # the test checks the fingerprint itself
        with unverified.wrap_socket(__import__("socket").create_connection((server.host, server.port))) as tls:
            der = tls.getpeercert(binary_form=True)
        assert hashlib.sha256(der).hexdigest().upper() == server.ctx.fingerprint.replace(":", "")
        trusting = browser.browser_type.launch(executable_path=chromium(), args=[
            "--no-sandbox", "--disable-gpu", f"--ignore-certificate-errors-spki-list={server.ctx.spki}"])
        try:
            page = trusting.new_page()
            page.goto(server.url)
            assert page.url == f"{server.base}/" and "Questions to grade" in page.content()
            cookies = {c["name"]: c for c in page.context.cookies()}
            assert cookies["lecturelib_token"]["secure"] and cookies["lecturelib_token"]["httpOnly"]
            assert cookies["_xsrf"]["secure"]
        finally:
            trusting.close()
        with pytest.raises(Exception, match="ERR_CERT"):  # a browser that does not trust it
            browser.new_page().goto(server.url)
    finally:
        server.close()


def test_an_instructor_who_graded_does_not_resolve_its_regrade_request(server):
    """The grader of an answer, known by her link, is told to leave its regrade request to
    another instructor, who resolves it; a teaching assistant may not."""
    from lecturelib.grading.gradebook import regrades

    student = STUDENTS[7]
    with Gradebook(server.path) as book:
        state = manual.grade_state(book.db, "toy", student, "q4")
    body = {"assignment": "toy", "question": "q4", "sid": server.ctx.sid(student), "version": state["version"],
            "answer_sha": manual.answer_sha(state["answer"])}
    status, text, _ = request(server, "POST", "/api/grade", json.dumps({**body, "op": "save", "comment": "Mine."}),
                              api_headers(server))  # Ines Ward grades it
    assert status == 200, text
    body["version"] = json.loads(text)["state"]["version"]
    with Gradebook(server.path) as book:
        number = regrades.request(book.db, "toy", student, "q4", reason="Look again.", who="Ines Ward")
    decision = json.dumps({**body, "request": number, "outcome": "keep", "decision": "Kept."})
    status, text, _ = request(server, "POST", "/api/regrade", decision, api_headers(server))
    assert status == 400 and "another grader resolves" in text
    status, text, _ = request(server, "POST", "/api/regrade", decision, api_headers(server, server.secret("ta_ben")))
    assert status == 403 and "Only an instructor" in text
    status, text, _ = request(server, "POST", "/api/regrade", decision,
                              api_headers(server, server.secret("Jo Marsh", "instructor")))
    assert status == 200, text
    with Gradebook(server.path) as book:
        assert regrades.requests(book.db, "toy")[-1]["decided_by"] == "Jo Marsh"


def test_shares_name_people_on_the_staff(server, gradebook):
    """With staff, ``serve --graders`` names people on it (a share is a person's), and the
    single-token mode's name is a grader's name."""
    from lecturelib.grading.webapp import start

    with pytest.raises(grading.GradingError, match="not on the staff: Nobody Here"):
        start(gradebook, graders=["ta_anna", "Nobody Here"])
    with pytest.raises(grading.GradingError, match="letters"):
        start(gradebook, instructor="<b>me</b>")


def test_student_text_and_rubric_math_filters():
    """Issue 49, items 3 and 9: a student's reason loses its bidirectional controls and is
    isolated; a rubric item's math is wrapped for MathJax as an answer's is, the rest escaped."""
    from lecturelib.grading.webapp.render import math_text, student_text

    assert student_text("fine\u202e<b>x</b>\u2066y\u2069\u200f") == "<bdi>fine&lt;b&gt;x&lt;/b&gt;y</bdi>"
    assert math_text("uses $\\hat q < 1$ and $$a_n$$ <i>") == (
        'uses <span class="math">\\(\\hat q &lt; 1\\)</span> and '
        '<span class="math">\\[a_n\\]</span> &lt;i&gt;')


def test_rubric_items_are_typeset_on_the_answer_page(gradebook, tmp_path):
    path = solo_copy(gradebook, tmp_path / "gradebook.sqlite")
    with Gradebook(path) as book:
        item = manual.rubric(book.db, "toy", "q4")[0]
        manual.edit_rubric_item(book.db, "toy", "q4", item["id"], who="Ann Lee", version=item["version"],
                                points=item["points"], text="finds $\\hat q = k/n$ <b>")
    s = Server(path)
    try:
        status, page, _ = request(s, "GET", "/grade/toy/q4/1", headers={"Cookie": session_cookie(s)},
                                  timeout=120)  # the answer is rendered in a worker process
    finally:
        s.close()
    assert status == 200
    assert '<span class="txt">finds <span class="math">\\(\\hat q = k/n\\)</span> &lt;b&gt;</span>' in page


@pytest.mark.full
@pytest.mark.browser
def test_a_wide_display_equation_scrolls_and_rubric_math_is_typeset(browser, gradebook, tmp_path):  # noqa: F811
    """Issue 49, item 9: a display equation wider than the model answer's column ran past
    its edge, where the box clipped it; now it scrolls on its own line.  A rubric item's
    math is typeset as the answer's is."""
    path = solo_copy(gradebook, tmp_path / "gradebook.sqlite")
    wide = " + ".join(f"\\frac{{x_{{{i}}}^2}}{{\\sigma_{{{i}}}^2}}" for i in range(60))
    with Gradebook(path) as book:
        book.db.execute("UPDATE questions SET model_answer=? WHERE assignment='toy' AND question='q4'",
                        (f"The bound:\n\n$$L = {wide}$$\n\nwhich ends here.",))
        book.db.commit()
        item = manual.rubric(book.db, "toy", "q4")[0]
        manual.edit_rubric_item(book.db, "toy", "q4", item["id"], who="Ann Lee", version=item["version"],
                                points=item["points"], text="finds $\\hat q = k/n$")
    server = Server(path)
    try:
        context, page, watch = grader(browser, server, "ta_anna")
        open_answer(page, server, "q4", 1)
        edges = page.evaluate("""() => {
            const box = document.querySelector('#model').getBoundingClientRect();
            const eq = document.querySelector('#model mjx-container[display="true"]');
            eq.scrollLeft = 100000;
            const r = eq.getBoundingClientRect();
            return {box: box.right, eq: r.right, scrolled: eq.scrollLeft, wide: eq.scrollWidth > eq.clientWidth};
        }""")
        assert edges["wide"] and edges["scrolled"] > 0, edges   # before: it could not scroll
        assert edges["eq"] <= edges["box"] + 1, edges
        assert page.locator(".rubric .txt mjx-container").count() >= 1
        assert "$" not in page.locator(".rubric .txt").first.text_content()
        assert watch.problems == []
        context.close()
    finally:
        server.close()

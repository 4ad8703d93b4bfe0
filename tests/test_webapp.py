"""The grading web app (``lecturelib gradebook serve``), served for real and driven in Chromium.

One gradebook of a class of 20 (the toy set of tests/test_written.py with its written
question q4), one server and one browser for the module.  Two graders (two browser
contexts) grade q4 at once, by keys and by clicks; a stale write is refused and shown; a
rubric edit changes earlier grades; an override is audited; hostile answers neither run
nor break the page; anonymous mode hides names; axe-core finds no serious or critical
violation; and the CSV and the feedback files say what was graded in the browser,
recomputed here from the plan of the test (the rubric's points, summed and clipped).

The HTTP tests (token, origin, host, XSRF) need no browser and run in the everyday tier.
"""

from __future__ import annotations

import asyncio
import csv
import http.client
import io
import json
import os
import threading
import urllib.parse
from pathlib import Path

import pytest

from lecturelib import grading
from lecturelib.grading.gradebook import manual
from lecturelib.grading.gradebook import Gradebook
from lecturelib.grading.core.report import GradeReport, QuestionResult
from test_book import launched_chromium
from test_written import QUESTIONS

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


class Server:
    """The app on a thread of its own (its own asyncio loop), as the command runs it."""

    def __init__(self, gradebook, anonymous=False):
        from lecturelib.grading.webapp import start

        ready = threading.Event()

        def run():
            async def main():
                self.url, self.server, self.ctx = start(gradebook, anonymous=anonymous)
                self.loop, self.stop = asyncio.get_running_loop(), asyncio.Event()
                ready.set()
                await self.stop.wait()
                self.server.stop()
                self.ctx.book.close()
            asyncio.run(main())

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        assert ready.wait(30)
        parts = urllib.parse.urlsplit(self.url)
        self.base, self.host, self.port = f"http://{parts.netloc}", parts.hostname, parts.port
        self.token = urllib.parse.parse_qs(parts.query)["token"][0]

    def close(self):
        self.loop.call_soon_threadsafe(self.stop.set)
        self.thread.join(10)


@pytest.fixture(scope="module")
def server(gradebook):
    s = Server(gradebook)
    yield s
    s.close()


def request(server, method, path, body=None, headers=None, host=None):
    conn = http.client.HTTPConnection(server.host, server.port, timeout=10)
    conn.request(method, path, body=body, headers={"Host": host or f"{server.host}:{server.port}",
                                                   **(headers or {})})
    response = conn.getresponse()
    return response.status, response.read().decode(errors="replace"), response


# ------------------------------------------------------------------------ HTTP, no browser


def test_url_is_loopback_with_a_random_token(server):
    assert server.url.startswith("http://127.0.0.1:") and len(server.token) >= 40


def test_requests_without_the_token_are_refused(server):
    for path in ("/", "/grade/toy/q4/1", "/stats/toy", "/static/app.js", "/static/mathjax/tex-chtml.js"):
        status, text, _ = request(server, "GET", path)
        assert status == 403 and "token" in text, path
    status, _, _ = request(server, "GET", "/?token=" + "x" * len(server.token))
    assert status == 403
    status, _, response = request(server, "GET", "/?token=" + server.token)
    assert status == 302 and response.getheader("Location") == "/"
    cookie = response.getheader("Set-Cookie")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    status, _, _ = request(server, "GET", "/", headers={"Cookie": f"lecturelib_token={server.token}"})
    assert status == 200
    # another Host (DNS rebinding) is refused even with the token
    status, _, _ = request(server, "GET", "/", headers={"Cookie": f"lecturelib_token={server.token}"},
                           host=f"evil.example:{server.port}")
    assert status == 403


def test_state_changes_need_the_origin_and_the_xsrf_token(server, gradebook):
    xsrf = "2|abcd|0123456789abcdef|1700000000"
    cookies = f"lecturelib_token={server.token}; _xsrf={xsrf}"
    sid = server.ctx.sid(STUDENTS[5])
    body = json.dumps({"assignment": "toy", "question": "q4", "sid": sid, "version": 0, "applied": ["a"]})
    headers = {"Cookie": cookies, "Content-Type": "application/json", "X-XSRFToken": xsrf}
    for extra in ({"Origin": "http://evil.example"}, {},  # a foreign origin, no origin
                  {"Origin": "null"}):
        status, _, _ = request(server, "POST", "/api/grade", body, {**headers, **extra})
        assert status == 403, extra
    own = {"Origin": server.base}
    status, _, _ = request(server, "POST", "/api/grade", body,
                           {**headers, **own, "X-XSRFToken": "2|ffff|00|1"})  # XSRF mismatch
    assert status == 403
    status, _, _ = request(server, "POST", "/api/grade", body,
                           {**own, "Cookie": f"_xsrf={xsrf}", "Content-Type": "application/json",
                            "X-XSRFToken": xsrf})  # no token
    assert status == 403
    with Gradebook(gradebook) as book:  # nothing was written by any of them
        assert manual.audit_log(book.db, "toy") == []


def test_nothing_outside_the_app_is_served(server):
    cookie = {"Cookie": f"lecturelib_token={server.token}"}
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


def grader(browser, server, name):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    watch = Watch(page)
    page.goto(f"{server.url}&grader={name}")
    return context, page, watch


def typeset(page):
    page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise",
                           timeout=30_000)
    page.evaluate("() => MathJax.startup.promise")


def open_answer(page, server, qid, position, math=True):
    page.goto(f"{server.base}/grade/toy/{qid}/{position}")
    if qid == "q4" and math:
        typeset(page)


def roster(server):
    """The grading order: by name (the app's order when not anonymous)."""
    return sorted(STUDENTS)


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
def test_rubric_edit_changes_earlier_grades(graded, server, gradebook):
    a = graded["a"]
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
    assert edit["who"] == "ta_anna" and edit["before"]["points"] == 2 and edit["after"]["points"] == 1.5
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
def test_override_is_recorded_in_the_audit(graded, server, gradebook):
    a, names = graded["a"], graded["names"]
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
    assert "override" in a.content() and "rounded too early" in a.content()


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
        assert "Student 20" in html and "anonymous mode" in html
    finally:
        context.close()
        anonymous.close()


@pytest.mark.full
@pytest.mark.browser
def test_pages_pass_axe(graded, server, tmp_path):
    from axe_playwright_python.sync_playwright import Axe

    a = graded["a"]
    axe = Axe()
    for path in ("/", "/grade/toy/q4/1", "/grade/toy/q1/1", "/stats/toy", "/audit/toy"):
        a.goto(server.base + path)
        if "/q4/" in path:
            typeset(a)
        violations = axe.run(a).response["violations"]
        bad = [(v["id"], v["impact"], v["help"]) for v in violations if v["impact"] in ("serious", "critical")]
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

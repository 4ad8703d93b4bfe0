"""The answer groups page of the grading app (issue 49): every member shown, a group graded
in one action or walked through one key per answer, splits and merges, conflicts; the
groups made off the event loop (another grader's page does not wait), and one rendering
budget for the whole page.  The server, the browser and the requests are
tests/test_webapp.py's, imported."""

from __future__ import annotations

import os
import threading
import time
import urllib.parse

import pytest

from lecturelib.grading.core.report import GradeReport, QuestionResult
from lecturelib.grading.gradebook import Gradebook, groups, manual
from test_webapp import (Server, browser, change, grader, request, session_cookie,  # noqa: F401
                         typeset)
from test_written import QUESTIONS

RIGHT = ["By Bayes the posterior is $q^{k+a-1}(1-q)^{n-k+b-1}$ and setting the derivative of its "
         "log to zero gives $\\hat q = \\frac{k+a-1}{n+a+b-2}$.",
         "The posterior is proportional to $q^{k+a-1}(1-q)^{n-k+b-1}$; its log is stationary at "
         "$$\\hat q = \\dfrac{a+k-1}{a+b+n-2}$$",
         "*Write your answer here.*\n\nBy Bayes the posterior is $q^{k+a-1}(1-q)^{n-k+b-1}$ and "
         "setting the derivative of its log to zero gives $\\hat q = \\frac{k+a-1}{n+a+b-2}$."]
MEAN = ["The estimate is the posterior mean, $\\hat q = \\frac{k+a}{n+a+b}$.",
        "We take the mean of the posterior Beta: $\\hat q = \\frac{a+k}{a+b+n}$."]
ANSWERS = {"right0": RIGHT[0], "right1": RIGHT[1], "right2": RIGHT[2],
           "mean0": MEAN[0], "mean1": MEAN[1], "blank0": "   ", "blank1": "*Write your answer here.*"}


def record(book, assignment: str, answers: dict[str, str]) -> None:
    book.store_questions(assignment, QUESTIONS)
    for student, text in answers.items():
        book.record(student, "1", GradeReport(f"{student}.ipynb", assignment, [
            QuestionResult("q4", 0, 4, "pending", pending=True, kind="written", answer=text)], []))


@pytest.fixture(scope="module")
def grouped(tmp_path_factory):
    path = tmp_path_factory.mktemp("groups") / "gradebook.sqlite"
    with Gradebook(path) as book:
        record(book, "g", ANSWERS)
    server = Server(path, staff={"Ines Ward": "instructor", "Ann Lee": "ta"})
    yield server
    server.close()


def stored_groups(server, assignment="g") -> dict[int, set[str]]:
    with Gradebook(server.path) as book:
        return {g["group"]: set(g["students"]) for g in groups.groups(book.db, assignment, "q4")}


def state(server, student: str, assignment="g") -> dict:
    with Gradebook(server.path) as book:
        return manual.grade_state(book.db, assignment, student, "q4")


@pytest.mark.browser
def test_every_member_is_shown_graded_walked_through_split_and_merged(browser, grouped):
    """Each group shows every member's answer (the first in full, the others with what
    differs marked); a group is graded in one action; a walk through a group confirms one
    answer by a key and sets the other apart (split off at the end); groups merge."""
    context, page, watch = grader(browser, grouped, urllib.parse.quote("Ann Lee"))
    try:
        page.goto(f"{grouped.base}/groups/g/q4")
        typeset(page)
        found = stored_groups(grouped)
        assert sorted(map(sorted, found.values())) == [["blank0", "blank1"], ["mean0", "mean1"],
                                                       ["right0", "right1", "right2"]]
        for number, members in found.items():
            section = page.locator(f"section.group[data-group='{number}']")
            shown = section.locator("li.member > div.answer")
            assert shown.count() == len(members)
            for i in range(len(members)):
                assert shown.nth(i).is_visible()
        right = next(n for n, m in found.items() if "right0" in m)
        section = page.locator(f"section.group[data-group='{right}']")
        texts = section.locator("li.member > div.answer").all_text_contents()
        assert sum("posterior is proportional" in t for t in texts) == 1  # right1, rendered
        # right0 and right2 (the prompt left above it) are the same once folded; right1 has
        # other words, marked against whichever is first (the question's fair order)
        first = section.locator("li.member > p.meta > a").first.text_content()
        assert section.locator("span.same").count() == (0 if first == "right1" else 1)
        assert section.locator("p.diff").count() == (2 if first == "right1" else 1)
        assert section.locator("p.diff ins").count() >= 1
        if os.environ.get("LECTURELIB_GROUPS_SCREENSHOT"):  # the README's picture
            page.screenshot(path=os.environ["LECTURELIB_GROUPS_SCREENSHOT"], full_page=False)
        # the blank answers: one group, labelled
        blank = next(n for n, m in found.items() if "blank0" in m)
        assert "blank" in page.locator(f"#g-{blank}").text_content()
        # grade the right answers in one action
        for item in ("a", "b"):
            section.locator(f"form.group-grade input[value='{item}']").check()
        with page.expect_navigation():
            section.locator("form.group-grade button[type=submit]").click()
        for student in found[right]:
            assert (state(grouped, student)["applied"], state(grouped, student)["grader"]) == (["a", "b"], "Ann Lee")
        # walk through the mean's two answers: confirm the first, set the second apart
        typeset(page)
        mean = next(n for n, m in found.items() if "mean0" in m)
        section = page.locator(f"section.group[data-group='{mean}']")
        section.locator("form.group-grade input[value='b']").check()
        section.locator("form.group-grade button.walk").click()
        first = section.locator("li.member.current > p.meta > a").text_content()
        assert "1 of 2" in section.locator("output.walk-status").text_content()
        page.keyboard.press("y")
        page.wait_for_selector(f"section.group[data-group='{mean}'] li.member.confirmed")
        with page.expect_navigation():
            page.keyboard.press("n")
        confirmed, apart = ("mean0", "mean1") if first == "mean0" else ("mean1", "mean0")
        assert state(grouped, confirmed)["applied"] == ["b"] and state(grouped, apart)["pending"]
        after = stored_groups(grouped)
        assert {apart} in after.values() and after[mean] == {confirmed}
        # merge them back
        typeset(page)
        alone = next(n for n, m in after.items() if m == {apart})
        for number in (mean, alone):
            page.locator(f"section.group[data-group='{number}'] input.merge").check()
        with page.expect_navigation():
            page.click("#merge-form button[type=submit]")
        assert stored_groups(grouped)[mean] == {"mean0", "mean1"}
        assert not watch.problems, watch.problems
    finally:
        context.close()


def test_grading_a_group_that_changed_since_the_page_is_a_conflict(grouped):
    """A group's grade names the members the page showed, with their answers' hashes and
    their grades' versions: a member missing, added, handed in again or graded by someone
    else since refuses the whole change (409), and no member is written."""
    number, members = next((n, m) for n, m in stored_groups(grouped).items() if "blank0" in m)
    states = {s: state(grouped, s) for s in members}
    shas = {grouped.ctx.sid(s): manual.answer_sha(st["answer"]) for s, st in states.items()}
    versions = {grouped.ctx.sid(s): st["version"] for s, st in states.items()}
    some = dict(list(shas.items())[1:])
    wrong = {**shas, next(iter(shas)): "0" * 64}
    for shown in (some, wrong):
        status, reply = change(grouped, "/api/groups", assignment="g", question="q4", action="grade",
                               group=number, members=shown, versions=versions, applied=[])
        assert status == 409 and reply["conflict"] == "group"
    alone = sorted(members)[-1]
    with Gradebook(grouped.path) as book:
        manual.save_grade(book.db, "g", alone, "q4", who="Bo Chen", version=states[alone]["version"],
                          applied=[], comment="Graded on its own.")
    status, reply = change(grouped, "/api/groups", assignment="g", question="q4", action="grade",
                           group=number, members=shas, versions=versions, applied=[])
    assert status == 409 and reply == {"conflict": "graded", "state": {}}
    assert state(grouped, alone)["comment"] == "Graded on its own."


def test_another_graders_page_does_not_wait_on_the_groups(tmp_path, monkeypatch):
    """Making the groups runs off the app's event loop: while a slow grouping goes on, the
    start page comes back at once.  (Before: it waited for the grouping, 31 s in the issue.)"""
    path = tmp_path / "gradebook.sqlite"
    with Gradebook(path) as book:
        record(book, "g", ANSWERS)
    release = threading.Event()
    real = groups.group_answers

    def slow(texts):
        release.wait(20)
        return real(texts)
    monkeypatch.setattr(groups, "group_answers", slow)
    server = Server(path)
    try:
        cookie = {"Cookie": session_cookie(server)}
        results = {}
        page = threading.Thread(target=lambda: results.setdefault(
            "groups", request(server, "GET", "/groups/g/q4", headers=cookie, timeout=60)[:2]))
        page.start()
        time.sleep(0.5)  # the groups page is now waiting on the grouping
        status, _, _ = request(server, "GET", "/", headers=cookie, timeout=5)
        assert status == 200 and "groups" not in results
        release.set()
        page.join(60)
        assert results["groups"][0] == 200
    finally:
        release.set()
        server.close()


def test_a_page_of_slow_answers_has_one_rendering_budget(tmp_path, monkeypatch):
    """Eight answers that each take the renderer past its own budget: the page comes back
    in about the page's budget, the answers past it shown as plain text with a note.
    (Before: each answer had its own budget and the page took 41 to 57 s.)"""
    from lecturelib.grading.webapp import groups_page
    from lecturelib.grading.webapp.render import BudgetedRenderer
    from slow_render import slow_render

    table = "| x | y |\n|---|---|\n" + "".join(f"| {i} | {i * i} |\n" for i in range(400))
    path = tmp_path / "gradebook.sqlite"
    with Gradebook(path) as book:
        record(book, "t", {f"s{i}": f"Table {i} ({'abcdefgh'[i] * 3}):\n\n{table}" for i in range(8)})
    monkeypatch.setattr(groups_page, "PAGE_RENDER_SECONDS", 3.0)
    server = Server(path)
    old, server.ctx.renderer = server.ctx.renderer, BudgetedRenderer(budget=1.0, work=slow_render)
    old.close()
    try:
        status, text, _ = request(server, "GET", "/groups/t/q4", headers={"Cookie": session_cookie(server)},
                                  timeout=20)
        assert status == 200
        assert text.count("the page&#39;s rendering budget was spent") + \
            text.count("the page's rendering budget was spent") >= 5
        assert text.count("<pre class=\"plain\">") == 8  # every answer shown, as escaped text
    finally:
        server.ctx.renderer.close()
        server.close()


def test_a_hostile_answer_is_escaped_on_the_groups_page(tmp_path):
    """An answer's script, its markup in what differs from the first, and a name: all text."""
    pwn = "<script>window.__pwned = 1</script><img src=x onerror=alert(1)>"
    path = tmp_path / "gradebook.sqlite"
    with Gradebook(path) as book:
        record(book, "h", {"a": f"By Bayes {pwn} the posterior mode is $\\hat q = 1$.",
                           "b": f"By Bayes {pwn} the posterior mode is $\\hat q = 1$ <b>indeed</b>."})
    server = Server(path)
    try:
        status, text, _ = request(server, "GET", "/groups/h/q4", headers={"Cookie": session_cookie(server)},
                                  timeout=60)
        assert status == 200 and "<script>window" not in text and "<img" not in text and "<b>" not in text
    finally:
        server.close()

"""The answer groups page of the grading app: what a group holds, on screen.

Every member of every group is shown: the group's first answer rendered in full, each
other member rendered too, with what differs from the first marked (the words and formulas
it has that the first lacks, and those it lacks), or said to be the same once folded.  A
grader grades a whole group in one action having seen all of it, splits members off, or
walks through the members one key each (``static/groups.js``).

Making the groups parses every answer's formulas (:mod:`..gradebook.groups`): it runs in a
thread of the app's executor with a gradebook connection of its own, never on the event
loop, so no other grader's page waits on it; one question's groups are made once at a time.
The answers are rendered within one budget for the whole page (:data:`PAGE_RENDER_SECONDS`):
past it the remaining answers are shown as escaped plain text, so a page of many slow
answers still comes back in about that time.
"""

from __future__ import annotations

import asyncio
import difflib
import threading
import time

from ..gradebook import groups, manual
from ..gradebook.store import Gradebook

PAGE_RENDER_SECONDS = 10.0
DIFF_TOKENS = 400  # tokens of each answer compared with the first (difflib is quadratic)
_making = threading.Lock()


def _tokens(text: str) -> list[str]:
    """The folded words and formulas of an answer, in order, as the grouping reads them."""
    out = []
    for is_math, part in groups.split_math(groups._link_free(text.replace(groups.ANSWER_PROMPT, " "))):
        if is_math:
            latex = groups._latex(groups.fold_math(part))
            if latex:
                out.append(f"${latex}$")
        else:
            out.extend(groups._EMPHASIS.sub(" ", part).lower().split())
    return out[:DIFF_TOKENS]


def differences(first: str, other: str) -> dict:
    """What ``other`` has that ``first`` lacks (``added``) and what it lacks (``missing``),
    as runs of folded words and formulas; ``same`` when they are identical once folded."""
    a, b = _tokens(first), _tokens(other)
    if groups.normalise(first) == groups.normalise(other):
        return {"same": True, "added": [], "missing": []}
    added, missing = [], []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag in ("replace", "delete"):
            missing.append(" ".join(a[i1:i2]))
        if tag in ("replace", "insert"):
            added.append(" ".join(b[j1:j2]))
    return {"same": False, "added": added[:20], "missing": missing[:20]}


def group_members(path, assignment: str, qid: str, order: list[tuple[str, str, str]]) -> list[dict]:
    """The groups of ``qid`` (made if need be) with each member's answer, grade version,
    position in the question's order and how it joined; blocking, for the executor."""
    position = {s: i + 1 for i, (_, s, _) in enumerate(order)}
    sid = {s: i for i, s, _ in order}
    label = {s: lab for _, s, lab in order}
    with _making, Gradebook(path) as book:
        found = groups.groups(book.db, assignment, qid)
        out = []
        for g in found:
            members = sorted(g["students"], key=lambda s: position.get(s, 0))
            states = {s: manual.grade_state(book.db, assignment, s, qid) for s in members}
            first = states[members[0]]["answer"]
            out.append({**g, "students": [
                {"sid": sid[s], "label": label[s], "position": position[s],
                 "sha": manual.answer_sha(states[s]["answer"]), "version": states[s]["version"],
                 "answer": states[s]["answer"], "how": g["how"][s],
                 "diff": differences(first, states[s]["answer"]) if i else None}
                for i, s in enumerate(members)]})
    return out


async def page_groups(ctx, assignment: str, qid: str) -> list[dict]:
    """The groups page's content: :func:`group_members` off the event loop, then every
    member's answer rendered within :data:`PAGE_RENDER_SECONDS` for the whole page."""
    order = ctx.order(assignment, qid)
    shown = await asyncio.get_running_loop().run_in_executor(
        None, group_members, ctx.book.path, assignment, qid, order)
    deadline = time.monotonic() + PAGE_RENDER_SECONDS
    for g in shown:
        for m in g["students"]:
            m["html"], m["note"] = await ctx.renderer.render(m.pop("answer"),
                                                             budget=deadline - time.monotonic())
    return shown


def _current(path, assignment: str, qid: str) -> dict[int, list[str]]:
    with _making, Gradebook(path) as book:
        return {g["group"]: g["students"] for g in groups.groups(book.db, assignment, qid)}


async def current_groups(ctx, assignment: str, qid: str) -> dict[int, list[str]]:
    """group number -> members, made off the event loop if they never were."""
    return await asyncio.get_running_loop().run_in_executor(None, _current, ctx.book.path,
                                                            assignment, qid)

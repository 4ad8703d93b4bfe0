"""The grading staff (issue 50): personal sign-in links kept as hashes, names checked once
(no look-alikes), and the "another grader" rules comparing the people of the credentials,
each tried as the issue's red team tried it on the typed names; rubric keys as operations
on the stored grade.  No server, no browser: the app's side is in test_webapp.py."""

from __future__ import annotations

import pytest

from lecturelib.grading.cli import main
from lecturelib.grading.core.notebook import GradingError
from lecturelib.grading.gradebook import Gradebook, allocation, groups, manual, staff
from test_written import QUESTIONS, report

STUDENTS = [f"s{i:02d}" for i in range(12)]
GRADERS = ["Ann Lee", "Bo Chen"]


@pytest.fixture
def book(tmp_path):
    with Gradebook(tmp_path / "gradebook.sqlite") as gb:
        gb.store_questions("toy", QUESTIONS)
        for s in STUDENTS:
            gb.record(s, f"sha-{s}", report(f"Proof by {s}."))
        yield gb


# ------------------------------------------------------------------------ staff and links


def test_a_link_is_kept_as_its_hash_and_ends_at_once(book):
    secret = staff.add(book.db, "Ann Lee", "ta")
    assert len(secret) >= 40 and staff.signed_in(book.db, staff.secret_sha(secret)) == {"name": "Ann Lee", "role": "ta"}
    dump = "\n".join(book.db.iterdump())
    assert secret not in dump and staff.secret_sha(secret) in dump  # only the hash is stored
    assert all(secret not in str(v) for p in staff.members(book.db) for v in p.values())
    assert staff.members(book.db)[0]["last_seen"]  # signing in is seen
    fresh = staff.new_link(book.db, "Ann Lee")  # a new link voids the old one
    assert staff.signed_in(book.db, staff.secret_sha(secret)) is None
    assert staff.signed_in(book.db, staff.secret_sha(fresh))["name"] == "Ann Lee"
    staff.revoke(book.db, "Ann Lee")
    assert staff.signed_in(book.db, staff.secret_sha(fresh)) is None
    assert staff.members(book.db)[0]["revoked_at"]
    with pytest.raises(GradingError, match="nobody called"):
        staff.revoke(book.db, "Nobody")
    with pytest.raises(GradingError, match="role"):
        staff.add(book.db, "Cy Dorn", "admin")


@pytest.mark.parametrize("name", [
    "B\u043e Chen",  # a Cyrillic о
    "bo chen",  # case only
    "B0 Chen",  # a digit zero for the letter o
])
def test_a_look_alike_name_is_refused(book, name):
    staff.add(book.db, "Bo Chen", "ta")
    with pytest.raises(GradingError, match="looks like 'Bo Chen'"):
        staff.add(book.db, name, "ta")
    assert [p["name"] for p in staff.members(book.db)] == ["Bo Chen"]


@pytest.mark.parametrize("name", [
    "Ann Lee\u034f",  # COMBINING GRAPHEME JOINER: a mark, and invisible
    "Ann\u200bLee",  # ZERO WIDTH SPACE
    "Ann Lee\ufe0f",  # a variation selector
    "Ann\u202eLee",  # a right-to-left override
    "Zoe\u0308",  # not NFC (Zoë as e and a combining diaeresis)
    "<b>Ann</b>",
])
def test_an_invisible_or_unnormalised_name_is_refused(book, name):
    with pytest.raises(GradingError, match="letters"):
        staff.add(book.db, name, "ta")


def test_different_names_of_any_script_are_accepted(book):
    for name in ("Zoë van Dijk", "Łucja Nowak-Ó'Brien", "Chen Bo", "李明", "Ann Lea"):
        staff.add(book.db, name, "ta")
    assert len(staff.members(book.db)) == 5


def test_the_staff_commands(book, capsys):
    path = str(book.path)
    assert main(["gradebook", "staff", "add", "Ann Lee", "--role", "ta", "--address",
                 "https://10.0.0.5:8443", "--gradebook", path]) == 0
    out = capsys.readouterr().out
    link = next(line.strip() for line in out.splitlines() if "?token=" in line)
    assert link.startswith("https://10.0.0.5:8443/?token=")
    secret = link.partition("?token=")[2]
    assert staff.signed_in(book.db, staff.secret_sha(secret))["name"] == "Ann Lee"
    assert main(["gradebook", "staff", "list", "--gradebook", path]) == 0
    listed = capsys.readouterr().out
    assert "Ann Lee" in listed and "ta" in listed and secret not in listed
    assert main(["gradebook", "staff", "add", "Ann L\u0435\u0435", "--role", "ta", "--gradebook", path]) == 2
    err = capsys.readouterr().err
    assert "looks like" in err and err.count("\n") == 1
    assert main(["gradebook", "staff", "add", "Cy Dorn", "--gradebook", path]) == 2
    assert "--role" in capsys.readouterr().err
    assert main(["gradebook", "staff", "link", "Ann Lee", "--gradebook", path]) == 0
    assert staff.signed_in(book.db, staff.secret_sha(secret)) is None
    assert main(["gradebook", "staff", "revoke", "Ann Lee", "--gradebook", path]) == 0
    assert "access ended" in capsys.readouterr().out


# ------------------------------------------------------------------------ the red team's rules


def owed_by_bo(book, applied=("a",), comment=""):
    """An answer of Ann Lee's share, graded by her, that Bo Chen owes a blind second mark."""
    student = next(s for s in STUDENTS if allocation.second_grader(
        book.db, "toy", "q4", s, STUDENTS, GRADERS) == "Bo Chen")
    manual.save_grade(book.db, "toy", student, "q4", who="Ann Lee", version=0, applied=list(applied),
                      comment=comment)
    return student


def test_a_blind_second_mark_is_never_overwritten(book, capsys):
    """Red team: ``gradebook second-mark`` replaced an existing blind mark, and the
    disagreement it made was gone unresolved."""
    student = owed_by_bo(book, ["a", "b"])
    allocation.save_second_mark(book.db, "toy", student, "q4", who="Bo Chen", applied=["a"])
    assert allocation.disagreement(book.db, "toy", student, "q4") is not None
    assert main(["gradebook", "second-mark", "--assignment", "toy", "--question", "q4", "--student",
                 student, "--grader", "Cy Dorn", "--items", "a,b", "--gradebook", str(book.path)]) == 2
    assert "never replaced" in capsys.readouterr().err
    pair = allocation.disagreement(book.db, "toy", student, "q4")
    assert pair["second"]["grader"] == "Bo Chen" and pair["second"]["applied"] == ["a"]


def test_the_first_marker_does_not_resolve_her_own_disagreement(book):
    """Red team: once a third grader had saved a comment on the grade, the first marker
    was no longer "one of the two marks" and resolved the disagreement herself."""
    student = owed_by_bo(book, ["a", "b"])
    allocation.save_second_mark(book.db, "toy", student, "q4", who="Bo Chen", applied=["a"])
    state = manual.grade_state(book.db, "toy", student, "q4")
    manual.save_grade(book.db, "toy", student, "q4", who="Cy Dorn", version=state["version"],
                      applied=state["applied"], comment="A comment.")
    with pytest.raises(GradingError, match="third grader"):
        allocation.resolve_disagreement(book.db, "toy", student, "q4", who="Ann Lee", keep="first")
    state = allocation.resolve_disagreement(book.db, "toy", student, "q4", who="Ines Ward", keep="second")
    assert state["applied"] == ["a"]


def grouped_book(book):
    """Every answer the same text: one group of the whole class."""
    for s in STUDENTS:
        book.record(s, f"sha2-{s}", report("The same proof."))
    (group,) = groups.groups(book.db, "toy", "q4", recompute=True)
    return group["group"]


def test_a_group_grade_never_replaces_a_first_mark(book):
    """Red team: the owed second marker graded the answer's group instead, replacing the
    first mark, and no disagreement was ever listed."""
    number = grouped_book(book)
    student = owed_by_bo(book, ["a", "b"])
    with pytest.raises(GradingError, match="another grader's grade"):
        groups.grade_group(book.db, "toy", "q4", number, who="Bo Chen", applied=["a"])
    assert manual.grade_state(book.db, "toy", student, "q4")["applied"] == ["a", "b"]
    assert manual.grade_state(book.db, "toy", student, "q4")["grader"] == "Ann Lee"
    # her own grades she may grade again by the group
    assert len(groups.grade_group(book.db, "toy", "q4", number, who="Ann Lee", applied=["a"])) == len(STUDENTS)


def test_next_ungraded_does_not_loop_after_a_group_grade(book):
    """Red team: the grader the rotation named for a second mark graded the whole group
    (so gave the first mark); "next ungraded" returned that graded answer forever, and it
    never got its second mark.  Now the other grader owes it, and Bo's walk ends."""
    number = grouped_book(book)
    groups.grade_group(book.db, "toy", "q4", number, who="Bo Chen", applied=["a"])
    sample = allocation.double_sample(book.db, "toy", "q4", STUDENTS, 100)
    kwargs = {"graders": GRADERS, "percent": 100}
    assert allocation.next_ungraded(book.db, "toy", "q4", grader="Bo Chen", **kwargs) is None
    owed = allocation.next_ungraded(book.db, "toy", "q4", grader="Ann Lee", **kwargs)
    assert owed in sample and allocation.owes_second_mark(book.db, "toy", "q4", owed, grader="Ann Lee", **kwargs)
    allocation.save_second_mark(book.db, "toy", owed, "q4", who="Ann Lee", applied=["a"])
    assert allocation.next_ungraded(book.db, "toy", "q4", grader="Ann Lee", **kwargs) != owed


# ------------------------------------------------------------------------ keys as operations


def test_rubric_keys_are_operations_on_the_stored_grade(book):
    """Three keys from a page that saw version 0: each lands on the grade as stored, with
    its own audit entry; a key that changes nothing records nothing; a change since by
    someone else is a conflict."""
    sha = manual.answer_sha(manual.grade_state(book.db, "toy", "s00", "q4")["answer"])
    for item in ("a", "b", "x1"):
        manual.change_grade(book.db, "toy", "s00", "q4", who="Ann Lee", seen=0, shown_sha=sha, apply=item)
    state = manual.grade_state(book.db, "toy", "s00", "q4")
    assert state["applied"] == ["a", "b", "x1"] and state["version"] == 3 and state["score"] == 3
    assert [e["action"] for e in manual.audit_log(book.db, "toy")] == ["grade"] * 3
    manual.change_grade(book.db, "toy", "s00", "q4", who="Ann Lee", seen=1, shown_sha=sha, apply="a")
    manual.change_grade(book.db, "toy", "s00", "q4", who="Ann Lee", seen=1, shown_sha=sha, remove="x1")
    assert manual.grade_state(book.db, "toy", "s00", "q4")["applied"] == ["a", "b"]
    assert len(manual.audit_log(book.db, "toy")) == 4
    manual.change_grade(book.db, "toy", "s00", "q4", who="Bo Chen", seen=4, shown_sha=sha, remove="b")
    with pytest.raises(manual.Conflict) as conflict:  # Ann's page saw version 4: Bo changed it since
        manual.change_grade(book.db, "toy", "s00", "q4", who="Ann Lee", seen=4, shown_sha=sha, apply="x1")
    assert conflict.value.current["grader"] == "Bo Chen"
    with pytest.raises(manual.Conflict):  # the answer the page showed is no longer the answer
        manual.change_grade(book.db, "toy", "s00", "q4", who="Bo Chen", seen=5, shown_sha="0" * 64, apply="b")
    with pytest.raises(GradingError, match="no rubric item"):
        manual.change_grade(book.db, "toy", "s00", "q4", who="Bo Chen", seen=5, shown_sha=sha, apply="zz")
    state = manual.change_grade(book.db, "toy", "s00", "q4", who="Bo Chen", seen=5, shown_sha=sha,
                                fields={"comment": "Fine.", "adjustment": 0, "adjustment_reason": ""},
                                confirmed=True)
    assert state["comment"] == "Fine." and state["applied"] == ["a"] and state["graded"]


def test_the_gradebook_is_in_wal_mode_with_a_busy_timeout(book):
    assert book.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert book.db.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000


def test_a_regrade_is_resolved_by_none_of_its_graders_group_grades_included(book):
    """Red team: a grader who graded (here: from the answer's group) resolved the regrade
    request on her own grade once she had another name; names are now the credential's,
    and every grade of the answer counts."""
    from lecturelib.grading.gradebook import regrades

    number = grouped_book(book)
    groups.grade_group(book.db, "toy", "q4", number, who="Ann Lee", applied=["a"])
    request = regrades.request(book.db, "toy", "s03", "q4", reason="Step two is there.", who="Ines Ward")
    with pytest.raises(GradingError, match="another grader resolves"):
        regrades.resolve(book.db, request, who="Ann Lee", decision="Kept.")
    state = regrades.resolve(book.db, request, who="Bo Chen", decision="Step two earns b.", applied=["a", "b"])
    assert state["applied"] == ["a", "b"] and state["grader"] == "Bo Chen"

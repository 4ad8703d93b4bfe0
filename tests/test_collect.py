"""Collecting an LMS bulk download: Canvas and Moodle zips, plain folders, the roster, and
hostile zips (path escapes, links, special files, zip bombs, escape codes in names)."""

from __future__ import annotations

import datetime
import os
import stat
import struct
import zipfile

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from lecturelib.grading.course import collect as col
from lecturelib.grading.cli import main
from lecturelib.grading.course.collect import collect, submission_times
from lecturelib.grading.gradebook import Gradebook
from lecturelib.grading.core.notebook import GradingError
from lecturelib.grading.course.roster import parse_roster, read_roster

UTC = datetime.timezone.utc
DUE = datetime.datetime(2026, 10, 5, 23, 59, tzinfo=UTC)


def notebook_bytes(tag: str) -> bytes:
    nb = new_notebook(cells=[new_code_cell(f"x = {tag!r}")])
    return nbformat.writes(nb).encode()


def add(archive, name, data, when=None, mode=None, utc=None):
    """One zip entry; ``when`` a naive local time, ``mode`` Unix mode bits, ``utc`` an
    extended-timestamp field."""
    info = zipfile.ZipInfo(name, date_time=(when or datetime.datetime(2026, 10, 1, 12)).timetuple()[:6])
    info.compress_type = zipfile.ZIP_DEFLATED
    if mode is not None:
        info.create_system = 3
        info.external_attr = mode << 16
    if utc is not None:
        info.extra = struct.pack("<HHBi", 0x5455, 5, 1, int(utc.timestamp()))
    archive.writestr(info, data)


ROSTER = ("Student,ID,SIS User ID,SIS Login ID,Section\n"
          "    Points Possible,,,,\n"
          '"Doe, Jane",1001,S-1,jdoe,A\n'
          '"Roe, Bob",1002,S-2,broe,A\n'
          '"Smith, Ann",1003,S-3,asmith,B\n'
          '"Absent, Al",1005,S-5,aabsent,B\n')


@pytest.fixture(scope="module")
def canvas_zip(tmp_path_factory):
    """A Canvas download: resubmissions, a late one, a student not on the roster, a path
    escape, an absolute path, a link, a FIFO, a zip bomb, an escape code in a name, an
    impossible date."""
    folder = tmp_path_factory.mktemp("canvas")
    path = folder / "submissions.zip"
    with zipfile.ZipFile(path, "w") as z:
        add(z, "doejane_1001_5001_01-bayes.ipynb", notebook_bytes("jane first"),
            datetime.datetime(2026, 10, 4, 10))
        add(z, "doejane_1001_5002_01-bayes-1.ipynb", notebook_bytes("jane second"),
            datetime.datetime(2026, 10, 5, 9))
        add(z, "roebob_late_1002_5003_01-bayes.ipynb", notebook_bytes("bob"),
            utc=datetime.datetime(2026, 10, 6, 8, 30, tzinfo=UTC))
        for sub, suffix in ((5004, ""), (5010, "-2"), (5007, "-1")):  # same time: ids decide
            add(z, f"smithann_1003_{sub}_hw{suffix}.ipynb", notebook_bytes(f"ann {sub}"))
        add(z, "strangerx_1999_5005_01-bayes.ipynb", notebook_bytes("stranger"))
        add(z, "../evil.ipynb", notebook_bytes("escape"))
        add(z, "/tmp/absolute.ipynb", notebook_bytes("absolute"))
        add(z, "linker_1004_5006_01-bayes.ipynb", b"/etc/passwd", mode=stat.S_IFLNK | 0o777)
        add(z, "fifo_1006_5008_01-bayes.ipynb", b"", mode=stat.S_IFIFO | 0o644)
        add(z, "bomb_1007_5009_01-bayes.ipynb", b"\0" * (8 * 2**20))
        add(z, "\x1b[31mred_1008_5011_01-bayes.ipynb", notebook_bytes("red"))
        add(z, "doejane_1001_5001_notes.pdf", b"%PDF-1.4")
        add(z, "baddate_1009_5012_01-bayes.ipynb", notebook_bytes("bad date"))
    with open(path, "r+b") as raw:  # a DOS date with month 0 in the last entry's headers
        data = raw.read()
        bad = z.getinfo("baddate_1009_5012_01-bayes.ipynb")
        for start in (bad.header_offset, data.rindex(b"PK\x01\x02")):
            field = start + (10 if start == bad.header_offset else 12)
            date = struct.unpack_from("<H", data, field + 2)[0] & ~(0xF << 5)
            raw.seek(field + 2)
            raw.write(struct.pack("<H", date))
    return path


@pytest.fixture(scope="module")
def collected(canvas_zip, tmp_path_factory):
    folder = tmp_path_factory.mktemp("collected")
    roster = parse_roster(ROSTER)
    with Gradebook(folder / "gradebook.sqlite") as book:
        done = collect(canvas_zip, folder / "out", assignment="01-bayes", roster=roster, gradebook=book)
        times = submission_times(book, "01-bayes")
    return done, folder, times


def test_canvas_latest_submission_kept(collected):
    done, folder, _ = collected
    out = folder / "out"
    assert sorted(p.name for p in out.iterdir()) == ["1001.ipynb", "1002.ipynb", "1003.ipynb",
                                                     "1999.ipynb"]
    assert b"jane second" in (out / "1001.ipynb").read_bytes()   # the later time wins
    assert b"ann 5010" in (out / "1003.ipynb").read_bytes()      # same time: the highest id
    assert done.kept["1002"].lms_late and not done.kept["1001"].lms_late
    assert len(done.older) == 3


def test_canvas_times_recorded(collected):
    _, folder, times = collected
    assert times["1001"].submitted == datetime.datetime(2026, 10, 5, 9, tzinfo=UTC)
    assert times["1002"].submitted == datetime.datetime(2026, 10, 6, 8, 30, tzinfo=UTC)  # the UTC field
    assert os.stat(folder / "out" / "1002.ipynb").st_mtime == times["1002"].submitted.timestamp()
    assert times["1002"].lms_late


def test_canvas_refusals_reported_not_extracted(collected, tmp_path_factory):
    done, folder, _ = collected
    report = done.report()
    expected = {"'../evil.ipynb'": "path escape", "'/tmp/absolute.ipynb'": "absolute path",
                "linker_": "a symbolic link", "fifo_": "a special file", "bomb_": "zip bomb",
                "red_": "control character", "baddate_": "not a valid date"}
    for name, why in expected.items():
        assert any(name in line and why in line for line in done.refused), (name, done.refused)
    assert "\x1b" not in report and "\\x1b[31m" in report
    assert not (folder / "evil.ipynb").exists() and not (folder.parent / "evil.ipynb").exists()
    assert not os.path.exists("/tmp/absolute.ipynb")
    assert any("notes.pdf" in line for line in done.skipped)
    assert done.not_on_roster == ["1999: 'strangerx_1999_5005_01-bayes.ipynb'"]
    assert done.missing == ["1005 (Absent, Al)"]


def test_submission_limit(canvas_zip, tmp_path):
    """With a limit of one submission, each student's first is kept, the rest reported."""
    done = collect(canvas_zip, tmp_path / "out", assignment="01-bayes", max_submissions=1)
    assert b"jane first" in (tmp_path / "out" / "1001.ipynb").read_bytes()
    assert b"ann 5004" in (tmp_path / "out" / "1003.ipynb").read_bytes()
    assert sorted(line.split(": ")[1] for line in done.beyond) == [
        "submission 2 of 1001, over the limit of 1", "submission 2 of 1003, over the limit of 1",
        "submission 3 of 1003, over the limit of 1"]
    assert "over the course's limit of submissions, not kept: 3" in done.report()
    with pytest.raises(GradingError, match="at least 1"):
        collect(canvas_zip, tmp_path / "o2", assignment="01-bayes", max_submissions=0)


def test_moodle_zip(tmp_path):
    path = tmp_path / "moodle.zip"
    with zipfile.ZipFile(path, "w") as z:
        add(z, "Jane Doe_2001_assignsubmission_file_/01-bayes.ipynb", notebook_bytes("jane"),
            datetime.datetime(2026, 10, 5, 20))
        add(z, "Bob Roe_2002_assignsubmission_file_/old/01-bayes.ipynb", notebook_bytes("bob old"),
            datetime.datetime(2026, 10, 3, 20))
        add(z, "Bob Roe_2002_assignsubmission_file_/01-bayes.ipynb", notebook_bytes("bob new"),
            datetime.datetime(2026, 10, 6, 1))
        add(z, "Ann Smith_2003_assignsubmission_onlinetext_/onlinetext.html", b"<p>hi</p>")
        add(z, "Carl Ng_2004_assignsubmission_file_01-bayes.ipynb", notebook_bytes("carl"))
        add(z, "Dan Ox_2005_assignsubmission_file_/../../x.ipynb", notebook_bytes("x"))
    with Gradebook(tmp_path / "g.sqlite") as book:
        done = collect(path, tmp_path / "out", assignment="01-bayes", timezone="Europe/Zurich",
                       gradebook=book)
        times = submission_times(book, "01-bayes")
    assert sorted(done.kept) == ["2001", "2002", "2004"]
    assert b"bob new" in (tmp_path / "out" / "2002.ipynb").read_bytes()
    assert done.kept["2002"].lms_name == "Bob Roe"
    # 20:00 in Zurich on 5 October 2026 (summer time, UTC+2) is 18:00 UTC
    assert times["2001"].submitted == datetime.datetime(2026, 10, 5, 18, tzinfo=UTC)
    assert any("onlinetext.html" in line for line in done.skipped)
    assert any("path escape" in line for line in done.refused)


def test_plain_folder_refuses_links(tmp_path):
    src = tmp_path / "in"
    (src / "carol").mkdir(parents=True)
    (src / "alice.ipynb").write_bytes(notebook_bytes("alice"))
    (src / "carol" / "01-bayes.ipynb").write_bytes(notebook_bytes("carol"))
    (src / "mallory.ipynb").symlink_to(src / "alice.ipynb")
    (src / "trudy").symlink_to(src / "carol", target_is_directory=True)
    (src / "jdoe.ipynb").write_bytes(notebook_bytes("jane by login"))
    when = DUE.timestamp() - 3600
    os.utime(src / "alice.ipynb", (when, when))
    with Gradebook(tmp_path / "g.sqlite") as book:
        done = collect(src, tmp_path / "out", assignment="01-bayes", roster=parse_roster(ROSTER),
                       gradebook=book)
        times = submission_times(book, "01-bayes")
    assert sorted(done.kept) == ["1001", "alice", "carol"]   # jdoe is Jane's login on the roster
    assert any("mallory" in line and "symbolic link" in line for line in done.refused)
    assert any("trudy" in line and "symbolic link" in line for line in done.refused)
    assert times["alice"].submitted.timestamp() == when


def test_limits(tmp_path, canvas_zip, monkeypatch):
    with pytest.raises(GradingError, match="not empty"):
        (tmp_path / "full").mkdir()
        (tmp_path / "full" / "x").write_text("")
        collect(canvas_zip, tmp_path / "full", assignment="01-bayes")
    done = collect(canvas_zip, tmp_path / "small", assignment="01-bayes", max_total=1000)
    assert any("exceed 1000 bytes" in line for line in done.refused)
    monkeypatch.setattr(col, "MAX_ENTRIES", 5)
    with pytest.raises(GradingError, match="more than 5"):
        collect(canvas_zip, tmp_path / "many", assignment="01-bayes")
    (tmp_path / "not.zip").write_bytes(b"PK\x03\x04 nothing")
    with pytest.raises(GradingError, match="not a readable zip"):
        collect(tmp_path / "not.zip", tmp_path / "x", assignment="01-bayes")
    (tmp_path / "link.zip").symlink_to(canvas_zip)
    with pytest.raises(GradingError, match="symbolic link"):
        collect(tmp_path / "link.zip", tmp_path / "y", assignment="01-bayes")


def test_roster_errors(tmp_path):
    for text, message in [("name,email\nA,a@x\n", "no 'id' column"),
                          ("id,name\n1,A\n1,B\n", "listed twice"),
                          ("id,name\n../x,A\n", "not a safe student id"),
                          ("id,name\n", "lists no student"),
                          ("id,name,ID\n1,A,2\n", "twice")]:
        with pytest.raises(GradingError, match=message):
            parse_roster(text)
    roster = parse_roster("Identifier,Full name,Email address,ID number,Status\n"
                          "Participant 7,Ann =1+1,Ann@X.org,77,Submitted\n")  # Moodle's worksheet
    assert roster.find("ann@x.org").id == "7" and roster.find("77").name == "Ann =1+1"
    (tmp_path / "r.csv").write_bytes(b"\xef\xbb\xbf" + ROSTER.encode())
    assert [s.id for s in read_roster(tmp_path / "r.csv")] == ["1001", "1002", "1003", "1005"]


def run_cli(capsys, *args):
    """The command line in this process: exit status, standard output and error."""
    status = main([str(a) for a in args])
    out = capsys.readouterr()
    return status, out.out, out.err


def test_cli_collect(canvas_zip, tmp_path, capsys):
    (tmp_path / "roster.csv").write_text(ROSTER)
    status, out, err = run_cli(capsys, "collect", canvas_zip, "--assignment", "01-bayes", "--output",
                               tmp_path / "out", "--roster", tmp_path / "roster.csv",
                               "--gradebook", tmp_path / "g.sqlite")
    assert status == 1, err        # refused entries make it exit 1
    assert "refused: 7" in out and len(err.strip().splitlines()) == 1
    for args, message in [(("/nonexistent.zip",), "no such file"),
                          ((tmp_path / "roster.csv",), "not a readable zip"),
                          ((canvas_zip, "--roster", tmp_path / "missing.csv"), "could not be read"),
                          ((canvas_zip, "--output", tmp_path / "out"), "not empty"),
                          ((canvas_zip, "--assignment", "../x"), "invalid assignment name")]:
        argv = list(args)
        if "--output" not in argv:
            argv += ["--output", tmp_path / "o2"]
        if "--assignment" not in argv:
            argv += ["--assignment", "01-bayes"]
        status, out, err = run_cli(capsys, "collect", *argv, "--gradebook", tmp_path / "g.sqlite")
        assert status == 2 and message in err, (args, err)
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err

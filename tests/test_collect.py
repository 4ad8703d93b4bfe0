"""Collecting an LMS bulk download: Canvas and Moodle zips, plain folders, the roster, and
hostile zips (path escapes, links, special files, zip bombs, escape codes in names)."""

from __future__ import annotations

import datetime
import os
import stat
import struct
import zipfile
import zlib

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
                          ("id,name,ID\n1,A,2\n", "twice"),
                          # issue 42, class 11: an unclosed quote swallowed the rest of the file
                          ('id,name\n1,"Doe, Jane\n2,Bob\n3,Ann\n', "line 4: not readable as CSV"),
                          ('id,name\n1,"Doe,\nJane"\n2,Bob\n', "line 3: a field runs over a line break")]:
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


# ------------------------------------------- issue 42 (round three), classes 1, 2 and 10


def collected_from(tmp_path, entries, roster=None, name="download.zip", **kwargs):
    """``collect`` of a zip holding ``entries`` (name -> (text, hour of 5 October))."""
    path = tmp_path / name
    with zipfile.ZipFile(path, "w") as z:
        for entry, (text, hour) in entries.items():
            add(z, entry, notebook_bytes(text), utc=datetime.datetime(2026, 10, 5, hour, tzinfo=UTC))
    out = tmp_path / (name + ".out")
    return collect(path, out, assignment="01-bayes", roster=roster, **kwargs), out


@pytest.mark.parametrize("victim, attacks", [
    ("doejane_1001_5001_01-bayes.ipynb",                      # Canvas: the student's own name
     ["roebob_1002_5003_x_1001_assignsubmission_file_01-bayes.ipynb",  # carries Moodle's id
      "roebob_1002_5004_doejane_1001_5009_01-bayes.ipynb"]),  # or Canvas's
    ("Jane Doe_1001_assignsubmission_file_01-bayes.ipynb",    # Moodle's flat layout
     ["Bob Roe_1002_assignsubmission_file_x_1001_assignsubmission_file_01-bayes.ipynb",
      "Bob Roe_1002_assignsubmission_file_doejane_1001_5009_01-bayes.ipynb"]),
])
def test_a_students_file_name_never_takes_a_classmates_place(tmp_path, victim, attacks):
    """Class 1: the id is read from the part of the name the LMS writes, in the layout of
    the whole download; a name carrying a second id pattern is refused, never mapped."""
    entries = {victim: ("jane's own", 9), **{a: (f"bob's forgery {i}", 20 + i) for i, a in enumerate(attacks)}}
    entries["roebob_1002_5002_01-bayes.ipynb" if "_5001_" in victim else
            "Bob Roe_1002_assignsubmission_file_01-bayes.ipynb"] = ("bob's own", 10)
    done, out = collected_from(tmp_path, entries)
    assert b"jane's own" in (out / "1001.ipynb").read_bytes()
    assert b"bob's own" in (out / "1002.ipynb").read_bytes()
    assert not done.older and sorted(done.kept) == ["1001", "1002"]
    for attack in attacks:
        assert any(attack[:20] in line and "second LMS id pattern" in line for line in done.refused), done.refused


def test_layouts_are_decided_per_download(tmp_path):
    """A download mixing Canvas's and Moodle's names is refused; an id under two LMS names
    keeps none of its entries; a plain name in a Canvas download is not a student."""
    with pytest.raises(GradingError, match="mixes Canvas names"):
        collected_from(tmp_path, {"doejane_1001_5001_a.ipynb": ("a", 9),
                                  "Bob Roe_1002_assignsubmission_file_/a.ipynb": ("b", 9)})
    done, out = collected_from(tmp_path, {"doejane_1001_5001_a.ipynb": ("jane", 9),
                                          "mallory_1001_5002_a.ipynb": ("mallory", 10),
                                          "roebob_1002_5003_a.ipynb": ("bob", 9),
                                          "1003.ipynb": ("plain", 9)}, name="two-names.zip")
    assert sorted(done.kept) == ["1002"] and done.layout == "canvas"
    assert sum("more than one name" in line for line in done.refused) == 2
    assert any("'1003.ipynb'" in line and "not a Canvas name" in line for line in done.unmapped)


def test_the_roster_never_remaps_an_lms_id(tmp_path):
    """Class 2: a Canvas user id is an id, even when it is another student's SIS id or
    login; logins, e-mails and SIS ids map plain names only, and never ambiguously."""
    roster = parse_roster("id,name,sis_id,login,email\n1001,Jane Doe,2002,jdoe,jane@x.org\n"
                          "1003,Ann Smith,S-3,asmith,jdoe@x.org\n1004,Al Bo,jane@x.org,abo,al@x.org\n")
    done, out = collected_from(tmp_path, {"doejane_1001_5001_a.ipynb": ("jane", 9),
                                          "strangerx_2002_5002_a.ipynb": ("stranger", 20)}, roster)
    assert b"jane" in (out / "1001.ipynb").read_bytes() and b"stranger" in (out / "2002.ipynb").read_bytes()
    assert done.not_on_roster == ["2002: 'strangerx_2002_5002_a.ipynb'"] and not done.older
    folder = tmp_path / "plain"
    folder.mkdir()
    for name in ("jdoe", "asmith", "jane@x.org", "2002"):
        (folder / f"{name}.ipynb").write_bytes(notebook_bytes(name))
    done = collect(folder, tmp_path / "plain-out", assignment="01-bayes", roster=roster)
    assert sorted(done.kept) == ["1001", "1003"], done.report()   # jdoe and 2002 are 1001's
    assert any("'jane@x.org.ipynb'" in line and "more than one student" in line for line in done.unmapped)


def overlapping_zip(path, n: int, kernel: bytes):
    """A zip whose ``n`` stored entries all end at the same bytes: entry i's data is every
    later entry's local header and the kernel, each with its right CRC (a quadratic bomb
    that no per-entry rule sees)."""
    names = [f"user{i}_{1000 + i}_{5000 + i}_a.ipynb".encode() for i in range(n)]
    headers, data = [b""] * n, kernel
    for i in reversed(range(n)):
        crc = zlib.crc32(data)
        header = struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 0, 0, 0x5b45, crc, len(data),
                             len(data), len(names[i]), 0) + names[i]
        headers[i] = (header, crc, len(data))
        data = header + data
    offsets, at = [], 0
    for header, _, _ in headers:
        offsets.append(at)
        at += len(header)
    blob = b"".join(h for h, _, _ in headers) + kernel
    directory = b"".join(struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, 0, 0, 0x5b45, crc, size,
                                     size, len(names[i]), 0, 0, 0, 0, 0, offsets[i]) + names[i]
                         for i, (_, crc, size) in enumerate(headers))
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, n, n, len(directory), len(blob), 0)
    path.write_bytes(blob + directory + end)


def test_entries_that_overlap_are_refused(tmp_path):
    """Class 10: entries pointing into each other's bytes are refused, each of them."""
    path = tmp_path / "overlap.zip"
    overlapping_zip(path, 40, notebook_bytes("k") + b" " * 200_000)
    with zipfile.ZipFile(path) as z:    # a valid zip: zipfile reads every entry, CRC and all
        assert sum(len(z.read(i)) for i in z.infolist()) > 40 * 200_000 > 20 * path.stat().st_size
    done = collect(path, tmp_path / "out", assignment="01-bayes")
    assert not done.kept and len(done.refused) == 40
    assert all("overlap another entry" in line for line in done.refused)


def test_the_directory_is_bounded_before_zipfile_parses_it(tmp_path, monkeypatch, canvas_zip):
    """Class 10: the end record's entry count, the directory's size and its number of
    entry signatures are checked before zipfile reads the directory (which it reads by
    size, whatever the count says); a zip64 end record counts too."""
    def never(*args, **kwargs):
        raise AssertionError("zipfile parsed the directory")

    data = canvas_zip.read_bytes()
    end = data.rindex(b"PK\x05\x06")
    one = data[:end + 8] + struct.pack("<HH", 1, 1) + data[end + 12:]   # says 1, holds 13
    for lying, message in [(zip64_claiming(data, 2_000_000), "2000000 entries"),
                           (one, "entries, more than 5")]:
        path = tmp_path / "lying.zip"
        path.write_bytes(lying)
        monkeypatch.setattr(col, "MAX_ENTRIES", 5)
        monkeypatch.setattr(col.zipfile, "ZipFile", never)
        with pytest.raises(GradingError, match=message):
            collect(path, tmp_path / "o", assignment="01-bayes")
        monkeypatch.undo()
    monkeypatch.setattr(col, "MAX_DIRECTORY_BYTES", 100)
    monkeypatch.setattr(col.zipfile, "ZipFile", never)
    with pytest.raises(GradingError, match="central directory is larger than 100 bytes"):
        collect(canvas_zip, tmp_path / "big-directory", assignment="01-bayes")


def zip64_claiming(data: bytes, count: int) -> bytes:
    """The zip ``data`` with a zip64 end record (and its locator) that claims ``count``
    entries, as zipfile reads it."""
    end = data.rindex(b"PK\x05\x06")
    size, offset = struct.unpack_from("<LL", data, end + 12)
    record = struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, count, count, size, offset)
    locator = struct.pack("<4sLQL", b"PK\x06\x07", 0, end, 1)
    return data[:end] + record + locator + data[end:]


def test_zip64_downloads_are_read(tmp_path, monkeypatch):
    """A zip with a zip64 end record (as zipfile writes past 65 535 entries) is read."""
    monkeypatch.setattr(zipfile, "ZIP_FILECOUNT_LIMIT", 1)
    done, out = collected_from(tmp_path, {"doejane_1001_5001_a.ipynb": ("jane", 9),
                                          "roebob_1002_5002_a.ipynb": ("bob", 9)})
    assert b"PK\x06\x06" in (tmp_path / "download.zip").read_bytes()
    assert sorted(done.kept) == ["1001", "1002"] and not done.refused


def test_kept_entries_are_streamed_to_disk(canvas_zip, tmp_path, monkeypatch):
    """Class 10: an entry is copied a bounded chunk at a time, never read whole."""
    asked = []
    read = zipfile.ZipExtFile.read

    def recording(self, n=-1):
        asked.append(n)
        return read(self, n)

    monkeypatch.setattr(zipfile.ZipExtFile, "read", recording)
    done = collect(canvas_zip, tmp_path / "out", assignment="01-bayes")
    assert done.kept and asked and all(0 < n <= 2**20 for n in asked), sorted(set(asked))


def test_an_unreadable_latest_entry_gives_way_to_the_one_before(tmp_path):
    """Only the kept entries are copied; a corrupt latest one is refused and the student's
    previous submission is kept instead (and its file mode is an ordinary notebook's)."""
    path = tmp_path / "corrupt.zip"
    with zipfile.ZipFile(path, "w") as z:
        add(z, "doejane_1001_5001_a.ipynb", notebook_bytes("jane first"),
            utc=datetime.datetime(2026, 10, 5, 9, tzinfo=UTC))
        add(z, "doejane_1001_5002_a-1.ipynb", notebook_bytes("jane second"),
            utc=datetime.datetime(2026, 10, 5, 10, tzinfo=UTC))
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as z:
        second = z.getinfo("doejane_1001_5002_a-1.ipynb")
    at = second.header_offset + 30 + len(second.filename) + len(second.extra)
    data[at + 5] ^= 0xFF                                    # a flipped byte: the CRC fails
    path.write_bytes(bytes(data))
    done = collect(path, tmp_path / "out", assignment="01-bayes")
    assert b"jane first" in (tmp_path / "out" / "1001.ipynb").read_bytes()
    assert stat.S_IMODE(os.stat(tmp_path / "out" / "1001.ipynb").st_mode) == 0o644
    assert len(done.refused) == 1 and "5002" in done.refused[0] and "corrupt" in done.refused[0]
    assert os.listdir(tmp_path / "out") == ["1001.ipynb"]   # the staging folder is gone


def test_corrupt_directories_are_one_line(tmp_path, canvas_zip):
    """Found by fuzzing: a directory entry asking for zip version 10.3 (zipfile raises
    NotImplementedError) and one whose local header lies outside the file are one line."""
    data = bytearray(canvas_zip.read_bytes())
    first = data.index(b"PK\x01\x02")
    version = bytearray(data)
    struct.pack_into("<H", version, first + 6, 103)
    (tmp_path / "version.zip").write_bytes(bytes(version))
    with pytest.raises(GradingError, match="not a readable zip"):
        collect(tmp_path / "version.zip", tmp_path / "o1", assignment="01-bayes")
    struct.pack_into("<L", data, first + 42, len(data) + 10)    # its local header's offset
    (tmp_path / "offset.zip").write_bytes(bytes(data))
    done = collect(tmp_path / "offset.zip", tmp_path / "o2", assignment="01-bayes")
    assert any("doejane_1001_5001" in line and "corrupt" in line for line in done.refused)


@pytest.mark.parametrize("victim, attack, read", [
    # Moodle's importer reads the participant id as the second '_' field of the name
    ("Jane Doe_1001_assignsubmission_file_01-bayes.ipynb",
     "X_1001_assignfeedback_file_1002_assignsubmission_file_/01-bayes.ipynb", "1001"),
    # Canvas's re-upload reads the user id as the first field made only of digits
    ("doejane_1001_5001_01-bayes.ipynb", "1001_1002_5003_01-bayes.ipynb", "1001"),
])
def test_a_name_the_lms_would_read_as_a_classmates_is_refused(tmp_path, victim, attack, read):
    """Issue 49: every kept name maps back to its own student under the LMS's own rule,
    so that the feedback page written under it goes to that student."""
    done, out = collected_from(tmp_path, {victim: ("jane's own", 9), attack: ("bob's", 20)})
    assert sorted(done.kept) == ["1001"] and b"jane's own" in (out / "1001.ipynb").read_bytes()
    assert any(attack[:14] in line and f"would read the id {read} from this name, not 1002" in line
               for line in done.refused), done.refused

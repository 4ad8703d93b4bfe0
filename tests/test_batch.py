"""Grading a whole class: a batch of 40 submissions into the gradebook, CSV export,
feedback files, skipping unchanged work, and the same job on a Dask cluster."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import socket
import sqlite3
import ssl
import subprocess
import sys
from xml.etree import ElementTree

import nbformat
import pytest
from nbformat.v4 import new_code_cell

from gradingtools import break_q3, cell_with, toy_solution, write_variant
from lecturelib.grading.autograde import sandbox
from lecturelib.grading.autograde.grade import Grader
from lecturelib.grading.autograde.job import run_job
from lecturelib.grading.gradebook.batch import grade_batch
from lecturelib.grading.gradebook import Gradebook
from lecturelib.grading.autograde.sandbox import Limits

pytestmark = pytest.mark.skipif(
    not os.environ.get("CI") and sandbox.sandbox_problem() is not None,
    reason=f"no sandbox here: {sandbox.sandbox_problem()}")

LIMITS = Limits(cell_timeout=8, total_timeout=120, memory_mb=2048)

HOSTILE = {
    "reads-solutions": "try:\n    top = open(SOL).read()\nexcept OSError:\n    pass",
    "exits": "import os\nos._exit(0)",
    "loops": "while True:\n    pass",
    "forks": ("import subprocess\nkids = []\nfor _ in range(300):\n    try:\n"
              "        kids.append(subprocess.Popen(['sleep', '60']))\n    except OSError:\n        break"),
    "floods": "import sys\nfor _ in range(200):\n    sys.stdout.write('x' * 2**20)",
    "patches-numpy": "np.allclose = lambda *a, **k: True",
}
CORRUPT = {
    "not-json": b"this is not json",
    "png": b"\x89PNG\r\n\x1a\n\x00\x00",
    "empty": b"",
    "wrong-shape": b'{"cells": 3}',
    "too-deep": b"[" * 10000 + b"]" * 10000,
    "surrogate": None,  # made below
}


@pytest.fixture(scope="module")
def klass(tmp_path_factory):
    """40 submissions with the score each must get."""
    root = tmp_path_factory.mktemp("class")
    (root / "solutions").mkdir()
    nbformat.write(toy_solution(), root / "solutions" / "toy.ipynb")
    subs = root / "submissions"
    subs.mkdir()
    expected = {}
    for i in range(7):
        write_variant(subs, f"honest{i:02d}", lambda cells: None)
        expected[f"honest{i:02d}"] = 6
    for i in range(7):
        write_variant(subs, f"partial{i:02d}", break_q3)
        expected[f"partial{i:02d}"] = 5
    # names a spreadsheet would take for a formula: safe names, graded, quoted in the CSV
    write_variant(subs, "@sum", lambda cells: None)
    expected["@sum"] = 6
    write_variant(subs, "+1+1", break_q3)
    expected["+1+1"] = 5
    # a name with a terminal escape code: refused (no row), reported escaped
    write_variant(subs, "evil\x1b[2Jname", lambda cells: None)
    # links to the solution and to a classmate's file: refused, never followed
    (subs / "linked-solution.ipynb").symlink_to(root / "solutions" / "toy.ipynb")
    (subs / "linked-classmate.ipynb").symlink_to(subs / "honest00.ipynb")
    expected["linked-solution"] = expected["linked-classmate"] = 0
    # another exercise set's notebook, handed in by mistake
    def other_set(cells):
        cells[:] = [c for c in cells if not any(t.startswith("question:") for t in c.metadata.get("tags", []))]
    other = write_variant(subs, "wrong-assignment", other_set)
    nb = nbformat.read(other, as_version=4)
    nb.metadata["lecturelib"]["assignment"] = "02-other"
    nbformat.write(nb, other)
    expected["wrong-assignment"] = 0
    sol = str(root / "solutions" / "toy.ipynb")
    for name, code in HOSTILE.items():
        def edit(cells, code=code):
            break_q3(cells)
            cells.insert(cell_with(cells, "top = V") + 1, new_code_cell(f"SOL = {sol!r}\n" + code))
        write_variant(subs, f"hostile-{name}", edit)
        expected[f"hostile-{name}"] = 5
    for name, data in CORRUPT.items():
        path = subs / f"corrupt-{name}.ipynb"
        if data is None:
            write_variant(subs, f"corrupt-{name}", lambda cells: None)
            path.write_text(path.read_text().replace("import numpy as np", "import numpy as np # \\udc80"))
        else:
            path.write_bytes(data)
        expected[f"corrupt-{name}"] = 0
    honest = (subs / "honest00.ipynb").read_bytes()
    for i in range(8):  # the same file handed in by eight students (in their own folders)
        folder = subs / f"copier{i}"
        folder.mkdir()
        (folder / "toy.ipynb").write_bytes(honest)
        expected[f"copier{i}"] = 6
    assert len(list(subs.iterdir())) == 40 and len(expected) == 39  # one name refused
    return root, expected


@pytest.mark.full
def test_a_class_of_40_grades_into_the_gradebook(klass):
    root, expected = klass
    book_path = root / "gradebook.sqlite"
    with Gradebook(book_path) as book:
        summary = grade_batch([root / "submissions"], assignment="toy", gradebook=book,
                              solutions_dir=root / "solutions", limits=LIMITS, jobs=2, progress=False)
        got = {student: report.score for student, report in summary.graded}
        assert got == expected
        csv_text = book.export_csv("toy")
    # the failure summary names every submission that was not graded normally, escaped
    flagged = {line.split(":")[0] for line in summary.problems}
    assert {f"corrupt-{n}" for n in CORRUPT} | {"linked-solution", "linked-classmate",
                                                "wrong-assignment"} <= flagged
    assert not {s for s in flagged if s.startswith(("honest", "partial", "copier", "@", "+"))}
    assert "wrong-assignment: wrong assignment: the notebook says '02-other'" in summary.problems
    assert any("symbolic link" in line for line in summary.problems if line.startswith("linked-solution"))
    refused = [line for line in summary.problems if "not a safe student name" in line]
    assert len(refused) == 1 and "\\x1b" in refused[0] and "\x1b" not in refused[0]
    rows = list(csv.DictReader(io.StringIO(csv_text)))
    assert [r["student"].lstrip("'") for r in rows] == sorted(expected)
    assert list(rows[0]) == ["student", "q1", "q2", "q3", "total"]
    assert {r["student"].lstrip("'"): float(r["total"]) for r in rows} == expected
    assert all(float(r["q1"]) + float(r["q2"]) + float(r["q3"]) == float(r["total"]) for r in rows)
    assert_spreadsheet_reads(csv_text, root / "spreadsheet", [r["student"] for r in rows])
    db = sqlite3.connect(book_path)
    assert db.execute("SELECT COUNT(*) FROM results WHERE assignment='toy'").fetchone()[0] == 3 * 39
    reasons = dict(db.execute("SELECT student, reason FROM results WHERE question='q1'"))
    assert "not a Jupyter notebook" in reasons["corrupt-not-json"]
    assert len({h for (h,) in db.execute("SELECT sha256 FROM submissions WHERE student LIKE 'copier%'")}) == 1
    feedback = (root / "feedback" / "toy" / "partial00.md").read_text()
    assert "**Score: 5 / 6**" in feedback and "| q3 | 0 | 1 |" in feedback

    # Unchanged submissions are not graded again; a changed one is.
    changed = root / "submissions" / "partial00.ipynb"
    nb = nbformat.read(changed, as_version=4)
    i = cell_with(nb.cells, "top = V")
    nb.cells[i].source = nb.cells[i].source.replace("V[:, 0]", "V[:, -1]")
    nbformat.write(nb, changed)
    with Gradebook(book_path) as book:
        again = grade_batch([root / "submissions"], assignment="toy", gradebook=book,
                            solutions_dir=root / "solutions", limits=LIMITS, jobs=2, progress=False)
        # files that could not be read are tried again on every run
        assert [s for s, _ in again.graded] == ["linked-classmate", "linked-solution", "partial00"]
        assert len(again.unchanged) == 36 and dict(again.graded)["partial00"].score == 6
        assert book.scores("toy")["partial00"] == {"q1": 2, "q2": 3, "q3": 1}


FODS = {"table": "urn:oasis:names:tc:opendocument:xmlns:table:1.0",
        "text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0"}


def assert_spreadsheet_reads(csv_text: str, folder, students):
    """Open the CSV in LibreOffice (headless, its default CSV import, as an instructor's
    double click would) and read back what it made: one row per student and the header,
    the names as they were written, and not one formula cell."""
    soffice = shutil.which("soffice")
    if soffice is None:
        if os.environ.get("CI"):
            pytest.fail("LibreOffice (soffice) is needed when CI is set: .ci/run installs "
                        "libreoffice-calc-nogui")
        return
    folder.mkdir()
    (folder / "grades.csv").write_text(csv_text, encoding="utf-8")
    proc = subprocess.run([soffice, f"-env:UserInstallation=file://{folder}/profile", "--headless",
                           "--convert-to", "fods", "--outdir", str(folder), str(folder / "grades.csv")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and (folder / "grades.fods").is_file(), proc.stderr
    tree = ElementTree.parse(folder / "grades.fods")
    formula = "{%s}formula" % FODS["table"]
    assert not [c for c in tree.iter("{%s}table-cell" % FODS["table"]) if formula in c.attrib]
    rows = []
    for row in tree.iter("{%s}table-row" % FODS["table"]):
        cells = ["".join(p.itertext()) for p in row.iter("{%s}p" % FODS["text"])]
        if any(cells):
            rows.append(cells)
    assert rows[0] == ["student", "q1", "q2", "q3", "total"]
    assert [r[0] for r in rows[1:]] == students


@pytest.mark.full
def test_cli_grades_a_folder_and_exports_csv(klass, tmp_path):
    root, expected = klass
    subs = tmp_path / "few"
    subs.mkdir()
    for name in ("honest01", "partial01", "hostile-exits"):
        (subs / f"{name}.ipynb").write_bytes((root / "submissions" / f"{name}.ipynb").read_bytes())
    (subs / "corrupt.ipynb").write_bytes(b"{")
    book, out = tmp_path / "grades.sqlite", tmp_path / "grades.csv"
    run = [sys.executable, "-m", "lecturelib.grading"]
    proc = subprocess.run(run + ["grade", str(subs), "--assignment", "toy", "--solutions",
                                 str(root / "solutions"), "--gradebook", str(book), "--timeout", "8"],
                          capture_output=True, text=True, timeout=600)
    # the corrupt notebook could not be graded normally: listed at the end, exit status 1
    assert proc.returncode == 1 and "--accept-failures" in proc.stderr, proc.stderr
    assert "honest01: 6 / 6" in proc.stdout and "corrupt: 0 / 6" in proc.stdout
    assert "1 submission(s) could not be graded normally:\n  corrupt: malformed" in proc.stdout
    proc = subprocess.run(run + ["gradebook", "export", "--assignment", "toy", "--gradebook", str(book),
                                 "--output", str(out)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    totals = {r["student"]: r["total"] for r in csv.DictReader(out.open())}
    assert totals == {"corrupt": "0", "honest01": "6", "hostile-exits": "5", "partial01": "5"}
    assert sorted(p.name for p in (tmp_path / "feedback" / "toy").iterdir()) == [
        "corrupt.md", "honest01.md", "hostile-exits.md", "partial01.md"]
    result = tmp_path / "one.json"  # one notebook into the gradebook, with --json, twice
    for _ in range(2):
        result.unlink(missing_ok=True)
        proc = subprocess.run(run + ["grade", str(subs / "partial01.ipynb"), "--assignment", "toy",
                                     "--solutions", str(root / "solutions"), "--gradebook", str(book),
                                     "--json", str(result), "--timeout", "8"],
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(result.read_text())["score"] == 5
    proc = subprocess.run(run + ["gradebook", "export", "--assignment", "nope", "--gradebook", str(book)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "no results" in proc.stderr and "Traceback" not in proc.stderr


def make_certificates(folder):
    """A certificate authority, and a certificate with its key for the cluster (scheduler
    and workers) and for the grader (the client), all for 127.0.0.1; PEM files."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.timezone.utc)

    def issue(name, key, issuer, issuer_key, ca):
        builder = (x509.CertificateBuilder()
                   .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
                   .issuer_name(issuer).public_key(key.public_key())
                   .serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(minutes=5))
                   .not_valid_after(now + datetime.timedelta(days=1))
                   .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
        if not ca:
            builder = builder.add_extension(x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                critical=False).add_extension(x509.ExtendedKeyUsage(
                    [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        return builder.sign(issuer_key, hashes.SHA256())

    def write(name, cert, key):
        (folder / f"{name}.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        (folder / f"{name}.key").write_bytes(key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test course CA")])
    write("ca", issue("test course CA", ca_key, ca_name, ca_key, True), ca_key)
    for name in ("cluster", "grader"):
        key = ec.generate_private_key(ec.SECP256R1())
        write(name, issue(name, key, ca_name, ca_key, False), key)
    return {name: (folder / f"{name}.pem", folder / f"{name}.key") for name in ("ca", "cluster", "grader")}


def test_grading_on_a_dask_cluster_with_mutual_tls(klass, tmp_path):
    distributed = pytest.importorskip("distributed")
    from distributed.security import Security

    root, expected = klass
    subs = tmp_path / "dask"
    subs.mkdir()
    names = ["honest02", "partial02", "hostile-reads-solutions", "corrupt-png"]
    for name in names:
        (subs / f"{name}.ipynb").write_bytes((root / "submissions" / f"{name}.ipynb").read_bytes())
    pem = make_certificates(tmp_path)
    ca = pem["ca"][0]
    cluster_security = Security(tls_ca_file=str(ca), tls_scheduler_cert=str(pem["cluster"][0]),
                                tls_scheduler_key=str(pem["cluster"][1]),
                                tls_worker_cert=str(pem["cluster"][0]), tls_worker_key=str(pem["cluster"][1]),
                                tls_client_cert=str(pem["cluster"][0]), tls_client_key=str(pem["cluster"][1]),
                                require_encryption=True)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, protocol="tls://",
                                  host="127.0.0.1", security=cluster_security,
                                  dashboard_address=None) as cluster:
        address = cluster.scheduler_address
        assert address.startswith("tls://127.0.0.1:")
        # a client with a certificate of another authority is refused, and so is a TLS
        # connection without any certificate
        rogue_folder = tmp_path / "rogue"
        rogue_folder.mkdir()
        rogue = make_certificates(rogue_folder)["grader"]
        with pytest.raises((OSError, TimeoutError)):
            distributed.Client(address, timeout=5, security=Security(
                tls_ca_file=str(ca), tls_client_cert=str(rogue[0]), tls_client_key=str(rogue[1]),
                require_encryption=True))
        host, port = address[len("tls://"):].rsplit(":", 1)
        context = ssl.create_default_context(cafile=str(ca))
        with socket.create_connection((host, int(port)), timeout=5) as raw:
            with pytest.raises((ssl.SSLError, ConnectionError)):
                with context.wrap_socket(raw, server_hostname=host) as tls:
                    tls.sendall(b"\0" * 8)
                    assert tls.recv(1) == b""  # refused: an alert, or the server hangs up
        with Gradebook(tmp_path / "dask.sqlite") as book:
            summary = grade_batch([subs], assignment="toy", gradebook=book,
                                  solutions_dir=root / "solutions", limits=LIMITS, scheduler=address,
                                  tls=(ca, *pem["grader"]), progress=False)
    assert {s: r.score for s, r in summary.graded} == {n: expected[n] for n in names}


def test_dask_tasks_carry_code_and_checks_only(klass, tmp_path, monkeypatch):
    """What a worker is given: the notebook's code cells, the check expressions, the limits.
    Never the solution's answers (a rogue worker or a reader of the wire learns nothing it
    could not read from the student's own notebook), never the solution notebook."""
    from lecturelib.grading.gradebook import batch, workers

    root, expected = klass
    submitted = []

    class Recording(workers.Executor):
        def submit(self, fn, *args, **kwargs):
            submitted.append((fn, args, kwargs))
            return super().submit(fn, *args, **kwargs)

    monkeypatch.setattr(batch, "Executor", Recording)
    with Gradebook(tmp_path / "book.sqlite") as book:
        summary = grade_batch([root / "submissions" / "honest03.ipynb"], assignment="toy", gradebook=book,
                              solutions_dir=root / "solutions", limits=LIMITS, jobs=1, progress=False)
        reference = Grader("toy", solutions_dir=root / "solutions", limits=LIMITS).reference(store=book)
    assert summary.graded[0][1].score == 6
    (fn, args, kwargs), = submitted
    assert fn is run_job
    cells, exprs, limits, cell_limits, check_limits = args
    assert kwargs == {"sandbox": True}
    assert limits == __import__("dataclasses").replace(LIMITS, total_timeout=30)  # the toy's whole run: the floor
    assert len(cell_limits) == len(cells) and set(check_limits) == set(exprs)
    assert all(isinstance(s, int) and 0 < s <= LIMITS.cell_timeout for s in cell_limits)
    assert exprs == {"q1": ["p0"], "q2": ["normalise([1, 3])", "normalise(np.random.default_rng(0).random(5))"],
                     "q3": ["top"]}
    assert all(isinstance(c, str) for c in cells)
    wire = repr((args, kwargs))
    assert str(root / "solutions") not in wire
    for values in reference.raw.values():  # no reference answer in what was sent
        for value in values:
            assert repr(value) not in wire


@pytest.mark.parametrize("address, message", [
    ("tcp://10.1.2.3:8786", "refused"), ("10.1.2.3:8786", "refused"), ("tcp://grader.example:8786", "refused"),
    # issue 49: a loopback scheduler without TLS admits every local process as a client
    ("tcp://127.0.0.1:8786", "on loopback too"), ("tcp://[::1]:8786", "refused"), ("localhost:8786", "refused"),
    ("inproc://x", "refused"), ("tls://10.1.2.3:8786", "needs --tls-ca, --tls-cert, --tls-key"),
    ("tls://127.0.0.1:8786", "needs --tls-ca, --tls-cert, --tls-key"),
])
def test_plain_or_unauthenticated_dask_addresses_are_refused(address, message):
    from lecturelib.grading.gradebook.workers import scheduler_security
    from lecturelib.grading.core.notebook import GradingError

    with pytest.raises(GradingError, match=message):
        scheduler_security(address)


@pytest.mark.full
def test_batch_refuses_bad_arguments(klass, tmp_path):
    root, _ = klass
    run = [sys.executable, "-m", "lecturelib.grading", "grade"]
    cases = [
        ([str(tmp_path / "missing")], "no such file"),
        ([str(tmp_path)], "no notebooks to grade"),
        ([str(root / "submissions"), "--json", str(tmp_path / "r.json")], "--json takes one notebook"),
        ([str(root / "submissions"), "--jobs", "0"], "--jobs must be at least 1"),
        ([str(root / "submissions"), "--gradebook", str(tmp_path)], "not a file"),
    ]
    for args, message in cases:
        proc = subprocess.run(run + args + ["--assignment", "toy", "--solutions", str(root / "solutions")],
                              capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert proc.returncode == 2, (args, proc.stderr)
        assert message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    not_sqlite = tmp_path / "text.sqlite"
    not_sqlite.write_text("hello " * 1000)
    proc = subprocess.run(run + [str(root / "submissions"), "--assignment", "toy", "--gradebook",
                                 str(not_sqlite), "--solutions", str(root / "solutions")],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 2 and "not a gradebook" in proc.stderr, proc.stderr

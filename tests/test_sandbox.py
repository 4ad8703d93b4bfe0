"""The grader against hostile notebooks: one test notebook per attack class.

Every hostile notebook answers q1 and q2 honestly and gets q3 honestly wrong (5 of 6
points), then attacks.  An attack that worked would earn q3 (the attack sets the right
answer only when it got what it was after), change the machine, or change a later
grading.  Each test checks that the notebook scores exactly 5, that the checkout, the
Python environment and the solutions are unchanged, that no process it started is still
running, and that an honest notebook graded afterwards still scores 5.

make test tries one or a few variants of each attack class; make test-all tries them all.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shutil
import site
import stat
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import psutil
import pytest
from nbformat.v4 import new_code_cell

import lecturelib
from gradingtools import break_q3, cell_with, everyday_and_full, toy_solution, write_variant
from lecturelib import grading
from lecturelib.grading.autograde import sandbox
from lecturelib.grading.core import report, safejson

ROOT = Path(__file__).resolve().parent.parent
TOKEN = secrets.token_hex(8)  # marks every process an attack starts
SECRET_ENV = "LECTURELIB_GRADER_SECRET"


def test_bubblewrap_is_installed_in_ci():
    """CI installs bubblewrap; there the sandbox tests must never be skipped."""
    if os.environ.get("CI"):
        assert shutil.which("bwrap"), "CI must install the Debian package bubblewrap"
        assert sandbox.sandbox_problem() is None, sandbox.sandbox_problem()


pytestmark = pytest.mark.skipif(
    not os.environ.get("CI") and sandbox.sandbox_problem() is not None,
    reason=f"no sandbox here: {sandbox.sandbox_problem()}")


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    root = tmp_path_factory.mktemp("toy")
    (root / "solutions").mkdir()
    nb = toy_solution()
    nb.metadata["secret"] = f"lecturelib-secret-{secrets.token_hex(16)}"
    nbformat.write(nb, root / "solutions" / "toy.ipynb")
    return root


def _digest(paths) -> str:
    h = hashlib.sha256()
    for path in sorted(paths):
        if path.is_file() and "__pycache__" not in path.parts:
            h.update(str(path).encode() + path.read_bytes())
    return h.hexdigest()


def snapshot(toy) -> dict:
    """What no grading may change: the package, the environment, the solutions, the tree."""
    site_packages = Path(site.getsitepackages()[0]) if hasattr(site, "getsitepackages") else None
    git = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain"], capture_output=True, text=True)
    return {
        "lecturelib": _digest(Path(lecturelib.__file__).parent.rglob("*")),
        "site-packages": sorted(p.name for p in site_packages.iterdir()) if site_packages else [],
        "pth": _digest(site_packages.glob("*.pth")) if site_packages else "",
        "solutions": _digest((ROOT / "solutions").glob("*")),
        "toy": _digest((toy / "solutions").glob("*")),
        "git": git.stdout,
        "home": sorted(p.name for p in Path.home().iterdir()) if Path.home().is_dir() else [],
    }


def survivors() -> list[str]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = " ".join(proc.info["cmdline"] or [])
        if TOKEN in cmdline:
            found.append(cmdline[:100])
    return found


def grade(path, toy, **kw):
    kw.setdefault("cell_timeout", 10)
    return grading.grade(path, assignment="toy", solutions_dir=toy / "solutions", **kw)


def scores(rep):
    return {q.id: q.points for q in rep.questions}


def hostile(toy, name, code, before=False):
    """The honest-but-q3-wrong notebook with the attack ``code`` after (or before) q3."""
    def edit(cells):
        break_q3(cells)
        at = cell_with(cells, "top = V") + (0 if before else 1)
        cells.insert(at, new_code_cell(PRELUDE.replace("TOKEN", TOKEN) + code))
    return write_variant(toy, name, edit)


def honest_still_scores_five(toy):
    rep = grade(write_variant(toy, "honest-after", break_q3), toy)
    assert scores(rep) == {"q1": 2, "q2": 3, "q3": 0}, rep.table()


# The prelude every attack shares: won() sets the right answer to q3 (an attack calls it
# only when it got what it was after); spawn() starts a detached process carrying TOKEN.
PRELUDE = r'''
import os, sys, re, time
def won():
    global top
    top = np.array([0.70710678, 0.70710678])
def spawn(code):
    import multiprocessing.util
    return multiprocessing.util.spawnv_passfds(
        sys.executable, [sys.executable, "-c", code, "TOKEN"], ())
'''

READING = {
    "open_solution": "try:\n    open(SOL).read(1); won()\nexcept OSError:\n    pass",
    "fileio_bypasses_hooks": "import _io\ntry:\n    _io.FileIO(SOL).read(1); won()\nexcept OSError:\n    pass",
    "ctypes_libc_open": """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.open(SOL.encode(), os.O_RDONLY)
if fd >= 0 and os.read(fd, 1):
    won()""",
    "open_dir_fd": """
try:
    d = os.open(os.path.dirname(SOL), os.O_RDONLY)
    os.read(os.open(os.path.basename(SOL), os.O_RDONLY, dir_fd=d), 1); won()
except OSError:
    pass""",
    "links_and_renames": """
for how in (os.link, os.rename, os.symlink):
    try:
        how(SOL, "/tmp/stolen.ipynb")
        if open("/tmp/stolen.ipynb").read(1):
            won()
    except OSError:
        pass""",
    "symlink_race": """
import threading
open("/tmp/benign", "w").write("benign")
stop = False
def flip():
    while not stop:
        for target in ("/tmp/benign", SOL):
            try:
                os.remove("/tmp/race")
            except OSError:
                pass
            os.symlink(target, "/tmp/race")
t = threading.Thread(target=flip); t.start()
for _ in range(20000):
    try:
        if open("/tmp/race").read(1) == "{":
            won(); break
    except OSError:
        pass
stop = True; t.join()""",
    "course_tree_and_git": """
for path in (ROOT + "/.git/HEAD", ROOT + "/solutions/01-bayes.ipynb", ROOT + "/README.md"):
    try:
        open(path).read(1); won()
    except OSError:
        pass""",
    "grader_memory_through_proc": """
secret = re.compile(rb"lecturelib-secret-[0-9a-f]{32}")
for pid in os.listdir("/proc"):
    if not pid.isdigit():
        continue
    try:
        cmd = open(f"/proc/{pid}/cmdline", "rb").read()
        if b"pytest" in cmd or b"lecturelib" in cmd and b"inside" not in cmd:
            won()  # the grader's process is visible
        with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb") as mem:
            for line in maps:
                lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
                if "r" not in line.split()[1] or hi - lo > 2**28:
                    continue
                try:
                    mem.seek(lo)
                    if secret.search(mem.read(hi - lo)):
                        won()
                except (OSError, ValueError, OverflowError):
                    pass
    except OSError:
        pass""",
    "grader_environment": f"""
if "{SECRET_ENV}" in os.environ:
    won()
for pid in os.listdir("/proc"):
    try:
        if b"{SECRET_ENV}" in open(f"/proc/{{pid}}/environ", "rb").read():
            won()
    except OSError:
        pass""",
}


@pytest.mark.parametrize("name", everyday_and_full(sorted(READING), {"open_solution", "ctypes_libc_open", "links_and_renames"}))
def test_reading_the_solutions_fails(toy, name):
    before = snapshot(toy)
    code = f"SOL = {str(toy / 'solutions' / 'toy.ipynb')!r}\nROOT = {str(ROOT)!r}\n" + READING[name]
    path = hostile(toy, name, code)
    if name == "grader_environment":  # the secret must be in the grader's own environment
        proc = cli_grade(toy, path, env={**os.environ, SECRET_ENV: "grader-only"})
        assert proc.returncode == 0 and re.search(r"total\s+5\s+6\n", proc.stdout), proc.stdout
    else:
        rep = grade(path, toy)
        assert scores(rep) == {"q1": 2, "q2": 3, "q3": 0}, rep.table()
    assert snapshot(toy) == before
    honest_still_scores_five(toy)


# Processes started without any audit event, that try to outlive the kernel, escape the
# memory cap, rewrite results later, or reach the kernels of later gradings.
CHILD = r'''
import os, sys, time, glob
os.setsid()
end = time.time() + 40
while time.time() < end:
    for f in glob.glob("/tmp/home/.jupyter-runtime/kernel-*.json") + glob.glob("/root/.local/share/jupyter/runtime/*.json"):
        open("/tmp/found-connection-files", "a").write(f + "\n")
    for target in TARGETS:
        try:
            open(target, "w").write('{"score": 6, "total": 6, "questions": []}')
        except OSError:
            pass
    time.sleep(0.2)
'''

PROCESSES = {
    "outlives_the_kernel": "spawn(CHILD)",
    "posixsubprocess_fork_exec": """
import _posixsubprocess, subprocess
args = [sys.executable, "-c", CHILD, "TOKEN"]
pid = subprocess.Popen(args, start_new_session=True).pid""",
    "exceeds_memory_cap": """
spawn("import numpy as np\\nx = [np.ones(2**27) for _ in range(64)]\\nimport time; time.sleep(30)")
import subprocess
r = subprocess.run([sys.executable, "-c", "import numpy as np; x = np.ones(2**31)"], capture_output=True)
if r.returncode == 0:
    won()""",
    "fork_bomb": """
import subprocess
kids = []
for _ in range(500):
    try:
        kids.append(subprocess.Popen(["sleep", "30"]))
    except OSError:
        break
if len(kids) >= 400:
    won()
for k in kids:
    k.kill()""",
    "fills_the_disk": """
try:
    with open("/tmp/big", "wb") as f:
        for _ in range(2048):
            f.write(b"x" * 2**20)
    won()
except OSError:
    pass""",
}


@pytest.mark.parametrize("name", everyday_and_full(sorted(PROCESSES), {"fork_bomb", "exceeds_memory_cap"}))
def test_processes_stay_in_the_sandbox(toy, name, tmp_path):
    before = snapshot(toy)
    target = tmp_path / "result.json"
    target.write_text('{"score": 5}')
    code = f"TARGETS = [{str(target)!r}]\nCHILD = 'TARGETS = ' + repr(TARGETS) + {CHILD!r}\n" + PROCESSES[name]
    start = time.monotonic()
    rep = grade(hostile(toy, name, code.replace("TOKEN", TOKEN)), toy, memory_mb=1024)
    assert time.monotonic() - start < 120
    assert scores(rep) == {"q1": 2, "q2": 3, "q3": 0}, rep.table()
    time.sleep(1)
    assert survivors() == []
    assert target.read_text() == '{"score": 5}'
    assert snapshot(toy) == before
    honest_still_scores_five(toy)


PERSISTING = {
    "edits_installed_lecturelib": """
import lecturelib, pathlib
for f in pathlib.Path(lecturelib.__file__).parent.rglob("*.py"):
    try:
        open(f, "a").write("\\nraise SystemExit")
    except OSError:
        pass
try:
    open(REAL_LECTURELIB, "a").write("\\n# changed")
except OSError:
    pass""",
    "writes_pth_into_environment": """
import site, sysconfig
for folder in site.getsitepackages() + [sysconfig.get_paths()["purelib"], site.getusersitepackages()]:
    try:
        os.makedirs(folder, exist_ok=True)
        open(os.path.join(folder, "zz-evil.pth"), "w").write("import time; time.sleep(10**6)\\n")
    except OSError:
        pass""",
    "pth_runs_in_restarted_kernel": """
import site
os.makedirs(site.getusersitepackages(), exist_ok=True)
open(os.path.join(site.getusersitepackages(), "zz-win.pth"), "w").write(
    "import builtins; builtins.__lecturelib_won = 1\\n")
if getattr(__import__("builtins"), "__lecturelib_won", 0):
    won()""",
    "replaces_the_solution": """
for path in (SOL, ROOT + "/solutions/01-bayes.ipynb"):
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        open(path, "w").write("{}")
    except OSError:
        pass""",
}


@pytest.mark.parametrize("name", everyday_and_full(sorted(PERSISTING), {"replaces_the_solution", "writes_pth_into_environment"}))
def test_nothing_persists_into_later_gradings(toy, name):
    before = snapshot(toy)
    code = (f"SOL = {str(toy / 'solutions' / 'toy.ipynb')!r}\nROOT = {str(ROOT)!r}\n"
            f"REAL_LECTURELIB = {lecturelib.__file__!r}\n" + PERSISTING[name])
    rep = grade(hostile(toy, name, code), toy)
    assert scores(rep) == {"q1": 2, "q2": 3, "q3": 0}, rep.table()
    assert snapshot(toy) == before
    honest_still_scores_five(toy)


# ----------------------------------------------------------------- forging and exhausting


def run_cli(*args, timeout=300, env=None):
    # The peak is read from VmHWM, the high-water mark of this process's own memory map:
    # getrusage's ru_maxrss would also count the pytest worker's pages at the fork, which
    # Linux keeps across exec (a worker that had grown to 400 MiB made the grader look big).
    code = ("import re, sys\nfrom lecturelib.grading.cli import main\nrc = main(sys.argv[1:])\n"
            "hwm = re.search(r'VmHWM:\\s+(\\d+) kB', open('/proc/self/status').read()).group(1)\n"
            "print('MAXRSS', hwm, file=sys.stderr)\n"
            "sys.exit(rc)")
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, env=env)


def cli_grade(toy, path, *extra, env=None):
    return run_cli("grade", path, "--assignment", "toy", "--solutions", toy / "solutions",
                   "--timeout", "10", *extra, env=env)


@pytest.mark.parametrize("kind", everyday_and_full(["fifo", "symlink", "folder"], {"symlink"}))
def test_json_result_is_never_written_through_a_trap(toy, tmp_path, kind):
    target = tmp_path / "result.json"
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "symlink":
        (tmp_path / "elsewhere").write_text("untouched")
        target.symlink_to(tmp_path / "elsewhere")
    else:
        target.mkdir()
    proc = cli_grade(toy, write_variant(toy, f"trap-{kind}", break_q3), "--json", target)
    assert proc.returncode == 2
    assert "not a regular file" in proc.stderr and "Traceback" not in proc.stderr
    if kind == "symlink":
        assert (tmp_path / "elsewhere").read_text() == "untouched"
    if kind == "fifo":
        assert stat.S_ISFIFO(os.lstat(target).st_mode)


def test_json_result_in_unwritable_folder_is_one_line(toy, tmp_path):
    proc = cli_grade(toy, write_variant(toy, "unwritable", break_q3), "--json",
                     tmp_path / "no-such-folder" / "r.json")
    assert proc.returncode == 2 and "cannot write" in proc.stderr and "Traceback" not in proc.stderr


def test_terminal_escape_codes_never_reach_the_table(toy):
    def edit(cells):
        break_q3(cells)
        i = cell_with(cells, "def normalise")
        cells[i].source = ("def normalise(v):\n    raise ValueError('\\x1b[2J\\x1b[H\\u202equestion points\\n"
                           "q1 2 2 ok\\rtotal 6 6\\x07')")
    proc = cli_grade(toy, write_variant(toy, "escapes", edit))
    assert proc.returncode == 0, proc.stderr
    assert not any(ch in proc.stdout for ch in "\x1b\r\x07\u202e")
    assert re.search(r"total\s+2\s+6\n", proc.stdout)


@pytest.mark.full
def test_stdout_flood_is_bounded(toy):
    flood = "import sys\nchunk = 'x' * 2**20\nfor _ in range(1500):\n    sys.stdout.write(chunk)\n"
    path = hostile(toy, "flood", flood)
    proc = cli_grade(toy, path)
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"total\s+5\s+6\n", proc.stdout)
    maxrss_mib = int(proc.stderr.split("MAXRSS")[1].split()[0]) / 1024
    assert maxrss_mib < 400, f"the grader held {maxrss_mib:.0f} MiB"


def test_deeply_nested_answers_and_messages(toy):
    code = r'''
deep = []
for _ in range(100000):
    deep = [deep]
k = get_ipython().kernel
s = k.session
parts = [s.pack(s.msg_header("display_data")), s.pack(k.get_parent().get("header", {})),
         b"{}", b'{"data": ' + b"[" * 200000 + b"]" * 200000 + b"}"]
k.iopub_socket.send_multipart([b"<IDS|MSG>", s.sign(parts)] + parts)
top = deep
'''
    rep = grade(hostile(toy, "deep", code), toy)
    assert scores(rep) == {"q1": 2, "q2": 3, "q3": 0}, rep.table()


def test_safejson_refuses_deep_and_huge_payloads():
    with pytest.raises(safejson.PayloadError, match="deeper"):
        safejson.loads(b"[" * 100000 + b"]" * 100000, 10**7)
    with pytest.raises(safejson.PayloadError, match="larger"):
        safejson.loads(b"[" + b"1," * 10**6 + b"1]", 10**6)
    with pytest.raises(safejson.PayloadError):
        safejson.loads(b"1" * 5000, 10**6)  # an integer too long to parse
    with pytest.raises(safejson.PayloadError):
        safejson.decode({"ndarray": [1.0], "shape": [10**6, 10**6], "kind": "f"})
    with pytest.raises(safejson.PayloadError):
        safejson.decode({"__reduce__": "os.system"})


def test_feedback_reveals_no_reference_value_and_no_environment(toy, monkeypatch):
    monkeypatch.setenv(SECRET_ENV, "grader-only-value")
    code = "top = np.array([0.7, 0.7])\nraise_env = dict(os.environ)"
    def edit(cells):
        break_q3(cells)
        cells.insert(cell_with(cells, "top = V") + 1, new_code_cell(code))
        i = cell_with(cells, "def normalise")
        cells[i].source = "import os\ndef normalise(v):\n    raise KeyError(str(dict(os.environ)))"
    rep = grade(write_variant(toy, "leaks", edit), toy)
    text = json.dumps(rep.as_dict())
    assert "grader-only-value" not in text and SECRET_ENV not in text
    for shown in ("0.7071", "0.0434", "0.0435", "0.25", "0.75"):
        assert shown not in text, shown
    assert all(len(q.reason) <= report.MAX_REASON for q in rep.questions)


def test_the_instructor_names_the_assignment(toy):
    path = write_variant(toy, "claims-other", break_q3)
    nb = nbformat.read(path, as_version=4)
    nb.metadata["lecturelib"] = {"assignment": "01-bayes"}
    nbformat.write(nb, path)
    rep = grade(path, toy)
    assert rep.assignment == "toy" and rep.score == 5
    assert any("01-bayes" in note for note in rep.notes)
    proc = run_cli("grade", path, "--solutions", toy / "solutions")
    assert proc.returncode == 2 and "--assignment" in proc.stderr


@pytest.mark.parametrize("damage", ["metadata_not_a_dict", "non_string_tags", "lone_surrogate"])
def test_malformed_notebooks_end_in_one_line(toy, damage, tmp_path):
    path = write_variant(toy, f"malformed-{damage}", break_q3)
    raw = json.loads(path.read_text())
    if damage == "metadata_not_a_dict":
        raw["metadata"]["lecturelib"] = ["toy"]
    elif damage == "non_string_tags":
        raw["cells"][1]["metadata"]["tags"] = [3, None, {"a": 1}]
    path.write_text(json.dumps(raw))
    if damage == "lone_surrogate":
        path.write_text(path.read_text().replace("import numpy as np", "import numpy as np  # \\ud800"))
    proc = cli_grade(toy, path)
    assert "Traceback" not in proc.stderr
    if damage == "lone_surrogate":
        assert proc.returncode == 2 and "not valid Unicode" in proc.stderr
    elif damage == "non_string_tags":
        assert proc.returncode == 2 and "not a valid notebook" in proc.stderr
    else:
        assert proc.returncode == 0 and re.search(r"total\s+5\s+6\n", proc.stdout)


# ------------------------------------------------------------------- lying objects


def test_a_lying_object_earns_nothing_from_a_post_check(toy, tmp_path):
    """A check whose operation (here ``@``) the grader computes on plain data."""
    nb = toy_solution()
    nb.cells.append(grading_question := new_code_cell(
        "def gram_factor(A):\n    A = np.asarray(A, dtype=float)\n"
        "    # BEGIN SOLUTION\n    return np.linalg.cholesky(A)\n    # END SOLUTION"))
    grading_question.metadata["tags"] = ["question:q4"]
    grading_question.metadata["grading"] = {
        "points": 4, "checks": [{"expr": "gram_factor([[4.0, 2.0], [2.0, 3.0]])", "post": "value @ value.T"}]}
    (tmp_path / "solutions").mkdir()
    nbformat.write(nb, tmp_path / "solutions" / "toy4.ipynb")
    liar = ("class Liar:\n    shape = (2, 2)\n    T = property(lambda self: self)\n"
            "    def __matmul__(self, other): return np.array([[4.0, 2.0], [2.0, 3.0]])\n"
            "    __rmatmul__ = __matmul__\n    def __array__(self, *a, **k): return np.zeros((2, 2))\n"
            "    def __array_ufunc__(self, *a, **k): return np.array([[4.0, 2.0], [2.0, 3.0]])\n"
            "def gram_factor(A):\n    return Liar()")
    def edit(cells):
        cells[-1].source = liar
    path = write_variant(tmp_path, "liar", edit, nb)
    rep = grading.grade(path, assignment="toy4", solutions_dir=tmp_path / "solutions", cell_timeout=10)
    assert scores(rep)["q4"] == 0, rep.table()
    honest = grading.grade(tmp_path / "solutions" / "toy4.ipynb", assignment="toy4",
                           solutions_dir=tmp_path / "solutions", cell_timeout=10)
    assert honest.score == honest.total == 10


# ------------------------------------------------------------------- no sandbox


def test_without_bubblewrap_grading_refuses_and_names_the_package(toy, monkeypatch):
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: None)
    sandbox.sandbox_problem.cache_clear()
    try:
        with pytest.raises(grading.SandboxUnavailable, match="bubblewrap"):
            grade(write_variant(toy, "no-bwrap", break_q3), toy)
        rep = grade(write_variant(toy, "no-bwrap", break_q3), toy, sandbox=False)
        assert rep.score == 5 and any("not trustworthy" in n for n in rep.notes)
    finally:
        sandbox.sandbox_problem.cache_clear()


def test_cli_without_sandbox_says_the_score_is_not_trustworthy(toy, tmp_path):
    env = {**os.environ, "PATH": str(tmp_path)}  # no bwrap on PATH
    args = ["grade", str(write_variant(toy, "nosb", break_q3)), "--assignment", "toy",
            "--solutions", str(toy / "solutions")]
    proc = subprocess.run([sys.executable, "-m", "lecturelib.grading", *args],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 2 and "bubblewrap" in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    proc = subprocess.run([sys.executable, "-m", "lecturelib.grading", *args, "--no-sandbox"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0 and "not trustworthy" in proc.stderr
    assert re.search(r"total\s+5\s+6\n", proc.stdout)


def test_without_a_cgroup_the_watchdog_stops_a_fork_bomb(toy, monkeypatch):
    """Where no cgroup can be made (an unprivileged grader), the limits on the number of
    processes (RLIMIT_NPROC per user namespace, and the watchdog) still hold.  RLIMIT_NPROC
    holds for a root grader too: the sandbox's user is never host root, whom the kernel
    exempts from it, so the honest answers keep their points."""
    monkeypatch.setattr(sandbox.Cgroup, "create", classmethod(lambda cls, limits: None))
    code = ("import subprocess\nkids = []\nfor _ in range(400):\n    try:\n"
            "        kids.append(subprocess.Popen(['sleep', '60', 'TOKEN']))\n"
            "    except OSError:\n        break\nif len(kids) >= 300:\n    won()")
    start = time.monotonic()
    rep = grade(hostile(toy, "bomb-no-cgroup", code.replace("TOKEN", TOKEN)), toy)
    assert time.monotonic() - start < 120
    assert scores(rep) == {"q1": 2, "q2": 3, "q3": 0}, rep.table()
    time.sleep(1)
    assert survivors() == []

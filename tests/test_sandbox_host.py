"""The sandbox against the host (issue 33): kernel settings, host uid, system calls, the
result channel, files in the scratch space, and the grader's own budget for ``post``.

The hostile notebooks follow tests/test_sandbox.py: each answers q1 and q2 honestly and
gets q3 honestly wrong (5 of 6 points), then attacks; an attack that worked calls
``won()``, which sets the right answer to q3.
"""

from __future__ import annotations

import json
import os
import resource
import secrets
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import psutil
import pytest
from nbformat.v4 import new_code_cell

from gradingtools import break_q3, cell_with, toy_solution, write_variant
from lecturelib import grading
from lecturelib.grading.autograde import compare, sandbox
from lecturelib.grading.core import safejson

import nbformat

TOKEN = secrets.token_hex(8)

pytestmark = pytest.mark.skipif(
    not os.environ.get("CI") and sandbox.sandbox_problem() is not None,
    reason=f"no sandbox here: {sandbox.sandbox_problem()}")

PRELUDE = r'''
import os, sys, time, ctypes, errno
def won():
    global top
    top = np.array([0.70710678, 0.70710678])
'''


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    root = tmp_path_factory.mktemp("toy-host")
    (root / "solutions").mkdir()
    nbformat.write(toy_solution(), root / "solutions" / "toy.ipynb")
    return root


def hostile(toy, name, code):
    def edit(cells):
        break_q3(cells)
        cells.insert(cell_with(cells, "top = V") + 1, new_code_cell(PRELUDE + code))
    return write_variant(toy, name, edit)


def grade(path, toy, **kw):
    kw.setdefault("cell_timeout", 20)
    return grading.grade(path, assignment="toy", solutions_dir=toy / "solutions", **kw)


def scores(rep):
    return {q.id: q.points for q in rep.questions}


HONEST = {"q1": 2, "q2": 3, "q3": 0}
SYSCTLS = ("/proc/sys/kernel/core_pattern", "/proc/sys/vm/overcommit_memory")


def test_kernel_settings_cannot_be_opened_for_writing(toy):
    """Opening a sysctl for writing is the first step to code execution as host root
    (core_pattern); nothing is written, the open alone would score."""
    before = {path: open(path).read() for path in SYSCTLS}
    code = f"for path in {SYSCTLS!r}:\n" + (
        "    try:\n        os.close(os.open(path, os.O_WRONLY)); won()\n"
        "    except OSError:\n        pass")
    rep = grade(hostile(toy, "sysctl", code), toy)
    assert scores(rep) == HONEST, rep.table()
    assert {path: open(path).read() for path in SYSCTLS} == before


def test_refused_system_calls_fail_with_eperm(toy):
    """keyctl and io_uring_setup (x86-64 numbers; others are skipped) are refused by the
    seccomp filter with EPERM, whatever the kernel would have said."""
    if os.uname().machine != "x86_64":
        pytest.skip("the system call numbers below are x86-64's")
    code = r'''
libc = ctypes.CDLL(None, use_errno=True)
params = ctypes.create_string_buffer(120)
for number, args in ((250, (0, -3, 0)), (425, (1, params)), (323, (0,))):  # keyctl, io_uring_setup, userfaultfd
    ctypes.set_errno(0)
    if libc.syscall(number, *args) >= 0 or ctypes.get_errno() != errno.EPERM:
        won()
'''
    rep = grade(hostile(toy, "syscalls", code), toy)
    assert scores(rep) == HONEST, rep.table()


I386_GETPID = r'''
import ctypes, mmap
code = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
code.write(bytes([0xb8, 0x14, 0, 0, 0, 0xcd, 0x80, 0xc3]))  # mov eax, 20 (i386 getpid); int 0x80; ret
print(ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(code)))(), flush=True)
'''


def test_a_call_through_the_i386_abi_kills_the_process():
    """The 32-bit ABI has other system call numbers, which a filter written for x86-64
    would let through: libseccomp's filter kills the process instead (SIGSYS)."""
    if os.uname().machine != "x86_64":
        pytest.skip("the machine code below is x86's")
    command = [sys.executable, "-I", "-c", I386_GETPID]
    outside = subprocess.run(command, capture_output=True, text=True, timeout=60)
    if not outside.stdout.strip().isdigit():
        pytest.skip("this kernel has no i386 ABI to call through")
    with sandbox.sandbox_command(sandbox.Limits(), command) as (argv, fds):
        inside = subprocess.run(argv, pass_fds=fds, capture_output=True, text=True, timeout=60)
    assert inside.stdout == "" and inside.returncode == 128 + signal.SIGSYS, inside


def test_the_sandbox_user_is_never_host_root(toy):
    """Seen from outside: every process the notebook starts runs as a host uid that is
    not 0 (as root, the sandbox user; otherwise the grader's own uid)."""
    code = ("import subprocess\nchild = subprocess.Popen([sys.executable, '-c', "
            f"'import time; time.sleep(1.5)', '{TOKEN}'])\nchild.wait()")
    seen, stop = {}, threading.Event()

    def watch():
        while not stop.is_set():
            for proc in psutil.process_iter(["cmdline", "uids"]):
                if TOKEN in " ".join(proc.info["cmdline"] or []):
                    seen[proc.pid] = proc.info["uids"]
            time.sleep(0.1)
    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        rep = grade(hostile(toy, "host-uid", code), toy)
    finally:
        stop.set()
        watcher.join()
    assert scores(rep) == HONEST, rep.table()
    assert seen, "the notebook's process was never seen from outside"
    uids = {uid for ids in seen.values() for uid in ids}
    assert 0 not in uids, seen
    if os.geteuid() == 0:
        assert uids == {sandbox._sandbox_user()[0]}


FORGE = r'''
import json, signal
forged = json.dumps({"answers": {"q1": [{"ok": True, "value": 0.0434}],
                                 "q2": [{"ok": True, "value": {"ndarray": [0.25, 0.75], "shape": [2], "kind": "f"}},
                                        {"ok": True, "value": 0.0}],
                                 "q3": [{"ok": True, "value": {"ndarray": [0.70710678, 0.70710678], "shape": [2], "kind": "f"}}]},
                     "errors": {}, "skipped": []}).encode()
me = str(os.getpid())
for pid in os.listdir("/proc"):
    if not pid.isdigit() or pid == me:
        continue
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        continue
    for fd in fds:
        try:
            out = os.open(f"/proc/{pid}/fd/{fd}", os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            os.write(out, forged)
        except OSError:
            pass
        os.close(out)
'''


def test_only_the_driver_can_write_the_result_channel(toy):
    """A notebook that writes a forged result into every descriptor it can reach under
    /proc/*/fd scores exactly its honest answers (the driver is pid 1's child, both are
    non-dumpable, and nothing else holds the result pipe)."""
    rep = grade(hostile(toy, "forge", FORGE), toy)
    assert scores(rep) == HONEST, rep.table()


def test_millions_of_empty_files_are_stopped_without_a_cgroup(toy, monkeypatch):
    """Inodes in the sandbox's tmpfs cost kernel memory that no process is charged with;
    the watchdog counts them (statvfs through /proc/PID/root) and stops the run."""
    monkeypatch.setattr(sandbox.Cgroup, "create", classmethod(lambda cls, limits: None))
    code = ("os.makedirs('/tmp/many', exist_ok=True)\n"
            "for i in range(200000):\n    open(f'/tmp/many/{i}', 'w').close()\nwon()")
    limits = sandbox.Limits(cell_timeout=60, max_files=2000)
    start = time.monotonic()
    rep = grade(hostile(toy, "inodes", code), toy, limits=limits)
    assert time.monotonic() - start < 120
    assert rep.score == 0, rep.table()
    assert all(q.reason == "the notebook created more than 2000 files" for q in rep.questions), rep.table()


# ------------------------------------------------------------------ post in the grader


def test_a_post_that_would_allocate_gigabytes_fails_that_check_only():
    """``post`` runs in a child process with an address-space budget: a value-dependent
    allocation (``np.ones(int(value))``, 2 GiB here) fails that check with a fixed reason,
    and the grader's own memory does not grow."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB
    with pytest.raises(compare.Mismatch, match="^" + compare.POST_OVER_BUDGET + "$"):
        compare.post_both("np.ones(int(value))", float(2**28), 3.0)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak < 2**19
    got, want = compare.post_both("value @ value.T", np.eye(3) * 2, np.eye(3))
    np.testing.assert_array_equal(got, 4 * np.eye(3))
    np.testing.assert_array_equal(want, np.eye(3))


def test_a_post_that_runs_too_long_fails_that_check_only(monkeypatch):
    monkeypatch.setattr(compare, "POST_TIMEOUT", 1.0)
    start = time.monotonic()
    with pytest.raises(compare.Mismatch, match="^" + compare.POST_OVER_BUDGET + "$"):
        compare.post_both("sum(range(int(value)))", float(10**12), 3.0)
    assert time.monotonic() - start < 30


# ------------------------------------------------------------------ the parse in the grader


def test_the_parse_of_a_notebooks_answers_runs_within_a_budget(monkeypatch):
    """The driver's output is parsed in a forked child with an address-space and a time
    budget (:mod:`lecturelib.grading.autograde.budget`): past either, every question says so in the
    grader's words, and the grader's own memory does not grow.  Within it, the same
    answers as a parse in the process."""
    from lecturelib.grading.autograde import answers, budget

    exprs = {"q1": ["a"], "q2": ["b"]}
    values = list(range(100_000))
    array = {"ndarray": values, "shape": [len(values)], "kind": "f"}
    output = json.dumps({"answers": {"q1": [{"ok": True, "value": array}],
                                     "q2": [{"ok": True, "value": 2.5}]}}).encode()
    limits = sandbox.Limits()
    run = answers.run_from_outcome(sandbox.Outcome(output), exprs, 3, limits)
    direct = answers.parse_output(output, exprs, 3, limits)
    assert run.question_errors == direct.question_errors == {}
    assert run.answers["q2"][0].value == 2.5
    np.testing.assert_array_equal(run.answers["q1"][0].value, direct.answers["q1"][0].value)
    # The budget itself: 512 MiB asked for in a child allowed 16 MiB more (a fresh
    # mapping, which no memory the grader freed earlier can serve), and a child past its time.
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert isinstance(budget.run_in_budget(np.ones, 2**26, memory_mb=16, timeout=30),
                      budget.OverBudget)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak < 2**17  # KiB
    assert isinstance(budget.run_in_budget(time.sleep, 5, memory_mb=16, timeout=0.2),
                      budget.OverBudget)
    # ... and the parse goes through it: a parse that needs more, or takes longer, than its
    # budget leaves every question with the grader's reason.
    monkeypatch.setattr(answers, "parse_output", lambda *args: np.ones(2**26))
    monkeypatch.setattr(answers, "PARSE_MEMORY_MB", 16)
    run = answers.run_from_outcome(sandbox.Outcome(output), exprs, 3, limits)
    assert run.answers == {} and set(run.question_errors.values()) == {answers.PARSE_OVER_BUDGET}
    monkeypatch.setattr(answers, "parse_output", lambda *args: time.sleep(5))
    monkeypatch.setattr(answers, "PARSE_TIMEOUT", 0.2)
    run = answers.run_from_outcome(sandbox.Outcome(output), exprs, 3, limits)
    assert set(run.question_errors.values()) == {answers.PARSE_OVER_BUDGET}


def test_a_post_error_is_still_the_wrong_form():
    with pytest.raises(compare.Mismatch, match=compare.WRONG_SHAPE):
        compare.post_both("value @ value.T", np.ones((2, 0)), np.ones((2, 2)))
    with pytest.raises(ZeroDivisionError):
        compare.post_both("1 / value", 0.0, 2.0)


# ------------------------------------------------------------------ the parser is linear


def _payloads(n: int) -> dict[str, bytes]:
    """Worst cases for a JSON pre-scan and parser, each about ``n`` bytes."""
    return {
        "unclosed_string": b'{"answers": "' + b"a" * n,
        "escapes_in_unclosed_string": b'["' + b'\\"\\\\' * (n // 4),
        "unclosed_brackets": b"[" * n,
        "many_small_containers": b"[" + b"[]," * (n // 3) + b"[]]",
        "many_strings": b"[" + b'"",' * (n // 3) + b'""]',
        "commas_in_a_string": b'["' + b"," * n + b'"]',
    }


def _parse_time(data: bytes) -> float:
    start = time.perf_counter()
    try:
        safejson.loads(data, 64 * 2**20)
    except safejson.PayloadError:
        pass
    return time.perf_counter() - start


@pytest.mark.full
def test_the_parser_is_linear_on_worst_case_payloads():
    """48 MiB (the output cap) of each worst case takes at most 20 times as long as 6 MiB
    of it: a linear parser takes 8 times, a quadratic one 64 times."""
    small, large = _payloads(6 * 2**20), _payloads(48 * 2**20)
    for name in small:
        t_small, t_large = _parse_time(small[name]), _parse_time(large[name])
        assert t_large <= 20 * t_small + 0.05, (name, t_small, t_large)

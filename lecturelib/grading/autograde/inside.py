"""The grading driver: runs one notebook *inside* the sandbox and prints its answers.

This file is executed as a script by the sandbox (``python -I inside.py``); the grader never
imports it.  It reads one job as JSON on standard input::

    {"cells": ["source", ...],
     "questions": [{"id": "q1", "exprs": ["expr", ...]}, ...],
     "limits": {"cell_timeout": s, "total_timeout": s, "memory_mb": n,
                "max_processes": n, "file_mb": n},
     "cell_timeouts": [s, ...], "check_timeouts": {"q1": s}}   (both optional)

sets resource limits on itself and therefore on every process it starts, runs the cells in
a fresh IPython kernel (skipping, and reporting, a cell that kills the kernel or runs too
long, then running the notebook again without it), evaluates each question's expressions
in the kernel, and writes one JSON document to its standard output::

    {"answers": {"q1": [{"ok": true, "value": ...}
                        | {"ok": false, "error": "ValueError" | null, "unsupported": true}]},
     "errors": {"q2": "timeout" | "crash" | "unreadable" | "total_timeout"},
     "skipped": [[code_cell_index, "timeout" | "crash"]],
     "raised": [[code_cell_index, "ExceptionName"]],
     "seconds": {"cells": [[code_cell_index, s]], "checks": {"q1": s}}}

A cell's time limit is its entry of ``cell_timeouts`` (the grader sets it from the
solution's own time for that cell), else ``cell_timeout``; a question's checks get their
entry of ``check_timeouts``.  ``raised`` lists the first cells that raised an exception,
``seconds`` how long each cell and each question's checks took.

In the sandbox this script is pid 1 (bubblewrap ``--as-pid-1``): it makes itself
non-dumpable, forks the driver proper, and stays as the init that reaps orphans while
holding only ``/dev/null``.  The driver is non-dumpable too and keeps the result pipe in a
descriptor no child inherits, so no process the notebook starts can open it through
``/proc/PID/fd``.

Nothing here is trusted by the grader: the student's code runs in the same sandbox and may
change what the kernel reports to the driver.  It can only ever change the student's own
answers, which the grader decodes as plain data and compares with the solution's in its
own process.
"""

import json
import os
import queue
import resource
import sys
import time

MARKER = "@@lecturelib-answer@@"
MAX_ANSWER_CHARS = 4_000_000
MAX_MESSAGE_BYTES = 64 * 2**20
MAX_RAISED = 5  # cells that raised, reported

# Defined in the kernel after the notebook ran.  It turns each value into the plain JSON
# schema of lecturelib.grading.core.safejson; anything else is refused.
EXTRACT = r'''
def __lecturelib_extract(exprs, marker, namespace):
    import json, numbers
    import numpy

    def enc(v, depth=0):
        if depth > 30:
            raise TypeError("the answer is nested too deeply")
        if v is None or isinstance(v, (bool, str)):
            return v
        if isinstance(v, numpy.bool_):
            return bool(v)
        if isinstance(v, numbers.Integral):
            return int(v) if abs(int(v)) < 2**63 else float(v)
        if isinstance(v, numbers.Real):
            return float(v)
        if isinstance(v, numbers.Complex):
            return {"complex": [float(v.real), float(v.imag)]}
        if isinstance(v, numpy.ndarray):
            kind = v.dtype.kind
            if kind in "biuf":
                return {"ndarray": v.astype(float).ravel().tolist(), "shape": list(v.shape), "kind": kind}
            if kind == "c":
                return {"ndarray": v.real.astype(float).ravel().tolist(), "shape": list(v.shape),
                        "imag": v.imag.astype(float).ravel().tolist(), "kind": "c"}
            return {"list": [enc(x, depth + 1) for x in v.tolist()]}
        if isinstance(v, (set, frozenset)):
            return {"set": [enc(x, depth + 1) for x in v]}
        if isinstance(v, (list, tuple)):
            return {"list": [enc(x, depth + 1) for x in v]}
        if isinstance(v, dict):
            return {"dict": [[str(k), enc(x, depth + 1)] for k, x in v.items()]}
        raise TypeError(f"an answer of type {type(v).__name__} cannot be graded")

    def builtin_name(cls):
        # The first builtin exception class in cls's MRO: the grader reports a raising check
        # by this name only (and checks it again); no message, no student-chosen name.
        import builtins
        try:
            for base in cls.__mro__:
                if vars(builtins).get(base.__name__) is base:
                    return base.__name__
        except Exception:
            pass
        return None

    results = []
    for expr in exprs:
        try:
            value = eval(expr, namespace)
        except BaseException as exc:
            results.append({"ok": False, "error": builtin_name(type(exc))})
            continue
        try:
            results.append({"ok": True, "value": enc(value)})
        except BaseException:
            results.append({"ok": False, "error": None, "unsupported": True})
    print(marker + json.dumps(results), flush=True)
'''


def set_limits(limits):
    """Resource limits inherited by every process started from here on."""
    mib = 2**20
    for name, value in (("RLIMIT_CORE", 0),
                        ("RLIMIT_AS", limits["memory_mb"] * mib),
                        ("RLIMIT_FSIZE", limits["file_mb"] * mib),
                        ("RLIMIT_NPROC", limits["max_processes"]),
                        ("RLIMIT_NOFILE", 1024),
                        ("RLIMIT_CPU", int(limits["total_timeout"]) + 60)):
        resource.setrlimit(getattr(resource, name), (value, value))


class Kernel:
    """One IPython kernel; each ``execute`` waits for it to finish, die or time out."""

    def __init__(self, deadline):
        import zmq
        from jupyter_client.manager import KernelManager

        self.deadline = deadline
        self.km = KernelManager(kernel_name="python3")
        self.km.start_kernel(cwd=os.getcwd(), env=dict(os.environ), stdin=open(os.devnull),
                             stdout=open(os.devnull, "w"), stderr=open(os.devnull, "w"))
        self.kc = self.km.client()
        self.kc.start_channels()
        for channel in (self.kc.iopub_channel, self.kc.shell_channel):
            channel.socket.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE_BYTES)
        self.kc.wait_for_ready(timeout=max(5, min(120, deadline - time.monotonic())))

    def execute(self, code, timeout, capture=False):
        """Run ``code``; return (stdout text if ``capture``, None) or (None, "timeout"/"crash").
        ``self.raised`` is then the name of the exception the code raised, or ``None``."""
        msg_id = self.kc.execute(code, store_history=False, allow_stdin=False)
        end = min(time.monotonic() + timeout, self.deadline)
        captured, size = [], 0
        self.raised = None
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return None, "total_timeout" if end >= self.deadline else "timeout"
            try:
                msg = self.kc.get_iopub_msg(timeout=min(left, 0.5))
            except queue.Empty:
                if not self.km.is_alive():
                    return None, "crash"
                continue
            except (ValueError, RecursionError, MemoryError):  # a message that cannot be read
                continue
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind, content = msg.get("msg_type"), msg.get("content", {})
            if kind == "error" and self.raised is None:
                self.raised = str(content.get("ename", ""))[:100]
            if capture and kind == "stream" and content.get("name") == "stdout":
                size += len(content.get("text", ""))
                if size <= MAX_ANSWER_CHARS:
                    captured.append(content.get("text", ""))
            elif kind == "status" and content.get("execution_state") == "idle":
                return "".join(captured), None

    def stop(self):
        try:
            self.kc.stop_channels()
            self.km.shutdown_kernel(now=True)
        except Exception:  # the kernel may be gone already
            pass


def read_answers(text):
    lines = [ln for ln in (text or "").splitlines() if ln.startswith(MARKER)]
    if not lines:
        return None
    try:
        payload = json.loads(lines[-1][len(MARKER):])
    except (ValueError, RecursionError):
        return None
    return payload if isinstance(payload, list) else None


def _timeouts(job, limits):
    """Each cell's time limit and each question's, from the job or the one default."""
    default = limits["cell_timeout"]
    cells = job.get("cell_timeouts")
    if not (isinstance(cells, list) and len(cells) == len(job["cells"])
            and all(isinstance(s, (int, float)) and s > 0 for s in cells)):
        cells = [default] * len(job["cells"])
    checks = job.get("check_timeouts")
    checks = checks if isinstance(checks, dict) else {}
    return cells, {q: s if isinstance(s, (int, float)) and s > 0 else default
                   for q, s in checks.items()}


def run(job):
    limits = job["limits"]
    deadline = time.monotonic() + limits["total_timeout"]
    cells, questions = job["cells"], list(job["questions"])
    cell_timeouts, check_timeouts = _timeouts(job, limits)
    skipped, answers, errors = {}, {}, {}
    raised, cell_seconds, check_seconds = {}, {}, {}
    kernel, needs_run = None, True
    try:
        while questions:
            if needs_run:
                needs_run, restart = False, True
                while restart:  # run from scratch without the cells that killed the kernel
                    restart = False
                    if kernel is not None:
                        kernel.stop()
                    kernel = Kernel(deadline)
                    for index, source in enumerate(cells):
                        if index in skipped:
                            continue
                        start = time.monotonic()
                        _, lost = kernel.execute(source, cell_timeouts[index])
                        cell_seconds[index] = round(time.monotonic() - start, 3)
                        if lost == "total_timeout":
                            raise TimeoutError
                        if lost:
                            skipped[index], restart = lost, True
                            break
                        if kernel.raised is not None and len(raised) < MAX_RAISED:
                            raised.setdefault(index, kernel.raised)
                kernel.execute(EXTRACT, limits["cell_timeout"])
            question = questions.pop(0)
            call = f"__lecturelib_extract({question['exprs']!r}, {MARKER!r}, globals())"
            start = time.monotonic()
            text, lost = kernel.execute(call, check_timeouts.get(question["id"], limits["cell_timeout"]),
                                        capture=True)
            check_seconds[question["id"]] = round(time.monotonic() - start, 3)
            if lost == "total_timeout":
                questions.insert(0, question)
                raise TimeoutError
            if lost:
                errors[question["id"]], needs_run = lost, True
                continue
            payload = read_answers(text)
            if payload is None or len(payload) != len(question["exprs"]):
                errors[question["id"]] = "unreadable"
            else:
                answers[question["id"]] = payload
    except TimeoutError:
        for question in questions:
            errors.setdefault(question["id"], "total_timeout")
    finally:
        if kernel is not None:
            kernel.stop()
    return {"answers": answers, "errors": errors, "skipped": sorted(skipped.items()),
            "raised": sorted(raised.items()),
            "seconds": {"cells": sorted(cell_seconds.items()), "checks": check_seconds}}


def make_undumpable():
    """Keep other processes of the sandbox out of this one's memory and file descriptors."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
    except (OSError, AttributeError):
        pass


def reap_until(driver):
    """The sandbox's init (pid 1): hold nothing of the job or the result channel, reap every
    process that ends up here, and exit with the driver's status once it has ended (which
    ends every other process of the sandbox with it)."""
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            os._exit(1)
        except InterruptedError:
            continue
        if pid == driver:
            code = os.waitstatus_to_exitcode(status)
            os._exit(code if code >= 0 else 128 - code)


def main():
    make_undumpable()
    if os.getpid() == 1:  # bubblewrap --as-pid-1: become the init, run the driver below it
        driver = os.fork()
        if driver:
            reap_until(driver)
    job = json.loads(sys.stdin.buffer.read())
    result_fd = os.dup(1)  # not inheritable: the kernel never gets the result pipe
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    set_limits(job["limits"])
    result = run(job)
    data = json.dumps(result).encode()
    view = memoryview(data)
    while view:
        view = view[os.write(result_fd, view):]
    os.close(result_fd)


if __name__ == "__main__":
    main()

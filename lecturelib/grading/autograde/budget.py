"""Computing on a notebook's decoded answers within a memory and a time budget.

The grader's process never runs student code, but it does compute with what a notebook
sent back: it parses the driver's output and applies a check's ``post`` operation to the
decoded values.  Both are bounded by construction (a size cap, a linear parser, a shape
check before ``post``); this module adds a budget that holds whatever the values are: the
work runs in a forked child of the grader, limited in address space and time, and only
its result comes back.  A child that runs out of either is killed, and the grader's own
process never holds its allocation.
"""

from __future__ import annotations

import os
import pickle
import resource
import select
import signal
import time

import psutil


class OverBudget(Exception):
    """The computation needed more memory or time than its budget."""


def run_in_budget(function, *args, memory_mb: int, timeout: float):
    """``function(*args)`` in a forked child with ``memory_mb`` more address space than
    the grader has now and ``timeout`` seconds: its value, or the exception it raised
    (returned, not raised), or :class:`OverBudget` (returned) when it ran out.

    The value travels back pickled from the grader's own child, which only ever computed
    with plain data (nothing of a notebook's code runs in it).
    """
    address_space = psutil.Process().memory_info().vms + memory_mb * 2**20
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: compute, send, and leave without running any cleanup
        status = 1
        try:
            os.close(read_end)
            soft, hard = resource.getrlimit(resource.RLIMIT_AS)
            limit = address_space if hard == resource.RLIM_INFINITY else min(address_space, hard)
            resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
            try:
                result = function(*args)
            except MemoryError:
                result = OverBudget()
            except Exception as exc:  # noqa: BLE001 -- handed to the parent as it is
                result = exc
            try:
                data = pickle.dumps(result)
            except Exception:  # noqa: BLE001 -- an exception that does not pickle
                data = pickle.dumps(RuntimeError("the computation failed"))
            with os.fdopen(write_end, "wb") as out:
                out.write(data)
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    chunks, deadline = [], time.monotonic() + timeout
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([read_end], [], [], left)[0]:
                os.kill(pid, signal.SIGKILL)
                return OverBudget()
            chunk = os.read(read_end, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read_end)
        os.waitpid(pid, 0)
    try:
        return pickle.loads(b"".join(chunks))
    except Exception:  # noqa: BLE001 -- the child died before it had sent everything
        return OverBudget()

"""The OS sandbox every graded notebook runs in (bubblewrap), and its resource limits.

What the sandbox is (see README, "Grading: the threat model"):

- new user, PID, IPC, UTS, cgroup and network namespaces (no network at all), an
  unprivileged user inside, no capabilities, no further user namespaces, a new terminal
  session (no TIOCSTI), killed with its parent;
- a file system made of the system (``/usr`` and the interpreter) and the course's Python
  environment, read-only, and ``lecturelib`` itself, read-only; a fresh, size-limited
  ``/tmp`` (working directory and home) and ``/dev/shm``; its own ``/proc`` and ``/dev``.
  The course tree, the solutions, other submissions, ``.git`` and the grader's
  environment variables are not there;
- limits that hold for every process started in it: address space, file size, core
  dumps and open files (rlimits set before any student code runs), the number of
  processes (RLIMIT_NPROC, which the kernel counts per user namespace), and wall-clock
  time; total memory and process count are also watched from outside, and, where the
  grader may create cgroups (running as root), enforced by a cgroup.

The grader reads at most ``Limits.output_mb`` of the driver's output and nothing else.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import psutil

from .notebook import GradingError

INSIDE = Path(__file__).with_name("inside.py")
PACKAGE_DIR = Path(__file__).resolve().parent.parent  # the lecturelib package
SANDBOX_LIB = "/opt/lecturelib"  # where lecturelib is mounted in the sandbox
HOME = "/tmp/home"
WORKDIR = "/tmp/work"
INSTALL_HINT = ("install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; "
                "Fedora: dnf install bubblewrap)")


class SandboxUnavailable(GradingError):
    """bubblewrap is missing, or this machine does not allow the namespaces it needs."""


@dataclasses.dataclass(frozen=True)
class Limits:
    """Resource limits of one notebook run (seconds and MiB)."""

    cell_timeout: int = 60
    total_timeout: int = 600
    memory_mb: int = 4096
    max_processes: int = 64
    file_mb: int = 64
    scratch_mb: int = 256
    output_mb: int = 48

    def __post_init__(self):
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise GradingError(f"limit {field.name} must be a positive integer, got {value!r}")

    def for_driver(self) -> dict:
        return {k: getattr(self, k) for k in
                ("cell_timeout", "total_timeout", "memory_mb", "max_processes", "file_mb")}


@dataclasses.dataclass
class Outcome:
    """What came back from one run: the driver's output, or why there is none."""

    output: bytes | None
    failure: str | None = None


def sandbox_environment(home: str = HOME, pythonpath: str = SANDBOX_LIB) -> dict[str, str]:
    """The only environment variables the notebook sees (nothing of the grader's)."""
    threads = {v: "1" for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    return {
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "HOME": home, "USER": "student", "LOGNAME": "student", "LANG": "C.UTF-8",
        "PYTHONPATH": pythonpath, "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1",
        "MPLBACKEND": "Agg", "MPLCONFIGDIR": f"{home}/.matplotlib",
        "JUPYTER_RUNTIME_DIR": f"{home}/.jupyter-runtime", "IPYTHONDIR": f"{home}/.ipython",
        **threads,
    }


def _system_mounts() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    args += ["--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    # The interpreter and the environment, read-only, at the paths they have here.
    roots = {os.path.realpath(sys.base_prefix), sys.prefix, os.path.realpath(sys.prefix),
             os.path.dirname(os.path.realpath(sys.executable))}
    for root in sorted(roots):
        if not root.startswith("/usr/"):
            args += ["--ro-bind", root, root]
    return args


def bwrap_arguments(limits: Limits) -> list[str]:
    """The bubblewrap command line (without the command) for one notebook run."""
    mib = 2**20
    args = ["--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
            "--new-session", "--uid", "1000", "--gid", "1000", "--hostname", "sandbox",
            "--cap-drop", "ALL", "--clearenv"]
    # The scratch file systems first: an environment that lives under /tmp (a course
    # checked out there) is then bound on top of the fresh /tmp, not hidden by it.
    args += ["--proc", "/proc", "--dev", "/dev",
             "--size", str(limits.scratch_mb * mib), "--tmpfs", "/tmp",
             "--size", str(min(limits.scratch_mb, 64) * mib), "--tmpfs", "/dev/shm"]
    args += _system_mounts()
    args += ["--ro-bind", str(PACKAGE_DIR), f"{SANDBOX_LIB}/lecturelib",
             "--dir", HOME, "--dir", WORKDIR, "--chdir", WORKDIR]
    for name, value in sandbox_environment().items():
        args += ["--setenv", name, value]
    return args


def driver_command() -> list[str]:
    return [sys.executable, "-I", "-B", f"{SANDBOX_LIB}/lecturelib/grading/{INSIDE.name}"]


@functools.lru_cache(maxsize=None)
def sandbox_problem() -> str | None:
    """``None`` if bubblewrap works here, else a one-line explanation."""
    if not sys.platform.startswith("linux"):
        return f"the grading sandbox needs Linux (this is {sys.platform})"
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return f"the grading sandbox needs bubblewrap, which is not installed: {INSTALL_HINT}"
    probe = subprocess.run([bwrap, *bwrap_arguments(Limits()), "--", sys.executable, "-I", "-c", "0"],
                           capture_output=True, text=True, timeout=60)
    if probe.returncode != 0:
        detail = (probe.stderr.strip().splitlines() or ["no message"])[-1][:200]
        return ("bubblewrap cannot create the sandbox here (user namespaces may be disabled, as in "
                f"some containers): {detail}")
    return None


def require_sandbox() -> None:
    problem = sandbox_problem()
    if problem:
        raise SandboxUnavailable(problem + ". To check your own work without it, use --no-sandbox "
                                 "(the score is then not trustworthy).")


# --------------------------------------------------------------------------------------
# cgroups: a hard cap on memory and processes where the grader may create them
# --------------------------------------------------------------------------------------


class Cgroup:
    """A cgroup (v2, or v1 ``memory`` and ``pids``) holding every process of one run."""

    ROOT = Path("/sys/fs/cgroup")

    def __init__(self, dirs):
        self.dirs = dirs

    @classmethod
    def create(cls, limits: Limits) -> "Cgroup | None":
        if os.geteuid() != 0:
            return None  # unprivileged: RLIMIT_NPROC per user namespace and the watchdog
        name = f"lecturelib-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        memory, pids = str(limits.memory_mb * 2**20), str(limits.max_processes)
        settings = {}
        if (cls.ROOT / "cgroup.controllers").is_file():  # v2 (memory.swap.max only with swap)
            settings[cls.ROOT / name] = {"memory.max": memory, "pids.max": pids, "memory.swap.max?": "0"}
        elif (cls.ROOT / "memory").is_dir() and (cls.ROOT / "pids").is_dir():  # v1
            settings[cls.ROOT / "memory" / name] = {"memory.limit_in_bytes": memory}
            settings[cls.ROOT / "pids" / name] = {"pids.max": pids}
        else:
            return None
        group = cls([])
        try:
            for path, values in settings.items():
                path.mkdir()
                group.dirs.append(path)
                for key, value in values.items():
                    optional, key = key.endswith("?"), key.rstrip("?")
                    if not (optional and not (path / key).exists()):
                        (path / key).write_text(value)
        except OSError:
            group.remove()
            return None
        return group

    def wrap(self, argv: list[str]) -> list[str]:
        """``argv`` started from a shell that first moves itself into this cgroup."""
        procs = [str(d / "cgroup.procs") for d in self.dirs]
        script = 'for f in "$@"; do [ "$f" = -- ] && break; echo $$ > "$f" || exit 125; shift; done; shift; exec "$@"'
        return ["/bin/sh", "-c", script, "sh", *procs, "--", *argv]

    def remove(self):
        for path in self.dirs:
            for _ in range(50):
                try:
                    pids = (path / "cgroup.procs").read_text().split()
                except OSError:
                    pids = []
                for pid in pids:
                    try:
                        os.kill(int(pid), signal.SIGKILL)
                    except (OSError, ValueError):
                        pass
                try:
                    path.rmdir()
                    break
                except OSError:
                    time.sleep(0.1)


# --------------------------------------------------------------------------------------
# Running the driver
# --------------------------------------------------------------------------------------


def _tree(process: psutil.Process) -> list[psutil.Process]:
    try:
        return [process, *process.children(recursive=True)]
    except psutil.Error:
        return []


def _memory_and_count(process: psutil.Process) -> tuple[int, int]:
    """Proportional set size of the whole tree (shared pages counted once) and its size."""
    total, procs = 0, _tree(process)
    for p in procs:
        try:
            total += p.memory_full_info().pss
        except (psutil.Error, AttributeError):
            pass
    return total, len(procs)


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass


def run_driver(job: bytes, limits: Limits, *, sandbox: bool = True) -> Outcome:
    """Run the driver on ``job`` (in the sandbox unless ``sandbox=False``); return its output.

    The run is killed, and an :class:`Outcome` with ``failure`` returned, when it passes
    ``total_timeout`` (plus a grace period), its processes together use more than
    ``memory_mb`` or number more than ``max_processes``, or it writes more than
    ``output_mb``.
    """
    if not sandbox:
        with tempfile.TemporaryDirectory(prefix="lecturelib-grade-") as scratch:
            argv = [sys.executable, "-I", "-B", str(INSIDE)]
            env = sandbox_environment(home=scratch, pythonpath=str(PACKAGE_DIR.parent))
            return _supervise(argv, env, scratch, job, limits, watch=True)
    require_sandbox()
    argv = [shutil.which("bwrap"), *bwrap_arguments(limits), "--", *driver_command()]
    cgroup = Cgroup.create(limits)
    try:
        if cgroup is not None:
            argv = cgroup.wrap(argv)
        return _supervise(argv, {"PATH": "/usr/bin:/bin"}, "/", job, limits, watch=cgroup is None)
    finally:
        if cgroup is not None:
            cgroup.remove()


def _feed(stream, pending: memoryview) -> memoryview:
    """Write what the pipe takes now; an empty view when done or the reader is gone."""
    try:
        return pending[os.write(stream.fileno(), pending):]
    except BlockingIOError:
        return pending
    except BrokenPipeError:
        return pending[:0]


def _supervise(argv, env, cwd, job: bytes, limits: Limits, watch: bool) -> Outcome:
    """Feed the job, read the answers with a cap, enforce the time limit, and without a
    cgroup (``watch``) the limits on total memory and the number of processes."""
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env, cwd=cwd, start_new_session=True)
    watched = psutil.Process(proc.pid)
    deadline = time.monotonic() + limits.total_timeout + 60
    cap = limits.output_mb * 2**20
    chunks, size, failure = [], 0, None
    pending = memoryview(job)
    os.set_blocking(proc.stdin.fileno(), False)
    os.set_blocking(proc.stdout.fileno(), False)
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    sel.register(proc.stdin, selectors.EVENT_WRITE)
    next_watch = 0.0
    try:
        while sel.get_map():
            now = time.monotonic()
            if now > deadline:
                failure = f"the notebook ran past its time limit of {limits.total_timeout} s"
                break
            if watch and now >= next_watch:
                memory, count = _memory_and_count(watched)
                if memory > limits.memory_mb * 2**20:
                    failure = f"the notebook's processes used more than {limits.memory_mb} MiB together"
                    break
                if count > limits.max_processes + 4:
                    failure = f"the notebook started more than {limits.max_processes} processes"
                    break
                next_watch = now + 0.2
            for key, _ in sel.select(timeout=0.2):
                if key.fileobj is proc.stdin:
                    pending = _feed(proc.stdin, pending)
                    if not pending:
                        sel.unregister(proc.stdin)
                        proc.stdin.close()
                    continue
                data = os.read(proc.stdout.fileno(), 1 << 16)
                if not data:
                    sel.unregister(proc.stdout)
                    continue
                size += len(data)
                if size > cap:
                    failure = f"the notebook wrote more than {limits.output_mb} MiB of answers"
                    break
                chunks.append(data)
            if failure:
                break
    finally:
        sel.close()
        _kill(proc)
        proc.wait()
        for stream in (proc.stdin, proc.stdout):
            if not stream.closed:
                stream.close()
    if failure:
        return Outcome(None, failure)
    output = b"".join(chunks)
    if proc.returncode not in (0, -signal.SIGKILL) and not output:
        return Outcome(None, "the grading driver could not run the notebook "
                             f"(exit status {proc.returncode})")
    return Outcome(output or None, None if output else "the notebook produced no answers")

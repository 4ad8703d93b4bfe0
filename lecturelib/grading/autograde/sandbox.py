"""The OS sandbox every graded notebook runs in (bubblewrap), and its resource limits.

What the sandbox is (see README, "Grading: the threat model"):

- new user, PID, IPC, UTS, cgroup and network namespaces (no network at all), an
  unprivileged user inside, no capabilities, no further user namespaces, a new terminal
  session (no TIOCSTI), killed with its parent;
- never host root: when the grader runs as root, bubblewrap is started as the unprivileged
  system user ``lecturelib-sandbox`` (created if absent), so uid 1000 inside is that user
  outside, and kernel settings under ``/proc/sys`` are mounted read-only in any case;
- a seccomp filter (libseccomp, through ``pyseccomp``) that refuses with EPERM the system
  calls a notebook never needs and that widen the kernel's attack surface (keyrings, bpf,
  perf events, userfaultfd, ptrace, mounts, namespaces, io_uring, module loading, ...);
- a file system made of the system (``/usr`` and the interpreter) and the course's Python
  environment, read-only, and ``lecturelib`` itself, read-only; a fresh, size-limited
  ``/tmp`` (working directory and home) and ``/dev/shm``; its own ``/proc`` and ``/dev``.
  The course tree, the solutions, other submissions, ``.git`` and the grader's
  environment variables are not there;
- limits that hold for every process started in it: address space, file size, core
  dumps and open files (rlimits set before any student code runs), the number of
  processes (RLIMIT_NPROC, which the kernel counts per user namespace), and wall-clock
  time; total memory, the process count and the number of files in the scratch file
  systems are also watched from outside, and, where the grader may create cgroups
  (running as root), memory and processes are enforced by a cgroup.

The driver is the sandbox's pid 1 (``--as-pid-1``): it makes itself non-dumpable and
forks the process that runs the notebook, so no process in the sandbox but the driver
holds the result pipe.  The grader reads at most ``Limits.output_mb`` of the driver's
output and nothing else.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import functools
import os
import pwd
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

from ..core.notebook import GradingError

INSIDE = Path(__file__).resolve().with_name("inside.py")
PACKAGE_DIR = Path(__file__).resolve().parents[2]  # the lecturelib package
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
    max_files: int = 50_000

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


def _bound_directories() -> list[str]:
    """The host directories bound read-only into the sandbox besides the system's: the
    interpreter and the environment (at the paths they have here) and ``lecturelib``."""
    roots = {os.path.realpath(sys.base_prefix), sys.prefix, os.path.realpath(sys.prefix),
             os.path.dirname(os.path.realpath(sys.executable))}
    return [root for root in sorted(roots) if not root.startswith("/usr/")] + [str(PACKAGE_DIR)]


def _system_mounts(stage: dict[str, str]) -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    args += ["--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    for root in _bound_directories()[:-1]:
        args += ["--ro-bind", stage.get(root, root), root]
    return args


def bwrap_arguments(limits: Limits, stage: dict[str, str] | None = None,
                    seccomp_fd: int | None = None) -> list[str]:
    """The bubblewrap command line (without the command) for one notebook run.

    ``stage`` maps a bound host directory to the path bubblewrap reads it from (see
    :func:`sandbox_command`); ``seccomp_fd`` is an open file holding the filter.
    """
    mib = 2**20
    stage = stage or {}
    args = ["--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
            "--new-session", "--as-pid-1", "--uid", "1000", "--gid", "1000",
            "--hostname", "sandbox", "--cap-drop", "ALL", "--clearenv"]
    # The scratch file systems first: an environment that lives under /tmp (a course
    # checked out there) is then bound on top of the fresh /tmp, not hidden by it.
    # /proc/sys is bound read-only over the fresh /proc: kernel settings are checked by
    # uid only, and bubblewrap leaves that directory writable to a root-owned sandbox.
    args += ["--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys", "--dev", "/dev",
             "--size", str(limits.scratch_mb * mib), "--tmpfs", "/tmp",
             "--size", str(min(limits.scratch_mb, 64) * mib), "--tmpfs", "/dev/shm"]
    args += _system_mounts(stage)
    args += ["--ro-bind", stage.get(str(PACKAGE_DIR), str(PACKAGE_DIR)), f"{SANDBOX_LIB}/lecturelib",
             "--dir", HOME, "--dir", WORKDIR, "--chdir", WORKDIR]
    for name, value in sandbox_environment().items():
        args += ["--setenv", name, value]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    return args


def driver_command() -> list[str]:
    return [sys.executable, "-I", "-B", f"{SANDBOX_LIB}/lecturelib/{INSIDE.relative_to(PACKAGE_DIR).as_posix()}"]


# --------------------------------------------------------------------------------------
# seccomp: system calls refused inside the sandbox
# --------------------------------------------------------------------------------------

# In the spirit of Docker's default profile: what an unprivileged notebook never needs and
# what has widened the kernel's attack surface (each refused with EPERM, so that a library
# that probes for one of them sees an ordinary refusal).
DENIED_SYSCALLS = (
    # keyrings, bpf, perf events, userfaultfd, io_uring
    "add_key", "keyctl", "request_key", "bpf", "perf_event_open", "userfaultfd",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    # other processes' memory and descriptors
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
    # mounts, namespaces, file handles
    "mount", "umount2", "pivot_root", "chroot", "fsopen", "fsconfig", "fsmount", "fspick",
    "move_mount", "open_tree", "mount_setattr", "unshare", "setns",
    "open_by_handle_at", "name_to_handle_at",
    # the kernel and the machine
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "reboot", "swapon", "swapoff", "acct", "quotactl", "syslog", "settimeofday",
    "clock_settime", "clock_adjtime", "adjtimex", "iopl", "ioperm", "lookup_dcookie",
    "uselib", "ustat", "sysfs", "vhangup", "nfsservctl",
    # NUMA placement (Docker allows it only with CAP_SYS_NICE)
    "mbind", "set_mempolicy", "move_pages", "migrate_pages",
)
# personality() flags that weaken the address space (ASLR off, executable reads, page 0).
DENIED_PERSONALITY_FLAGS = (0x0040000, 0x0100000, 0x0200000, 0x0400000)


@functools.lru_cache(maxsize=None)
def seccomp_program() -> bytes:
    """The seccomp BPF program bubblewrap loads (``--seccomp``): allow by default, refuse
    :data:`DENIED_SYSCALLS` and dangerous ``personality`` flags with EPERM, and kill the
    process that makes a call through another architecture's ABI (whose numbers differ).
    Built with libseccomp."""
    try:
        import pyseccomp as seccomp
    except (ImportError, OSError, RuntimeError) as exc:
        raise SandboxUnavailable("the grading sandbox needs libseccomp and pyseccomp "
                                 f"(pip install pyseccomp; apt-get install libseccomp2): {exc}") from None
    deny = seccomp.ERRNO(errno.EPERM)
    program = seccomp.SyscallFilter(seccomp.ALLOW)
    program.set_attr(seccomp.Attr.ACT_BADARCH, seccomp.KILL_PROCESS)  # e.g. int 0x80 on x86-64
    for name in DENIED_SYSCALLS:
        if seccomp.resolve_syscall(seccomp.Arch.NATIVE, name) >= 0:  # unknown here: absent
            program.add_rule(deny, name)
    for flag in DENIED_PERSONALITY_FLAGS:
        program.add_rule(deny, "personality", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    with tempfile.TemporaryFile() as out:
        program.export_bpf(out)
        out.seek(0)
        return out.read()


def _seccomp_fd() -> int:
    """A fresh, inheritable memory file holding :func:`seccomp_program`."""
    fd = os.memfd_create("lecturelib-seccomp", 0)
    os.write(fd, seccomp_program())
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


# --------------------------------------------------------------------------------------
# Starting bubblewrap: never as host root
# --------------------------------------------------------------------------------------

SANDBOX_USER = "lecturelib-sandbox"
ROOT_TOOLS = ("unshare", "mount", "setpriv", "useradd")  # util-linux and passwd, in Debian's base
# Run by root in a private mount namespace: join the cgroups, bind every directory the
# sandbox needs onto a traversable staging folder (the unprivileged sandbox user may not
# be able to reach, say, an interpreter under /root), then become that user.
_ROOT_SCRIPT = ('while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; '
                'while [ "$1" != -- ]; do mount --bind "$1" "$2" || exit 125; shift 2; done; shift; '
                'exec "$@"')


def _sandbox_user() -> tuple[int, int]:
    """uid and gid of :data:`SANDBOX_USER`, created as a system user if absent; never 0."""
    for attempt in range(5):
        try:
            entry = pwd.getpwnam(SANDBOX_USER)
            break
        except KeyError:
            pass
        if attempt == 0:
            subprocess.run(["useradd", "--system", "--user-group", "--no-create-home",
                            "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", SANDBOX_USER],
                           capture_output=True, timeout=60)
        else:
            time.sleep(0.2)  # another grader may be creating it right now
    else:
        raise SandboxUnavailable(f"the grader runs as root and could not create the system user "
                                 f"{SANDBOX_USER} the sandbox runs as (useradd --system {SANDBOX_USER})")
    if entry.pw_uid == 0 or entry.pw_gid == 0:
        raise SandboxUnavailable(f"the user {SANDBOX_USER} has uid or gid 0: the sandbox never runs as "
                                 "host root")
    return entry.pw_uid, entry.pw_gid


@contextlib.contextmanager
def sandbox_command(limits: Limits, command: list[str], cgroup: "Cgroup | None" = None):
    """Yield ``(argv, pass_fds)`` that run ``command`` in the sandbox.

    As an ordinary user, ``argv`` is bubblewrap itself.  As root, ``argv`` first joins
    ``cgroup`` (still as root), binds the directories of :func:`_bound_directories` onto a
    staging folder in a private mount namespace, and drops to :data:`SANDBOX_USER` with
    ``setpriv`` (no supplementary groups, no capabilities) before bubblewrap starts: uid
    1000 inside the sandbox is then that user outside, never root.
    """
    bwrap = shutil.which("bwrap")
    seccomp = _seccomp_fd()
    try:
        if os.geteuid() != 0:
            yield [bwrap, *bwrap_arguments(limits, seccomp_fd=seccomp), "--", *command], (seccomp,)
            return
        tools = {name: shutil.which(name) for name in ROOT_TOOLS}
        if not all(tools.values()):
            raise SandboxUnavailable("a grader running as root needs util-linux's unshare, mount "
                                     "and setpriv and passwd's useradd to run the sandbox unprivileged")
        uid, gid = _sandbox_user()
        with tempfile.TemporaryDirectory(prefix="lecturelib-stage-", dir="/tmp") as folder:
            os.chmod(folder, 0o711)
            stage, pairs = {}, []
            for index, root in enumerate(_bound_directories()):
                stage[root] = os.path.join(folder, str(index))
                os.mkdir(stage[root], 0o700)
                pairs += [root, stage[root]]
            procs = [str(d / "cgroup.procs") for d in cgroup.dirs] if cgroup is not None else []
            drop = [tools["setpriv"], f"--reuid={uid}", f"--regid={gid}", "--clear-groups",
                    "--inh-caps=-all", "--"]
            yield ([tools["unshare"], "--mount", "--propagation", "private", "--",
                    "/bin/sh", "-c", _ROOT_SCRIPT, "sh", *procs, "--", *pairs, "--", *drop,
                    bwrap, *bwrap_arguments(limits, stage, seccomp), "--", *command], (seccomp,))
    finally:
        os.close(seccomp)


@functools.lru_cache(maxsize=None)
def sandbox_problem() -> str | None:
    """``None`` if bubblewrap works here, else a one-line explanation."""
    if not sys.platform.startswith("linux"):
        return f"the grading sandbox needs Linux (this is {sys.platform})"
    if shutil.which("bwrap") is None:
        return f"the grading sandbox needs bubblewrap, which is not installed: {INSTALL_HINT}"
    try:
        with sandbox_command(Limits(), [sys.executable, "-I", "-c", "0"]) as (argv, fds):
            probe = subprocess.run(argv, capture_output=True, text=True, timeout=60, pass_fds=fds)
    except SandboxUnavailable as exc:
        return str(exc)
    if probe.returncode != 0:
        detail = (probe.stderr.strip().splitlines() or ["no message"])[-1][:200]
        who = (f"; or the user {SANDBOX_USER} cannot read the Python environment"
               if os.geteuid() == 0 else "")
        return ("bubblewrap cannot create the sandbox here (user namespaces may be disabled, as in "
                f"some containers{who}): {detail}")
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


def _watch(watched: psutil.Process, limits: Limits, memory: bool, scratch: bool) -> str | None:
    """The limit the run has passed (a fixed reason), or ``None``."""
    if memory:
        used, count = _memory_and_count(watched)
        if used > limits.memory_mb * 2**20:
            return f"the notebook's processes used more than {limits.memory_mb} MiB together"
        if count > limits.max_processes + 4:
            return f"the notebook started more than {limits.max_processes} processes"
    if scratch and _scratch_files(_tree(watched), limits) > limits.max_files:
        return f"the notebook created more than {limits.max_files} files"
    return None


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass


def run_driver(job: bytes, limits: Limits, *, sandbox: bool = True) -> Outcome:
    """Run the driver on ``job`` (in the sandbox unless ``sandbox=False``); return its output.

    The run is killed, and an :class:`Outcome` with ``failure`` returned, when it passes
    ``total_timeout`` (plus a grace period), its processes together use more than
    ``memory_mb`` or number more than ``max_processes``, its scratch file systems hold more
    than ``max_files`` files, or it writes more than ``output_mb``.
    """
    if not sandbox:
        with tempfile.TemporaryDirectory(prefix="lecturelib-grade-") as scratch:
            argv = [sys.executable, "-I", "-B", str(INSIDE)]
            env = sandbox_environment(home=scratch, pythonpath=str(PACKAGE_DIR.parent))
            return _supervise(argv, env, scratch, job, limits, watch=True)
    require_sandbox()
    cgroup = Cgroup.create(limits)
    try:
        with sandbox_command(limits, driver_command(), cgroup) as (argv, fds):
            return _supervise(argv, {"PATH": "/usr/bin:/bin"}, "/", job, limits,
                              watch=cgroup is None, pass_fds=fds, scratch=True)
    finally:
        if cgroup is not None:
            cgroup.remove()


def _scratch_files(tree: list[psutil.Process], limits: Limits) -> int:
    """Files (inodes) in use in the sandbox's scratch file systems, seen from outside
    through ``/proc/PID/root`` of a process inside it; 0 before any is there.  A process
    counts as inside once its ``/tmp`` and ``/dev/shm`` are file systems of exactly the
    sizes the sandbox gave them (before that, its root is still the host's)."""
    sizes = {"/tmp": limits.scratch_mb * 2**20, "/dev/shm": min(limits.scratch_mb, 64) * 2**20}
    for process in tree[1:]:
        try:
            used = {path: os.statvfs(f"/proc/{process.pid}/root{path}") for path in sizes}
        except OSError:
            continue
        if all(v.f_blocks * v.f_frsize == sizes[path] for path, v in used.items()):
            return sum(v.f_files - v.f_ffree for v in used.values())
    return 0


def _feed(stream, pending: memoryview) -> memoryview:
    """Write what the pipe takes now; an empty view when done or the reader is gone."""
    try:
        return pending[os.write(stream.fileno(), pending):]
    except BlockingIOError:
        return pending
    except BrokenPipeError:
        return pending[:0]


def _supervise(argv, env, cwd, job: bytes, limits: Limits, watch: bool, pass_fds=(),
               scratch: bool = False) -> Outcome:
    """Feed the job, read the answers with a cap, enforce the time limit, without a
    cgroup (``watch``) the limits on total memory and the number of processes, and in the
    sandbox (``scratch``) the limit on the number of files in its scratch file systems
    (their inodes cost kernel memory that no process is charged with)."""
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env, cwd=cwd, start_new_session=True,
                            pass_fds=pass_fds)
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
            if (watch or scratch) and now >= next_watch:
                failure = _watch(watched, limits, watch, scratch)
                if failure:
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

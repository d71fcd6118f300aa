"""Run a student's grading kernel in a bubblewrap sandbox.

``SandboxedKernelManager`` is the kernel manager the grading preprocessor uses. Before each kernel
start it makes a short private directory (``/tmp/cbXXXXXXXX``) holding the connection file, the
kernel's IPC sockets and ``submission/``, a copy of the one submission being graded, and starts

    sh [join the cgroup, open the filter] -- bwrap [namespaces, mounts, seccomp] -- setpriv [unprivileged uid]
        -- prlimit [limits] -- sh [copy] -- ipykernel

so that the kernel sees:

* the system (``/usr``, ``/etc``) and the Python environment (the interpreter's prefix, the virtual
  environment and the course's helper packages) read-only, and nothing else of the host: no course
  directory (no ``source/``, no gradebook, no other student), no home directories, no other checkout;
* a writable copy of the submission (``work/``, copied from ``submission/`` when it starts) and
  private ``/tmp`` and ``/dev/shm``, each a size-limited tmpfs, so nothing it writes reaches the
  host's disk; once its sockets exist, its private directory is closed to writing;
* no network (only a loopback interface of its own), its own PID, IPC and UTS namespaces: nothing it
  starts outlives it;
* an unprivileged uid, no capabilities, ``no_new_privs``, and limits on memory (``RLIMIT_DATA``),
  processes and threads (``RLIMIT_NPROC``), open files, the size of any file it writes and CPU time;
* a seccomp filter that denies the system calls a notebook has no use for, the kernel keyring
  among them (``seccomp_filter``);
* memory that counts shared and memfd pages too: a cgroup of its own with the same memory limit
  and a process limit (``memory_cgroup``), or, where no cgroup can be made, the seccomp filter
  also denies memfd and shared anonymous memory (``MEMORY_MODES``; the log says which runs).

As root, every sandbox runs under a uid of its own from a pool (``RLIMIT_NPROC`` counts per uid,
so parallel sandboxes must not share one), and the private directory belongs to root with the
kernel's group. As an ordinary user bubblewrap uses a user namespace and the kernel keeps the
user's uid; the process limit then counts the user's own processes too, and the kernel can write
to its private directory. ``sandbox_problem`` says why the sandbox cannot run here, if it cannot.
"""

import asyncio
import fcntl
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import zmq
from jupyter_client.kernelspec import KernelSpec
from jupyter_client.manager import AsyncKernelManager
from traitlets import Enum, Float, Integer, List, Unicode

from course_build.checking import wire
from course_build.nbgrader_plugins import memory_cgroup, seccomp_filter

BWRAP = "/usr/bin/bwrap"
SETPRIV = "/usr/bin/setpriv"
PRLIMIT = "/usr/bin/prlimit"
FIRST_UID, UID_SLOTS = 61000, 64
SECCOMP_FD = 3
MAX_MESSAGE_BYTES = wire.MAX_JSON_CHARS + 2**20  # one part of a message from the kernel
MEMORY_MODES = {
    "cgroup": "a cgroup per sandbox counts all its memory (shared and memfd pages included)",
    "seccomp": "no cgroup can be made here ({why}): the seccomp filter denies memfd and shared anonymous "
    "memory, and /tmp, /dev/shm and the working copy are size-limited tmpfs",
}
# sh -c LAUNCH sh FILTER [CGROUP_PROCS ...] -- BWRAP...: join each cgroup, then exec bwrap with the
# filter open as SECCOMP_FD (the shell's own pid is moved, so everything in the sandbox follows).
LAUNCH = "; ".join(
    [
        "bpf=$1",
        "shift",
        'while [ "$1" != -- ]; do echo $$ > "$1" || exit 1; shift; done',
        "shift",
        'exec "$@" 3<"$bpf"',
    ]
)
PASSED_ENV = (
    "NBGRADER_EXECUTION",
    "NBGRADER_VALIDATING",
    "LANG",
    "LC_ALL",
    "TZ",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
)


@dataclass(frozen=True)
class Limits:
    """What one sandboxed kernel may use."""

    memory_bytes: int = 4 * 2**30
    processes: int = 128
    open_files: int = 1024
    file_size_bytes: int = 256 * 2**20
    cpu_seconds: int = 3600
    tmpfs_bytes: int = 512 * 2**20


def _package_dirs(packages: list[str]) -> list[Path]:
    dirs = []
    for name in packages:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            raise RuntimeError(f"the sandbox should show the package {name!r}, which is not installed")
        dirs += [Path(p).resolve() for p in spec.submodule_search_locations]
    return dirs


def readable_paths(packages: list[str]) -> list[Path]:
    """Host directories the kernel may read: the interpreter, the environment and ``packages``."""
    python = [Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve()]
    python.append(Path(os.path.realpath(sys.executable)).parent.parent)
    found: list[Path] = []
    for path in [*python, *_package_dirs(packages)]:
        if path.is_dir() and not any(path == p or p in path.parents for p in found):
            found = [p for p in found if path not in p.parents] + [path]
    return sorted(found)


def _check_hidden(readable: list[Path], hidden: Path) -> None:
    """Refuse to run when a readable path would show ``hidden`` (the course directory)."""
    for path in readable:
        if hidden == path or path in hidden.parents:
            raise RuntimeError(
                f"the course directory {hidden} lies inside {path}, which the sandbox must show the "
                "kernel read-only; move the course directory elsewhere"
            )


def _mount_args(readable: list[Path]) -> list[str]:
    """bwrap arguments for the system, ``readable`` (parents made traversable) and fresh /tmp etc."""
    args = ["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    made = {Path("/"), Path("/usr"), Path("/etc"), Path("/tmp")}
    for path in readable:
        for parent in reversed(path.parents):
            if parent not in made and not str(parent).startswith(("/usr/", "/etc/")):
                args += ["--perms", "0755", "--dir", str(parent)]
                made.add(parent)
        if not str(path).startswith(("/usr/", "/etc/")):
            args += ["--ro-bind", str(path), str(path)]
    return args


def bwrap_argv(
    command: list[str],
    *,
    run_dir: Path,
    readable: list[Path],
    limits: Limits,
    uid: int | None,
    bwrap: str = BWRAP,
) -> list[str]:
    """The bwrap command that runs ``command`` in a sandbox, in ``run_dir/work``.

    ``run_dir`` (connection file, sockets, ``submission/``) is shared with the host; ``work`` is a
    size-limited tmpfs that starts as a copy of ``run_dir/submission``. ``uid``: the unprivileged
    uid to switch to (needs root); None keeps the caller's uid and uses a user namespace instead.
    bwrap reads the seccomp filter from fd ``SECCOMP_FD``, which ``Walls.launch`` opens.
    """
    tmpfs = str(limits.tmpfs_bytes)
    args = [bwrap, "--die-with-parent", "--seccomp", str(SECCOMP_FD)]
    args += ["--unshare-pid", "--unshare-ipc", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"]
    if uid is None:
        args += ["--unshare-user", "--disable-userns", "--cap-drop", "ALL"]
    else:  # setpriv needs these to enter the uid's directory and drop to it; it then drops every one
        kept = ("SETUID", "SETGID", "SETPCAP", "DAC_READ_SEARCH")
        args += ["--cap-drop", "ALL"] + [a for c in kept for a in ("--cap-add", f"CAP_{c}")]
    args += ["--proc", "/proc", "--dev", "/dev"]
    args += ["--perms", "1777", "--size", tmpfs, "--tmpfs", "/dev/shm"]
    args += ["--perms", "1777", "--size", tmpfs, "--tmpfs", "/tmp"]
    # After the fresh /tmp, so that an environment or a checkout under /tmp stays visible.
    args += _mount_args(readable)
    args += ["--bind", str(run_dir), str(run_dir)]
    args += ["--perms", "1777", "--size", tmpfs, "--tmpfs", str(run_dir / "work"), "--chdir", str(run_dir)]
    args += ["--clearenv"]
    env = {key: os.environ[key] for key in PASSED_ENV if key in os.environ}
    env.update(
        PATH=f"{Path(sys.prefix) / 'bin'}:/usr/local/bin:/usr/bin:/bin",
        HOME="/tmp",
        TMPDIR="/tmp",
        MPLCONFIGDIR="/tmp/matplotlib",
        PYTHONDONTWRITEBYTECODE="1",
    )
    for key, value in sorted(env.items()):
        args += ["--setenv", key, value]
    args.append("--")
    if uid is not None:
        args += [SETPRIV, f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
        args += ["--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
    processes = limits.processes if uid is not None else _tasks_of_uid(os.getuid()) + limits.processes
    args += [
        PRLIMIT,
        f"--data={limits.memory_bytes}",
        f"--nproc={processes}",
        f"--nofile={limits.open_files}",
        f"--fsize={limits.file_size_bytes}",
        f"--cpu={limits.cpu_seconds}",
        "--core=0",
        "--",
    ]
    copy_then_run = 'cp -R -- submission/. work/ && cd work && exec "$@"'
    return args + ["/bin/sh", "-c", copy_then_run, "sh", *command]


def _tasks_of_uid(uid: int) -> int:
    """Processes and threads the host runs as ``uid`` (what RLIMIT_NPROC counts)."""
    count = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    count += len(os.listdir(f"/proc/{entry}/task"))
            except OSError:
                continue
    return count


class UidSlot:
    """An unprivileged uid for one sandbox, held (by a lock file) until ``release``."""

    def __init__(self) -> None:
        folder = Path(tempfile.gettempdir()) / "course-sandbox-uids"
        folder.mkdir(mode=0o755, exist_ok=True)
        for uid in range(FIRST_UID, FIRST_UID + UID_SLOTS):
            handle = open(folder / f"{uid}.lock", "a")  # noqa: SIM115 - held until release()
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.close()
                continue
            self.uid, self._handle = uid, handle
            return
        raise RuntimeError(f"all {UID_SLOTS} sandbox uids are in use")

    def release(self) -> None:
        self._handle.close()


def memory_mode(requested: str = "auto") -> tuple[str, str]:
    """The memory accounting a sandbox gets here (a key of ``MEMORY_MODES``) and a line saying so.

    ``requested``: ``"auto"`` (a cgroup where one can be made) or ``"seccomp"`` (never a cgroup).
    """
    problem = "the instructor chose it" if requested == "seccomp" else memory_cgroup.support().problem
    mode = "seccomp" if problem else "cgroup"
    return mode, _memory_line(mode, problem)


def _memory_line(mode: str, why: str | None) -> str:
    return f"grading sandbox memory: {MEMORY_MODES[mode].format(why=why)}"


class Walls:
    """One sandbox's seccomp filter and, in ``cgroup`` mode, its cgroup; ``close`` removes both.

    If the cgroup cannot be made after all, the sandbox gets the ``seccomp`` mode instead, and
    ``fallback`` is the log line that says why.
    """

    def __init__(self, mode: str, limits: Limits) -> None:
        self.cgroup: memory_cgroup.SandboxCgroup | None = None
        self.fallback: str | None = None
        if mode == "cgroup":
            try:
                self.cgroup = memory_cgroup.SandboxCgroup(
                    memory_cgroup.support(), memory_bytes=limits.memory_bytes, processes=limits.processes
                )
            except OSError as error:
                self.fallback = _memory_line("seccomp", f"making the sandbox's cgroup failed: {error}")
        descriptor, self.filter_path = tempfile.mkstemp(prefix="cb-seccomp-")
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(seccomp_filter.filter_program(count_shared_memory=self.cgroup is not None))

    def launch(self, bwrap_command: list[str]) -> list[str]:
        """``bwrap_command`` started by a shell that first joins the cgroup and opens the filter."""
        joins = self.cgroup.procs_files if self.cgroup is not None else []
        return ["/bin/sh", "-c", LAUNCH, "sh", self.filter_path, *joins, "--", *bwrap_command]

    def ran_out_of_memory(self) -> bool:
        return self.cgroup is not None and self.cgroup.ran_out_of_memory()

    def close(self) -> None:
        if self.cgroup is not None:
            self.cgroup.remove()
            self.cgroup = None
        if os.path.exists(self.filter_path):
            os.unlink(self.filter_path)


def _make_run_dir() -> Path:
    """A fresh private ``/tmp/cbXXXXXXXX``: short, because IPC socket paths must stay under 108
    characters."""
    return Path(tempfile.mkdtemp(prefix="cb", dir="/tmp"))


def _copy_submission(run_dir: Path, submission: Path | None, uid: int | None) -> None:
    """Put a fresh copy of ``submission`` in ``run_dir/submission``; as root, make ``run_dir``
    root's, shared with the kernel's group: readable, and writable until ``_seal``."""
    copy = run_dir / "submission"
    shutil.rmtree(copy, ignore_errors=True)
    if submission is None:
        copy.mkdir()
    else:
        shutil.copytree(submission, copy, symlinks=True)
    if uid is None:
        return
    for root, dirs, files in os.walk(run_dir):
        for name in dirs:
            os.chown(os.path.join(root, name), 0, uid)
            os.chmod(os.path.join(root, name), 0o750)
        for name in files:
            os.lchown(os.path.join(root, name), 0, uid)
            if not os.path.islink(os.path.join(root, name)):
                os.chmod(os.path.join(root, name), 0o640)
    os.chown(run_dir, 0, uid)
    os.chmod(run_dir, 0o770)


def _seal(run_dir: Path) -> None:
    """Close the kernel's private directory to writing (its sockets exist by now), so it cannot
    fill the host's disk through it."""
    os.chmod(run_dir, 0o750)


@cache
def sandbox_problem(bwrap: str = BWRAP) -> str | None:
    """None when a sandboxed Python starts here; otherwise what went wrong, in words."""
    for tool in (bwrap, PRLIMIT) + ((SETPRIV,) if os.geteuid() == 0 else ()):
        if not os.access(tool, os.X_OK):
            return f"{tool} is missing (Debian: apt-get install bubblewrap util-linux)"
    try:
        seccomp_filter.filter_program(count_shared_memory=False)
    except seccomp_filter.SeccompUnavailable as error:
        return str(error)
    command = [sys.executable, "-c", "import numpy, ipykernel"]
    try:
        result = run_sandboxed(command, readable_paths([]), bwrap=bwrap)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"{bwrap} could not start a sandbox: {error}"
    if result.returncode != 0:
        tail = (result.stderr or result.stdout).strip()[-500:]
        return f"{bwrap} could not start a sandbox (exit code {result.returncode}): {tail}"
    return None


def run_sandboxed(
    command: list[str],
    readable: list[Path],
    *,
    bwrap: str = BWRAP,
    timeout_s: float = 120,
    limits: Limits = Limits(),  # noqa: B008 - frozen
    memory: str = "auto",
) -> subprocess.CompletedProcess[str]:
    """Run ``command`` once in a sandbox that shows ``readable`` and an empty working copy.

    The same mounts, limits, filter and memory accounting a grading kernel gets (``memory`` as in
    ``memory_mode``); used to check that a sandbox starts here.
    """
    slot = UidSlot() if os.geteuid() == 0 else None
    run_dir = _make_run_dir()
    walls = None
    try:
        _copy_submission(run_dir, None, None if slot is None else slot.uid)
        walls = Walls(memory_mode(memory)[0], limits)
        argv = bwrap_argv(
            command,
            run_dir=run_dir,
            readable=readable,
            limits=limits,
            uid=None if slot is None else slot.uid,
            bwrap=bwrap,
        )
        return subprocess.run(walls.launch(argv), capture_output=True, text=True, timeout=timeout_s)
    finally:
        if walls is not None:
            walls.close()
        shutil.rmtree(run_dir, ignore_errors=True)
        if slot is not None:
            slot.release()


class SandboxedKernelManager(AsyncKernelManager):
    """An IPC kernel started in a bubblewrap sandbox on a private copy of one submission."""

    bwrap = Unicode(BWRAP, help="The bubblewrap executable.").tag(config=True)
    memory_limit_gib = Float(4.0, help="RLIMIT_DATA of the kernel, in GiB.").tag(config=True)
    max_processes = Integer(128, help="Processes and threads the kernel's uid may have.").tag(config=True)
    max_file_size_mib = Integer(256, help="Largest file the kernel may write, in MiB.").tag(config=True)
    max_cpu_seconds = Integer(3600, help="CPU seconds the kernel may use in all.").tag(config=True)
    tmpfs_mib = Integer(
        512, help="Size of each of the kernel's private tmpfs (its working copy, /tmp, /dev/shm), in MiB."
    ).tag(config=True)
    memory_accounting = Enum(
        ["auto", "seccomp"],
        "auto",
        help="auto: a memory cgroup per sandbox where one can be made, else seccomp; seccomp: never a "
        "cgroup (memfd and shared anonymous memory denied instead).",
    ).tag(config=True)
    readable_packages = List(
        Unicode(),
        ["transformer_course"],
        help="Packages the lessons import that live outside the Python environment (editable installs).",
    ).tag(config=True)

    _submission: Path | None = None
    _run_dir: Path | None = None
    _slot: UidSlot | None = None
    _walls: Walls | None = None
    _closed_walls_oom: bool | None = None  # whether the cleaned-up kernel's cgroup saw an OOM kill
    _log = None
    _announced: set[str] = set()  # memory modes already logged by this process

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.transport = "ipc"
        # Every message from the kernel is hostile data: zmq drops one larger than the cap before
        # it is buffered whole, and the session parses each part with wire.loads's caps.
        self.context.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE_BYTES)
        self.session.unpack = wire.loads_message_part

    @property
    def kernel_spec(self) -> KernelSpec:
        """Always this environment's Python kernel, interrupted by message (a SIGINT to the
        process group would kill bwrap and the whole sandbox)."""
        return KernelSpec(
            argv=[sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            display_name="Python 3 (sandboxed)",
            language="python",
            interrupt_mode="message",
        )

    @property
    def limits(self) -> Limits:
        return Limits(
            memory_bytes=int(self.memory_limit_gib * 2**30),
            processes=self.max_processes,
            file_size_bytes=self.max_file_size_mib * 2**20,
            cpu_seconds=self.max_cpu_seconds,
            tmpfs_bytes=self.tmpfs_mib * 2**20,
        )

    async def _async_pre_start_kernel(self, **kw):
        if self._submission is None:
            self._submission = Path(kw.get("cwd") or os.getcwd()).resolve()
        if self._slot is None and os.geteuid() == 0:
            self._slot = UidSlot()
        if self._run_dir is None:
            self._run_dir = _make_run_dir()
        self.connection_file = str(self._run_dir / "kernel.json")
        self.ip = str(self._run_dir / "k")
        if self._log is None:
            self._log = tempfile.TemporaryFile(prefix="cb-kernel-log-")
        kw.update(cwd=str(self._run_dir), env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
        kw.update(stdout=self._log, stderr=self._log)
        command, kw = await super()._async_pre_start_kernel(**kw)
        readable = readable_paths(list(self.readable_packages))
        _check_hidden(readable, Path.cwd().resolve())
        uid = None if self._slot is None else self._slot.uid
        _copy_submission(self._run_dir, self._submission, uid)
        argv = bwrap_argv(
            command, run_dir=self._run_dir, readable=readable, limits=self.limits, uid=uid, bwrap=self.bwrap
        )
        self._close_walls()
        mode, line = memory_mode(self.memory_accounting)
        self._walls = Walls(mode, self.limits)
        line = self._walls.fallback or line
        if line not in SandboxedKernelManager._announced:
            SandboxedKernelManager._announced.add(line)
            self.log.info(line)
        return self._walls.launch(argv), kw

    def killed_for_memory(self) -> bool | None:
        """Whether the current kernel's cgroup hit its memory limit and the kernel was killed for it;
        once that kernel is cleaned up, what its cgroup said last; None where no cgroup counts."""
        if self._walls is not None:
            return self._walls.cgroup.ran_out_of_memory() if self._walls.cgroup is not None else None
        return self._closed_walls_oom

    def ran_out_of_memory(self) -> bool:
        """Whether the current (or just cleaned-up) kernel was killed for memory by its cgroup."""
        return bool(self.killed_for_memory())

    def _close_walls(self) -> None:
        self._closed_walls_oom = None
        if self._walls is not None:
            if self._walls.cgroup is not None:
                self._closed_walls_oom = self._walls.ran_out_of_memory()
            self._walls.close()
            self._walls = None

    async def _async_post_start_kernel(self, **kw) -> None:
        """Once the kernel has made its sockets, close its private directory to writing."""
        await super()._async_post_start_kernel(**kw)
        if self._slot is None:
            return
        sockets = [
            Path(f"{self.ip}-{port}")
            for port in (self.shell_port, self.iopub_port, self.stdin_port, self.hb_port, self.control_port)
        ]
        deadline = time.monotonic() + 120
        while not all(s.exists() for s in sockets) and time.monotonic() < deadline:
            if not await self._async_is_alive():
                return
            await asyncio.sleep(0.05)
        _seal(self._run_dir)

    def log_tail(self) -> str:
        """The end of what the kernel and bwrap wrote to their stdout and stderr."""
        if self._log is None:
            return ""
        self._log.seek(0)
        return self._log.read()[-800:].decode("utf-8", "replace").strip()

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart=restart)
        self._close_walls()
        if not restart:
            if self._run_dir is not None:
                shutil.rmtree(self._run_dir, ignore_errors=True)
                self._run_dir = None
            if self._slot is not None:
                self._slot.release()
                self._slot = None
            if self._log is not None:
                self._log.close()
                self._log = None

    # jupyter_client binds the public name to its own function, not to the override: nbclient
    # cleans up a dead kernel through it, which left the cgroup, uid and private directory behind.
    cleanup_resources = _async_cleanup_resources

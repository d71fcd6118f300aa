"""The grading sandbox holds: what a student's kernel can see, do and leave behind (real bubblewrap).

One sandboxed kernel, started the way nbgrader starts it (nbclient with ``SandboxedKernelManager``)
on a submission inside a throw-away course directory, runs probe cells; each prints what it found
and the tests read it. A TCP server on the host's loopback stands for any network service.
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import DeadKernelError
from traitlets.config import Config

from course_build.nbgrader_plugins.sandbox import (
    MEMORY_MODES,
    SECCOMP_FD,
    Limits,
    SandboxedKernelManager,
    bwrap_argv,
    memory_mode,
    readable_paths,
    run_sandboxed,
    sandbox_problem,
)
from course_build.paths import REPO_ROOT

pytestmark = pytest.mark.slow
MARKER = f"course-sandbox-test-{os.getpid()}"

PROBES = {
    "identity": """
import json, os
status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
print(json.dumps({"uid": os.getuid(), "cap": status["CapEff"].strip(), "nnp": status["NoNewPrivs"].strip(),
                  "pid": os.getpid(), "processes": len([p for p in os.listdir("/proc") if p.isdigit()])}))
""",
    "files": """
import json, os
paths = json.loads(PATHS)
seen = {name: os.path.exists(path) for name, path in paths.items()}
try:
    open("/etc/shadow").read()
    seen["shadow"] = True
except OSError:
    seen["shadow"] = False
seen["work"] = sorted(os.listdir("."))
open("written.txt", "w").write("x")
for name, folder in (("python_writable", os.path.dirname(os.__file__)), ("run_dir_writable", "..")):
    try:
        open(os.path.join(folder, "written.txt"), "w").close()
        seen[name] = True
    except OSError:
        seen[name] = False
print(json.dumps(seen))
""",
    "network": """
import json, socket
result = {"interfaces": [name for _, name in socket.if_nameindex()]}
try:
    socket.create_connection(("127.0.0.1", PORT), timeout=3).close()
    result["host_server"] = True
except OSError:
    result["host_server"] = False
print(json.dumps(result))
""",
    "memory": """
import numpy as np
try:
    big = np.ones(10**10)
    print("allocated")
except MemoryError:
    print("MemoryError")
""",
    "file_size": """
try:
    with open("big.bin", "wb") as handle:
        for _ in range(400):
            handle.write(b"x" * 2**20)
    print("written")
except OSError as error:
    print(type(error).__name__, error.errno)
""",
    "threads": """
import threading, time
started = 0
stop = threading.Event()
try:
    for _ in range(400):
        threading.Thread(target=stop.wait, daemon=True).start()
        started += 1
except RuntimeError:
    pass
stop.set()
print(started)
""",
    "detached": """
import subprocess, sys
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", MARKER], start_new_session=True)
print("started")
""",
    "hang": "while True:\n    pass",
    "after_hang": "print('alive')",
}


@pytest.fixture(scope="module")
def probes(tmp_path_factory) -> dict[str, str]:
    """Probe name -> what the probe printed (or the error it raised), from one sandboxed kernel."""
    problem = sandbox_problem()
    assert problem is None, f"the sandbox must run on this machine: {problem}"
    course = tmp_path_factory.mktemp("course")
    for relative in ("source/03/03.ipynb", "gradebook.db", "submitted/bob/03/03.ipynb"):
        (course / relative).parent.mkdir(parents=True, exist_ok=True)
        (course / relative).write_text("secret")
    submission = course / "autograded" / "alice" / "03"
    submission.mkdir(parents=True)
    (submission / "03.ipynb").write_text("{}")
    paths = {
        "course": str(course),
        "source": str(course / "source/03/03.ipynb"),
        "gradebook": str(course / "gradebook.db"),
        "other_student": str(course / "submitted/bob/03/03.ipynb"),
        "own_original": str(submission / "03.ipynb"),
        "lessons": str(REPO_ROOT / "lessons"),
        "solutions": str(REPO_ROOT / "solutions"),
        "git": str(REPO_ROOT / ".git"),
        "home": "/root/.bashrc",
    }
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    threading.Thread(target=lambda: server.accept(), daemon=True).start()
    header = f"PATHS = {json.dumps(json.dumps(paths))}\nPORT = {port}\nMARKER = {MARKER!r}\n"
    cells = [nbformat.v4.new_code_cell(header)] + [
        nbformat.v4.new_code_cell(code) for code in PROBES.values()
    ]
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata.kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    cwd = os.getcwd()
    os.chdir(course)  # nbgrader runs from the course directory; the sandbox must hide it
    try:
        client = NotebookClient(
            notebook,
            timeout=20,
            interrupt_on_timeout=True,
            kernel_manager_class=SandboxedKernelManager,
            allow_errors=True,
            resources={"metadata": {"path": str(submission)}},
        )
        client.execute()
    finally:
        os.chdir(cwd)
        server.close()
    found = {}
    for name, cell in zip(PROBES, notebook.cells[1:], strict=True):
        texts = [o.get("text", "") for o in cell.outputs if o.output_type == "stream"]
        errors = [o.ename for o in cell.outputs if o.output_type == "error"]
        found[name] = "".join(texts).strip() or ",".join(errors)
    found["host_after"] = (submission / "written.txt").exists()
    return found


def test_the_kernel_runs_unprivileged_in_its_own_process_namespace(probes):
    identity = json.loads(probes["identity"])
    assert identity["uid"] != 0 or os.geteuid() != 0
    assert identity["cap"] == "0000000000000000" and identity["nnp"] == "1"
    assert identity["processes"] <= 3, "the kernel must not see the host's processes"


def test_the_kernel_sees_nothing_of_the_course_or_the_repository(probes):
    seen = json.loads(probes["files"])
    hidden = (
        "course",
        "source",
        "gradebook",
        "other_student",
        "own_original",
        "lessons",
        "solutions",
        "git",
        "home",
    )
    assert {name: seen[name] for name in hidden} == dict.fromkeys(hidden, False)
    assert seen["shadow"] is False


def test_the_kernel_writes_only_to_its_private_copy(probes):
    seen = json.loads(probes["files"])
    assert seen["work"] == ["03.ipynb"]
    assert seen["python_writable"] is False
    assert seen["run_dir_writable"] is (os.geteuid() != 0), "as root the kernel's private directory is sealed"
    assert probes["host_after"] is False, "a file written in the sandbox appeared in the course directory"


def test_the_kernel_has_no_network(probes):
    assert json.loads(probes["network"]) == {"interfaces": ["lo"], "host_server": False}


def test_memory_file_size_and_threads_are_limited(probes):
    assert probes["memory"] == "MemoryError"
    assert probes["file_size"] == "OSError 27"  # EFBIG: the file-size limit
    assert 0 < int(probes["threads"]) < 400


def test_a_hung_cell_is_interrupted_and_the_kernel_lives_on(probes):
    assert probes["hang"] == "KeyboardInterrupt"  # the message-mode interrupt reached the kernel
    assert probes["after_hang"] == "alive"


def test_nothing_the_kernel_started_outlives_it(probes):
    assert probes["detached"] == "started"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        alive = []
        for entry in Path("/proc").iterdir():
            try:
                if MARKER.encode() in (entry / "cmdline").read_bytes():
                    alive.append(entry.name)
            except OSError:
                continue
        if not alive:
            return
        time.sleep(0.5)
    raise AssertionError(f"processes started in the sandbox still run: {alive}")


def test_a_missing_bubblewrap_is_reported():
    problem = sandbox_problem("/nonexistent/bwrap")
    assert problem is not None and "missing" in problem


def test_a_checkout_under_tmp_stays_visible_behind_the_private_tmp():
    """A clone (and its virtual environment) in /tmp must not vanish under the kernel's own /tmp."""
    checkout = Path(tempfile.mkdtemp(prefix="checkout-", dir="/tmp"))
    env, marker, secret = checkout / "env", checkout / "env" / "marker.txt", checkout / "secret.txt"
    try:
        checkout.chmod(0o755)
        env.mkdir(mode=0o755)
        marker.write_text("visible")
        marker.chmod(0o644)
        secret.write_text("hidden")
        script = "import os, sys; print(open(sys.argv[1]).read(), os.path.exists(sys.argv[2]))"
        command = [sys.executable, "-c", script, str(marker), str(secret)]
        result = run_sandboxed(command, [*readable_paths([]), env])
        assert result.returncode == 0, result.stderr
        assert result.stdout.split() == ["visible", "False"]
    finally:
        shutil.rmtree(checkout)


# --- the seccomp filter, memory accounting and the uid pool ----------------------------------

SYSCALLS = """
import ctypes, errno, json
libc = ctypes.CDLL(None, use_errno=True)
USER_KEYRING, CLONE_NEWUSER = -4, 0x10000000
calls = {
    "add_key": (248, b"user", b"course-key", b"secret", 6, USER_KEYRING),
    "keyctl": (250, 0, USER_KEYRING, 0),  # KEYCTL_GET_KEYRING_ID
    "ptrace": (101, 16, 1, 0, 0),  # PTRACE_ATTACH to pid 1
    "mount": (165, b"none", b"/tmp", b"tmpfs", 0, 0),
    "bpf": (321, 0, 0, 0),
    "perf_event_open": (298, 0, 0, -1, -1, 0),
    "userfaultfd": (323, 0),
    "unshare": (272, CLONE_NEWUSER),
}
result = {}
for name, (number, *args) in calls.items():
    outcome = libc.syscall(number, *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    result[name] = "allowed" if outcome >= 0 else errno.errorcode[ctypes.get_errno()]
import numpy as np, torch
result["torch"] = float(torch.nn.functional.softmax(torch.tensor([0.0, 0.0]), dim=0)[0])
result["numpy"] = float(np.linalg.solve(np.eye(2), np.ones(2))[0])
print(json.dumps(result))
"""
DENIED_CALLS = ("add_key", "keyctl", "ptrace", "mount", "bpf", "perf_event_open", "userfaultfd", "unshare")


def test_the_filter_denies_what_a_notebook_never_needs_and_numpy_and_torch_still_work():
    result = run_sandboxed([sys.executable, "-c", SYSCALLS], readable_paths([]))
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    assert {name: found[name] for name in DENIED_CALLS} == dict.fromkeys(DENIED_CALLS, "EPERM")
    assert found["torch"] == 0.5 and found["numpy"] == 1.0


# Run by an ordinary user: the calls a sandbox must refuse, and one the user may make outside it.
NON_ROOT_PROBE = """
import ctypes, errno, json, os
libc = ctypes.CDLL(None, use_errno=True)
calls = {
    "add_key": (248, b"user", b"course-key", b"secret", 6, -4),  # into the user keyring
    "keyctl": (250, 0, -4, 0),  # KEYCTL_GET_KEYRING_ID of the user keyring, without creating it
    "memfd_create": (319, b"hog", 0),
}
result = {"uid": os.geteuid()}
for name, (number, *args) in calls.items():
    outcome = libc.syscall(number, *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    result[name] = "allowed" if outcome >= 0 else errno.errorcode[ctypes.get_errno()]
print(json.dumps(result))
"""
# The grader, as that user: the real launch (no uid pool, no setpriv, no cgroup: bubblewrap makes a
# user namespace; the filter file and private directory are the user's own).
AS_ORDINARY_GRADER = """
import json, sys
from course_build.nbgrader_plugins.sandbox import memory_mode, readable_paths, run_sandboxed
result = run_sandboxed([sys.executable, "-c", sys.argv[1]], readable_paths([]))
run = {"mode": memory_mode()[0], "rc": result.returncode, "out": result.stdout, "err": result.stderr}
print(json.dumps(run))
"""
THROWAWAY_UID = 64321  # no account, outside the sandbox's uid pool
SYSTEM_PYTHON = Path("/usr/bin/python3")


def _as_throwaway_user(*argv: str) -> subprocess.CompletedProcess:
    """``argv`` run by the system Python as THROWAWAY_UID, with this checkout and environment's
    packages importable. The system Python, because this environment's interpreter may sit where
    only root can reach it (pyenv under /root); same minor version, so the compiled packages load."""
    version = subprocess.run(
        [str(SYSTEM_PYTHON), "-c", "import sys; print(sys.version_info[:2])"], capture_output=True, text=True
    )
    assert version.stdout.strip() == str(sys.version_info[:2]), (
        f"{SYSTEM_PYTHON} must be Python {sys.version_info[:2]} to import this environment's packages "
        f"as another user (it is {version.stdout.strip() or version.stderr.strip()})"
    )
    packages = ":".join([str(REPO_ROOT), sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    user = f"--reuid={THROWAWAY_UID}", f"--regid={THROWAWAY_UID}", "--clear-groups"
    environment = ["env", "-i", "PATH=/usr/bin:/bin", "HOME=/tmp", f"PYTHONPATH={packages}"]
    command = ["setpriv", *user, *environment, str(SYSTEM_PYTHON), *argv]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd="/tmp")


def test_the_filter_holds_when_an_ordinary_user_grades():
    """As root the grader gives each sandbox a pool uid; an ordinary user's grader runs bubblewrap
    in a user namespace instead. The keyring and memfd are refused there too, while the same user
    may call keyctl outside the sandbox (so it is the filter that refuses)."""
    assert os.geteuid() == 0, "the test switches to a throwaway user, which needs root"
    outside = _as_throwaway_user("-c", NON_ROOT_PROBE)
    assert outside.returncode == 0, outside.stderr
    found = json.loads(outside.stdout)
    assert found["uid"] == THROWAWAY_UID and found["keyctl"] != "EPERM", found
    graded = _as_throwaway_user("-c", AS_ORDINARY_GRADER, NON_ROOT_PROBE)
    assert graded.returncode == 0, graded.stdout + graded.stderr
    run = json.loads(graded.stdout)
    assert run["rc"] == 0 and run["mode"] == "seccomp", run  # no cgroup for an ordinary user here
    inside = json.loads(run["out"])
    assert inside["uid"] == THROWAWAY_UID, inside  # bubblewrap maps the user to itself
    assert {name: inside[name] for name in ("add_key", "keyctl", "memfd_create")} == dict.fromkeys(
        ("add_key", "keyctl", "memfd_create"), "EPERM"
    ), inside


def test_bwrap_gets_the_filter_and_the_log_says_which_memory_mode_runs():
    argv = bwrap_argv(["true"], run_dir=Path("/tmp/cbX"), readable=[], limits=Limits(), uid=None)
    assert argv[argv.index("--seccomp") + 1] == str(SECCOMP_FD)
    mode, line = memory_mode()
    assert mode in MEMORY_MODES and line.startswith("grading sandbox memory: ")
    assert memory_mode("seccomp")[0] == "seccomp"


MEMORY_HOGS = {
    "memfd": "fd = os.memfd_create(f'hog{i}'); os.ftruncate(fd, CHUNK); held.append(mmap.mmap(fd, CHUNK))",
    "shared": "held.append(mmap.mmap(-1, CHUNK, flags=mmap.MAP_SHARED))",
    "dev_shm": (
        "fd = os.open(f'/dev/shm/hog{i}', os.O_RDWR | os.O_CREAT); os.ftruncate(fd, CHUNK); "
        "held.append(mmap.mmap(fd, CHUNK))"
    ),
}


def _hog(kind: str) -> str:
    """A cell that fills 1.5 GiB through ``kind`` and prints how much it held."""
    return (
        "import mmap, os\nCHUNK, held = 64 * 2**20, []\n"
        f"for i in range(24):\n    {MEMORY_HOGS[kind]}\n    held[-1].write(b'x' * CHUNK)\n"
        "print('held', len(held) * 64, 'MiB')"
    )


def _run_hog(kind: str, memory: str) -> tuple[list, bool, list[Path]]:
    """The hog cell's outputs (or DeadKernelError) in a 1 GiB kernel, whether its cgroup hit the
    limit, and the cgroup's directories (which must be gone once the kernel is cleaned up)."""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(_hog(kind))])
    notebook.metadata.kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    config = Config()
    config.SandboxedKernelManager.memory_limit_gib = 1.0
    config.SandboxedKernelManager.memory_accounting = memory
    config.SandboxedKernelManager.tmpfs_mib = 2048 if memory == "auto" else 512
    client = NotebookClient(
        notebook, timeout=120, kernel_manager_class=SandboxedKernelManager, allow_errors=True, config=config
    )
    outputs, killed_for_memory, cgroup = ["DeadKernelError"], False, []
    with tempfile.TemporaryDirectory() as folder:
        client.resources = {"metadata": {"path": folder}}
        with client.setup_kernel():
            walls = client.km._walls
            cgroup = list(walls.cgroup.directories) if walls.cgroup is not None else []
            try:
                client.execute_cell(notebook.cells[0], 0)
                outputs = notebook.cells[0].outputs
            except DeadKernelError:
                killed_for_memory = client.km.ran_out_of_memory()
    return outputs, killed_for_memory, cgroup


@pytest.mark.parametrize("kind", MEMORY_HOGS)
@pytest.mark.parametrize("memory", ["auto", "seccomp"])
def test_memory_outside_rlimit_data_is_stopped(kind, memory):
    """1.5 GiB held through memfd, shared anonymous memory or /dev/shm under a 1 GiB limit: a
    cgroup kills the kernel (even with a 2 GiB /dev/shm); without one, the filter or the 512 MiB
    tmpfs stops the allocation."""
    mode = memory_mode(memory)[0]
    outputs, killed_for_memory, cgroup = _run_hog(kind, memory)
    assert not [folder for folder in cgroup if folder.exists()], "the sandbox's cgroup outlived its kernel"
    assert bool(cgroup) == (mode == "cgroup")
    printed = "".join(o.get("text", "") for o in outputs if isinstance(o, dict))
    assert "held" not in printed, f"{kind} held 1.5 GiB in {mode} mode"
    if mode == "cgroup":
        assert outputs == ["DeadKernelError"] and killed_for_memory
    elif kind == "dev_shm":  # a full tmpfs: SIGBUS on the page that does not fit, or ENOSPC
        assert outputs == ["DeadKernelError"] or any(o.get("ename") == "OSError" for o in outputs)
    else:
        assert [o.get("ename") for o in outputs if o.get("output_type") == "error"] == ["PermissionError"]


LEAVE_TRACES = """
import ctypes, errno, json, os, subprocess, sys
marker = sys.argv[1]
libc = ctypes.CDLL(None, use_errno=True)
left = {}
key = libc.syscall(248, b"user", marker.encode(), b"secret", 6, ctypes.c_long(-4))  # add_key
left["key"] = "stored" if key >= 0 else errno.errorcode[ctypes.get_errno()]
written = []
for root, dirs, _ in os.walk("/"):
    dirs[:] = [d for d in dirs if os.path.join(root, d) not in ("/proc", "/sys")]
    if os.access(root, os.W_OK):
        try:
            open(os.path.join(root, marker), "w").close()
            written.append(root)
        except OSError:
            pass
left["files"] = written
rt = ctypes.CDLL("librt.so.1", use_errno=True)
rt.mq_open.restype = ctypes.c_int
left["mqueue"] = rt.mq_open(f"/{marker}".encode(), os.O_CREAT | os.O_RDWR, 0o666, None) >= 0
shm = libc.shmget(0x5EC7E7, 4096, 0o1666)  # IPC_CREAT | 0666
left["sysv_shm"] = shm >= 0
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", marker], start_new_session=True)
print(json.dumps(left))
"""
LOOK_FOR_TRACES = """
import ctypes, json, os, sys
marker = sys.argv[1]
libc = ctypes.CDLL(None, use_errno=True)
found = {"key": libc.syscall(250, 0, ctypes.c_long(-4), 0) >= 0}  # keyctl: the uid's keyring at all
found["files"] = []
for root, dirs, files in os.walk("/"):
    dirs[:] = [d for d in dirs if os.path.join(root, d) not in ("/proc", "/sys")]
    if marker in files:
        found["files"].append(root)
rt = ctypes.CDLL("librt.so.1", use_errno=True)
found["mqueue"] = rt.mq_open(f"/{marker}".encode(), os.O_RDWR, 0, None) >= 0
found["sysv_shm"] = libc.shmget(0x5EC7E7, 0, 0) >= 0
found["processes"] = []  # any but this one and bubblewrap's init (pid 1)
for pid in filter(str.isdigit, os.listdir("/proc")):
    if int(pid) not in (1, os.getpid()):
        try:
            found["processes"].append(open(f"/proc/{pid}/cmdline", "rb").read().decode("utf-8", "replace"))
        except OSError:
            pass
print(json.dumps(found))
"""


def _uid_processes(uid: int) -> list[str]:
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.stat(f"/proc/{entry}").st_uid == uid:
                found.append(Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode())
        except OSError:
            continue
    return found


def _keys_of(uid: int) -> str:
    """The host's /proc/key-users line for ``uid`` (its keys and keyrings), empty when it has none."""
    lines = Path("/proc/key-users").read_text().splitlines()
    return next((line for line in lines if line.split(":")[0].strip() == str(uid)), "")


def test_a_later_sandbox_with_the_same_uid_finds_nothing_of_an_earlier_one(monkeypatch):
    """Keyring key, files in every writable place, message queue, SysV memory, a detached process:
    the first sandbox tries to leave each; the second, under the same pool uid, sees none."""
    from course_build.nbgrader_plugins import sandbox

    slot = sandbox.UidSlot()  # a uid no other grading holds now, then pinned for both sandboxes
    uid = slot.uid
    slot.release()
    monkeypatch.setattr(sandbox, "FIRST_UID", uid)
    monkeypatch.setattr(sandbox, "UID_SLOTS", 1)
    marker = f"course-trace-{os.getpid()}"
    keys_before = _keys_of(uid)

    first = run_sandboxed([sys.executable, "-c", LEAVE_TRACES, marker], readable_paths([]))
    assert first.returncode == 0, first.stderr
    left = json.loads(first.stdout)
    assert left["key"] == "EPERM" and left["files"] and left["mqueue"] and left["sysv_shm"]
    assert _keys_of(uid) == keys_before, "the first sandbox left a key in the host's keyring of its uid"
    assert not [p for p in _uid_processes(uid) if marker in p], "a process of the first sandbox outlived it"

    second = run_sandboxed([sys.executable, "-c", LOOK_FOR_TRACES, marker], readable_paths([]))
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout) == {
        "key": False,
        "files": [],
        "mqueue": False,
        "sysv_shm": False,
        "processes": [],
    }

"""The grading sandbox holds: what a student's kernel can see, do and leave behind (real bubblewrap).

One sandboxed kernel, started the way nbgrader starts it (nbclient with ``SandboxedKernelManager``)
on a submission inside a throw-away course directory, runs probe cells; each prints what it found
and the tests read it. A TCP server on the host's loopback stands for any network service.
"""

import json
import os
import shutil
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from course_build.nbgrader_plugins.sandbox import (
    SandboxedKernelManager,
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

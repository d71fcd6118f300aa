"""The install scripts: which PyTorch build they ask pip for, the fallback when PyTorch's CPU index
is unreachable (local HTTP servers stand in for the indexes), the bash scripts' steps and options,
the Windows script mirroring them, and the closing environment check."""

from __future__ import annotations

import http.server
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import sysconfig
import threading
import time
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "scripts"


def load_script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


install_torch = load_script("install_torch")
check_environment = load_script("check_environment")
PIN = "torch==2.13.0"


# --- local stand-ins for package indexes -------------------------------------------------------


@contextmanager
def serve(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[str]:
    """An HTTP server on 127.0.0.1 for the block; yields its base URL."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def answering(status: int) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(status)
            self.end_headers()
            self.wfile.write(b"<html></html>")

        def log_message(self, *args):
            pass

    return Handler


class Silent(http.server.BaseHTTPRequestHandler):
    """Accepts the connection and never answers: a firewall that drops packets."""

    def do_GET(self):
        time.sleep(30)

    def log_message(self, *args):
        pass


def closed_port_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def fake_torch_wheel(folder: Path, version: str) -> str:
    """A tiny installable wheel named torch at ``version``; returns its file name."""
    dist_info = f"torch-{version}.dist-info"
    name = f"torch-{version}-py3-none-any.whl"
    with zipfile.ZipFile(folder / name, "w") as wheel:
        wheel.writestr("torch/__init__.py", f"__version__ = {version!r}\n")
        wheel.writestr(f"{dist_info}/METADATA", f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n")
        wheel.writestr(
            f"{dist_info}/WHEEL",
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        wheel.writestr(
            f"{dist_info}/RECORD",
            f"torch/__init__.py,,\n{dist_info}/METADATA,,\n{dist_info}/WHEEL,,\n{dist_info}/RECORD,,\n",
        )
    return name


def simple_index(root: Path, version: str) -> Path:
    """A PEP 503 index folder holding one fake torch wheel."""
    project = root / "torch"
    project.mkdir(parents=True)
    wheel = fake_torch_wheel(project, version)
    href = wheel.replace("+", "%2B")
    (project / "index.html").write_text(f'<html><body><a href="{href}">{wheel}</a></body></html>\n')
    return root


def serving_folder(folder: Path) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(folder), **kwargs)

        def log_message(self, *args):
            pass

    return Handler


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory) -> str:
    """A Python with no torch (a venv without pip), so install_torch.py does not keep one."""
    venv = tmp_path_factory.mktemp("bare") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    return str(venv / "bin" / "python")


def run_install_torch(python: str, *args: str, **env: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k not in ("COURSE_TORCH", "COURSE_TORCH_CPU_INDEX")}
    environment.update(env)
    return subprocess.run(
        [python, str(SCRIPTS / "install_torch.py"), *args],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
    )


# --- the plan: which pip runs for which choice --------------------------------------------------


def test_linux_cpu_build_comes_from_the_cpu_index_and_its_dependencies_from_pips_own_index():
    plan = install_torch.plan_torch_install("linux", "cpu", "https://cpu.example/whl", problem=None)
    assert plan.pip_runs == (("--no-deps", "--index-url", "https://cpu.example/whl", PIN), (PIN,))
    assert "CPU build" in plan.message and "200 MB" in plan.message


def test_linux_gpu_build_is_pypis_pin_and_says_its_size():
    plan = install_torch.plan_torch_install("linux", "gpu", install_torch.CPU_INDEX, problem=None)
    assert plan.pip_runs == ((PIN,),)
    assert "CUDA" in plan.message and "2.7 GB" in plan.message


@pytest.mark.parametrize("system", ["darwin", "win32"])
def test_macos_and_windows_take_pypis_wheel_which_is_the_cpu_build(system):
    plan = install_torch.plan_torch_install(system, "cpu", install_torch.CPU_INDEX, problem="unreachable")
    assert plan.pip_runs == ((PIN,),)
    assert "CPU build" in plan.message


def test_an_unreachable_cpu_index_falls_back_to_the_plain_pin_and_says_why():
    plan = install_torch.plan_torch_install("linux", "cpu", "https://cpu.example/whl", problem="HTTP 503")
    assert plan.pip_runs == ((PIN,),)
    assert "https://cpu.example/whl is unreachable (HTTP 503)" in plan.message
    assert "\n" not in plan.message


def test_the_pin_is_requirements_txts_and_never_a_range():
    requirements = (ROOT / "requirements.txt").read_text(encoding="utf-8")
    assert re.search(r"^torch==(\S+)$", requirements, re.M).group(1) == install_torch.TORCH_VERSION
    for system in ("linux", "darwin", "win32"):
        for build in ("cpu", "gpu"):
            for problem in (None, "down"):
                plan = install_torch.plan_torch_install(system, build, install_torch.CPU_INDEX, problem)
                torch_args = [arg for run in plan.pip_runs for arg in run if arg.startswith("torch")]
                assert torch_args and set(torch_args) == {PIN}


# --- the probe of PyTorch's CPU index -----------------------------------------------------------


def test_probe_accepts_an_index_that_answers():
    with serve(answering(200)) as url:
        assert install_torch.index_problem(url) is None


def test_probe_reports_an_http_error_and_a_refused_connection():
    with serve(answering(503)) as url:
        assert install_torch.index_problem(url) == "HTTP 503"
    assert "refused" in install_torch.index_problem(closed_port_url()).lower()


def test_probe_gives_up_on_a_silent_index_within_its_timeout():
    with serve(Silent) as url:
        start = time.monotonic()
        problem = install_torch.index_problem(url, timeout=1.0)
        elapsed = time.monotonic() - start
    assert problem is not None and elapsed < 3


# --- the script, as venv.sh runs it (dry run: the pip commands it would run) --------------------


def test_script_on_linux_asks_the_cpu_index_for_torch(bare_python):
    with serve(answering(200)) as url:
        result = run_install_torch(bare_python, "--dry-run", COURSE_TORCH_CPU_INDEX=url)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[1:] == [
        f"pip install --quiet --no-deps --index-url {url} {PIN}",
        f"pip install --quiet {PIN}",
    ]


@pytest.mark.parametrize("how", [{"args": ("--gpu",)}, {"env": {"COURSE_TORCH": "gpu"}}])
def test_script_gpu_choice_is_the_plain_pin(bare_python, how):
    with serve(answering(200)) as url:
        env = {"COURSE_TORCH_CPU_INDEX": url, **how.get("env", {})}
        result = run_install_torch(bare_python, "--dry-run", *how.get("args", ()), **env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[1:] == [f"pip install --quiet {PIN}"]
    assert "CUDA" in result.stdout.splitlines()[0]


def test_script_falls_back_in_seconds_when_the_cpu_index_never_answers(bare_python):
    # CI runs the install where PyTorch's index is out of reach: the fallback must stay cheap.
    with serve(Silent) as url:
        start = time.monotonic()
        result = run_install_torch(bare_python, "--dry-run", COURSE_TORCH_CPU_INDEX=url)
        elapsed = time.monotonic() - start
    assert result.returncode == 0, result.stderr
    first, *commands = result.stdout.splitlines()
    assert first.startswith(f"PyTorch's CPU index {url} is unreachable (no answer within 5 s)")
    assert commands == [f"pip install --quiet {PIN}"]
    assert elapsed < 20


def test_script_refuses_an_unknown_build_in_one_line(bare_python):
    result = run_install_torch(bare_python, "--dry-run", COURSE_TORCH="tpu")
    assert result.returncode == 2
    assert result.stderr.strip() == "COURSE_TORCH='tpu' is not a choice: use cpu (the default) or gpu."


def test_script_refuses_what_pypi_cannot_give_in_one_line(monkeypatch, capsys):
    monkeypatch.delenv("COURSE_TORCH", raising=False)
    monkeypatch.setattr(install_torch.sys, "platform", "win32")
    assert install_torch.main(["--gpu", "--dry-run"]) == 2
    assert "PyPI's torch for Windows is the CPU build" in capsys.readouterr().err
    monkeypatch.setattr(install_torch.sys, "platform", "darwin")
    monkeypatch.setattr(install_torch.platform, "machine", lambda: "x86_64")
    assert install_torch.main(["--dry-run"]) == 2
    assert capsys.readouterr().err.startswith("PyTorch 2.13.0 has no build for Intel Macs")


# --- the script, for real, with local indexes standing in for PyTorch's and PyPI ----------------


@pytest.fixture(scope="module")
def indexes(tmp_path_factory) -> Iterator[dict[str, str]]:
    root = tmp_path_factory.mktemp("indexes")
    cpu = simple_index(root / "cpu", "2.13.0+cpu")
    default = simple_index(root / "default", "2.13.0")
    with serve(serving_folder(cpu)) as cpu_url, serve(serving_folder(default)) as default_url:
        yield {"cpu": cpu_url, "default": default_url}


def install_into_fresh_venv(tmp_path: Path, cpu_index: str, default_index: str) -> tuple[str, str]:
    """Runs install_torch.py in a new venv; returns (its output, the torch version it installed)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    # This pip, copied in: seconds, where ensurepip takes up to a minute on a busy machine.
    site_packages = venv / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    shutil.copytree(Path(sysconfig.get_paths()["purelib"]) / "pip", site_packages / "pip")
    python = str(venv / "bin" / "python")
    isolated = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env = {**isolated, "PIP_CONFIG_FILE": os.devnull, "PIP_INDEX_URL": default_index, "PIP_NO_CACHE_DIR": "1"}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["COURSE_TORCH_CPU_INDEX"] = cpu_index
    result = subprocess.run(
        [python, str(SCRIPTS / "install_torch.py")], capture_output=True, text=True, env=env, timeout=300
    )
    assert result.returncode == 0, result.stdout + result.stderr
    version = subprocess.run(
        [python, "-c", "import importlib.metadata as m; print(m.version('torch'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return result.stdout, version


def test_install_takes_the_cpu_build_from_the_cpu_index(indexes, tmp_path):
    output, version = install_into_fresh_venv(tmp_path, indexes["cpu"], indexes["default"])
    assert version == "2.13.0+cpu"
    assert f"the CPU build (about 200 MB) from {indexes['cpu']}" in output


def test_install_falls_back_to_pips_own_index_when_the_cpu_index_is_down(indexes, tmp_path):
    with serve(answering(503)) as down:
        output, version = install_into_fresh_venv(tmp_path, down, indexes["default"])
    assert version == "2.13.0"
    assert output.startswith(f"PyTorch's CPU index {down} is unreachable (HTTP 503)")


# --- the bash scripts' steps and options, with a recording python, jupyter, npm and apt-get -----

RECORDER = """#!/usr/bin/env bash
echo "$(basename "$0") COURSE_TORCH=${COURSE_TORCH:-} $*" >> "$RECORD"
"""


@pytest.fixture
def fake_checkout(tmp_path) -> Path:
    """A copy of scripts/ beside a prepared .venv whose programs record their arguments."""
    checkout = tmp_path / "checkout"
    shutil.copytree(SCRIPTS, checkout / "scripts")
    bin_dir = checkout / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "activate").write_text(f'export PATH="{bin_dir}:$PATH"\n')
    for program in ("python", "jupyter", "npm", "apt-get"):
        (bin_dir / program).write_text(RECORDER)
        (bin_dir / program).chmod(0o755)
    return checkout


def run_bash(checkout: Path, script: str, *args: str) -> tuple[subprocess.CompletedProcess, list[str]]:
    record = checkout / "record.log"
    env = {k: v for k, v in os.environ.items() if k != "COURSE_TORCH"}
    env["RECORD"] = str(record)
    result = subprocess.run(
        ["bash", f"scripts/{script}", *args],
        cwd=checkout,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    return result, record.read_text().splitlines() if record.exists() else []


def student_plugins() -> list[str]:
    text = (SCRIPTS / "student_tools.sh").read_text(encoding="utf-8")
    block = re.search(r"INSTRUCTOR_LAB_PLUGINS=\((.*?)\)", text, re.S).group(1)
    return re.findall(r'"([^"]+)"', block)


def test_student_install_runs_its_steps_in_order(fake_checkout):
    result, calls = run_bash(fake_checkout, "install-student.sh")
    assert result.returncode == 0, result.stderr
    plugins = " ".join(student_plugins())
    assert calls == [
        "python COURSE_TORCH= -m pip install --upgrade pip --quiet",
        "python COURSE_TORCH= scripts/install_torch.py",
        "python COURSE_TORCH= -m pip install -r requirements.txt --quiet",
        "python COURSE_TORCH= -m pip install -q --no-deps -e . --quiet",
        f"jupyter COURSE_TORCH= labextension disable --level=sys_prefix --log-level=WARN {plugins}",
        f"jupyter COURSE_TORCH= labextension lock --level=sys_prefix --log-level=WARN {plugins}",
        *(
            f"jupyter COURSE_TORCH= server extension disable --sys-prefix nbgrader.server_extensions.{name}"
            for name in ("formgrader", "course_list", "assignment_list")
        ),
        "python COURSE_TORCH= -m transformer_course.lesson_contents sys_prefix",
        "python COURSE_TORCH= scripts/check_environment.py --next "
        "source .venv/bin/activate && jupyter lab notebooks/",
    ]


def test_student_install_gpu_option_reaches_the_torch_step(fake_checkout):
    result, calls = run_bash(fake_checkout, "install-student.sh", "--gpu")
    assert result.returncode == 0, result.stderr
    assert "python COURSE_TORCH=gpu scripts/install_torch.py" in calls


def test_an_unknown_option_stops_before_installing_with_one_line(fake_checkout):
    result, calls = run_bash(fake_checkout, "install-student.sh", "--cuda")
    assert result.returncode == 2 and calls == []
    assert (
        result.stderr.strip()
        == "Unknown option --cuda: the one option is --gpu (PyTorch's CUDA build on Linux)."
    )


def test_authors_install_takes_gpu_when_run_itself_and_ignores_pytest_arguments_when_sourced(fake_checkout):
    result, calls = run_bash(fake_checkout, "install.sh", "--gpu")
    assert result.returncode == 0, result.stderr
    assert "python COURSE_TORCH=gpu scripts/install_torch.py" in calls
    assert any("-r requirements-dev.txt" in call for call in calls)
    assert "check_environment.py --requirements requirements-dev.txt --next" in calls[-1]

    (fake_checkout / "record.log").unlink()
    # test.sh sources install.sh and passes its own arguments through to pytest.
    (fake_checkout / "scripts" / "like_test.sh").write_text(
        'source "$(dirname "${BASH_SOURCE[0]}")/install.sh"\n'
    )
    result, calls = run_bash(fake_checkout, "like_test.sh", "-ra", "--durations=15")
    assert result.returncode == 0, result.stderr
    assert "python COURSE_TORCH= scripts/install_torch.py" in calls
    assert calls[-1].endswith("check_environment.py --requirements requirements-dev.txt")


def test_a_missing_python_venv_module_gets_a_one_line_hint(fake_checkout, tmp_path):
    shutil.rmtree(fake_checkout / ".venv")
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    # python3 as on Debian without python3-venv: it runs, but cannot make a virtual environment.
    (fake_bin / "python3").write_text(
        f'#!/usr/bin/env bash\n[ "$1" = -m ] && [ "$2" = venv ] && exit 1\nexec {sys.executable} "$@"\n'
    )
    (fake_bin / "python3").chmod(0o755)
    env = {**os.environ, "PATH": f"{fake_bin}:{os.environ['PATH']}"}
    result = subprocess.run(
        ["bash", "scripts/install-student.sh"], cwd=fake_checkout, capture_output=True, text=True, env=env
    )
    assert result.returncode == 1
    assert result.stderr.strip().endswith("apt install python3-venv.")
    assert not (fake_checkout / ".venv").exists()


def test_the_log_filter_drops_only_the_local_index_warning():
    noise = (
        "WARNING: Location 'file:///opt/pypi/simple/torch/' is ignored: it is neither a file nor a directory."
    )
    real = "ERROR: Could not find a version that satisfies the requirement torch==2.13.0"
    result = subprocess.run(
        [
            "bash",
            "-c",
            f'source {SCRIPTS / "venv.sh"} && printf \'%s\\n\' "$0" "$1" | without_local_index_noise',
            noise,
            real,
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert result.stdout.splitlines() == [real]


@pytest.mark.slow
def test_switching_off_the_instructor_tools_is_silent_and_locks_them(tmp_path):
    """The real `jupyter` commands of student_tools.sh (user level, a fresh config folder): no
    line in the install log (a loop of disables once printed JupyterLab's plugin-manager note
    five times), every instructor plugin disabled and locked."""
    config = tmp_path / "jupyter-config"
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(config),
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
    }
    result = subprocess.run(
        ["bash", "-c", f"source {SCRIPTS / 'student_tools.sh'} && disable_instructor_tools user"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0 and result.stdout + result.stderr == "", result.stdout + result.stderr
    page_config = json.loads((config / "labconfig" / "page_config.json").read_text(encoding="utf-8"))
    plugins = dict.fromkeys(student_plugins(), True)
    assert page_config == {"disabledExtensions": plugins, "lockedExtensions": plugins}


def test_serving_lessons_for_this_python_is_silent_and_sets_the_contents_manager(tmp_path):
    """student_tools.sh's real step (user level, a fresh config folder): Jupyter Server is told
    to serve lessons with this Python's language_info, and the install log gets no line."""
    config = tmp_path / "jupyter-config"
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(config),
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
    }
    result = subprocess.run(
        ["bash", "-c", f"source {SCRIPTS / 'student_tools.sh'} && serve_lessons_for_this_python user"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert result.returncode == 0 and result.stdout + result.stderr == "", result.stdout + result.stderr
    server_config = json.loads((config / "jupyter_server_config.json").read_text(encoding="utf-8"))
    assert server_config == {
        "ServerApp": {"contents_manager_class": "transformer_course.lesson_contents.LessonContentsManager"}
    }


# --- the course package's own build: what `pip install -e .` runs ------------------------------

BUILD_HOOKS = """
import setuptools.build_meta as backend
backend.get_requires_for_build_editable()
metadata = backend.prepare_metadata_for_build_editable("meta")
backend.build_editable("dist", metadata_directory="meta/" + metadata)
"""


def test_the_editable_build_prints_no_setuptools_deprecation_banner(tmp_path):
    """The three build hooks pip calls for the scripts' `pip install -e .`, on a copy of the
    package, with every warning shown: the packaging metadata triggers no deprecation banner
    (a `license = { text = ... }` table did, once per hook). Setuptools' one note left, on editable
    installs in general, is not about this package; the scripts' `-qq` keeps it out of the log."""
    from packaging.requirements import Requirement

    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    (wanted,) = [
        Requirement(r) for r in re.findall(r'"([^"]+)"', re.search(r"requires = \[(.*)\]", pyproject)[1])
    ]
    assert wanted.name == "setuptools" and wanted.specifier.contains(importlib.metadata.version("setuptools"))
    project = tmp_path / "project"
    project.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, project / name)
    for package in ("transformer_course", "course_build", "course_site"):
        shutil.copytree(ROOT / package, project / package, ignore=shutil.ignore_patterns("__pycache__"))
    (project / "meta").mkdir()
    (project / "dist").mkdir()
    result = subprocess.run(
        [sys.executable, "-W", "default", "-c", BUILD_HOOKS],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    assert list((project / "dist").glob("transformer_course-*.whl")), output[-3000:]
    warnings = re.findall(r"^\S+:\d+: (\w+): (.*)$", output, re.M)
    assert "deprecat" not in output.lower(), warnings
    assert warnings == [("InformationOnly", "Editable installation.")]


# --- the Windows script mirrors install-student.sh ---------------------------------------------


def powershell_list(text: str, name: str) -> list[str]:
    return re.findall(r'"([^"]+)"', re.search(rf"\${name} = @\((.*?)\)", text, re.S).group(1))


def test_windows_script_mirrors_the_student_install():
    ps1 = (SCRIPTS / "install-student.ps1").read_text(encoding="utf-8")
    tools = (SCRIPTS / "student_tools.sh").read_text(encoding="utf-8")
    assert powershell_list(ps1, "InstructorLabPlugins") == student_plugins()
    server = re.findall(
        r'"([^"]+)"', re.search(r"INSTRUCTOR_SERVER_EXTENSIONS=\((.*?)\)", tools, re.S).group(1)
    )
    assert powershell_list(ps1, "InstructorServerExtensions") == server
    steps = [
        '"--upgrade", "pip"',
        '"scripts\\install_torch.py"',
        '"-r", "requirements.txt"',
        '"--no-deps", "-e", "."',
        '"labextension", "disable"',
        '"labextension", "lock"',
        "server extension disable --sys-prefix",
        '"transformer_course.lesson_contents", "sys_prefix"',
        '"scripts\\check_environment.py"',
    ]
    positions = [ps1.find(step) for step in steps]
    assert -1 not in positions and positions == sorted(positions), dict(zip(steps, positions, strict=True))
    # The torch pin lives in install_torch.py alone, for both scripts.
    assert "torch==" not in ps1
    assert "(3, 10)" in ps1 and ".venv\\Scripts\\Activate.ps1" in ps1


def test_windows_script_survives_windows_powershell_parsing():
    raw = (SCRIPTS / "install-student.ps1").read_bytes()
    # Windows PowerShell 5.1 reads a file without a byte-order mark in the ANSI code page.
    assert raw.isascii()
    # A backslash before a closing quote reaches the program as an escaped quote.
    assert not re.search(r'\\"\s*[,)]', raw.decode())


# --- the closing environment check --------------------------------------------------------------


def test_environment_check_reads_the_python_floor_and_every_pin():
    minimum = check_environment.minimum_python((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert minimum == (3, 10)
    assert re.search(r'^requires-python = ">=3\.10"$', (ROOT / "pyproject.toml").read_text(), re.M)
    pins = check_environment.pinned_requirements(ROOT / "requirements-dev.txt")
    # requirements-dev.txt includes the instructors' file, which includes the students'.
    assert pins["torch"] == "2.13.0" and pins["jupyter-book"] == "1.0.4.post1" and pins["pytest"] == "9.2.0"


def test_environment_check_names_what_is_missing_too_old_or_off_pin():
    installed = {"torch": "2.13.0+cpu", "numpy": "2.3.0", "transformer_course": "0.1.0"}
    problems = check_environment.find_problems(
        (3, 9, 18),
        (3, 10),
        {"torch": "2.13.0", "numpy": "2.4.6", "nbgrader": "0.9.6"},
        "requirements.txt",
        installed.get,
    )
    assert problems == [
        "Python 3.9.18 is too old: the course needs 3.10 or newer",
        "numpy 2.3.0 is installed; requirements.txt pins 2.4.6",
        "nbgrader is missing (requirements.txt pins 0.9.6)",
    ]


def test_environment_check_notes_absent_git_and_node_only_when_absent():
    assert check_environment.tool_notes(lambda name: f"/usr/bin/{name}") == []
    notes = check_environment.tool_notes(lambda name: None)
    assert [note.split()[0] for note in notes] == ["git", "Node.js/npm"]


def test_environment_check_passes_on_this_install_and_fails_on_a_missing_package(tmp_path):
    done = subprocess.run(
        [sys.executable, str(SCRIPTS / "check_environment.py"), "--next", "open JupyterLab"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    last = done.stdout.splitlines()[-1]
    assert last.startswith("Installed for Python ") and last.endswith("Next: open JupyterLab")

    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    missing = subprocess.run(
        [str(bare / "bin" / "python"), str(SCRIPTS / "check_environment.py")], capture_output=True, text=True
    )
    assert missing.returncode == 1
    assert "  - torch is missing (requirements.txt pins 2.13.0)" in missing.stderr.splitlines()


def test_readme_documents_the_install_choices():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    how_to = (ROOT / "book" / "how_to_use.md").read_text(encoding="utf-8")
    for text in (readme, how_to):
        for needed in ("--gpu", "COURSE_TORCH=gpu", "install-student.ps1", "python3-venv", "3.10"):
            assert needed in text, needed
    assert "COURSE_TORCH_CPU_INDEX" in readme

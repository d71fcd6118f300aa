"""Each fresh student notebook runs to its quiz in a Colab-like environment: ipywidgets 7, no
checkout, and Run All stopping at the first error.

Colab ignores JupyterLab's ``raises-exception`` tag, so a cell that raises stops Run All there.
The run below does the same (tags removed, errors not allowed) with every exercise still a stub:
the unwritten exercises, their tests and the cells that use their answers must each print an
*Exercise still to do* line instead of raising, and the quiz, the last cell, must run.

Colab ships ipywidgets 7 and its own scientific stack; a notebook opened there has only what the
notebook's first cell installs on top. This test builds a fresh virtual environment (no system
site-packages) holding just the packages Colab preinstalls that the course touches, with
ipywidgets 7, and runs every student notebook in it from a folder that holds nothing but the
notebook.

The first cell installs ``transformer_course @ git+<repository URL>`` when the package is
missing. Offline there is no GitHub, so the test rewrites that one URL to ``file://`` of a
snapshot of the working tree (the files a clone would have: tracked plus untracked-but-not-ignored
ones) and lets the cell's own ``%pip install`` run. The package is uninstalled first, so the cell
really installs it, dependencies included, exactly as on Colab.

Creating the environment takes minutes, so it is cached between sessions (keyed by the
requirement list and Python version) under ``$COURSE_TEST_CACHE`` (default
``~/.cache/attention-built-up``); delete that folder to rebuild it.
"""

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import yaml

from course_build.paths import (
    BOOK_CONFIG,
    REPO_ROOT,
    lesson_names,
    student_notebook,
)

pytestmark = pytest.mark.slow

# What Colab preinstalls that the lessons rely on, at Colab-like versions. torch is pinned so pip
# never pulls a multi-GB CUDA build.
COLAB_PACKAGES = (
    "numpy",
    "matplotlib",
    "ipywidgets>=7.7,<8",
    "pyyaml",
    "ipykernel",
    "nbclient",
    "torch==2.13.0",
)
NOTEBOOK_TIMEOUT_S = 1200

# Runs inside the Colab-like environment: execute a notebook as Colab's Run All does (cell tags
# ignored, the first error stops the run) and save what ran.
RUNNER = """
import sys
import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

notebook = nbformat.read(sys.argv[1], as_version=4)
for cell in notebook.cells:
    cell.metadata["tags"] = [t for t in cell.metadata.get("tags", []) if t != "raises-exception"]
client = NotebookClient(
    notebook, timeout=600, kernel_name="python3", allow_errors=False, store_widget_state=True,
    resources={"metadata": {"path": sys.argv[3]}},
)
try:
    client.execute()
except CellExecutionError:
    pass  # the test reports the cell that stopped the run
nbformat.write(notebook, sys.argv[2])
"""

# Appended to each notebook: which packages the kernel really used.
PROBE = """
import json, ipywidgets, transformer_course
print("PROBE " + json.dumps({"ipywidgets": ipywidgets.__version__,
                             "transformer_course": transformer_course.__file__}))
"""


def cache_dir() -> Path:
    return Path(os.environ.get("COURSE_TEST_CACHE", Path.home() / ".cache" / "attention-built-up"))


def run(command: list[str], **kwargs) -> subprocess.CompletedProcess:
    """Run a command, failing the test with its output when it fails."""
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        pytest.fail(f"{' '.join(command)} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return result


def clean_env(venv: Path, home: Path) -> dict[str, str]:
    """An environment that sees only the venv: no PYTHONPATH, no user Jupyter kernels or config.
    The suite's math-thread settings are kept (tests/conftest.py: one thread per test worker)."""
    keep = ("HOME", "LANG", "LC_ALL", "TMPDIR", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE")
    keep += ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
    env = {k: v for k, v in os.environ.items() if k in keep or k.startswith("PIP_")}
    env.update(
        PATH=f"{venv / 'bin'}:/usr/bin:/bin",
        VIRTUAL_ENV=str(venv),
        JUPYTER_CONFIG_DIR=str(home / "config"),
        JUPYTER_DATA_DIR=str(home / "data"),
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
        IPYTHONDIR=str(home / "ipython"),
        MPLCONFIGDIR=str(home / "matplotlib"),
        PYTHONNOUSERSITE="1",
    )
    return env


@pytest.fixture(scope="session")
def colab_venv(tmp_path_factory) -> Path:
    """The cached Colab-like venv, without transformer_course (the notebooks install it)."""
    key = hashlib.sha256(json.dumps([sys.version, COLAB_PACKAGES]).encode()).hexdigest()[:12]
    venv = cache_dir() / f"colab-like-venv-{key}"
    python = venv / "bin" / "python"
    env = clean_env(venv, tmp_path_factory.mktemp("colab-home"))
    if not (venv / ".complete").is_file():
        shutil.rmtree(venv, ignore_errors=True)
        venv.parent.mkdir(parents=True, exist_ok=True)
        base_python = getattr(sys, "_base_executable", sys.executable)
        run([base_python, "-m", "venv", str(venv)], env=env)
        run([str(python), "-m", "pip", "install", "--quiet", *COLAB_PACKAGES], env=env, timeout=3600)
        (venv / ".complete").write_text("\n".join(COLAB_PACKAGES), encoding="utf-8")
    run([str(python), "-m", "pip", "uninstall", "--yes", "--quiet", "transformer_course"], env=env)
    return venv


@pytest.fixture(scope="session")
def checkout_snapshot(tmp_path_factory) -> Path:
    """What a clone of the working tree holds: tracked and untracked-but-not-ignored files."""
    files = run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=REPO_ROOT
    ).stdout.split("\0")
    snapshot = tmp_path_factory.mktemp("clone") / "attention-built-up"
    for name in filter(None, files):
        source = REPO_ROOT / name
        if source.is_file():
            (snapshot / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, snapshot / name)
    return snapshot


def install_from(notebook: nbformat.NotebookNode, snapshot: Path) -> nbformat.NotebookNode:
    """The notebook with its install cell pointed at the local snapshot instead of GitHub."""
    repository = yaml.safe_load(BOOK_CONFIG.read_text(encoding="utf-8"))["repository"]["url"]
    github_spec = f"git+{repository}"
    install_cells = [c for c in notebook.cells if c.cell_type == "code" and github_spec in c.source]
    assert len(install_cells) == 1, f"expected one cell installing {github_spec!r}"
    install_cells[0].source = install_cells[0].source.replace(github_spec, snapshot.as_uri())
    notebook.cells.append(nbformat.v4.new_code_cell(PROBE))
    return notebook


@pytest.mark.parametrize("lesson", lesson_names())
def test_fresh_student_notebook_runs_to_its_quiz_like_colab(lesson, colab_venv, checkout_snapshot, tmp_path):
    notebook = install_from(nbformat.read(student_notebook(lesson), as_version=4), checkout_snapshot)
    workdir = tmp_path / "content"  # like Colab's /content: the notebook and nothing else
    workdir.mkdir()
    given, executed_path = workdir / f"{lesson}.ipynb", tmp_path / "executed.ipynb"
    nbformat.write(notebook, given)
    run(
        [str(colab_venv / "bin" / "python"), "-c", RUNNER, str(given), str(executed_path), str(workdir)],
        cwd=workdir,
        env=clean_env(colab_venv, tmp_path / "home"),
        timeout=NOTEBOOK_TIMEOUT_S,
    )
    executed = nbformat.read(executed_path, as_version=4)

    stopped = [
        f"cell {i} ({cell.source.splitlines()[0][:60]!r}): {output['ename']}: {output['evalue'][:300]}"
        for i, cell in enumerate(executed.cells)
        if cell.cell_type == "code"
        for output in cell.outputs
        if output.get("output_type") == "error"
    ]
    assert stopped == [], f"{lesson}: Run All stopped with every exercise still to do"
    quiz = [cell for cell in executed.cells[:-1] if cell.cell_type == "code"][-1]  # -1: the probe
    assert quiz.source.endswith(f'lesson_quiz("{lesson}")') and quiz.execution_count, "the quiz ran"
    printed = "".join(o.get("text", "") for c in executed.cells if c.cell_type == "code" for o in c.outputs)
    plain = re.sub(r"\x1b\[[0-9;]*m", "", printed)  # the message's colours
    to_do = [line for line in plain.splitlines() if "still to do" in line]
    assert to_do, f"{lesson}: the unwritten exercises should say so"
    assert all(line.startswith("Exercise still to do: ") for line in to_do), to_do

    probe = next(
        json.loads(line.removeprefix("PROBE "))
        for output in executed.cells[-1].outputs
        for line in output.get("text", "").splitlines()
        if line.startswith("PROBE ")
    )
    assert probe["ipywidgets"].startswith("7."), probe
    assert str(colab_venv) in probe["transformer_course"], "the kernel imported the checkout"

    # Widget code written for ipywidgets 8 often warns under 7 (renamed traits): nothing may be
    # written to stderr after the install cell.
    install_index = next(i for i, c in enumerate(executed.cells) if checkout_snapshot.as_uri() in c.source)
    stderr = [
        f"cell {i}: {output['text'][:300]}"
        for i, cell in enumerate(executed.cells)
        if i > install_index and cell.cell_type == "code"
        for output in cell.outputs
        if output.get("name") == "stderr"
    ]
    assert stderr == []

    views = [
        output
        for cell in executed.cells
        if cell.cell_type == "code"
        for output in cell.outputs
        if "application/vnd.jupyter.widget-view+json" in output.get("data", {})
    ]
    if "application/vnd.jupyter.widget-view+json" in student_notebook(lesson).read_text(encoding="utf-8"):
        assert views, f"{lesson} shows widgets under ipywidgets 8 but none under ipywidgets 7"

"""Run a notebook top to bottom in a fresh kernel, keeping outputs and widget state."""

import os
import shutil
import tempfile
from pathlib import Path

from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from nbformat import NotebookNode

from course_build.paths import NOTEBOOKS_DIR

CELL_TIMEOUT_S = 600
# An IPython startup file: the kernel names widget models deterministically (see the module).
STARTUP_FILE = "from course_build.authoring.stable_widget_ids import install\n\ninstall()\n"


def merge_adjacent_streams(notebook: NotebookNode) -> None:
    """Join consecutive outputs of the same stream: how the kernel happened to flush its output
    (one chunk or two) must not change the saved notebook. Order against other outputs is kept."""
    for cell in notebook.cells:
        merged: list[NotebookNode] = []
        for output in cell.get("outputs", []):
            previous = merged[-1] if merged else None
            if (
                previous is not None
                and output.get("output_type") == "stream"
                and previous.get("output_type") == "stream"
                and previous.get("name") == output.get("name")
            ):
                previous["text"] += output["text"]
            else:
                merged.append(output)
        if cell.get("outputs"):
            cell.outputs = merged


def _first_error(notebook: NotebookNode) -> tuple[NotebookNode, dict] | None:
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                return cell, output
    return None


def execute_notebook(
    notebook: NotebookNode,
    cwd: Path = NOTEBOOKS_DIR,
    allow_errors: bool = False,
    env: dict[str, str] | None = None,
) -> NotebookNode:
    """Execute ``notebook`` in place (and return it) from ``cwd``, where students open lessons.

    Widget state is stored so the saved notebook, and the book page made from it, show each
    widget's default view; widget ids are stable, so executing the same notebook twice gives the
    same file. ``env`` adds variables to the kernel's environment. Unless ``allow_errors``, any
    error raises ``CellExecutionError``, also in cells tagged ``raises-exception`` (exercise
    cells carry that tag so that students' Run All goes on past them, but the solution must not
    fail anywhere).

    Whatever the run writes into ``cwd`` is removed afterwards: lessons 8 and 9's export cells write
    ``my_transformer.py`` there, with the solutions in it, and the student folder must hold only
    the notebooks (the student repository copies it whole).
    """
    already_there = set(os.listdir(cwd))
    try:
        _execute(notebook, cwd, allow_errors, env)
    finally:
        for name in set(os.listdir(cwd)) - already_there:
            path = Path(cwd) / name
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
    merge_adjacent_streams(notebook)
    error = None if allow_errors else _first_error(notebook)
    if error is not None:
        cell, output = error
        raise CellExecutionError(
            traceback="\n".join(output.get("traceback", [])),
            ename=output.get("ename", ""),
            evalue=f"{output.get('evalue', '')} (cell {cell.get('id')})",
        )
    return notebook


def _execute(notebook: NotebookNode, cwd: Path, allow_errors: bool, env: dict[str, str] | None) -> None:
    """Run the cells in a fresh kernel whose IPython profile names widget models stably."""
    kernel_env = dict(os.environ)
    # A kernel started here must not think it is being graded unless the caller says so.
    kernel_env.pop("NBGRADER_EXECUTION", None)
    kernel_env.update(env or {})
    with tempfile.TemporaryDirectory(prefix="course-ipython-") as ipython_dir:
        startup = Path(ipython_dir) / "profile_default" / "startup" / "00-stable-widget-ids.py"
        startup.parent.mkdir(parents=True)
        startup.write_text(STARTUP_FILE, encoding="utf-8")
        kernel_env["IPYTHONDIR"] = ipython_dir
        client = NotebookClient(
            notebook,
            timeout=CELL_TIMEOUT_S,
            kernel_name="python3",
            resources={"metadata": {"path": str(cwd)}},
            allow_errors=allow_errors,
            store_widget_state=True,
            record_timing=False,
        )
        client.execute(env=kernel_env)

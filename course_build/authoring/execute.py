"""Run a notebook top to bottom in a fresh kernel, keeping outputs and widget state."""

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from nbformat import NotebookNode

from course_build.paths import NOTEBOOKS_DIR
from transformer_course.translation.solution_export import EXPORT_FILE

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
    """
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


@contextlib.contextmanager
def export_file_as_found(folder: Path = NOTEBOOKS_DIR) -> Iterator[None]:
    """Leave ``folder``'s ``my_transformer.py`` (``EXPORT_FILE``) as it was before the block:
    absent, or the bytes it held.

    Lessons 8 and 9's export cells write that file where they run, with the solutions in it, and
    lesson 9 trains from the classes lesson 8 wrote there, so a build of several lessons keeps it
    from one lesson to the next. Afterwards the solutions must not stay beside the student
    notebooks (the student repository copies the folder), nor replace an export of the author's.
    """
    export = Path(folder) / EXPORT_FILE
    found = export.read_bytes() if export.is_file() else None
    try:
        yield
    finally:
        if found is None:
            export.unlink(missing_ok=True)
        else:
            export.write_bytes(found)

"""Run a notebook top to bottom in a fresh kernel, keeping outputs and widget state."""

import os
from pathlib import Path

from nbclient import NotebookClient
from nbformat import NotebookNode

from course_build.paths import NOTEBOOKS_DIR

CELL_TIMEOUT_S = 600


def execute_notebook(
    notebook: NotebookNode,
    cwd: Path = NOTEBOOKS_DIR,
    allow_errors: bool = False,
    env: dict[str, str] | None = None,
) -> NotebookNode:
    """Execute ``notebook`` in place (and return it) from ``cwd``, where students open lessons.

    Widget state is stored so the saved notebook, and the book page made from it, show each
    widget's default view. ``env`` adds variables to the kernel's environment.
    """
    kernel_env = dict(os.environ)
    # A kernel started here must not think it is being graded unless the caller says so.
    kernel_env.pop("NBGRADER_EXECUTION", None)
    kernel_env.update(env or {})
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
    return notebook

"""Where a lesson is running: a student's kernel, or an nbgrader grading run."""

import os


def is_grading() -> bool:
    """True while nbgrader executes the notebook.

    nbgrader sets ``NBGRADER_EXECUTION`` ("autograde" or "validate") when it runs a notebook;
    heavy cells (training, long timings) check this to take a fast path so grading takes seconds.
    """
    return bool(os.environ.get("NBGRADER_EXECUTION"))

"""nbgrader configuration of the course: every path is relative to this folder.

Run nbgrader commands from ``autograder/`` (or use ``python -m course_build.grade``, which does
the whole batch for a lesson). The gradebook (``gradebook.db``) is created on demand and never
committed. The grading steps below are explained in book/instructors.md.
"""

from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import (
    AssignLatePenalties,
    CheckCellMetadata,
    ClearHiddenTests,
    ClearOutput,
    DeduplicateIds,
    GetGrades,
    IgnorePattern,
    LimitOutput,
    OverwriteCells,
    OverwriteKernelspec,
    SaveAutoGrades,
)

from course_build.feedback import ShortenTestTracebacks
from course_build.grading_preprocessors import NeutralizeTampering, RestoreGradedCells, StderrDoesNotFail
from course_build.guarded_execute import GuardedExecute
from course_build.lms import SUBMISSION_FILE_REGEXP

c = get_config()  # noqa: F821 - provided by nbgrader when it loads this file

c.CourseDirectory.course_id = "attention-built-up"
c.CourseDirectory.root = "."
c.CourseDirectory.db_url = "sqlite:///gradebook.db"

# Collecting an LMS download (`nbgrader zip_collect`): file names as documented in
# course_build/lms.py, e.g. `smithjane_1234_5678_03_attention.ipynb`.
c.FileNameCollectorPlugin.named_regexp = SUBMISSION_FILE_REGEXP

# Autograding. Before a submission runs, its graded cells are rebuilt on the release (deleted or
# re-tagged test cells come back) and statements that tamper with grading are removed. It then
# runs with a memory cap, a per-cell timeout, kernel restarts after a hang or a crash, and a
# token that proves each test cell ran to its end with numpy and the builtins intact.
c.Autograde.sanitize_preprocessors = [
    ClearOutput,
    RestoreGradedCells,
    DeduplicateIds,
    OverwriteKernelspec,
    OverwriteCells,
    NeutralizeTampering,
    CheckCellMetadata,
]
c.Autograde.autograde_preprocessors = [
    GuardedExecute,
    IgnorePattern,
    ClearMetadataPreprocessor,
    LimitOutput,
    StderrDoesNotFail,
    SaveAutoGrades,
    AssignLatePenalties,
    CheckCellMetadata,
]
# A cell running longer than this is interrupted (an endless loop costs that cell, not the batch).
c.Execute.timeout = 120
c.GuardedExecute.memory_limit_gib = 4.0

# Feedback shows the student's work and the visible tests, never the hidden tests' code: their
# source is cleared and failed tests show only the error message, not a traceback quoting them.
c.GenerateFeedback.preprocessors = [
    GetGrades,
    ClearHiddenTests,
    ShortenTestTracebacks,
    CSSHTMLHeaderPreprocessor,
]

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
from course_build.grading_preprocessors import RestoreGradedCells
from course_build.sandboxed_execute import SandboxedExecute

c = get_config()  # noqa: F821 - provided by nbgrader when it loads this file

c.CourseDirectory.course_id = "attention-built-up"
c.CourseDirectory.root = "."
c.CourseDirectory.db_url = "sqlite:///gradebook.db"

# Autograding. Before a submission runs, its graded cells are rebuilt on the release (deleted or
# re-tagged test cells come back); the student's own code is never changed. It then runs in a
# bubblewrap sandbox (a private copy of the submission, no network, no view of this folder, an
# unprivileged uid, limits on memory, processes, files, output and time), and every test cell is
# executed outside the sandbox by a trusted checker that calls the student's functions with plain
# data. Without bubblewrap, grading stops unless `--SandboxedExecute.unsandboxed=True` is given
# (`python -m course_build.grade --unsandboxed`), and then every grade carries an UNPROTECTED note.
c.Autograde.sanitize_preprocessors = [
    ClearOutput,
    RestoreGradedCells,
    DeduplicateIds,
    OverwriteKernelspec,
    OverwriteCells,
    CheckCellMetadata,
]
c.Autograde.autograde_preprocessors = [
    SandboxedExecute,
    IgnorePattern,
    ClearMetadataPreprocessor,
    LimitOutput,
    SaveAutoGrades,
    AssignLatePenalties,
    CheckCellMetadata,
]
# A cell (or one call of a student's function from a test) running longer than this is
# interrupted: an endless loop costs that cell, not the batch.
c.Execute.timeout = 120
c.SandboxedKernelManager.memory_limit_gib = 4.0

# Feedback shows the student's work and the visible tests, never the hidden tests' code: their
# source is cleared and failed tests show only the error message, not a traceback quoting them.
c.GenerateFeedback.preprocessors = [
    GetGrades,
    ClearHiddenTests,
    ShortenTestTracebacks,
    CSSHTMLHeaderPreprocessor,
]

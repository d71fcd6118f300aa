"""nbgrader configuration of the course: every path is inside this folder, wherever it lies.

The term's commands (book/instructors.md) are run from the repository root:
``python -m course_build.grade`` (grade an LMS zip), ``python -m course_build.formgrader`` (grade
written answers), ``python -m course_build.report`` (feedback and the grade sheet). nbgrader's
own commands work from here, or from the repository root (its ``nbgrader_config.py`` loads this
file). The gradebook (``gradebook.db``) is created on demand and never committed.
"""

import os

from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import (
    AssignLatePenalties,
    CheckCellMetadata,
    ClearOutput,
    DeduplicateIds,
    GetGrades,
    IgnorePattern,
    LimitOutput,
    OverwriteKernelspec,
    SaveAutoGrades,
)

from course_build.nbgrader_plugins import no_exchange
from course_build.nbgrader_plugins.feedback import (
    FEEDBACK_TEMPLATE,
    TEMPLATE_DIRS,
    FeedbackExporter,
    HideHiddenTests,
    OfflinePage,
    ShowResult,
)
from course_build.nbgrader_plugins.restore_cells import PutBackHiddenTests, RestoreGradedCells
from course_build.nbgrader_plugins.sandboxed_execute import SandboxedExecute
from course_build.nbgrader_plugins.submission_metadata import CleanSubmissionMetadata

c = get_config()  # noqa: F821 - provided by nbgrader when it loads this file

c.CourseDirectory.course_id = "attention-built-up"
# This folder, as an absolute path: nbgrader then finds the course (and its gradebook,
# gradebook.db in this folder) from any working directory.
c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))

# Autograding. Before a submission runs, its metadata is given the types nbgrader reads (the
# grader's notes are kept in grader_notes/, never read from a notebook) and its graded cells are
# rebuilt on the release (deleted or re-tagged test cells come back); the student's own code is
# never changed. It then runs in a bubblewrap sandbox (a private copy of the submission, no
# network, no view of this folder, an unprivileged uid, limits on memory, processes, files, output
# and time), and every test cell is executed outside the sandbox by a trusted checker that calls
# the student's functions with plain data. Without bubblewrap, grading stops unless
# `--SandboxedExecute.unsandboxed=True` is given (`python -m course_build.grade --unsandboxed`),
# and then every grade carries an UNPROTECTED note.
c.Autograde.sanitize_preprocessors = [
    CleanSubmissionMetadata,
    ClearOutput,
    RestoreGradedCells,
    DeduplicateIds,
    OverwriteKernelspec,
    PutBackHiddenTests,  # nbgrader's OverwriteCells, quiet about the hidden tests it puts back
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
# Budgets kept by the grader, outside the sandbox: a test cell in all (every call into the notebook
# plus the checker's own work; past it that cell fails and the rest is graded) and a notebook in
# all (past it the remaining cells fail as not run; the notebook is still graded). The slowest
# honest test cells, measured with the reference solutions on the project's 2-core machine while
# five other grading jobs ran: lesson 3 13 s (softmax_values: the checker imports torch), lesson 6
# 6 s (layer_norm_torch), lesson 10 67 s (sample_frequencies, when each of its 5,000 draws was a
# kernel message of its own; each case's 1,000 draws are one `call_repeatedly` message since);
# whole nbgrader runs of those notebooks took 86 s, 163 s and 135 s.
c.SandboxedExecute.test_cell_budget = 300
c.SandboxedExecute.notebook_budget = 1200
c.SandboxedKernelManager.memory_limit_gib = 4.0

# Feedback shows the student's work, the visible tests and the points as the grade sheet counts
# them ("not graded yet" for a written answer the grader has not seen), never the hidden tests'
# code (cleared; a failed test shows only its message) nor the grader's notes. Its template is set
# for feedback only: the formgrader keeps its own.
c.GenerateFeedback.preprocessors = [
    GetGrades,
    HideHiddenTests,
    ShowResult,
    OfflinePage,
    CSSHTMLHeaderPreprocessor,
]
c.GenerateFeedback.exporter_class = FeedbackExporter  # nbconvert's HTMLExporter, less a second parse
c.GenerateFeedback.HTMLExporter.template_name = FEEDBACK_TEMPLATE
c.GenerateFeedback.HTMLExporter.extra_template_basedirs = TEMPLATE_DIRS

# Late submissions (course_build/instructor/late_policy.py). Lateness is always shown in the grade sheet and
# the feedback; these settings add deadlines and a penalty (none by default), for example:
# c.LatePolicy.deadlines = {"03_attention": "2026-10-12T23:59"}
# c.LatePolicy.timezone = "Europe/Berlin"    # of the deadlines above and of the zip's time stamps
# c.LatePolicy.grace_minutes = 15
# c.LatePolicy.penalty_per_day = 0.1         # a tenth of the lesson's points per started day
# c.LatePolicy.max_penalty = 0.5

# The formgrader shows students' names (set False to grade anonymously by default).
c.CourseFormgrader.show_student_names = True

# Students hand in through the LMS, not nbgrader's exchange: these stand-ins keep the formgrader
# from warning about a missing exchange directory, and explain themselves if an exchange command
# is tried. Delete them for a JupyterHub class that uses the exchange (book/instructors.md).
c.ExchangeFactory.exchange = no_exchange.NoExchange
c.ExchangeFactory.list = no_exchange.NoExchangeList
c.ExchangeFactory.release_assignment = no_exchange.NoReleaseAssignment
c.ExchangeFactory.release_feedback = no_exchange.NoReleaseFeedback
c.ExchangeFactory.fetch_assignment = no_exchange.NoFetchAssignment
c.ExchangeFactory.fetch_feedback = no_exchange.NoFetchFeedback
c.ExchangeFactory.submit = no_exchange.NoSubmit
c.ExchangeFactory.collect = no_exchange.NoCollect

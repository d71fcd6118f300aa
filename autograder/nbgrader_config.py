"""nbgrader configuration of the course: every path is relative to this folder.

Run nbgrader commands from ``autograder/``. The gradebook (``gradebook.db``) is created on
demand and never committed.
"""

c = get_config()  # noqa: F821 - provided by nbgrader when it loads this file

c.CourseDirectory.course_id = "attention-built-up"
c.CourseDirectory.root = "."
c.CourseDirectory.db_url = "sqlite:///gradebook.db"

# A cell that runs longer than this (an infinite loop) is stopped and the run goes on.
c.ExecutePreprocessor.timeout = 120
c.ExecutePreprocessor.interrupt_on_timeout = True

# Feedback shows the student's work and the visible tests, never the hidden tests' code: their
# source is cleared and failed tests show only the error message, not a traceback quoting them.
from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor  # noqa: E402
from nbgrader.preprocessors import ClearHiddenTests, GetGrades  # noqa: E402

from course_build.feedback import ShortenTestTracebacks  # noqa: E402

c.GenerateFeedback.preprocessors = [
    GetGrades,
    ClearHiddenTests,
    ShortenTestTracebacks,
    CSSHTMLHeaderPreprocessor,
]

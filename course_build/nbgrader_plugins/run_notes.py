"""The grader's notes on the notebook an nbgrader step is working on.

nbgrader hands each step the course configuration and, in ``resources["nbgrader"]``, the
assignment and student being graded; this finds that notebook's notes
(``course_build.grader_notes``) in the course directory the configuration names.
"""

from nbconvert.exporters.exporter import ResourcesDict
from nbgrader.coursedir import CourseDirectory
from traitlets.config import Configurable

from course_build.grader_notes import NotebookNotes


def notes_for(step: Configurable, resources: ResourcesDict) -> NotebookNotes:
    """The notes of the student's notebook that ``step`` is grading."""
    info = resources["nbgrader"]
    root = CourseDirectory(config=step.config).root
    return NotebookNotes(root, str(info["student"]), str(info["assignment"]))

"""Pending answers shown as pending in every view of the formgrader that shows a score.

nbgrader adds an answer nobody has graded yet as 0 wherever it shows a score: a submission's
total, a student's total over the course, a lesson's and a notebook's averages. A grader reading
"3 / 10" takes it as final. Each view is a Backbone script of nbgrader's; the course serves it
with a few lines added (``PENDING_SCRIPTS``) that mark a score "so far" while answers in it wait
for the grader, and the written score "pending". Two views (the students list and the lessons
list) get no pending flag from nbgrader's API, so the course answers those two API routes
(``PendingStudents``, ``PendingAssignments``) with nbgrader's rows plus ``pending_submissions``,
the number of that student's (or that lesson's) submissions waiting for a grade by hand.

What is stored does not change: these are views.
"""

import json

from nbgrader.api import Gradebook
from nbgrader.server_extensions.formgrader.apihandlers import (
    AssignmentCollectionHandler,
    StudentCollectionHandler,
)
from nbgrader.server_extensions.formgrader.base import check_notebook_dir, check_xsrf
from tornado import web


def _mark(view: str, flag: str, marks: list[tuple[str, str]]) -> str:
    """JavaScript that, after ``view`` renders, appends each text of ``marks`` (element, text) to
    that element when the model's ``flag`` is set (a count above zero, or true)."""
    appended = "\n".join(
        f"      if (this.{element}.text()) {{\n"
        f"        this.{element}.text(this.{element}.text() + {json.dumps(text)});\n      }}"
        for element, text in marks
    )
    return f"""
// Added by course_build (formgrader_pending): answers waiting for the grader are pending, not 0.
(function () {{
  var render = {view}.prototype.render;
  {view}.prototype.render = function () {{
    render.apply(this, arguments);
    if (this.model.get({json.dumps(flag)})) {{
{appended}
    }}
  }};
}})();
"""


_SUBMISSION_MARKS = [("$score", " so far"), ("$written_score", ", pending")]
_TOTAL_MARKS = [("$score", " so far, some answers pending")]
_FLAG, _COUNT = "needs_manual_grade", "pending_submissions"

# nbgrader's script name -> what the course adds to it
PENDING_SCRIPTS = {
    "gradebook_notebook_submissions.js": _mark("SubmittedNotebookUI", _FLAG, _SUBMISSION_MARKS),
    "manage_submissions.js": _mark("SubmissionUI", _FLAG, [("$score", " so far")]),
    "manage_students_assignments.js": _mark("StudentSubmissionUI", _FLAG, _SUBMISSION_MARKS),
    "manage_students_notebook_submissions.js": _mark("StudentSubmittedNotebookUI", _FLAG, _SUBMISSION_MARKS),
    "gradebook_notebooks.js": _mark(
        "NotebookUI", _FLAG, [("$avg_score", " so far"), ("$avg_written_score", ", pending")]
    ),
    "gradebook_assignments.js": _mark("AssignmentUI", _COUNT, _TOTAL_MARKS),
    "manage_students.js": _mark("StudentUI", _COUNT, _TOTAL_MARKS),
}


def pending_by_student(gradebook: Gradebook) -> dict[str, int]:
    """student id -> how many of their submissions have answers waiting for a grade by hand."""
    return {
        student.id: sum(1 for submission in student.submissions if submission.needs_manual_grade)
        for student in gradebook.students
    }


def pending_by_assignment(gradebook: Gradebook) -> dict[str, int]:
    """lesson -> how many of its submissions have answers waiting for a grade by hand."""
    return {
        assignment.name: sum(1 for submission in assignment.submissions if submission.needs_manual_grade)
        for assignment in gradebook.assignments
    }


def with_pending(rows: list[dict], key: str, pending: dict[str, int]) -> list[dict]:
    """nbgrader's API ``rows``, each with ``pending_submissions`` looked up by its ``key``."""
    return [{**row, "pending_submissions": pending.get(row[key], 0)} for row in rows]


class PendingStudents(StudentCollectionHandler):
    """nbgrader's list of students, each with ``pending_submissions``."""

    @web.authenticated
    @check_xsrf
    @check_notebook_dir
    def get(self) -> None:
        rows = with_pending(self.api.get_students(), "id", pending_by_student(self.gradebook))
        self.write(json.dumps(rows))


class PendingAssignments(AssignmentCollectionHandler):
    """nbgrader's list of lessons, each with ``pending_submissions``."""

    @web.authenticated
    @check_xsrf
    @check_notebook_dir
    def get(self) -> None:
        rows = with_pending(self.api.get_assignments(), "name", pending_by_assignment(self.gradebook))
        self.write(json.dumps(rows))

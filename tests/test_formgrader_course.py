"""What the course changes in nbgrader's formgrader, checked without a browser (fast: no server).

The formgrader must show a lesson's deadline (nbgrader's own due date is never set and reads
"None"), a submission with answers waiting for the grader as pending rather than a final score,
and its Release Feedback button must not end in a traceback (the course has no exchange).
"""

import logging
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace

import test_grade_sheet as sheet
from nbgrader.api import Gradebook
from nbgrader.server_extensions.formgrader.handlers import static_path
from tornado.web import Application

from course_build.formgrader import record_due_dates
from course_build.instructor.late_policy import LatePolicy
from course_build.nbgrader_plugins import formgrader_extension

_course_template, course = sheet._course_template, sheet.course  # the fixtures: a gradebook, no nbgrader


def test_the_lessons_deadline_becomes_the_formgraders_due_date(course):
    policy = LatePolicy(deadlines={sheet.LESSON: "2026-10-12T23:59"}, timezone="Europe/Berlin")
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        assert gradebook.find_assignment(sheet.LESSON).duedate is None
        record_due_dates(gradebook, policy, [sheet.LESSON])
        record_due_dates(gradebook, LatePolicy(), [sheet.LESSON])  # no deadline: nothing changes
        assert gradebook.find_assignment(sheet.LESSON).duedate == datetime(2026, 10, 12, 21, 59)  # UTC


def test_the_submission_list_marks_pending_answers_on_nbgraders_own_view():
    nbgrader_script = (Path(static_path) / "js" / "gradebook_notebook_submissions.js").read_text(
        encoding="utf-8"
    )
    assert (
        "var SubmittedNotebookUI = Backbone.View.extend" in nbgrader_script
        and "this.render();" in nbgrader_script
    )
    addition = formgrader_extension._PENDING_AS_PENDING
    assert (
        "SubmittedNotebookUI.prototype.render" in addition and 'model.get("needs_manual_grade")' in addition
    )
    assert '" so far"' in addition and '", pending"' in addition


def test_release_feedback_is_routed_to_the_course_not_to_nbgraders_exchange():
    app = SimpleNamespace(web_app=Application(base_url="/"), log=logging.getLogger("formgrader"))
    formgrader_extension._load_jupyter_server_extension(app)
    router = app.web_app.default_router.rules[0].target
    targets = {rule.matcher.regex.pattern: rule.target for rule in router.rules}
    assert targets["/formgrader/api/assignment/([^/]+)/release_feedback$"] is (
        formgrader_extension.ReleaseFeedbackThroughReport
    )
    assert targets["/formgrader/api/assignment/([^/]+)/([^/]+)/release_feedback$"] is (
        formgrader_extension.ReleaseFeedbackThroughReport
    )


def test_release_feedback_on_a_broken_course_answers_with_the_error_not_a_traceback(tmp_path):
    answer = formgrader_extension.release_through_report(tmp_path, "L01")
    assert answer["success"] is False and "nbgrader_config.py" in answer["error"]

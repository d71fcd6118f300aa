"""What the course changes in nbgrader's formgrader, checked without a browser (fast: no server).

The formgrader must show a lesson's deadline (nbgrader's own due date is never set and reads
"None"), a submission with answers waiting for the grader as pending rather than a final score,
and its Release Feedback button must not end in a traceback (the course has no exchange).
"""

import logging
import re
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace

import pytest
import test_grade_sheet as sheet
from nbgrader.api import Gradebook
from nbgrader.server_extensions.formgrader.handlers import static_path
from tornado.web import Application

from course_build.formgrader import record_due_dates
from course_build.instructor.late_policy import LatePolicy
from course_build.nbgrader_plugins import formgrader_extension, formgrader_pending
from course_build.nbgrader_plugins.formgrader_pending import PENDING_SCRIPTS

_course_template, course = sheet._course_template, sheet.course  # the fixtures: a gradebook, no nbgrader


def test_the_lessons_deadline_becomes_the_formgraders_due_date(course):
    policy = LatePolicy(deadlines={sheet.LESSON: "2026-10-12T23:59"}, timezone="Europe/Berlin")
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        assert gradebook.find_assignment(sheet.LESSON).duedate is None
        record_due_dates(gradebook, policy, [sheet.LESSON])
        record_due_dates(gradebook, LatePolicy(), [sheet.LESSON])  # no deadline: nothing changes
        assert gradebook.find_assignment(sheet.LESSON).duedate == datetime(2026, 10, 12, 21, 59)  # UTC


def _nbgrader_script(name: str) -> str:
    return (Path(static_path) / "js" / name).read_text(encoding="utf-8")


def test_every_formgrader_view_that_shows_a_score_marks_pending_answers():
    """Each of nbgrader's scripts that writes a score ("x / y") gets the course's addition."""
    scored = {
        path.name
        for path in (Path(static_path) / "js").glob("*.js")
        if re.search(r'\.text\(\w*score \+ " / "', path.read_text(encoding="utf-8"))
    }
    assert len(scored) >= 7 and scored == set(PENDING_SCRIPTS), scored ^ set(PENDING_SCRIPTS)


@pytest.mark.parametrize("name", sorted(PENDING_SCRIPTS))
def test_each_addition_fits_nbgraders_own_view(name):
    """The addition wraps the view nbgrader's script defines, marks elements that view has, and
    reads a flag its model has: nbgrader's own, or the one the course's API route adds."""
    script, addition = _nbgrader_script(name), PENDING_SCRIPTS[name]
    view = re.search(r"var render = (\w+)\.prototype\.render;", addition)[1]
    assert f"var {view} = Backbone.View.extend" in script and "render: function" in script
    for element in re.findall(r"this\.(\$\w+)\.text\(this", addition):
        assert f"this.{element} = this.$el.find(" in script, (name, element)
    flag = re.search(r'this\.model\.get\("(\w+)"\)', addition)[1]
    assert f'model.get("{flag}")' in script or flag == "pending_submissions", (name, flag)
    assert '" so far' in addition


def test_the_lists_of_students_and_lessons_count_submissions_with_pending_answers(course):
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        assert formgrader_pending.pending_by_student(gradebook) == {"ada": 1, "bob": 0, "cleo": 1}
        assert formgrader_pending.pending_by_assignment(gradebook) == {sheet.LESSON: 2}
    sheet._grade_by_hand(course, "ada", "w1", 2.5)
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        by_student = formgrader_pending.pending_by_student(gradebook)
        assert by_student == {"ada": 0, "bob": 0, "cleo": 1}
        students = [{"id": "ada"}, {"id": "cleo"}, {"id": "new"}]
        rows = formgrader_pending.with_pending(students, "id", by_student)
    assert [row["pending_submissions"] for row in rows] == [0, 1, 0]


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
    assert targets["/formgrader/api/students$"] is formgrader_pending.PendingStudents
    assert targets["/formgrader/api/assignments$"] is formgrader_pending.PendingAssignments
    scripts = next(rule for rule in router.rules if rule.target is formgrader_extension.ScoreViewScript)
    assert all(scripts.matcher.regex.match(f"/formgrader/static/js/{name}") for name in PENDING_SCRIPTS)
    assert not scripts.matcher.regex.match("/formgrader/static/js/formgrade.js")


def test_release_feedback_on_a_broken_course_answers_with_the_error_not_a_traceback(tmp_path):
    answer = formgrader_extension.release_through_report(tmp_path, "L01")
    assert answer["success"] is False and "nbgrader_config.py" in answer["error"]

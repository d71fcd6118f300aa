"""The course's additions to nbgrader's formgrader (a Jupyter server extension).

``python -m course_build.formgrader`` starts JupyterLab with this extension beside nbgrader's. It
changes what the grader sees, not how grades are stored (nbgrader's own pages save them):

* a submission's page is rendered with ``templates/course_formgrade/submission.html.j2``
  (nbgrader's, plus): the model answer and rubric next to each written answer (``grader_guide``),
  math typeset by the MathJax 3 the repository installs
  (``npm ci``; no network needed), and the student's name shown unless the course says otherwise;
* the list of a notebook's submissions shows names from the start (``c.CourseFormgrader``);
* every view that shows a score (submissions, students, lessons, notebooks) marks one with answers
  waiting for the grader "so far" and "pending", never as a final score (nbgrader counts them as
  0; ``formgrader_pending``);
* the *Release Feedback* button, which would use nbgrader's exchange (this course has none, so it
  ended in a traceback dialog), writes the lesson's feedback pages and the grade sheet as
  ``python -m course_build.report`` does, and says how to return them through the LMS.

Its routes are put in front of nbgrader's: tornado takes the first route that matches, and the
order in which Jupyter loads extensions must not decide which page the grader gets.
"""

import json
import re
from pathlib import Path

from nbconvert.exporters import HTMLExporter
from nbconvert.preprocessors import Preprocessor
from nbgrader.server_extensions.formgrader.base import BaseApiHandler, check_notebook_dir, check_xsrf
from nbgrader.server_extensions.formgrader.handlers import SubmissionHandler, static_path
from tornado import web
from tornado.ioloop import IOLoop
from traitlets import Bool, Unicode
from traitlets.config import Config, Configurable

from course_build.instructor.grade_batch import write_feedback
from course_build.instructor.late_policy import LatePolicyError
from course_build.nbgrader_plugins.feedback import TEMPLATE_DIRS
from course_build.nbgrader_plugins.formgrader_pending import (
    PENDING_SCRIPTS,
    PendingAssignments,
    PendingStudents,
)
from course_build.nbgrader_plugins.grader_guide import add_grader_guides, source_guides
from course_build.nbgrader_runner import NbgraderError
from course_build.paths import REPO_ROOT
from course_build.report import write_grade_sheet

FORMGRADE_TEMPLATE = "course_formgrade"
FORMGRADE_TEMPLATE_FILE = "submission.html.j2"
MATHJAX_DIR = REPO_ROOT / "node_modules" / "mathjax" / "es5"
MATHJAX_ROUTE = "/course-formgrader/mathjax"
MATHJAX_ENTRY = "tex-chtml.js"
MATHJAX_CDN = "https://cdn.jsdelivr.net/npm/mathjax@3.2.2/es5/tex-chtml.js"
_EXPORTER = "course_formgrader_exporter"
NAMES_SCRIPT = "gradebook_notebook_submissions.js"  # the submissions list, where names show on load
_SHOW_NAMES_ON_LOAD = """
// Added by course_build's formgrader extension: names are shown once the submissions have loaded.
(function () {
  var timer = setInterval(function () {
    if (models && models.loaded) {
      clearInterval(timer);
      if (document.getElementById("toggle_names").innerHTML === "Show All Names") { toggleAllNames(); }
    }
  }, 100);
})();
"""


class CourseFormgrader(Configurable):
    """The course's formgrader settings, in ``nbgrader_config.py`` (``c.CourseFormgrader``)."""

    show_student_names = Bool(True, help="show students' names instead of 'Submission #N'").tag(config=True)


class GraderPage(Preprocessor):
    """Prepares a submission's page: grader's guides after the written answers, and the page
    settings the template reads (MathJax's URL, whether names show)."""

    course_root = Unicode("")
    mathjax_url = Unicode(MATHJAX_CDN)
    show_names = Bool(True)

    def preprocess(self, nb, resources):
        nb = add_grader_guides(nb, source_guides(Path(self.course_root), resources.get("assignment_id", "")))
        resources["course_mathjax_url"] = self.mathjax_url
        resources["course_show_names"] = self.show_names
        return nb, resources


def mathjax_url(base_url: str) -> str:
    """Where the page loads MathJax: the repository's copy, or a CDN when ``npm ci`` was not run."""
    return f"{base_url}{MATHJAX_ROUTE}/{MATHJAX_ENTRY}" if MATHJAX_DIR.is_dir() else MATHJAX_CDN


def _settings(handler: web.RequestHandler) -> CourseFormgrader:
    return CourseFormgrader(config=handler.settings["nbgrader_formgrader"].config)


class GuidedSubmissionHandler(SubmissionHandler):
    """nbgrader's submission page, rendered with the course's template and ``GraderPage``."""

    @property
    def exporter(self) -> HTMLExporter:
        exporter = self.settings.get(_EXPORTER)
        if exporter is None:
            config = Config(self.settings["nbgrader_formgrader"].config)
            config.HTMLExporter.template_name = FORMGRADE_TEMPLATE
            config.HTMLExporter.template_file = FORMGRADE_TEMPLATE_FILE
            config.HTMLExporter.extra_template_basedirs = TEMPLATE_DIRS
            exporter = HTMLExporter(config=config)
            exporter.register_preprocessor(GraderPage(), enabled=True)
            self.settings[_EXPORTER] = exporter
        page = next(p for p in exporter._preprocessors if isinstance(p, GraderPage))
        page.course_root = self.coursedir.root
        page.mathjax_url = mathjax_url(self.base_url)
        page.show_names = _settings(self).show_student_names
        return exporter


class ScoreViewScript(web.RequestHandler):
    """One of nbgrader's scripts of a view that shows scores, with the course's additions: pending
    shown as pending (``formgrader_pending``), and in the submissions list, names unless the course
    hides them."""

    def get(self, name: str) -> None:
        script = (Path(static_path) / "js" / name).read_text(encoding="utf-8") + PENDING_SCRIPTS[name]
        if name == NAMES_SCRIPT and _settings(self).show_student_names:
            script += _SHOW_NAMES_ON_LOAD
        self.set_header("Content-Type", "application/javascript; charset=UTF-8")
        self.set_header("Cache-Control", "no-cache")
        self.write(script)


def release_through_report(course: Path, lesson: str) -> dict[str, object]:
    """What *Release Feedback* does here: the lesson's feedback pages and the grade sheet, as
    ``python -m course_build.report`` writes them, in the answer nbgrader's page shows
    (``success``, ``log``, and ``error`` when it failed)."""
    try:
        pages = write_feedback(course, lesson)
        write_grade_sheet(course, course / "grades.csv")
    except (NbgraderError, LatePolicyError) as error:
        return {"success": False, "log": "", "error": str(error)}
    log = (
        f"{len(pages)} feedback page(s) written to {course / 'feedback'}/<student>/{lesson}/ and the grade "
        f"sheet to {course / 'grades.csv'} (as python -m course_build.report does).\n"
        "This course returns feedback through the LMS, not nbgrader's exchange: run\n"
        f"  python -m course_build.export feedback {lesson} --out feedback-{lesson}\n"
        "for one page per student named with their LMS id, and a zip (book/instructors.md)."
    )
    return {"success": True, "log": log}


class ReleaseFeedbackThroughReport(BaseApiHandler):
    """*Release Feedback*, of one student or of the whole lesson: ``release_through_report``."""

    @web.authenticated
    @check_xsrf
    @check_notebook_dir
    async def post(self, assignment_id: str, student_id: str | None = None) -> None:
        course = Path(self.coursedir.root)
        result = await IOLoop.current().run_in_executor(None, release_through_report, course, assignment_id)
        self.write(json.dumps(result))


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "course_build.nbgrader_plugins.formgrader_extension"}]


def _load_jupyter_server_extension(serverapp) -> None:
    webapp = serverapp.web_app
    base = webapp.settings["base_url"].rstrip("/")
    handlers = [
        (rf"{base}/formgrader/submissions/([^/]+)/?", GuidedSubmissionHandler),
        (rf"{base}/formgrader/static/js/({'|'.join(map(re.escape, PENDING_SCRIPTS))})", ScoreViewScript),
        (rf"{base}/formgrader/api/students", PendingStudents),
        (rf"{base}/formgrader/api/assignments", PendingAssignments),
        (rf"{base}/formgrader/api/assignment/([^/]+)/release_feedback", ReleaseFeedbackThroughReport),
        (rf"{base}/formgrader/api/assignment/([^/]+)/([^/]+)/release_feedback", ReleaseFeedbackThroughReport),
    ]
    if MATHJAX_DIR.is_dir():
        handlers.append((rf"{base}{MATHJAX_ROUTE}/(.*)", web.StaticFileHandler, {"path": str(MATHJAX_DIR)}))
    else:
        serverapp.log.warning(
            "MathJax is not installed in %s (run `npm ci` in the repository): the formgrader loads it "
            "from %s, so math shows as $...$ without a network",
            MATHJAX_DIR,
            MATHJAX_CDN,
        )
    webapp.add_handlers(".*$", handlers)
    rules = webapp.default_router.rules
    rules.insert(0, rules.pop(-2))  # add_handlers put them before the last rule: move them first
    serverapp.log.info("course formgrader: grader's guides, names and offline math are on")

"""The feedback students get: their work, the visible tests, the points, nothing of the grader's.

nbgrader's ``generate_feedback`` runs these steps (named in ``autograder/nbgrader_config.py``)
after ``GetGrades`` and renders the course's template ``templates/course_feedback``:

* ``HideHiddenTests``: hidden tests' code is cleared (nbgrader's ``ClearHiddenTests``) and a
  failed test cell shows only ``ErrorName: message``, never a traceback that quotes hidden lines;
* ``ShowResult``: the lesson's result as the grade sheet computes it (``course_build.instructor.results``):
  autograded points, written answers' points and comments, "not graded yet" (never a 0) for an
  answer still waiting for the grader, lateness and its penalty, the total so far;
* ``OfflinePage``: the notebook's "Open in Colab" badge is left out (an image from the web, shown
  broken wherever the page is opened offline, and no use in feedback).

``FeedbackExporter`` renders the page (``GenerateFeedback.exporter_class``).

The grader's notes live in the course directory (``course_build.grader_notes``), which the page
never reads, and the feedback folder holds only the page.
"""

import re
from pathlib import Path

from nbconvert.exporters import HTMLExporter, TemplateExporter
from nbconvert.exporters.exporter import ResourcesDict
from nbconvert.filters.highlight import Highlight2HTML
from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter
from nbformat import NotebookNode
from nbgrader.api import Gradebook
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import ClearHiddenTests, NbGraderPreprocessor
from nbgrader.server_extensions.formgrader.handlers import template_path as NBGRADER_TEMPLATES
from traitlets import List

from course_build.cell_roles import grade_id, is_test_cell, nbgrader_metadata, scores_points
from course_build.instructor.grade_sheet import points
from course_build.instructor.late_policy import LatePolicy
from course_build.instructor.results import LessonResult, lesson_result

TEMPLATES = str(Path(__file__).resolve().parent / "templates")  # shipped with the package
FEEDBACK_TEMPLATE = "course_feedback"
TEMPLATE_DIRS = [TEMPLATES, NBGRADER_TEMPLATES]  # ours first; nbgrader's for what they extend


class _QuietPreprocessor(NbGraderPreprocessor):
    """nbconvert's HTML exporter configures ``display_data_priority`` for every preprocessor it
    runs; nbgrader's base class has the trait but does not take configuration, so traitlets
    warns on every run. Accepting the setting (and ignoring it) keeps regeneration quiet."""

    display_data_priority = List().tag(config=True)


class HideHiddenTests(ClearHiddenTests, _QuietPreprocessor):
    """Clear hidden tests, and shorten each failed test cell's error to ``ErrorName: message``."""

    def preprocess_cell(self, cell, resources, index):
        cell, resources = super().preprocess_cell(cell, resources, index)
        if is_test_cell(cell):
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    output["traceback"] = [f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"]
        return cell, resources


_COLAB_BADGE = re.compile(
    r'<a [^>]*href="https://colab\.research\.google\.com/[^"]*"[^>]*>\s*<img [^>]*></a>\s*', re.IGNORECASE
)


class OfflinePage(_QuietPreprocessor):
    """Leave the "Open in Colab" badge (``course_build.authoring.source``) out of the feedback page."""

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "markdown":
            cell.source = _COLAB_BADGE.sub("", cell.source)
        return cell, resources


def cell_score_text(score: float | None, max_score: float) -> str:
    """A graded cell's heading: ``Score: 1 / 2``, or ``Not graded yet (2 points)``."""
    if score is None:
        return f"Not graded yet ({points(max_score)} point{'s' if max_score != 1 else ''})"
    return f"Score: {points(score)} / {points(max_score)}"


def summary_rows(result: LessonResult) -> list[tuple[str, str]]:
    """The lines at the top of a student's feedback page (label, value)."""
    rows = [("Autograded tests", f"{points(result.auto_score)} / {points(result.auto_max)}")]
    if result.manual_max:
        pending = result.pending_points
        if result.manual_score is None:
            written = f"not graded yet ({points(pending)} points)"
        else:
            written = f"{points(result.manual_score)} / {points(result.manual_max - pending)}"
            if pending:
                written += f"; {points(pending)} more points not graded yet"
        rows.append(("Written answers", written))
    late = result.lateness.label
    if result.penalty:
        late += f": -{points(result.penalty)} points ({result.late_policy})"
    rows.append(("Submission", late))
    total = f"{points(result.total)} / {points(result.max_score)}"
    if result.pending:
        total += f" so far ({points(result.pending_points)} points not graded yet)"
    rows.append(("Total", total))
    return rows


class ShowResult(_QuietPreprocessor):
    """Put the lesson's result (``course_build.instructor.results``) in the page: a summary and each graded
    cell's score text, "Not graded yet" where the grader has not been yet."""

    def preprocess(self, nb: NotebookNode, resources: ResourcesDict):
        info = resources["nbgrader"]
        course = Path(CourseDirectory(config=self.config).root)
        with Gradebook(info["db_url"]) as gradebook:
            result = lesson_result(
                course,
                gradebook,
                info["assignment"],
                info["student"],
                LatePolicy(config=self.config),
            )
        items = {item.grade_id: item for item in result.items}
        for cell in nb.cells:
            item = items.get(grade_id(cell)) if scores_points(cell) else None
            if item is not None:
                nbgrader = nbgrader_metadata(cell)
                nbgrader["course_score"] = cell_score_text(item.score, item.max_score)
                nbgrader["course_kind"] = "Written answer" if item.written else "Test"
        resources["course_summary"] = summary_rows(result)
        resources["course_title"] = f"{info['assignment']}: feedback for {result.lms_name or info['student']}"
        return nb, resources


_IMAGE_WITHOUT_ALT = re.compile(r"<img(?![^>]*\salt=)", re.IGNORECASE)


class FeedbackExporter(HTMLExporter):
    """nbconvert's HTML exporter without its last pass, which parses the finished page again.

    After rendering, nbconvert's ``HTMLExporter`` (7.17, pinned in requirements-instructor.txt)
    reads the whole page back with BeautifulSoup's pure-Python parser, to give images without one
    an alt text and to make JupyterLab-template cells focusable. That re-parse took about 0.8 s of
    CPU for a lesson 10 page of 390 kB, half of the page's rendering, for every student. The
    feedback template extends the classic one (no JupyterLab cells), so only the alt text is
    needed: it is added here to the rendered text.
    """

    def from_notebook_node(self, nb: NotebookNode, resources: dict | None = None, **kw) -> tuple[str, dict]:
        language = nb.metadata.get("language_info", {})
        lexer = language.get("pygments_lexer", language.get("name"))
        resources = self._init_resources(resources)
        self.register_filter(
            "highlight_code",
            self.filters.get("highlight_code", Highlight2HTML(pygments_lexer=lexer, parent=self)),
        )
        self.register_filter(
            "filter_data_type",
            WidgetsDataTypeFilter(notebook_metadata=self._nb_metadata, parent=self, resources=resources),
        )
        html, resources = TemplateExporter.from_notebook_node(self, nb, resources, **kw)
        return _IMAGE_WITHOUT_ALT.sub(
            '<img alt="No description has been provided for this image"', html
        ), resources

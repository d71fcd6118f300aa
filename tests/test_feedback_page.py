"""A feedback page reads well offline: long hints wrap, no "Open in Colab" image (fast: nbconvert only).

The pages are rendered by the course's ``FeedbackExporter``, as ``generate_feedback`` renders them."""

from pathlib import Path

import nbformat
import nbgrader
from bs4 import BeautifulSoup
from nbconvert.exporters import HTMLExporter
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from course_build.authoring.source import _header_cells
from course_build.nbgrader_plugins.feedback import (
    FEEDBACK_TEMPLATE,
    TEMPLATE_DIRS,
    FeedbackExporter,
    OfflinePage,
)

BOOTSTRAP_CSS = str(
    Path(nbgrader.__file__).parent / "server_extensions/formgrader/static/node_modules/bootstrap/dist/css"
)
HINT = "find the largest whole n for which self-attention does strictly fewer operations " * 3


def _page(notebook: nbformat.NotebookNode, exporter_class: type[HTMLExporter] = FeedbackExporter) -> str:
    exporter = exporter_class(
        template_name=FEEDBACK_TEMPLATE,
        extra_template_basedirs=TEMPLATE_DIRS,
        extra_template_paths=[BOOTSTRAP_CSS],  # as nbgrader's generate_feedback sets it
    )
    exporter.register_preprocessor(OfflinePage(), enabled=True)
    html, _ = exporter.from_notebook_node(
        notebook, resources={"course_title": "L01: feedback for Ada", "course_summary": [("Total", "5 / 10")]}
    )
    return html


def _notebook() -> nbformat.NotebookNode:
    header = [
        cell
        for cell in _header_cells("01_sequence_problem", "https://github.com/o/r", [])
        if "Colab" in cell.source
    ]
    failed = new_code_cell(
        "assert n == 511", metadata={"nbgrader": {"grade": True, "grade_id": "t", "points": 1}}
    )
    failed.outputs = [
        new_output("error", ename="AssertionError", evalue=HINT, traceback=[f"AssertionError: {HINT}"])
    ]
    return new_notebook(cells=[*header, new_markdown_cell("# Lesson 1"), failed])


def test_the_colab_badge_is_left_out_and_the_rest_of_its_cell_kept():
    notebook = _notebook()
    assert "colab-badge.svg" in notebook.cells[0].source, "the generated notebooks carry the badge"
    html = _page(notebook)
    assert "colab-badge" not in html and "colab.research.google.com" not in html
    assert "How the exercises work" in html and "Lesson 1" in html


def test_a_long_hint_wraps_inside_its_box():
    html = _page(_notebook())
    assert HINT.strip()[:60] in html
    assert (
        "div.output_area pre, div.output_subarea pre { white-space: pre-wrap; overflow-wrap: anywhere; }"
        in html
    )


def test_the_page_is_nbconvert_s_page_without_its_second_parse():
    """``FeedbackExporter`` skips nbconvert's re-parse of the finished page: the same page, alt texts
    included, that the re-parse only reformats."""
    notebook = _notebook()
    notebook.cells.append(
        new_markdown_cell('A figure: <img src="figure.png"> and <img alt="kept" src="b.png">')
    )
    plot = new_code_cell("plot()")
    plot.outputs = [new_output("display_data", data={"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"})]
    notebook.cells.append(plot)
    ours, nbconvert_s = _page(notebook), _page(notebook, HTMLExporter)
    assert ours != nbconvert_s, "nbconvert's page is the re-parsed one"
    assert str(BeautifulSoup(ours, features="html.parser")) == nbconvert_s
    assert ours.count('alt="No description has been provided for this image"') == 2
    assert 'alt="kept"' in ours

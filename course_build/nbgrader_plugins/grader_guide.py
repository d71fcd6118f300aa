"""The grader's guide in the formgrader: model answer and rubric beside each written answer.

``add_grader_guides`` puts, after every written-answer cell of a student's graded notebook, a
Markdown cell marked ``course_grader_guide`` holding that question's model answer and rubric from
the lesson's nbgrader source notebook (``source/<lesson>/<lesson>.ipynb``, written in the lesson
source: ``course_build.authoring.rubric``). Only the formgrader's page does this, at display time
(``formgrader_extension``); the graded notebook on disk, and so the feedback, never holds it.
"""

from pathlib import Path

import nbformat
from nbformat import NotebookNode

from course_build.authoring.rubric import RUBRIC, RubricError, parse_manual
from course_build.cell_roles import grade_id, is_written_answer, nbgrader_metadata

GUIDE_KEY = "course_grader_guide"


def guide_text(source: str) -> str:
    """The guide's Markdown for a manual cell's source: the model answer, then the rubric."""
    try:
        answer = parse_manual(source)
    except RubricError:
        return source.strip()  # a source without a rubric still shows its answer
    lines = [answer.model_answer, "", RUBRIC]
    for item in answer.rubric:
        lines.append(f"- **{item.points:g} point{'s' if item.points != 1 else ''}**: {item.text}")
    return "\n".join(lines)


def source_guides(course: Path, lesson: str) -> dict[str, str]:
    """grade id -> guide Markdown, for every written answer of the lesson's source notebook."""
    path = course / "source" / lesson / f"{lesson}.ipynb"
    if not path.is_file():
        return {}
    source = nbformat.read(path, as_version=4)
    return {grade_id(cell): guide_text(cell.source) for cell in source.cells if is_written_answer(cell)}


def add_grader_guides(notebook: NotebookNode, guides: dict[str, str]) -> NotebookNode:
    """``notebook`` with a guide cell after each written answer that has a guide."""
    cells = []
    for cell in notebook.cells:
        cells.append(cell)
        answer_id = grade_id(cell)
        if is_written_answer(cell) and answer_id in guides:
            points = nbgrader_metadata(cell).get("points", 0)
            cells.append(
                nbformat.v4.new_markdown_cell(
                    guides[answer_id],
                    metadata={GUIDE_KEY: {"grade_id": answer_id, "points": points}},
                )
            )
    notebook.cells = cells
    return notebook

"""Read a lesson source (Jupytext MyST Markdown) into the nbgrader source notebook.

Authors mark graded cells with a short tag (``solution``, ``tests``, ``manual``) plus ``grade_id``
and ``points``; this module expands that into nbgrader's full cell metadata, gives every cell a
stable id (so regenerating is deterministic) and puts the generated header cells in front.
"""

import re
from typing import Any

import jupytext
import nbformat
import yaml
from nbformat import NotebookNode

from course_build.paths import BOOK_CONFIG, REPO_ROOT, lesson_source

ROLE_TAGS = ("solution", "tests", "manual")
GRADE_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
NBGRADER_SCHEMA_VERSION = 3
REGENERATE_COMMAND = "python -m course_build"
MODEL_ANSWER = "*Model answer.*"
KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}


class LessonSourceError(ValueError):
    """A lesson source breaks the authoring rules (lessons/README.md)."""


def repository_url() -> str:
    """The course repository URL from ``_config.yml``: Colab badges and installs point there."""
    config = yaml.safe_load(BOOK_CONFIG.read_text(encoding="utf-8"))
    url = (config.get("repository") or {}).get("url")
    if not url:
        raise LessonSourceError(f"{BOOK_CONFIG.name} has no repository.url")
    return url.rstrip("/")


def _nbgrader_metadata(cell: NotebookNode, lesson: str) -> dict[str, Any] | None:
    """nbgrader metadata for a cell tagged with a role, or None for an ordinary cell."""
    tags = cell.metadata.get("tags", [])
    roles = [tag for tag in tags if tag in ROLE_TAGS]
    if not roles:
        for key in ("grade_id", "points"):
            if key in cell.metadata:
                raise LessonSourceError(
                    f"{lesson}: a cell has {key!r} but no role tag ({', '.join(ROLE_TAGS)})"
                )
        return None
    if len(roles) > 1:
        raise LessonSourceError(f"{lesson}: a cell has several role tags {roles}")
    role = roles[0]
    grade_id = str(cell.metadata.get("grade_id", ""))
    if not GRADE_ID.match(grade_id):
        raise LessonSourceError(
            f"{lesson}: a {role!r} cell needs a grade_id of letters, digits and '_' (got {grade_id!r})"
        )
    expected_type = "markdown" if role == "manual" else "code"
    if cell.cell_type != expected_type:
        raise LessonSourceError(f"{lesson}: {grade_id!r} is a {role!r} cell, so it must be {expected_type}")
    graded = role in ("tests", "manual")
    if graded != ("points" in cell.metadata):
        needs = "needs" if graded else "must not have"
        raise LessonSourceError(f"{lesson}: the {role!r} cell {grade_id!r} {needs} 'points'")
    metadata: dict[str, Any] = {
        "grade": graded,
        "grade_id": grade_id,
        "locked": role == "tests",
        "schema_version": NBGRADER_SCHEMA_VERSION,
        "solution": role in ("solution", "manual"),
        "task": False,
    }
    if graded:
        points = cell.metadata["points"]
        if not isinstance(points, int | float) or points <= 0:
            raise LessonSourceError(f"{lesson}: {grade_id!r} has points={points!r}; use a number > 0")
        metadata["points"] = points
    if role == "manual" and not cell.source.startswith(MODEL_ANSWER):
        raise LessonSourceError(
            f"{lesson}: the manual cell {grade_id!r} must hold only the model answer, starting with "
            f"{MODEL_ANSWER!r}; nbgrader replaces the whole cell, so the question goes in the cell before"
        )
    if role == "solution" and "### BEGIN SOLUTION" not in cell.source:
        raise LessonSourceError(f"{lesson}: the solution cell {grade_id!r} has no ### BEGIN SOLUTION")
    return metadata


def _header_cells(lesson: str, repo_url: str) -> list[NotebookNode]:
    """The cells every generated notebook starts with: provenance, Colab badge, package install."""
    source_path = lesson_source(lesson).relative_to(REPO_ROOT).as_posix()
    colab_path = repo_url.replace("https://github.com/", "https://colab.research.google.com/github/")
    notice = (
        f"<!-- Generated from {source_path} by `{REGENERATE_COMMAND}`; "
        "edit the source, not this file. -->\n"
        f'<a href="{colab_path}/blob/main/notebooks/{lesson}.ipynb" target="_blank">'
        '<img src="https://colab.research.google.com/assets/colab-badge.svg" alt="Open In Colab"/></a>'
        f"\n\n*This notebook is generated from `{source_path}`; regenerate it with "
        f"`{REGENERATE_COMMAND}`.*"
    )
    install = (
        "# Installs the course's helper package where it is missing (Colab); a no-op elsewhere.\n"
        "import importlib.util\n\n"
        'if importlib.util.find_spec("transformer_course") is None:\n'
        f'    %pip install --quiet "transformer_course @ git+{repo_url}"'
    )
    return [
        nbformat.v4.new_markdown_cell(notice, metadata={"tags": ["remove-cell"]}),
        nbformat.v4.new_code_cell(install, metadata={"tags": ["remove-cell"]}),
    ]


def build_source_notebook(lesson: str) -> NotebookNode:
    """The nbgrader source notebook of ``lesson``: solutions and hidden tests included."""
    authored = jupytext.read(lesson_source(lesson), fmt="md:myst")
    cells = _header_cells(lesson, repository_url())
    grade_ids: set[str] = set()
    for cell in authored.cells:
        nbgrader = _nbgrader_metadata(cell, lesson)
        metadata = {key: value for key, value in cell.metadata.items() if key not in ("grade_id", "points")}
        tags = [tag for tag in metadata.get("tags", []) if tag not in ROLE_TAGS]
        if tags:
            metadata["tags"] = tags
        else:
            metadata.pop("tags", None)
        if nbgrader is not None:
            if nbgrader["grade_id"] in grade_ids:
                raise LessonSourceError(f"{lesson}: grade_id {nbgrader['grade_id']!r} is used twice")
            grade_ids.add(nbgrader["grade_id"])
            metadata["nbgrader"] = nbgrader
        if cell.cell_type == "code":
            new = nbformat.v4.new_code_cell(cell.source, metadata=metadata)
        else:
            new = nbformat.v4.new_markdown_cell(cell.source, metadata=metadata)
        cells.append(new)
    for index, cell in enumerate(cells):
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        cell["id"] = grade_id or f"{lesson[:2]}-cell-{index:03d}"
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata = {
        "kernelspec": dict(KERNELSPEC),
        "language_info": {"name": "python"},
        "course_build": {
            "lesson": lesson,
            "source": lesson_source(lesson).relative_to(REPO_ROOT).as_posix(),
            "regenerate": REGENERATE_COMMAND,
        },
    }
    nbformat.validate(notebook)
    return notebook


def graded_cells(notebook: NotebookNode) -> dict[str, NotebookNode]:
    """grade_id -> cell, for every cell with nbgrader metadata."""
    return {
        cell.metadata["nbgrader"]["grade_id"]: cell for cell in notebook.cells if "nbgrader" in cell.metadata
    }

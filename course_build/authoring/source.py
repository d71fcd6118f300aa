"""Read a lesson source (Jupytext MyST Markdown) into the nbgrader source notebook.

Authors mark graded cells with a short tag (``solution``, ``tests``, ``manual``) plus ``grade_id``
and ``points``; this module expands that into nbgrader's full cell metadata, gives every cell a
stable id (so regenerating is deterministic), tags the cells that raise while exercises are stubs
(``course_build.authoring.exercise_cells``), writes citations as text (``course_site.citations``) and puts
the generated header cells in front.
"""

import copy
import hashlib
import re
import textwrap
from typing import Any

import jupytext
import nbformat
import yaml
from nbformat import NotebookNode

from course_build.authoring.exercise_cells import RAISES_EXCEPTION, cells_that_may_raise, value_answers
from course_build.authoring.exercise_points import ExercisePointsError, label_exercise_points
from course_build.authoring.rubric import MODEL_ANSWER, RubricError, check_manual
from course_build.cell_roles import grade_id
from course_build.paths import BOOK_CONFIG, REPO_ROOT, lesson_source
from course_site.citations import roles_as_text

ROLE_TAGS = ("solution", "tests", "manual")
GRADE_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
NBGRADER_SCHEMA_VERSION = 3
REGENERATE_COMMAND = "python -m course_build"
# The kernelspec JupyterLab writes for ipykernel's own ``python3`` kernel (on opening a notebook it
# replaces the notebook's kernelspec with this, and a different one marks the notebook modified).
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
# The course's reference Python: the one its notebooks are built and tested with.
COURSE_PYTHON_VERSION = "3.11.7"
# What ipykernel reports and JupyterLab stores when it opens a notebook. JupyterLab compares the
# whole object (version included) with the notebook's and marks the notebook modified when they
# differ, so a lesson with less than this asks "Save your work?" when closed untouched. Written
# as a constant, not read from the local kernel, so generated files are the same on every machine;
# on any other Python the student's JupyterLab serves the lessons with its own kernel's
# language_info instead (transformer_course/lesson_contents.py), so ``version`` matches there too.
LANGUAGE_INFO = {
    "codemirror_mode": {"name": "ipython", "version": 3},
    "file_extension": ".py",
    "mimetype": "text/x-python",
    "name": "python",
    "nbconvert_exporter": "python",
    "pygments_lexer": "ipython3",
    "version": COURSE_PYTHON_VERSION,
}


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
    if role == "manual":
        try:
            check_manual(cell.source, metadata["points"])
        except RubricError as error:
            raise LessonSourceError(
                f"{lesson}: the manual cell {grade_id!r}: {error} (the format is in lessons/README.md)"
            ) from None
    if role == "solution" and "### BEGIN SOLUTION" not in cell.source:
        raise LessonSourceError(f"{lesson}: the solution cell {grade_id!r} has no ### BEGIN SOLUTION")
    return metadata


PROVENANCE_CELL_ID = "provenance"
HOW_EXERCISES_WORK = """
> **How the exercises work**
>
> - Run the notebook from the top (in JupyterLab: **Run ▸ Run All Cells**; in Colab:
>   **Runtime ▸ Run all**). The explanations, examples, widgets and the quiz at the end all run.
>   An exercise you have not done yet, and each cell that needs it, shows a short *Exercise still
>   to do* line, and the run carries on.
> - Write your code where a cell says `raise NotImplementedError()`: replace that line (and the
>   `# YOUR CODE HERE` above it) with your answer, then run the cell. Written answers go in the
>   cells that say *YOUR ANSWER HERE* (double-click one to edit it).
> - The cell after an exercise is its test: run it to check your work. Its message says what to
>   fix. Test cells are locked: in JupyterLab you cannot edit or delete them, and typing into one
>   does nothing.
> - Passing the tests you see is a good sign, not yet the grade: your instructor grades the
>   notebook with more tests, hidden from you, that check the same things on other inputs.
""".strip()


def _explain_call(answers: list[str]) -> str:
    """The set-up cell's call that switches on short messages, naming the value answers (a stub
    leaves them undefined, so a cell reading one says which exercise is still to do)."""
    if not answers:
        return "explain_exercise_errors()"
    listed = ", ".join(f'"{name}"' for name in answers)
    if len(listed) <= 70:
        return f"explain_exercise_errors(answers=[{listed}])"
    lines = textwrap.wrap(listed, width=88, break_on_hyphens=False, break_long_words=False)
    body = "\n".join(f"        {line}" for line in lines)
    return f"explain_exercise_errors(\n    answers=[\n{body}\n    ]\n)"


def _header_cells(lesson: str, repo_url: str, answers: list[str]) -> list[NotebookNode]:
    """The cells every generated notebook starts with.

    A provenance note for course authors (left out of the student notebook), the Colab badge
    with the "How the exercises work" box for students, and the set-up cell: it installs the
    helper package where it is missing (Colab) and switches on short messages, so that Run All
    goes past unwritten exercises (``answers``: the names value exercises define). The book
    shows none of them (``remove-cell``): it has its own "How to use" page.
    """
    source_path = lesson_source(lesson).relative_to(REPO_ROOT).as_posix()
    colab_path = repo_url.replace("https://github.com/", "https://colab.research.google.com/github/")
    provenance = (
        f"*Course authors: this notebook is generated from `{source_path}` by `{REGENERATE_COMMAND}`; "
        "edit the source, not this file.*"
    )
    welcome = (
        f'<a href="{colab_path}/blob/main/notebooks/{lesson}.ipynb" target="_blank">'
        '<img src="https://colab.research.google.com/assets/colab-badge.svg" alt="Open In Colab"/></a>'
        f"\n\n{HOW_EXERCISES_WORK}"
    )
    setup = (
        "# Sets the notebook up: installs the course's helper package where it is missing (Colab),\n"
        "# and shows unwritten exercises and errors as short messages (Run All goes past exercises\n"
        "# still to do).\n"
        "import importlib.util\n\n"
        'if importlib.util.find_spec("transformer_course") is None:\n'
        f'    %pip install --quiet "transformer_course @ git+{repo_url}"\n\n'
        "from transformer_course.exercise_errors import explain_exercise_errors\n\n"
        f"{_explain_call(answers)}"
    )
    hidden_in_book = {"tags": ["remove-cell"]}
    return [
        nbformat.v4.new_markdown_cell(provenance, metadata=hidden_in_book, id=PROVENANCE_CELL_ID),
        nbformat.v4.new_markdown_cell(welcome, metadata=hidden_in_book, id="how-exercises-work"),
        nbformat.v4.new_code_cell(setup, metadata=hidden_in_book, id="setup"),
    ]


def _cell_id(lesson: str, cell: NotebookNode, used: set[str]) -> str:
    """A cell's id: its grade_id, or a hash of its content, so that editing or inserting one cell
    changes no other cell's id (and regenerating gives a small diff)."""
    if grade_id(cell):
        return grade_id(cell)
    digest = hashlib.sha256(f"{cell.cell_type}\0{cell.source}".encode()).hexdigest()
    base = f"{lesson[:2]}-{digest[:10]}"
    candidate, copy = base, 1
    while candidate in used:
        copy += 1
        candidate = f"{base}-{copy}"
    return candidate


def build_source_notebook(lesson: str) -> NotebookNode:
    """The nbgrader source notebook of ``lesson``: solutions and hidden tests included."""
    authored = jupytext.read(lesson_source(lesson), fmt="md:myst")
    cells: list[NotebookNode] = []
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
            new = nbformat.v4.new_markdown_cell(roles_as_text(cell.source), metadata=metadata)
        cells.append(new)
    for index in cells_that_may_raise(cells):
        tags = cells[index].metadata.setdefault("tags", [])
        if RAISES_EXCEPTION not in tags:
            tags.append(RAISES_EXCEPTION)
    try:
        label_exercise_points(cells, lesson)
    except ExercisePointsError as error:
        raise LessonSourceError(str(error)) from None
    header = _header_cells(lesson, repository_url(), value_answers(cells))
    used = {cell.id for cell in header}
    for cell in cells:
        cell["id"] = _cell_id(lesson, cell, used)
        used.add(cell.id)
    notebook = nbformat.v4.new_notebook(cells=header + cells)
    notebook.metadata = {
        "kernelspec": dict(KERNELSPEC),
        "language_info": copy.deepcopy(LANGUAGE_INFO),
        "course_build": {
            "lesson": lesson,
            "source": lesson_source(lesson).relative_to(REPO_ROOT).as_posix(),
            "regenerate": REGENERATE_COMMAND,
        },
    }
    nbformat.validate(notebook)
    return notebook

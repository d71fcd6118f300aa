"""Grade made-up submissions of a lesson with real nbgrader runs, for the tests and the benchmark.

``make_submission`` fills a lesson's student notebook with given answers (``solution_answers`` are
the reference ones); ``autograde`` grades a batch of them in a throw-away course directory through
``grade_lesson``, the batch ``python -m course_build.grade`` runs.

``nbgrader generate_assignment`` takes 10-40 s, and the test suite grades dozens of batches. After
``share_course_templates(folder)`` (the test session does it), each lesson is generated once into
``folder``, by whichever process asks first while the others wait on a lock, and every batch gets a
copy of that course: its own gradebook, release and source, so no batch sees another's grades.
"""

import shutil
from pathlib import Path

import nbformat
from filelock import FileLock
from nbformat import NotebookNode

from course_build.cell_roles import grade_id, is_answer
from course_build.instructor.grade_batch import GradeReport, grade_lesson
from course_build.nbgrader_runner import make_course_dir, run_nbgrader
from course_build.paths import nbgrader_source_notebook, student_notebook

# A notebook, or raw files by name (a broken notebook, a resubmission, stray files).
Submission = NotebookNode | dict[str, bytes]


def graded_cells(notebook: NotebookNode) -> dict[str, NotebookNode]:
    """grade_id -> cell, for every cell with nbgrader metadata."""
    return {grade_id(cell): cell for cell in notebook.cells if "nbgrader" in cell.metadata}


def solution_answers(lesson: str) -> dict[str, str]:
    """grade_id -> reference source, for every answer cell (code and written) of the lesson."""
    source = nbformat.read(nbgrader_source_notebook(lesson), as_version=4)
    return {answer_id: cell.source for answer_id, cell in graded_cells(source).items() if is_answer(cell)}


def make_submission(lesson: str, answers: dict[str, str]) -> NotebookNode:
    """The student notebook with the answer cells named in ``answers`` filled in, the rest blank."""
    notebook = nbformat.read(student_notebook(lesson), as_version=4)
    cells = graded_cells(notebook)
    for answer_id, source in answers.items():
        cell = cells.get(answer_id)
        if cell is None or not is_answer(cell):
            known = sorted(g for g, c in cells.items() if is_answer(c))
            raise KeyError(f"{lesson} has no answer cell {answer_id!r}; its answer cells: {known}")
        cell.source = source
    return notebook


_templates: Path | None = None
READY = "generated"  # written into a lesson's template folder once its course is complete


def share_course_templates(folder: Path | None) -> None:
    """Copy each lesson's course from one generation in ``folder`` (None: generate every time)."""
    global _templates
    _templates = folder


def prepare_course(workdir: Path, lesson: str) -> Path:
    """A throw-away course directory under ``workdir`` with ``lesson`` generated (gradebook made)."""
    if _templates is None:
        return _generate_course(Path(workdir), lesson)
    course = Path(workdir) / "course"
    shutil.copytree(_course_template(_templates, lesson), course, dirs_exist_ok=True)
    return course


def _generate_course(workdir: Path, lesson: str) -> Path:
    source = nbformat.read(nbgrader_source_notebook(lesson), as_version=4)
    course = make_course_dir(workdir, {lesson: source})
    run_nbgrader(course, "generate_assignment", lesson, "--force")
    return course


def _course_template(templates: Path, lesson: str) -> Path:
    """The lesson's generated course in ``templates``, made now if no process has made it yet."""
    templates.mkdir(parents=True, exist_ok=True)
    folder = templates / lesson
    with FileLock(templates / f"{lesson}.lock"):
        if not (folder / READY).is_file():
            shutil.rmtree(folder, ignore_errors=True)  # what a process that failed half-way left
            _generate_course(folder, lesson)
            (folder / READY).touch()
    return folder / "course"


def write_submissions(course: Path, lesson: str, submissions: dict[str, Submission]) -> None:
    """Put each submission in ``submitted/<student>/<lesson>/``: a notebook, or raw files by name."""
    for student, submission in submissions.items():
        folder = course / "submitted" / student / lesson
        folder.mkdir(parents=True, exist_ok=True)
        if isinstance(submission, NotebookNode):
            files = {f"{lesson}.ipynb": nbformat.writes(submission).encode("utf-8")}
        else:
            files = submission
        for name, data in files.items():
            (folder / name).write_bytes(data)


def autograde(
    lesson: str,
    submissions: dict[str, Submission],
    workdir: Path,
    *,
    timeout_s: int | None = None,
    jobs: int | None = None,
    unsandboxed: bool = False,
    **options: float | bool,
) -> dict[str, GradeReport]:
    """Grade ``submissions`` (student -> notebook, or -> {file name: bytes}) in one nbgrader batch;
    ``options`` (``notebook_budget_s``, ``test_cell_budget_s``, ``run_every_cell``) as
    ``grade_lesson`` takes them."""
    course = prepare_course(Path(workdir), lesson)
    write_submissions(course, lesson, submissions)
    return grade_lesson(
        course, lesson, submissions, timeout_s=timeout_s, jobs=jobs, unsandboxed=unsandboxed, **options
    )


def check_reference_report(lesson: str, report: GradeReport) -> None:
    """The reference solution's grades: every autograded cell full, every written answer waiting
    for the instructor."""
    assert report.autograded, f"{lesson} has no autograded cell"
    lost = {g: report.scores[g] for g in report.autograded if report.scores[g] != report.max_scores[g]}
    assert lost == {}, f"the reference solution lost points: {lost}"
    written = [g for g in report.scores if g not in report.autograded]
    assert sorted(written) == report.awaiting_manual_grade


def check_blank_report(lesson: str, report: GradeReport) -> None:
    """The blank release's grades: zero on every graded cell."""
    assert report.scores, f"{lesson} has no graded cell"
    assert {g: s for g, s in report.scores.items() if s != 0} == {}

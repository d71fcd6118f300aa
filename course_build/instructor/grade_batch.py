"""Grade submissions of a lesson with real nbgrader runs and read the scores back.

``grade_lesson`` is the batch every grading path shares (the tests, the benchmark and
``python -m course_build.grade``): fix up the submitted files, ``nbgrader autograde`` (sandboxed
kernels, test cells judged by the trusted checker: see ``autograder/nbgrader_config.py``) keeping
the grades given by hand to unchanged answers (``course_build.instructor.manual_grades``),
``nbgrader generate_feedback`` (``write_feedback``), then one ``GradeReport`` per student with the
instructor's notes (what was collected, repaired or noticed, and why).

A notebook whose grading run did not end (nbgrader failed on it, or the run was killed and left
an unexecuted copy) is graded again once, on its own; if that run does not end either, its
autograded cells score zero in the gradebook, with a note saying why, never "pending".
"""

import shutil
import time
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from nbgrader.api import Grade, Gradebook, MissingEntry
from traitlets.config.loader import PyFileConfigLoader

from course_build.grader_notes import UNPROTECTED_NOTE, NotebookNotes
from course_build.instructor.code_grades import change_code_grades
from course_build.instructor.invalid_unicode import send_to_hand_grading
from course_build.instructor.machine import usable_cores, usable_memory
from course_build.instructor.manual_grades import answers_before_regrade, keep_hand_grades
from course_build.instructor.progress import watch_files
from course_build.instructor.results import NOT_GRADED_NOTE
from course_build.instructor.student_records import read_record
from course_build.instructor.submitted_folders import normalize_submission
from course_build.nbgrader_plugins.sandbox import SandboxedKernelManager
from course_build.nbgrader_plugins.sandboxed_execute import SandboxedExecute
from course_build.nbgrader_runner import (
    NbgraderError,
    finish_nbgrader,
    start_nbgrader,
)

STARTUP_MARGIN_S = 120  # per notebook, beyond its time budget: nbgrader, the kernel, the checker
# Memory of one grading worker beyond its kernel's limit: nbgrader's process and the trusted
# checker (numpy, and torch for the lessons that grade PyTorch code).
WORKER_OVERHEAD_GIB = 1.0


@dataclass(frozen=True)
class GradeReport:
    """One student's result for one lesson.

    ``scores`` maps every graded cell to its points; a written answer still waiting for the
    instructor maps to None. ``auto_total`` / ``auto_max`` cover the autograded cells only.
    ``notes`` say, for the instructor, what the grader repaired, removed or noticed.
    """

    scores: dict[str, float | None]
    max_scores: dict[str, float]
    autograded: frozenset[str]
    feedback_html: str
    notes: tuple[str, ...] = field(default=())

    @property
    def auto_total(self) -> float:
        return sum(self.scores[g] or 0.0 for g in self.autograded)

    @property
    def auto_max(self) -> float:
        return sum(self.max_scores[g] for g in self.autograded)

    @property
    def awaiting_manual_grade(self) -> list[str]:
        return sorted(g for g, score in self.scores.items() if score is None)


def submitted_students(course: Path, lesson: str) -> list[str]:
    """Students with a folder ``submitted/<student>/<lesson>/``."""
    return sorted(p.parent.name for p in (course / "submitted").glob(f"*/{lesson}") if p.is_dir())


def default_jobs(course: Path | None = None) -> int:
    """Parallel nbgrader processes: one per core this process may use, as many as memory holds
    at the kernel's memory limit (``c.SandboxedKernelManager.memory_limit_gib`` of ``course``)
    plus ``WORKER_OVERHEAD_GIB`` for nbgrader and the checker beside it (``machine``)."""
    per_job = (kernel_memory_gib(course) + WORKER_OVERHEAD_GIB) * 2**30
    return max(1, min(usable_cores(), int(usable_memory() // per_job)))


def kernel_memory_gib(course: Path | None) -> float:
    """The memory limit of one grading kernel, as ``course`` configures it (or the default)."""
    default = SandboxedKernelManager.memory_limit_gib.default_value
    if course is None:
        return default
    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    return float(config.SandboxedKernelManager.get("memory_limit_gib", default))


def notebook_budget(course: Path, extra: list[str]) -> float:
    """The time budget of one notebook: as given in ``extra``, else as the course configures it."""
    for argument in extra:
        if argument.startswith("--SandboxedExecute.notebook_budget="):
            return float(argument.split("=", 1)[1])
    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    return float(
        config.SandboxedExecute.get("notebook_budget", SandboxedExecute.notebook_budget.default_value)
    )


def _autograde(course: Path, lesson: str, students: list[str], jobs: int, extra: list[str]) -> list[str]:
    """``nbgrader autograde`` in ``jobs`` processes, each on its share of the students.

    Every process excludes the others' students (``CourseDirectory.student_id_exclude``); the
    SQLite gradebook takes their short writes in turn. A process still running when each of its
    notebooks could have used up its time budget is stopped. Returns the errors reported, if any.
    """
    everyone = submitted_students(course, lesson)
    groups = [group for group in (students[i::jobs] for i in range(jobs)) if group]
    processes = []
    for group in groups:
        exclude = ",".join(s for s in everyone if s not in group)
        args = ["autograde", lesson, "--force", *extra]
        if exclude:
            args.append(f"--CourseDirectory.student_id_exclude={exclude}")
        processes.append(start_nbgrader(course, *args, single_threaded=len(groups) > 1))
    per_notebook_s = notebook_budget(course, extra) + STARTUP_MARGIN_S
    errors = []
    for group, process in zip(groups, processes, strict=True):
        try:
            finish_nbgrader(process, timeout_s=len(group) * per_notebook_s)
        except NbgraderError as error:  # one broken notebook must not cost the others their grades
            errors.append(f"nbgrader autograde reported errors: {str(error).splitlines()[0]}")
    return errors


def autograde_with_one_retry(
    course: Path, lesson: str, students: list[str], jobs: int, extra: list[str]
) -> list[str]:
    """``_autograde`` the students, then once more, one at a time, those whose run did not end;
    the autograded cells of a notebook whose second run did not end either score zero, with a
    note. Returns the errors nbgrader reported."""
    run_notes = _autograde(course, lesson, students, jobs, extra)
    unfinished = [s for s in students if not _ran_to_the_end(course, lesson, s)]
    if unfinished:
        # A kernel that did not start on a busy machine usually does now, a run cut short by a
        # neighbour's gets its own time; a submission that really breaks the run fails again.
        run_notes += _autograde(course, lesson, unfinished, 1, extra)
    for student in unfinished:
        if not _ran_to_the_end(course, lesson, student):
            score_autograded_cells_zero(course, lesson, student, _why_unfinished(course, lesson, student))
    return run_notes


def _ran_to_the_end(course: Path, lesson: str, student: str) -> bool:
    """nbgrader wrote the autograded notebook and the execute step marked the run finished."""
    finished = NotebookNotes(course, student, lesson).finished()
    return finished and _graded_notebook(course, lesson, student).is_file()


def _why_unfinished(course: Path, lesson: str, student: str) -> str:
    if not _graded_notebook(course, lesson, student).is_file():
        return NOT_GRADED_NOTE
    return (
        "grading stopped before the notebook's end (the run was killed or ran out of time); "
        "regraded once, it stopped again: its autograded cells score zero"
    )


def score_autograded_cells_zero(course: Path, lesson: str, student: str, why: str) -> None:
    """Give the autograded cells of ``student``'s notebook zero in the gradebook, never "pending";
    a grade given by hand stays (it counts instead). ``why`` is noted for the instructor."""
    NotebookNotes(course, student, lesson).add(why)

    def zero(grade: Grade) -> None:
        grade.auto_score, grade.needs_manual_grade = 0.0, False

    change_code_grades(course, lesson, student, zero)


def grade_lesson(
    course: Path,
    lesson: str,
    students: Iterable[str] | None = None,
    *,
    timeout_s: int | None = None,
    jobs: int | None = None,
    timings: dict[str, float] | None = None,
    unsandboxed: bool = False,
    notebook_budget_s: float | None = None,
    test_cell_budget_s: float | None = None,
    run_every_cell: bool = False,
    progress: bool = False,
) -> dict[str, GradeReport]:
    """Autograde and write feedback for ``students`` (default: every submitted folder).

    ``timeout_s`` overrides the configured per-cell timeout (tests use a short one), the budgets
    the configured time budgets of a notebook and of a test cell; ``jobs``
    is the number of parallel nbgrader processes (default: ``default_jobs()``); ``timings``, if
    given, receives the seconds each phase took (for the benchmark); ``unsandboxed`` runs the
    kernels without the sandbox (every report then says its grade is unprotected);
    ``run_every_cell`` runs the course's demonstrations too (``SandboxedExecute.run_every_cell``:
    slower, same verdicts); ``progress`` shows how many students are graded while nbgrader runs
    (``course_build.instructor.progress``).
    """
    clock = _PhaseClock(timings)
    students = sorted(students) if students is not None else submitted_students(course, lesson)
    file_notes = {}
    for student in students:
        record = read_record(course, lesson, student)
        file_notes[student] = [
            *(record.notes if record else []),
            *normalize_submission(course, lesson, student),
        ]
    clock.lap("fix up submitted files")
    extra = [f"--Execute.timeout={timeout_s}"] if timeout_s else []
    if unsandboxed:
        extra.append("--SandboxedExecute.unsandboxed=True")
    if notebook_budget_s is not None:
        extra.append(f"--SandboxedExecute.notebook_budget={notebook_budget_s}")
    if test_cell_budget_s is not None:
        extra.append(f"--SandboxedExecute.test_cell_budget={test_cell_budget_s}")
    if run_every_cell:
        extra.append("--SandboxedExecute.run_every_cell=True")
    graded_before = answers_before_regrade(course, lesson, students)
    graded_paths = [_graded_notebook(course, lesson, s) for s in students]
    with watch_files(f"{lesson}: autograde", graded_paths, enabled=progress):
        run_notes = autograde_with_one_retry(course, lesson, students, jobs or default_jobs(course), extra)
    keep_hand_grades(course, lesson, graded_before)
    for student in students:
        record = read_record(course, lesson, student)
        if record is not None and record.grade_by_hand:
            send_to_hand_grading(course, lesson, student)
    clock.lap("nbgrader autograde")
    try:
        write_feedback(course, lesson, jobs=jobs)
    except NbgraderError as error:
        run_notes.append(f"nbgrader generate_feedback reported errors: {str(error).splitlines()[0]}")
    clock.lap("nbgrader generate_feedback")
    if unsandboxed:
        file_notes = {s: [*notes, UNPROTECTED_NOTE] for s, notes in file_notes.items()}
    reports = {s: _report(course, lesson, s, file_notes[s], run_notes) for s in students}
    clock.lap("read grades and notes")
    return reports


STUDENTS_PER_FEEDBACK_PROCESS = 10  # fewer, and a second nbgrader's start-up costs more than it saves


def write_feedback(
    course: Path, lesson: str, *, written: Collection[str] = (), jobs: int | None = None
) -> list[Path]:
    """Write every graded student's feedback page for ``lesson`` afresh; return the pages.

    Each student's old ``feedback/<student>/<lesson>/`` is removed first (instead of nbgrader's
    ``--force``, which warns for each one), so a rerun gives the same pages and nothing stale.
    A graded folder whose student the gradebook no longer has (``nbgrader db student remove``) is
    left out instead of stopping everyone's feedback. The students in ``written`` already have
    their page written from the gradebook as it is (merged from shards) and are left as they are.
    A large class is split among up to ``jobs`` nbgrader processes (default: ``default_jobs()``),
    each writing its share of the pages.
    """
    for folder in (course / "feedback").glob(f"*/{lesson}"):
        if folder.parent.name not in written:
            shutil.rmtree(folder)
    left_out = {*_graded_but_not_in_gradebook(course, lesson), *written}
    graded = sorted(p.parent.name for p in (course / "autograded").glob(f"*/{lesson}") if p.is_dir())
    graded = [s for s in graded if s not in left_out]
    processes = max(1, min(jobs or default_jobs(), len(graded) // STUDENTS_PER_FEEDBACK_PROCESS))
    started = []
    for group in [graded[i::processes] for i in range(processes)] if graded else []:
        others = sorted(left_out.union(s for s in graded if s not in group))
        exclude = [f"--CourseDirectory.student_id_exclude={','.join(others)}"] if others else []
        started.append(start_nbgrader(course, "generate_feedback", lesson, *exclude))
    errors = []
    for process in started:
        try:
            finish_nbgrader(process, timeout_s=1800)
        except NbgraderError as error:
            errors.append(error)
    if errors:
        raise errors[0]
    return sorted((course / "feedback").glob(f"*/{lesson}/{lesson}.html"))


def _graded_but_not_in_gradebook(course: Path, lesson: str) -> list[str]:
    """Students with an ``autograded/<student>/<lesson>/`` folder but no submission in the gradebook."""
    folders = {p.parent.name for p in (course / "autograded").glob(f"*/{lesson}") if p.is_dir()}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        try:
            known = {s.student.id for s in gradebook.find_assignment(lesson).submissions}
        except MissingEntry:
            known = set()
    return sorted(folders - known)


class _PhaseClock:
    """Adds the seconds since the last lap to ``timings[phase]`` (does nothing without timings)."""

    def __init__(self, timings: dict[str, float] | None) -> None:
        self.timings, self.last = timings, time.perf_counter()

    def lap(self, phase: str) -> None:
        now = time.perf_counter()
        if self.timings is not None:
            self.timings[phase] = self.timings.get(phase, 0.0) + now - self.last
        self.last = now


def _graded_notebook(course: Path, lesson: str, student: str) -> Path:
    """Where nbgrader writes a student's autograded notebook; missing when grading failed."""
    return course / "autograded" / student / lesson / f"{lesson}.ipynb"


def _report(course: Path, lesson: str, student: str, notes: list[str], run_notes: list[str]) -> GradeReport:
    graded = _graded_notebook(course, lesson, student)
    feedback = course / "feedback" / student / lesson / f"{lesson}.html"
    notes = list(notes)
    was_graded = graded.is_file()
    notes += [n for n in NotebookNotes(course, student, lesson).notes() if n not in notes]
    if not was_graded:
        notes += [note for note in (NOT_GRADED_NOTE, *run_notes) if note not in notes]
    if was_graded and not feedback.is_file():
        notes += ["nbgrader wrote no feedback page for this notebook", *run_notes]
    scores, max_scores, autograded = {}, {}, set()
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        try:
            grades = gradebook.find_submission_notebook(lesson, lesson, student).grades
        except MissingEntry:
            grades = []
            for cell in gradebook.find_notebook(lesson, lesson).grade_cells:
                max_scores[cell.name] = cell.max_score
                scores[cell.name] = 0.0
                if cell.cell_type == "code":
                    autograded.add(cell.name)
        for grade in grades:
            max_scores[grade.name] = grade.max_score
            scores[grade.name] = None if grade.needs_manual_grade else grade.score
            if grade.cell_type == "code":
                autograded.add(grade.name)
                if not was_graded:  # the run stopped before saving a score: zero, as noted
                    scores[grade.name] = 0.0
    return GradeReport(
        scores=scores,
        max_scores=max_scores,
        autograded=frozenset(autograded),
        feedback_html=feedback.read_text(encoding="utf-8") if feedback.is_file() else "",
        notes=tuple(notes),
    )

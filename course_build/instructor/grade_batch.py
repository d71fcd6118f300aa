"""Grade submissions of a lesson with real nbgrader runs and read the scores back.

``grade_lesson`` is the batch every grading path shares (the tests, the benchmark and
``python -m course_build.grade``): fix up the submitted files, ``nbgrader autograde`` (sandboxed
kernels, test cells judged by the trusted checker: see ``autograder/nbgrader_config.py``) keeping
the grades given by hand to unchanged answers (``course_build.instructor.manual_grades``),
``nbgrader generate_feedback`` (``write_feedback``), then one ``GradeReport`` per student with the
instructor's notes (what was collected, repaired or noticed, and why).
"""

import os
import shutil
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook, MissingEntry

from course_build.grader_notes import UNPROTECTED_NOTE, notes_of
from course_build.instructor.manual_grades import answers_before_regrade, keep_hand_grades
from course_build.instructor.progress import watch_files
from course_build.instructor.student_records import read_record
from course_build.instructor.submitted_folders import normalize_submission
from course_build.nbgrader_runner import (
    NbgraderError,
    finish_nbgrader,
    run_nbgrader,
    start_nbgrader,
)


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


def default_jobs() -> int:
    """Parallel nbgrader processes: one per CPU core, at most 4 (each kernel may use 4 GiB)."""
    return max(1, min(4, os.cpu_count() or 1))


def _autograde(course: Path, lesson: str, students: list[str], jobs: int, extra: list[str]) -> list[str]:
    """``nbgrader autograde`` in ``jobs`` processes, each on its share of the students.

    Every process excludes the others' students (``CourseDirectory.student_id_exclude``); the
    SQLite gradebook takes their short writes in turn. Returns the errors reported, if any.
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
    errors = []
    for process in processes:
        try:
            finish_nbgrader(process)
        except NbgraderError as error:  # one broken notebook must not cost the others their grades
            errors.append(f"nbgrader autograde reported errors: {str(error).splitlines()[0]}")
    return errors


def grade_lesson(
    course: Path,
    lesson: str,
    students: Iterable[str] | None = None,
    *,
    timeout_s: int | None = None,
    jobs: int | None = None,
    timings: dict[str, float] | None = None,
    unsandboxed: bool = False,
    progress: bool = False,
) -> dict[str, GradeReport]:
    """Autograde and write feedback for ``students`` (default: every submitted folder).

    ``timeout_s`` overrides the configured per-cell timeout (tests use a short one); ``jobs``
    is the number of parallel nbgrader processes (default: ``default_jobs()``); ``timings``, if
    given, receives the seconds each phase took (for the benchmark); ``unsandboxed`` runs the
    kernels without the sandbox (every report then says its grade is unprotected); ``progress``
    shows how many students are graded while nbgrader runs (``course_build.instructor.progress``).
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
    graded_before = answers_before_regrade(course, lesson, students)
    graded_paths = [_graded_notebook(course, lesson, s) for s in students]
    with watch_files(f"{lesson}: autograde", graded_paths, enabled=progress):
        run_notes = _autograde(course, lesson, students, jobs or default_jobs(), extra)
        failed = [s for s in students if not _graded_notebook(course, lesson, s).is_file()]
        if failed:
            # A second try, one at a time: a kernel that did not start on a busy machine usually
            # does now, while a submission that really breaks the run fails again and scores zero.
            run_notes += _autograde(course, lesson, failed, 1, extra)
    keep_hand_grades(course, lesson, graded_before)
    clock.lap("nbgrader autograde")
    try:
        write_feedback(course, lesson)
    except NbgraderError as error:
        run_notes.append(f"nbgrader generate_feedback reported errors: {str(error).splitlines()[0]}")
    clock.lap("nbgrader generate_feedback")
    if unsandboxed:
        file_notes = {s: [*notes, UNPROTECTED_NOTE] for s, notes in file_notes.items()}
    reports = {s: _report(course, lesson, s, file_notes[s], run_notes) for s in students}
    clock.lap("read grades and notes")
    return reports


def write_feedback(course: Path, lesson: str) -> list[Path]:
    """Write every graded student's feedback page for ``lesson`` afresh; return the pages.

    Each student's old ``feedback/<student>/<lesson>/`` is removed first (instead of nbgrader's
    ``--force``, which warns for each one), so a rerun gives the same pages and nothing stale.
    """
    for folder in (course / "feedback").glob(f"*/{lesson}"):
        shutil.rmtree(folder)
    run_nbgrader(course, "generate_feedback", lesson)
    return sorted((course / "feedback").glob(f"*/{lesson}/{lesson}.html"))


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
    if was_graded:
        notes += [n for n in notes_of(nbformat.read(graded, as_version=4)) if n not in notes]
    else:
        notes += ["nbgrader could not grade this notebook; it scores zero", *run_notes]
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

"""Where every student stands in every graded lesson, read from the gradebook.

One ``LessonResult`` per student and lesson holds what the grade sheet and the feedback show:
autograded points, points given by hand to written answers, points still pending (answers not
graded yet, never counted as zero), lateness and its penalty under the course's late policy, the
total so far, and the grader's notes (``course_build.grader_notes``: written by the grader only,
never read from a notebook). The sheet (``course_build.instructor.grade_sheet``) and the feedback
(``course_build.nbgrader_plugins.feedback``) both read it from here, so their numbers cannot disagree.
"""

from dataclasses import dataclass, field, replace
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook, MissingEntry

from course_build.cell_roles import grade_id
from course_build.grader_notes import NotebookNotes, clean_note
from course_build.instructor.dropped import dropped_students
from course_build.instructor.late_policy import Lateness, LatePolicy, assess
from course_build.instructor.provenance import describe_source
from course_build.instructor.student_records import read_record

NOT_GRADED_NOTE = "nbgrader could not grade this notebook; it scores zero"
NO_SUBMISSION_NOTE = "no submission graded for this lesson"


@dataclass(frozen=True)
class GradedItem:
    """One graded cell of a submission: a test cell (autograded) or a written answer."""

    grade_id: str
    written: bool  # a written answer graded by hand (else an autograded test cell)
    max_score: float
    score: float | None  # None: not graded yet
    comment: str = ""


@dataclass(frozen=True)
class LessonResult:
    """One student's standing in one lesson (see the module docstring)."""

    lesson: str
    student: str
    lms_name: str
    lms_user_id: str
    lms_late: bool  # the LMS's LATE_ marker
    submitted: bool
    items: tuple[GradedItem, ...]
    lateness: Lateness
    late_policy: str  # the policy in words
    notes: tuple[str, ...] = field(default=())
    time_source: str = ""  # where the submission time came from (zip entry time, instructor, ...)
    source_file: str = ""  # the graded file: zip, entry, submission id, digest
    dropped: str | None = None  # why the student was dropped (course_build.roster); None if enrolled

    def _sum(self, written: bool, graded: bool | None, of_max: bool = False) -> float:
        return sum(
            (item.max_score if of_max else item.score or 0.0)
            for item in self.items
            if item.written == written and (graded is None or (item.score is not None) == graded)
        )

    @property
    def auto_score(self) -> float:
        return self._sum(written=False, graded=True)

    @property
    def auto_max(self) -> float:
        return self._sum(written=False, graded=None, of_max=True)

    @property
    def manual_score(self) -> float | None:
        """Points given by hand so far; None while no written answer is graded."""
        graded = [item for item in self.items if item.written and item.score is not None]
        return sum(item.score for item in graded) if graded else None

    @property
    def manual_max(self) -> float:
        return self._sum(written=True, graded=None, of_max=True)

    @property
    def pending(self) -> tuple[GradedItem, ...]:
        """Graded cells not graded yet (written answers, or a test cell flagged for review)."""
        return tuple(item for item in self.items if item.score is None)

    @property
    def pending_points(self) -> float:
        return sum(item.max_score for item in self.pending)

    @property
    def max_score(self) -> float:
        return sum(item.max_score for item in self.items)

    @property
    def earned(self) -> float:
        """Points earned so far, before any late penalty."""
        return sum(item.score or 0.0 for item in self.items)

    @property
    def penalty(self) -> float:
        """Points the late policy takes: a fraction of the lesson's points, at most those earned."""
        return min(self.lateness.penalty_fraction * self.max_score, self.earned)

    @property
    def total(self) -> float:
        """The total so far: points earned minus the late penalty (pending answers not counted)."""
        return self.earned - self.penalty

    @property
    def complete(self) -> bool:
        return not self.pending


def cell_order(course: Path, lesson: str) -> dict[str, int]:
    """grade id -> position in the lesson's source notebook (the gradebook keeps no order)."""
    source = nbformat.read(course / "source" / lesson / f"{lesson}.ipynb", as_version=4)
    ids = [grade_id(cell) for cell in source.cells]
    return {grade_id: index for index, grade_id in enumerate(ids) if grade_id}


def _items(
    gradebook: Gradebook, lesson: str, student: str, order: dict[str, int]
) -> tuple[tuple[GradedItem, ...], bool]:
    """The graded cells of a student's submission in notebook order, and whether there is one;
    a lesson without a submission lists its cells at zero."""

    def position(cell) -> tuple[int, str]:
        return order.get(cell.name, len(order)), cell.name

    try:
        submission = gradebook.find_submission_notebook(lesson, lesson, student)
    except MissingEntry:
        cells = sorted(gradebook.find_notebook(lesson, lesson).grade_cells, key=position)
        return tuple(GradedItem(c.name, c.cell_type == "markdown", c.max_score, 0.0) for c in cells), False
    comments = {comment.name: comment.manual_comment or "" for comment in submission.comments}
    items = tuple(
        GradedItem(
            grade_id=grade.name,
            written=grade.cell_type == "markdown",
            max_score=grade.max_score,
            score=None if grade.needs_manual_grade else grade.score,
            comment=comments.get(grade.name, ""),
        )
        for grade in sorted(submission.grades, key=position)
    )
    return items, True


def _notes(course: Path, lesson: str, student: str, submitted: bool, lateness: Lateness) -> tuple[str, ...]:
    record = read_record(course, lesson, student)
    notes = [*(record.notes if record else []), *((record.fixup_notes or []) if record else [])]
    graded = course / "autograded" / student / lesson / f"{lesson}.ipynb"
    if not submitted:
        notes.append(NO_SUBMISSION_NOTE)
    else:
        notes += NotebookNotes(course, student, lesson).notes()
        if not graded.is_file():
            notes.append(NOT_GRADED_NOTE)
    notes += lateness.notes
    return tuple(dict.fromkeys(clean_note(note) for note in notes))  # in order, each once


def graded_lessons(gradebook: Gradebook) -> list[str]:
    """Lessons (assignments) with at least one submission in the gradebook, in course order."""
    return sorted(a.name for a in gradebook.assignments if a.submissions)


def lesson_result(
    course: Path, gradebook: Gradebook, lesson: str, student: str, policy: LatePolicy
) -> LessonResult:
    """Where ``student`` stands in ``lesson`` (see LessonResult)."""
    record = read_record(course, lesson, student)
    items, submitted = _items(gradebook, lesson, student, cell_order(course, lesson))
    if submitted:
        lateness = assess(
            policy, lesson, record.submitted_at if record else None, record.late if record else False
        )
    else:
        lateness = Lateness(late=False, submitted_at=None, days_late=None, penalty_fraction=0.0)
    known = gradebook.find_student(student)
    return LessonResult(
        lesson=lesson,
        student=student,
        lms_name=record.name if record else (known.last_name or ""),
        lms_user_id=record.user_id if record else (known.lms_user_id or ""),
        lms_late=bool(record and record.late),
        submitted=submitted,
        items=items,
        lateness=lateness,
        late_policy=policy.describe(),
        notes=_notes(course, lesson, student, submitted, lateness),
        time_source=record.time_source if record and submitted else "",
        source_file=describe_source(record.source) if record and submitted else "",
    )


def class_results(course: Path, policy: LatePolicy, lessons: list[str] | None = None) -> list[LessonResult]:
    """A result for every student the gradebook knows in every graded lesson (or ``lessons``),
    ordered by lesson, then student; a dropped student's results say so."""
    dropped = {
        student: entry.reason or "no reason given" for student, entry in dropped_students(course).items()
    }
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        chosen = lessons if lessons is not None else graded_lessons(gradebook)
        students = sorted(s.id for s in gradebook.students)
        return [
            replace(lesson_result(course, gradebook, lesson, student, policy), dropped=dropped.get(student))
            for lesson in chosen
            for student in students
        ]

"""``python -m course_build.regrade LESSON``: grade everything already collected again, after a fix.

The recipe when a test (visible or hidden), a reference solution or a lesson's text was wrong
(``book/instructors.md``, "Fix a test and regrade"): edit ``lessons/NN_slug.md``, regenerate it
(``python -m course_build --lesson NN_slug``), then run this from the repository root. It

1. reads where every student stands now (``course_build.instructor.results``) and the lesson's
   graded cells as the gradebook holds them;
2. regenerates the release and the gradebook's copy of the lesson (``nbgrader generate_assignment``),
   keeping the release the students worked from (``course_build.nbgrader_plugins.restore_cells``
   then knows a submission's test cells are that release's, not edited by the student);
3. autogrades every collected submission (``submitted/<student>/LESSON/``) again in the sandbox,
   with the batch every grading command shares (``course_build.instructor.grade_batch``): a grade
   given by hand to an answer whose text did not change is kept with its comment, one whose answer
   changed is flagged for review with a note;
4. writes feedback and the grade sheet, and prints every score that moved, from what to what, and
   why (the test cell changed, its points changed, the student's code changed, an answer is to be
   graded again by hand).

Nothing is collected: to grade a new zip use ``python -m course_build.grade``.
"""

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry

from course_build.grade import configured_bwrap
from course_build.instructor.course_dir import has_gradebook, open_course
from course_build.instructor.grade_batch import grade_lesson, submitted_students
from course_build.instructor.grade_sheet import lesson_table, points
from course_build.instructor.results import LessonResult, class_results
from course_build.nbgrader_plugins.restore_cells import keep_release
from course_build.nbgrader_plugins.sandbox import sandbox_problem
from course_build.nbgrader_runner import NbgraderError, run_nbgrader
from course_build.report import write_grade_sheet


@dataclass(frozen=True)
class GradedCell:
    """What the gradebook holds of one graded cell of the lesson's source."""

    source: str
    max_score: float


@dataclass(frozen=True)
class ScoreMove:
    """One score that a regrade moved."""

    student: str
    what: str  # a graded cell's id, or "total"
    before: str
    after: str
    why: str


def graded_cells(course: Path, lesson: str) -> dict[str, GradedCell]:
    """grade id -> source and points of every graded cell, as the gradebook holds them."""
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        try:
            notebook = gradebook.find_notebook(lesson, lesson)
        except MissingEntry:
            return {}
        sources = {cell.name: cell.source for cell in notebook.source_cells}
        return {
            cell.name: GradedCell(sources.get(cell.name, ""), cell.max_score) for cell in notebook.grade_cells
        }


def _score(score: float | None, max_score: float) -> str:
    return "pending" if score is None else f"{points(score)}/{points(max_score)}"


def _total(result: LessonResult) -> str:
    total = f"{points(result.total)}/{points(result.max_score)}"
    return f"{total} so far" if result.pending else total


def _why(
    cell: str, written: bool, old: GradedCell | None, new: GradedCell | None, result: LessonResult
) -> str:
    if old is not None and new is not None and old.max_score != new.max_score:
        return f"its points changed ({points(old.max_score)} -> {points(new.max_score)})"
    changed = any(note.startswith(f"{cell}: the answer changed") for note in result.notes)
    if changed or written:
        return "the answer changed since it was graded by hand: grade it again in the formgrader"
    if old is not None and new is not None and old.source != new.source:
        return "the test changed"
    return "same test: the student's code or its run changed (see the row's notes)"


def score_moves(
    before: dict[str, LessonResult],
    after: dict[str, LessonResult],
    cells_before: dict[str, GradedCell],
    cells_after: dict[str, GradedCell],
) -> list[ScoreMove]:
    """Every graded cell's score and every total that differs between ``before`` and ``after``."""
    moves = []
    for student, now in sorted(after.items()):
        then = before.get(student)
        if then is None or not then.submitted:
            moves.append(ScoreMove(student, "total", "not graded", _total(now), "graded for the first time"))
            continue
        old_items = {item.grade_id: item for item in then.items}
        moved_before = len(moves)
        for item in now.items:
            old = old_items.get(item.grade_id)
            old_text = _score(old.score, old.max_score) if old else "-"
            new_text = _score(item.score, item.max_score)
            if old_text != new_text:
                why = _why(
                    item.grade_id,
                    item.written,
                    cells_before.get(item.grade_id),
                    cells_after.get(item.grade_id),
                    now,
                )
                moves.append(ScoreMove(student, item.grade_id, old_text, new_text, why))
        if _total(then) != _total(now):
            why = "the scores above" if len(moves) > moved_before else "the late penalty changed"
            moves.append(ScoreMove(student, "total", _total(then), _total(now), why))
    return moves


def moves_table(moves: list[ScoreMove]) -> str:
    """The moved scores as a plain-text table (or a line saying none moved)."""
    if not moves:
        return "No score moved."
    rows = [("student", "score", "before", "after", "why")]
    rows += [(m.student, m.what, m.before, m.after, m.why) for m in moves]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row[:4], widths, strict=True)) + "  " + row[4]
        for row in rows
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m course_build.regrade",
        description="Autograde every collected submission of a lesson again (after fixing a test), keeping "
        "hand grades of unchanged answers, and print every score that moved.",
    )
    parser.add_argument("lesson", help="lesson (assignment) name, e.g. 03_attention")
    parser.add_argument("--course", type=Path, help="course directory (default: autograder)")
    parser.add_argument("--out", type=Path, help="grade sheet CSV (default: COURSE/grades.csv)")
    parser.add_argument(
        "--unsandboxed",
        action="store_true",
        help="grade without the bubblewrap sandbox (only where it cannot run; every row says so)",
    )
    args = parser.parse_args(argv)
    lesson = args.lesson
    course, policy = open_course(parser, args.course)
    if not (course / "source" / lesson / f"{lesson}.ipynb").is_file():
        parser.error(f"{course}/source has no lesson {lesson!r}")
    students = submitted_students(course, lesson)
    if not has_gradebook(course) or not students or not graded_cells(course, lesson):
        parser.exit(
            2,
            f"nothing of {lesson} is collected yet: grade its zip first "
            f"(python -m course_build.grade {lesson} --zip FILE)\n",
        )
    if not args.unsandboxed:
        problem = sandbox_problem(configured_bwrap(course))
        if problem:
            parser.exit(
                2,
                f"Refusing to regrade: the grading sandbox cannot run here ({problem}). Install "
                "bubblewrap, or pass --unsandboxed (every row will say so).\n",
            )
    before = {r.student: r for r in class_results(course, policy, [lesson])}
    cells_before = graded_cells(course, lesson)
    keep_release(course, lesson)
    try:
        run_nbgrader(course, "generate_assignment", lesson, "--force")
    except NbgraderError as error:
        reason = next(
            (line for line in str(error).splitlines() if "Error" in line), str(error).splitlines()[0]
        )
        parser.exit(
            1,
            f"nbgrader could not regenerate {lesson}: {reason.strip()}\n"
            "(graded cells cannot be added, removed or renamed once students have submitted; change "
            "their tests and points only). Nothing was regraded.\n",
        )
    cells_after = graded_cells(course, lesson)
    print(f"Regrading {len(students)} collected submission(s) of {lesson}.", flush=True)
    grade_lesson(course, lesson, students, unsandboxed=args.unsandboxed, progress=True)
    out = args.out or course / "grades.csv"
    results = write_grade_sheet(course, out)
    now = [r for r in results if r.lesson == lesson and r.student in students]
    print(lesson_table(now))
    moves = score_moves(before, {r.student: r for r in now}, cells_before, cells_after)
    print(f"\nWhat the regrade changed ({len({m.student for m in moves})} student(s)):")
    print(moves_table(moves))
    print(
        f"\nGrade sheet written to {out}; feedback in {course / 'feedback'}.\nNext: grade again any answer "
        "listed as pending (python -m course_build.formgrader), then python -m course_build.report."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

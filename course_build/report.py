"""``python -m course_build.report``: after grading by hand, feedback for students and the grade sheet.

Run from the repository root whenever grades changed (after the formgrader, after a regrade); it
is safe to rerun and gives the same files for the same gradebook:

1. for each graded lesson (or the lessons named), every student's feedback page is written afresh to
   ``autograder/feedback/<student>/<lesson>/<lesson>.html``
   (``course_build.nbgrader_plugins.feedback``: the student's work, visible tests, points and
   comments, "not graded yet" where that is so; no hidden tests, no grader notes). Each folder can
   be sent to its student as it is;
2. the class's grade sheet, one row per student and lesson, is written to
   ``autograder/grades.csv`` (``--out``) and printed as a table per lesson
   (``course_build.instructor.grade_sheet``).
"""

import argparse
import sys
from pathlib import Path

from nbgrader.api import Gradebook

from course_build.instructor.course_dir import open_course
from course_build.instructor.grade_batch import write_feedback
from course_build.instructor.grade_sheet import sheet_tables, write_sheet
from course_build.instructor.late_policy import course_late_policy
from course_build.instructor.results import LessonResult, class_results, graded_lessons
from course_build.nbgrader_runner import NbgraderError


def write_grade_sheet(course: Path, out: Path) -> list[LessonResult]:
    """Write the grade sheet of every graded lesson to ``out``; return its results."""
    results = class_results(course, course_late_policy(course))
    write_sheet(results, out)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m course_build.report",
        description="Write every student's feedback and the class's grade sheet from the gradebook.",
    )
    parser.add_argument(
        "lessons", nargs="*", help="lessons to write feedback for (default: every graded one)"
    )
    parser.add_argument("--course", type=Path, help="course directory (default: autograder)")
    parser.add_argument("--out", type=Path, help="grade sheet CSV (default: COURSE/grades.csv)")
    args = parser.parse_args(argv)
    course, policy = open_course(parser, args.course, need_gradebook=True)
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        graded = graded_lessons(gradebook)
    unknown = [lesson for lesson in args.lessons if lesson not in graded]
    if unknown:
        parser.exit(
            2, f"not graded yet: {', '.join(unknown)} (graded lessons: {', '.join(graded) or 'none'})\n"
        )
    for lesson in args.lessons or graded:
        try:
            pages = write_feedback(course, lesson)
        except NbgraderError as error:
            parser.exit(1, f"writing the feedback of {lesson} failed:\n{error}\n")
        print(f"{lesson}: {len(pages)} feedback page(s) in {course / 'feedback'}/<student>/{lesson}/")
    out = args.out or course / "grades.csv"
    results = class_results(course, policy)
    write_sheet(results, out)
    print()
    print(sheet_tables(results))
    print(f"\nGrade sheet written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""``python -m course_build.grade LESSON --zip Z``: grade one lesson's LMS download.

One command for the instructor without JupyterHub, run from the repository root:

1. ``nbgrader generate_assignment`` (creates the gradebook on first use);
2. collect the zip into ``submitted/`` (``course_build.instructor.collect_zip``: any file or student name, one
   notebook per student, the latest of several, notes on everything that was odd);
3. fix up the submitted files, ``nbgrader autograde`` in the sandbox and ``nbgrader generate_feedback``
   (``course_build.instructor.grade_batch``; the protections are configured in
   ``autograder/nbgrader_config.py``);
4. the class's grade sheet (``course_build.report``): a CSV row per student and lesson, with the
   name and LMS user id as the LMS gave them, autograded points, written answers' points given
   and still pending, lateness (Canvas's ``LATE_`` marker and the submission time) and its penalty,
   the total so far and the grader's notes;
5. this lesson's table on stdout, and what to do next (grade the written answers in the
   formgrader, then ``python -m course_build.report``).

Every step can be rerun: a regrade of the same zip gives the same sheet, and grades given by hand
to answers that did not change are kept.

Grading refuses to start where the bubblewrap sandbox cannot run, unless ``--unsandboxed`` is given;
every row then says its grade is unprotected.
"""

import argparse
import sys
from pathlib import Path

from traitlets.config.loader import PyFileConfigLoader

from course_build.instructor.collect_zip import collect_zip
from course_build.instructor.course_dir import CourseDirError, resolve_course
from course_build.instructor.grade_batch import grade_lesson
from course_build.instructor.grade_sheet import lesson_table
from course_build.instructor.late_policy import LatePolicyError, course_late_policy
from course_build.instructor.student_records import known_students, remember_students
from course_build.nbgrader_plugins.restore_cells import keep_release
from course_build.nbgrader_plugins.sandbox import BWRAP, sandbox_problem
from course_build.nbgrader_runner import run_nbgrader
from course_build.report import write_grade_sheet


def configured_bwrap(course: Path) -> str:
    """The bubblewrap the course's nbgrader configuration uses (``c.SandboxedKernelManager.bwrap``)."""
    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    return config.SandboxedKernelManager.get("bwrap", BWRAP)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m course_build.grade",
        description="Collect, autograde and write feedback for one lesson's LMS zip, and the grade sheet.",
    )
    parser.add_argument("lesson", help="lesson (assignment) name, e.g. 03_attention")
    parser.add_argument(
        "--zip", required=True, type=Path, help="the LMS download (see course_build/instructor/lms.py)"
    )
    parser.add_argument("--course", type=Path, help="course directory (default: autograder)")
    parser.add_argument("--out", type=Path, help="grade sheet CSV (default: COURSE/grades.csv)")
    parser.add_argument(
        "--unsandboxed",
        action="store_true",
        help="grade without the bubblewrap sandbox (only where it cannot run): the student's code can "
        "then read the solutions and change other grades, and every row says so",
    )
    args = parser.parse_args(argv)
    archive = args.zip
    try:
        course = resolve_course(args.course)
        course_late_policy(course)
    except (CourseDirError, LatePolicyError) as error:
        parser.exit(2, f"{error}\n")
    if not (course / "source" / args.lesson / f"{args.lesson}.ipynb").is_file():
        parser.error(f"{course}/source has no lesson {args.lesson!r}")
    if not archive.is_file():
        parser.error(f"{archive} does not exist")
    if not args.unsandboxed:
        problem = sandbox_problem(configured_bwrap(course))
        if problem:
            parser.exit(
                2,
                f"Refusing to grade: the grading sandbox cannot run here ({problem}).\n"
                "Install bubblewrap (as root: apt-get install bubblewrap), or pass --unsandboxed to grade "
                "without protection (every row will say so).\n",
            )
    keep_release(course, args.lesson)
    run_nbgrader(course, "generate_assignment", args.lesson, "--force")
    students, ignored = collect_zip(course, args.lesson, archive.resolve(), known_students(course))
    remember_students(course, args.lesson, students)
    for entry in ignored:
        print(f"ignored {entry!r}: not named like an LMS submission (see course_build/instructor/lms.py)")
    if not students:
        parser.exit(2, f"{archive}: no file name matches the LMS pattern <student>_<id>_<id>_<file>\n")
    grade_lesson(course, args.lesson, students, unsandboxed=args.unsandboxed, progress=True)
    out = args.out or course / "grades.csv"
    results = write_grade_sheet(course, out)
    print(lesson_table([r for r in results if r.lesson == args.lesson and r.student in students]))
    print(
        f"\n{len(students)} student(s) graded; grade sheet written to {out}; feedback in "
        f"{course / 'feedback'}.\nNext: grade the written answers (python -m course_build.formgrader), "
        "then write feedback and the sheet again (python -m course_build.report)."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""``python -m course_build.grade LESSON --zip Z``: grade one lesson's LMS download.

One command for the instructor without JupyterHub, run from the repository root:

1. ``nbgrader generate_assignment`` (creates the gradebook on first use);
2. collect the zip into ``submitted/`` (``course_build.instructor.collect_zip``: any file or student name, one
   notebook per student, the latest of several, notes on everything that was odd). Submissions only
   move forward: a student whose graded submission is newer than the zip's keeps it (the zip's file
   is kept aside and noted) unless ``--replace`` is given; every file's provenance goes to
   ``collected/ledger.jsonl``. ``--submitted-at STUDENT=TIME`` and ``--submitted-at-csv FILE`` set
   submission times the zip does not tell. A bad archive (not a zip, cut short, empty, encrypted,
   a zip bomb) stops here with one line, before anything slow runs or any file changes;
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

On a cluster, ``--shard K/N`` grades only the students of shard K of N, in a course directory of
its own (``COURSE/shards/LESSON/K-of-N``), without writing the course; ``python -m
course_build.merge LESSON`` then brings the N shards into the course and writes the sheet
(``course_build.instructor.shards`` has the design).
"""

import argparse
import sys
import time
from pathlib import Path

from traitlets.config.loader import PyFileConfigLoader

from course_build.instructor.collect_zip import Collection, CollectionPlan, collect, plan_collection
from course_build.instructor.course_dir import has_gradebook, open_course
from course_build.instructor.grade_batch import grade_lesson
from course_build.instructor.grade_sheet import lesson_table
from course_build.instructor.late_policy import course_late_policy
from course_build.instructor.results import class_results
from course_build.instructor.shards import (
    Shard,
    ShardError,
    ShardManifest,
    known_students_read_only,
    parse_shard,
    plan_for_shard,
    prepare_shard,
    source_sha256,
    write_manifest,
)
from course_build.instructor.student_records import known_students, remember_students
from course_build.instructor.submission_times import SubmissionTimeError, instructor_times
from course_build.instructor.zip_safety import ArchiveError
from course_build.nbgrader_plugins.restore_cells import keep_release
from course_build.nbgrader_plugins.sandbox import BWRAP, sandbox_problem
from course_build.nbgrader_runner import run_nbgrader
from course_build.report import write_grade_sheet


def configured_bwrap(course: Path) -> str:
    """The bubblewrap the course's nbgrader configuration uses (``c.SandboxedKernelManager.bwrap``)."""
    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    return config.SandboxedKernelManager.get("bwrap", BWRAP)


def _kept_summary(kept_newer: dict[str, str]) -> str:
    if not kept_newer:
        return ""
    return f", {len(kept_newer)} kept their newer graded submission (the zip's older file set aside)"


def _collect_and_grade(
    course: Path, lesson: str, plan: CollectionPlan, *, replace: bool, unsandboxed: bool
) -> tuple[Collection, list[str]]:
    """Steps 1 to 3 of the module docstring in ``course``; return what was collected and who was
    graded (everyone collected but those who kept a newer graded submission)."""
    started = time.perf_counter()
    keep_release(course, lesson)
    run_nbgrader(course, "generate_assignment", lesson, "--force")
    collection = collect(course, lesson, plan, replace=replace)
    timings = {"generate the release and collect": time.perf_counter() - started}
    remember_students(course, lesson, collection.students)
    for entry in collection.ignored:
        print(f"ignored {entry!r}: not named like an LMS submission (see course_build/instructor/lms.py)")
    for student, note in {**collection.kept_newer, **collection.replaced_newer}.items():
        print(f"{student}: {note}")
    to_grade = [s for s in collection.students if s not in collection.kept_newer]
    if to_grade:
        grade_lesson(course, lesson, to_grade, unsandboxed=unsandboxed, progress=True, timings=timings)
    print("time spent: " + ", ".join(f"{phase} {seconds:.0f} s" for phase, seconds in timings.items()))
    return collection, to_grade


def _grade_shard(
    course: Path, lesson: str, plan: CollectionPlan, shard: Shard, *, replace: bool, unsandboxed: bool
) -> int:
    """Grade the students of ``shard`` in its own course directory; the course is only read."""
    part = plan_for_shard(plan, shard)
    try:
        folder, states = prepare_shard(course, lesson, shard, part.students)
    except ShardError as error:
        print(error, file=sys.stderr)
        return 2
    collection, to_grade = _collect_and_grade(folder, lesson, part, replace=replace, unsandboxed=unsandboxed)
    manifest = ShardManifest(
        lesson=lesson,
        index=shard.index,
        count=shard.count,
        zip_name=plan.archive.name,
        zip_sha256=plan.sha256,
        source_sha256=source_sha256(folder, lesson),
        students=collection.students,
        kept_newer=collection.kept_newer,
        replaced_newer=collection.replaced_newer,
        ignored=collection.ignored,
        course_states=states,
    )
    if collection.students:
        results = class_results(folder, course_late_policy(folder), [lesson])
        print(lesson_table([r for r in results if r.student in collection.students]))
    write_manifest(folder, manifest)
    print(
        f"\nshard {shard} of {lesson}: {len(collection.students)} of the zip's {len(plan.students)} "
        f"student(s) in this shard, {len(to_grade)} graded{_kept_summary(collection.kept_newer)}; "
        f"kept in {folder} (the course is unchanged).\n"
        f"When all {shard.count} shards have finished: python -m course_build.merge {lesson}"
    )
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The command line (also read by the tests of the cluster scripts, so they cannot drift)."""
    parser = argparse.ArgumentParser(
        prog="python -m course_build.grade",
        description="Collect, autograde and write feedback for one lesson's LMS zip, and the grade sheet.",
    )
    parser.add_argument("lesson", help="lesson (assignment) name, e.g. 03_attention")
    parser.add_argument(
        "--zip", required=True, type=Path, help="the LMS download (see course_build/instructor/lms.py)"
    )
    parser.add_argument(
        "--replace",
        action="store_true",
        help="grade the zip's files even where a student's graded submission is newer (the row says so)",
    )
    parser.add_argument(
        "--submitted-at",
        action="append",
        default=[],
        metavar="STUDENT=TIME",
        help="the submission time of a student (LMS name, LMS user id or student id), e.g. "
        "smithjane=2026-10-14T09:30 (in c.LatePolicy.timezone unless an offset is given); repeatable",
    )
    parser.add_argument(
        "--submitted-at-csv",
        type=Path,
        metavar="FILE",
        help="submission times from a CSV with the columns student,submitted_at",
    )
    parser.add_argument("--course", type=Path, help="course directory (default: autograder)")
    parser.add_argument("--out", type=Path, help="grade sheet CSV (default: COURSE/grades.csv)")
    parser.add_argument(
        "--unsandboxed",
        action="store_true",
        help="grade without the bubblewrap sandbox (only where it cannot run): the student's code can "
        "then read the solutions and change other grades, and every row says so",
    )
    parser.add_argument(
        "--shard",
        metavar="K/N",
        help="grade only shard K of N of the zip's students, in COURSE/shards/LESSON/K-of-N, leaving the "
        "course as it is (a cluster job); when all N have run: python -m course_build.merge LESSON",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    archive = args.zip
    try:
        shard = parse_shard(args.shard) if args.shard is not None else None
    except ShardError as error:
        parser.exit(2, f"{error}\n")
    if shard is not None and args.out is not None:
        parser.exit(2, "--out: a shard writes no grade sheet; python -m course_build.merge writes it\n")
    course, _ = open_course(parser, args.course)
    if not (course / "source" / args.lesson / f"{args.lesson}.ipynb").is_file():
        parser.error(f"{course}/source has no lesson {args.lesson!r}")
    if shard is not None:
        known = known_students_read_only(course)
    else:
        known = known_students(course) if has_gradebook(course) else {}
    try:
        times = instructor_times(args.submitted_at, args.submitted_at_csv)
        plan = plan_collection(archive, known, times)
    except (ArchiveError, SubmissionTimeError) as error:
        parser.exit(2, f"{error}\n")
    if not args.unsandboxed:
        problem = sandbox_problem(configured_bwrap(course))
        if problem:
            parser.exit(
                2,
                f"Refusing to grade: the grading sandbox cannot run here ({problem}).\n"
                "Install bubblewrap (as root: apt-get install bubblewrap), or pass --unsandboxed to grade "
                "without protection (every row will say so).\n",
            )
    if shard is not None:
        return _grade_shard(
            course, args.lesson, plan, shard, replace=args.replace, unsandboxed=args.unsandboxed
        )
    collection, to_grade = _collect_and_grade(
        course, args.lesson, plan, replace=args.replace, unsandboxed=args.unsandboxed
    )
    students = collection.students
    out = args.out or course / "grades.csv"
    results = write_grade_sheet(course, out)
    print(lesson_table([r for r in results if r.lesson == args.lesson and r.student in students]))
    print(
        f"\n{len(to_grade)} student(s) graded{_kept_summary(collection.kept_newer)}; grade sheet "
        f"written to {out}; feedback in {course / 'feedback'}.\n"
        "Next: grade the written answers (python -m course_build.formgrader), "
        "then write feedback and the sheet again (python -m course_build.report)."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

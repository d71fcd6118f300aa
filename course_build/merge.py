"""``python -m course_build.merge LESSON``: bring a lesson's shards into the course, then the sheet.

After ``python -m course_build.grade LESSON --zip Z --shard K/N`` ran for every K of N (a Slurm job
array or a Kubernetes Indexed Job: ``autograder/cluster/``), this leaves the course exactly as one
unsharded ``grade`` run of the zip would have: it checks that all N shards of one zip are there and
finished (naming the one that is not), updates the lesson's release in the course as ``grade``
does, brings each shard's students in (``course_build.instructor.shard_merge``: forward only, hand
grades kept, every grade traceable in the ledger), writes the feedback of the lesson's other
graded students afresh and the grade sheet (``course_build.report``), and prints the lesson's table.
Each shard is marked merged; its folder can be deleted afterwards.
"""

import argparse
import sys
from datetime import datetime, timezone
from pathlib import Path

from course_build.instructor.course_dir import open_course
from course_build.instructor.grade_batch import write_feedback
from course_build.instructor.grade_sheet import lesson_table
from course_build.instructor.shard_merge import (
    MergeOutcome,
    add_ledger_in_order,
    find_shard_set,
    merge_shard,
)
from course_build.instructor.shards import ShardError, write_manifest
from course_build.nbgrader_plugins.restore_cells import keep_release
from course_build.nbgrader_runner import run_nbgrader
from course_build.report import write_grade_sheet


def build_parser() -> argparse.ArgumentParser:
    """The command line (also read by the tests of the cluster scripts, so they cannot drift)."""
    parser = argparse.ArgumentParser(
        prog="python -m course_build.merge",
        description="Merge the shards of a lesson (grade --shard K/N) into the course and write the sheet.",
    )
    parser.add_argument("lesson", help="lesson (assignment) name, e.g. 03_attention")
    parser.add_argument("--course", type=Path, help="course directory (default: autograder)")
    parser.add_argument("--out", type=Path, help="grade sheet CSV (default: COURSE/grades.csv)")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    course, _ = open_course(parser, args.course)
    if not (course / "source" / args.lesson / f"{args.lesson}.ipynb").is_file():
        parser.exit(2, f"{course}/source has no lesson {args.lesson!r}\n")
    try:
        shards = find_shard_set(course, args.lesson)
    except ShardError as error:
        parser.exit(2, f"{error}\n")
    keep_release(course, args.lesson)
    run_nbgrader(course, "generate_assignment", args.lesson, "--force")
    outcome = MergeOutcome()
    for folder, manifest in shards:
        if manifest.merged_at is None:
            merge_shard(course, folder, manifest, outcome)
    add_ledger_in_order(course, outcome.ledger)
    write_feedback(course, args.lesson, written=outcome.merged)
    merged_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    for folder, manifest in shards:
        if manifest.merged_at is None:
            manifest.merged_at = merged_at
            write_manifest(folder, manifest)
    students = sorted(student for _, manifest in shards for student in manifest.students)
    first = shards[0][1]
    for entry in first.ignored:
        print(f"ignored {entry!r}: not named like an LMS submission (see course_build/instructor/lms.py)")
    for _, manifest in shards:
        for student, note in {**manifest.kept_newer, **manifest.replaced_newer}.items():
            print(f"{student}: {note}")
    for student, why in outcome.not_merged.items():
        print(f"{student}: {why}")
    out = args.out or course / "grades.csv"
    results = write_grade_sheet(course, out)
    lesson_results = [r for r in results if r.lesson == args.lesson and r.student in students]
    if lesson_results:
        print(lesson_table(lesson_results))
    print(
        f"\n{len(shards)} shard(s) of {first.zip_name} merged: {len(outcome.merged)} student(s) brought "
        f"in, {len(outcome.not_merged)} kept as the course has them; grade sheet written to {out}; "
        f"feedback in {course / 'feedback'}.\n"
        "Next: grade the written answers (python -m course_build.formgrader), "
        "then write feedback and the sheet again (python -m course_build.report)."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

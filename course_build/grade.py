"""``python -m course_build.grade LESSON --zip submissions.zip``: grade one lesson's batch.

One command for the instructor without JupyterHub, run from the repository root:

1. ``nbgrader generate_assignment`` (creates the gradebook on first use);
2. ``nbgrader zip_collect`` of the LMS download (file names: ``course_build.lms``);
3. fix up the submitted files, ``nbgrader autograde`` and ``nbgrader generate_feedback``
   (``course_build.grading``; the protections are configured in ``autograder/nbgrader_config.py``);
4. ``nbgrader export`` to a CSV, with the autograded score and the grader's notes added;
5. a summary table on stdout: student, autograded score, maximum, notes.
"""

import argparse
import csv
import io
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

from course_build.grading import GradeReport, grade_lesson
from course_build.lms import parse_submission_name, submitted_files
from course_build.nbgrader_runner import run_nbgrader

EXTRA_COLUMNS = ("auto_score", "auto_max", "manual_pending", "notes")


def collect_zip(course: Path, lesson: str, archive: Path) -> list[str]:
    """Unpack the LMS zip into ``submitted/`` with ``nbgrader zip_collect``; return every student in it.

    zip_collect takes notebooks only; a student who uploaded no notebook gets their other files
    in their submitted folder, so the grader's note (and the instructor) can see what they sent.
    """
    students = submitted_files(archive)
    if not students:
        raise SystemExit(
            f"{archive}: no file name matches the LMS pattern <student>_<id>_<id>_<file> "
            "(see course_build/lms.py)"
        )
    downloaded = course / "downloaded" / lesson
    shutil.rmtree(downloaded, ignore_errors=True)
    (downloaded / "archive").mkdir(parents=True)
    shutil.copy(archive, downloaded / "archive" / archive.name)
    run_nbgrader(course, "zip_collect", lesson, "--force")
    with zipfile.ZipFile(archive) as zipped:
        for name in zipped.namelist():
            parsed = parse_submission_name(name)
            if parsed and not any(f.endswith(".ipynb") for f in students[parsed[0]]):
                folder = course / "submitted" / parsed[0] / lesson
                folder.mkdir(parents=True, exist_ok=True)
                (folder / Path(parsed[1]).name).write_bytes(zipped.read(name))
    return sorted(students)


def export_grades(course: Path, lesson: str, reports: dict[str, GradeReport], out: Path) -> None:
    """nbgrader's CSV export for this lesson's students, plus the autograded score and the notes."""
    with tempfile.TemporaryDirectory(prefix="course-export-") as tmp:
        exported = Path(tmp) / "grades.csv"
        run_nbgrader(course, "export", "--to", str(exported.resolve()))
        rows = list(csv.DictReader(io.StringIO(exported.read_text(encoding="utf-8"))))
    rows = [r for r in rows if r["assignment"] == lesson and r["student_id"] in reports]
    if not rows:
        raise RuntimeError(f"nbgrader export has no rows for {lesson}")
    fields = [*rows[0].keys(), *EXTRA_COLUMNS]
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        for row in sorted(rows, key=lambda r: r["student_id"]):
            report = reports[row["student_id"]]
            writer.writerow(
                {
                    **row,
                    "auto_score": f"{report.auto_total:g}",
                    "auto_max": f"{report.auto_max:g}",
                    "manual_pending": f"{sum(report.max_scores[g] for g in report.awaiting_manual_grade):g}",
                    "notes": " | ".join(report.notes),
                }
            )


def summary_table(reports: dict[str, GradeReport]) -> str:
    """A plain-text table: student, autograded score, maximum, notes (one line each)."""
    width = max([len("student"), *map(len, reports)])
    lines = [f"{'student':<{width}}  {'score':>6}  {'max':>5}  notes"]
    for student, report in sorted(reports.items()):
        notes = "; ".join(report.notes) or "-"
        lines.append(f"{student:<{width}}  {report.auto_total:>6g}  {report.auto_max:>5g}  {notes}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m course_build.grade",
        description="Collect, autograde, write feedback for and export one lesson's LMS zip.",
    )
    parser.add_argument("lesson", help="lesson (assignment) name, e.g. 03_attention")
    parser.add_argument("--zip", required=True, type=Path, help="the LMS download (see course_build/lms.py)")
    parser.add_argument("--course", type=Path, default=Path("autograder"), help="course directory")
    parser.add_argument("--out", type=Path, help="grades CSV (default: COURSE/grades.csv)")
    args = parser.parse_args(argv)
    course, archive = args.course, args.zip
    if not (course / "nbgrader_config.py").is_file():
        parser.error(f"{course} is not a course directory (no nbgrader_config.py)")
    if not (course / "source" / args.lesson / f"{args.lesson}.ipynb").is_file():
        parser.error(f"{course}/source has no lesson {args.lesson!r}")
    if not archive.is_file():
        parser.error(f"{archive} does not exist")
    run_nbgrader(course, "generate_assignment", args.lesson, "--force")
    students = collect_zip(course, args.lesson, archive.resolve())
    reports = grade_lesson(course, args.lesson, students)
    out = args.out or course / "grades.csv"
    export_grades(course, args.lesson, reports, out)
    print(summary_table(reports))
    print(f"\n{len(reports)} student(s) graded; grades written to {out}; feedback in {course / 'feedback'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""``python -m course_build.grade LESSON --zip Z``: grade one lesson's LMS download.

One command for the instructor without JupyterHub, run from the repository root:

1. ``nbgrader generate_assignment`` (creates the gradebook on first use);
2. collect the zip into ``submitted/`` (``course_build.collect``: any file or student name, one
   notebook per student, the latest of several, notes on everything that was odd);
3. fix up the submitted files, ``nbgrader autograde`` in the sandbox and ``nbgrader generate_feedback``
   (``course_build.grading``; the protections are configured in ``autograder/nbgrader_config.py``);
4. ``nbgrader export`` to a CSV, one row per student of the zip, with the name and LMS user id as
   the LMS gave them, Canvas's ``LATE_`` marker, the autograded score and the grader's notes;
5. a summary table on stdout: student, autograded score, maximum, notes.

Grading refuses to start where the bubblewrap sandbox cannot run, unless ``--unsandboxed`` is given;
every row then says its grade is unprotected.
"""

import argparse
import csv
import io
import sys
import tempfile
from pathlib import Path

from traitlets.config.loader import PyFileConfigLoader

from course_build.collect import collect_zip, known_students, read_record, remember_students
from course_build.grading import GradeReport, grade_lesson
from course_build.nbgrader_runner import run_nbgrader
from course_build.sandbox import BWRAP, sandbox_problem

EXTRA_COLUMNS = ("lms_name", "lms_user_id", "lms_late", "auto_score", "auto_max", "manual_pending", "notes")


def export_grades(course: Path, lesson: str, reports: dict[str, GradeReport], out: Path) -> None:
    """One CSV row per graded student: nbgrader's export, plus the LMS identity, score and notes."""
    with tempfile.TemporaryDirectory(prefix="course-export-") as tmp:
        exported = Path(tmp) / "grades.csv"
        run_nbgrader(course, "export", "--to", str(exported.resolve()))
        text = exported.read_text(encoding="utf-8")
    header = next(csv.reader(io.StringIO(text)))
    exported_rows = {
        row["student_id"]: row
        for row in csv.DictReader(io.StringIO(text))
        if row["assignment"] == lesson and row["student_id"] in reports
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=[*header, *EXTRA_COLUMNS])
        writer.writeheader()
        for student, report in sorted(reports.items()):
            record = read_record(course, lesson, student)
            row = exported_rows.get(student) or {"assignment": lesson, "student_id": student, "score": "0"}
            writer.writerow(
                {
                    **row,
                    "lms_name": record.name if record else "",
                    "lms_user_id": record.user_id if record else "",
                    "lms_late": ("yes" if record.late else "no") if record else "",
                    "auto_score": f"{report.auto_total:g}",
                    "auto_max": f"{report.auto_max:g}",
                    "manual_pending": f"{sum(report.max_scores[g] for g in report.awaiting_manual_grade):g}",
                    "notes": " | ".join(report.notes),
                }
            )


def configured_bwrap(course: Path) -> str:
    """The bubblewrap the course's nbgrader configuration uses (``c.SandboxedKernelManager.bwrap``)."""
    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    return config.SandboxedKernelManager.get("bwrap", BWRAP)


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
    parser.add_argument(
        "--unsandboxed",
        action="store_true",
        help="grade without the bubblewrap sandbox (only where it cannot run): the student's code can "
        "then read the solutions and change other grades, and every row says so",
    )
    args = parser.parse_args(argv)
    course, archive = args.course, args.zip
    if not (course / "nbgrader_config.py").is_file():
        parser.error(f"{course} is not a course directory (no nbgrader_config.py)")
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
    run_nbgrader(course, "generate_assignment", args.lesson, "--force")
    course = course.resolve()
    students, ignored = collect_zip(course, args.lesson, archive.resolve(), known_students(course))
    remember_students(course, args.lesson, students)
    for entry in ignored:
        print(f"ignored {entry!r}: not named like an LMS submission (see course_build/lms.py)")
    if not students:
        parser.exit(2, f"{archive}: no file name matches the LMS pattern <student>_<id>_<id>_<file>\n")
    reports = grade_lesson(course, args.lesson, students, unsandboxed=args.unsandboxed)
    out = args.out or course / "grades.csv"
    export_grades(course, args.lesson, reports, out)
    print(summary_table(reports))
    print(f"\n{len(reports)} student(s) graded; grades written to {out}; feedback in {course / 'feedback'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""``python -m course_build.export``: the grades and the feedback in the form the LMS takes back.

``lms --out FILE`` writes Canvas's gradebook import layout: the columns ``Student``, ``ID``,
``SIS User ID``, ``SIS Login ID``, ``Section``, then one column per graded lesson titled as the
LMS assignment (``c.LmsExport.assignment_titles`` in ``autograder/nbgrader_config.py``, e.g.
``{"03_attention": "Lesson 3: Attention (4521)"}``, as Canvas's own export titles the column: name,
then id in parentheses; the lesson's name by default), one row per student, the total after any late penalty
in each cell. A total with written answers still pending would look final once uploaded, so such
a cell is left empty unless ``--include-pending`` is given, and the
command says how many cells were left out and whose. A lesson not handed in is left empty too.

``feedback LESSON --out DIR`` writes every student's feedback page afresh (as ``course_build.report``
does) and copies it to ``DIR/<LMS user id>_<student>_<lesson>.html``, with ``DIR/manifest.csv``
(who each file is for) and ``DIR.zip`` of the same; the guide (``book/instructors.md``) says how to
return them through the LMS.
"""

import argparse
import csv
import shutil
import sys
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path

from nbgrader.api import Gradebook
from traitlets import Dict
from traitlets.config import Configurable
from traitlets.config.loader import PyFileConfigLoader

from course_build.instructor.course_dir import open_course
from course_build.instructor.grade_batch import write_feedback
from course_build.instructor.grade_sheet import points
from course_build.instructor.results import LessonResult, class_results, graded_lessons
from course_build.nbgrader_runner import NbgraderError

CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
POINTS_POSSIBLE = "    Points Possible"  # Canvas's own export has this row; its import accepts it


class LmsExport(Configurable):
    """The course's LMS export settings (``c.LmsExport`` in ``nbgrader_config.py``)."""

    assignment_titles = Dict(
        help="lesson -> the LMS assignment's column title, e.g. 'Lesson 3: Attention (4521)'"
    ).tag(config=True)


def course_lms_settings(course: Path) -> LmsExport:
    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    return LmsExport(config=config)


@dataclass(frozen=True)
class LmsTable:
    """The import file's rows, and the cells left empty with the reason for each."""

    header: list[str]
    rows: list[list[str]]
    left_out: list[tuple[str, str, str]]  # (lesson, student, why)
    pending_included: list[tuple[str, str]]  # (lesson, student) exported as a total so far
    dropped: list[str]  # students dropped from the roster: no row at all


def lms_table(results: Iterable[LessonResult], titles: dict[str, str], include_pending: bool) -> LmsTable:
    """Canvas's gradebook layout of ``results`` (see the module docstring)."""
    by_student: dict[str, dict[str, LessonResult]] = {}
    lessons: dict[str, float] = {}
    dropped: set[str] = set()
    for result in results:
        if result.dropped is not None:
            dropped.add(result.student)
            continue
        by_student.setdefault(result.student, {})[result.lesson] = result
        lessons.setdefault(result.lesson, result.max_score)
    header = [*CANVAS_COLUMNS, *(titles.get(lesson, lesson) for lesson in lessons)]
    rows = [[POINTS_POSSIBLE, "", "", "", "", *(points(m) for m in lessons.values())]]
    left_out, included = [], []
    for student, their in sorted(by_student.items(), key=lambda item: item[0]):
        first = next(iter(their.values()))
        row = [first.lms_name or student, first.lms_user_id, "", "", ""]
        for lesson in lessons:
            result = their.get(lesson)
            if result is None or not result.submitted:
                left_out.append((lesson, student, "not submitted"))
                row.append("")
            elif result.pending and not include_pending:
                left_out.append((lesson, student, f"{points(result.pending_points)} points pending"))
                row.append("")
            else:
                if result.pending:
                    included.append((lesson, student))
                row.append(points(result.total))
        rows.append(row)
    return LmsTable(header, rows, left_out, included, sorted(dropped))


def write_lms_csv(table: LmsTable, out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(table.header)
        writer.writerows(table.rows)


def lms_summary(table: LmsTable, out: Path) -> str:
    """What the import file holds and what it leaves out, and why."""
    students = len(table.rows) - 1
    lines = [f"{out}: {students} student(s), {len(table.header) - len(CANVAS_COLUMNS)} lesson(s)."]
    for why in ("not submitted", "pending"):
        cells = [(lesson, student) for lesson, student, reason in table.left_out if why in reason]
        if not cells:
            continue
        if why == "pending":
            lines.append(
                f"{len(cells)} cell(s) left empty because written answers are not graded yet "
                f"({_whose(cells)}): grade them (python -m course_build.formgrader) and export again, or "
                "pass --include-pending to upload the totals so far"
            )
        else:
            lines.append(f"{len(cells)} cell(s) left empty: nothing handed in ({_whose(cells)})")
    if table.dropped:
        lines.append(
            f"{len(table.dropped)} dropped student(s) left out ({', '.join(table.dropped)}; "
            "python -m course_build.roster list)"
        )
    if table.pending_included:
        lines.append(
            f"--include-pending: {len(table.pending_included)} cell(s) hold a total so far, with written "
            f"answers not graded yet ({_whose(table.pending_included)})"
        )
    return "\n".join(lines)


def _whose(cells: list[tuple[str, str]]) -> str:
    return "; ".join(
        f"{lesson}: {', '.join(student for _, student in group)}"
        for lesson, group in groupby(sorted(cells), key=lambda cell: cell[0])
    )


def feedback_file_name(result: LessonResult) -> str:
    """``<LMS user id>_<student>_<lesson>.html``: the id first, so the LMS or a script finds whose it is."""
    return f"{result.lms_user_id}_{result.student}_{result.lesson}.html"


def bundle_feedback(course: Path, results: list[LessonResult], out: Path) -> tuple[list[Path], list[str]]:
    """Copy each student's feedback page of the lesson to ``out`` under its LMS name, with a
    manifest, and zip the folder to ``out.zip``. Returns the pages and the students left out, with why."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    pages, skipped, manifest = [], [], []
    for result in results:
        page = course / "feedback" / result.student / result.lesson / f"{result.lesson}.html"
        if not result.submitted:
            continue
        if not page.is_file():
            skipped.append(f"{result.student}: no feedback page (nbgrader could not grade the notebook)")
        elif not result.lms_user_id:
            skipped.append(f"{result.student}: no LMS user id (not collected from an LMS zip)")
        else:
            target = out / feedback_file_name(result)
            shutil.copyfile(page, target)
            pages.append(target)
            status = (
                f"{points(result.pending_points)} points not graded yet" if result.pending else "complete"
            )
            manifest.append([result.lms_user_id, result.lms_name, result.student, target.name, status])
    with (out / "manifest.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["lms_user_id", "lms_name", "student_id", "file", "status"])
        writer.writerows(manifest)
    with zipfile.ZipFile(out.with_name(out.name + ".zip"), "w", zipfile.ZIP_DEFLATED) as zipped:
        for path in sorted(out.iterdir()):
            zipped.write(path, path.name)
    return pages, skipped


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m course_build.export",
        description="Grades for the LMS gradebook import, or a lesson's feedback as one file per student.",
    )
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--course", type=Path, help="course directory (default: autograder)")
    commands = parser.add_subparsers(dest="what", required=True)
    lms = commands.add_parser(
        "lms", parents=[common], help="one row per student, a column per lesson (Canvas's gradebook CSV)"
    )
    lms.add_argument("--out", type=Path, required=True, help="the CSV to write")
    lms.add_argument(
        "--include-pending",
        action="store_true",
        help="export totals so far where written answers are not graded yet (left empty otherwise)",
    )
    feedback = commands.add_parser(
        "feedback", parents=[common], help="a lesson's feedback pages named with each LMS user id, and a zip"
    )
    feedback.add_argument("lesson", help="lesson (assignment) name, e.g. 03_attention")
    feedback.add_argument("--out", type=Path, required=True, help="folder to write (and FOLDER.zip)")
    args = parser.parse_args(argv)
    course, policy = open_course(parser, args.course, need_gradebook=True)
    if args.what == "lms":
        table = lms_table(
            class_results(course, policy), course_lms_settings(course).assignment_titles, args.include_pending
        )
        if len(table.header) == len(CANVAS_COLUMNS):
            parser.exit(2, "nothing is graded yet: grade a lesson first (python -m course_build.grade)\n")
        write_lms_csv(table, args.out)
        print(lms_summary(table, args.out))
        return 0
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        graded = graded_lessons(gradebook)
    if args.lesson not in graded:
        parser.exit(2, f"not graded yet: {args.lesson} (graded lessons: {', '.join(graded) or 'none'})\n")
    try:
        write_feedback(course, args.lesson)
    except NbgraderError as error:
        parser.exit(1, f"writing the feedback of {args.lesson} failed:\n{error}\n")
    results = class_results(course, policy, [args.lesson])
    pages, skipped = bundle_feedback(course, results, args.out)
    print(f"{len(pages)} feedback page(s) in {args.out}/ and {args.out}.zip (who is who: manifest.csv)")
    for line in skipped:
        print(f"not in the bundle: {line}")
    pending = [r.student for r in results if r.submitted and r.pending]
    if pending:
        print(f"{len(pending)} page(s) say some answers are not graded yet: {', '.join(pending)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

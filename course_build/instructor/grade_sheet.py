"""The class's grade sheet: one CSV row per student and lesson, and a table per lesson.

Both show, for every student of every graded lesson, the autograded points, the points given by
hand to written answers, the points still pending, lateness and its penalty, the total so far and
the grader's notes. Points not graded yet are never written as 0: the CSV leaves ``manual_score``
empty until a written answer is graded and counts the rest in ``manual_pending``; the table says
"pending". Each row also says where the submission time came from and names the graded file (zip,
entry, LMS submission id, digest: ``course_build.instructor.provenance``). A student dropped from
the course (``python -m course_build.roster``) keeps their rows, marked "dropped", and is left out
of the table and its counts.
"""

import csv
from collections.abc import Iterable
from itertools import groupby
from pathlib import Path

from course_build.instructor.results import LessonResult

COLUMNS = (
    "assignment",
    "student_id",
    "lms_name",
    "lms_user_id",
    "auto_score",
    "auto_max",
    "manual_score",
    "manual_pending",
    "manual_max",
    "lms_late",
    "submitted_at",
    "submitted_at_source",
    "late",
    "late_penalty",
    "total",
    "max_score",
    "status",
    "notes",
    "source_file",
)


def points(value: float) -> str:
    """A number of points as people write it: 5, 2.5, 0.25."""
    return f"{round(value, 4):g}"


def status(result: LessonResult) -> str:
    """``dropped``, ``complete``, ``not submitted``, or which answers are pending and their points."""
    if result.dropped is not None:
        return f"dropped: {result.dropped}"
    if not result.submitted:
        return "not submitted"
    if result.complete:
        return "complete"
    names = ", ".join(item.grade_id for item in result.pending)
    return f"{points(result.pending_points)} points pending: {names}"


def sheet_row(result: LessonResult) -> dict[str, str]:
    """The CSV row of one result (see COLUMNS)."""
    manual = result.manual_score
    return {
        "assignment": result.lesson,
        "student_id": result.student,
        "lms_name": result.lms_name,
        "lms_user_id": result.lms_user_id,
        "auto_score": points(result.auto_score),
        "auto_max": points(result.auto_max),
        "manual_score": "" if manual is None else points(manual),
        "manual_pending": points(result.pending_points),
        "manual_max": points(result.manual_max),
        "lms_late": "yes" if result.lms_late else "no",
        "submitted_at": result.lateness.submitted_at.isoformat() if result.lateness.submitted_at else "",
        "submitted_at_source": result.time_source,
        "late": result.lateness.label if result.submitted else "",
        "late_penalty": points(result.penalty),
        "total": points(result.total),
        "max_score": points(result.max_score),
        "status": status(result),
        "notes": " | ".join(result.notes),
        "source_file": result.source_file,
    }


def write_sheet(results: Iterable[LessonResult], out: Path) -> None:
    """Write the grade sheet CSV (UTF-8, one row per student and lesson)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        for result in results:
            writer.writerow(sheet_row(result))


def _pending_points(result: LessonResult, *, written: bool) -> float:
    """Points still pending among the written answers (or among the autograded cells)."""
    return sum(item.max_score for item in result.pending if item.written == written)


def _auto(result: LessonResult) -> str:
    given = f"{points(result.auto_score)}/{points(result.auto_max)}"
    pending = _pending_points(result, written=False)
    return f"{given}, {points(pending)} pending" if pending else given


def _written(result: LessonResult) -> str:
    if not result.manual_max:
        return "-"
    pending = _pending_points(result, written=True)
    if result.manual_score is None:
        return f"pending ({points(pending)})"
    given = f"{points(result.manual_score)}/{points(result.manual_max - pending)}"
    return f"{given}, {points(pending)} pending" if pending else given


def _late(result: LessonResult) -> str:
    if not result.submitted:
        return "-"
    label = result.lateness.label
    return f"{label}, -{points(result.penalty)}" if result.penalty else label


def _total(result: LessonResult) -> str:
    total = f"{points(result.total)}/{points(result.max_score)}"
    return f"{total} so far" if result.pending else total


def lesson_table(results: list[LessonResult]) -> str:
    """A plain-text table of one lesson's results, with a heading that gives its points and policy."""
    first = results[0]
    heading = (
        f"{first.lesson}: {points(first.max_score)} points ({points(first.auto_max)} autograded, "
        f"{points(first.manual_max)} written); {first.late_policy}"
    )
    rows = [("student", "auto", "written", "late", "total", "notes")]
    dropped = [r for r in results if r.dropped is not None]
    results = [r for r in results if r.dropped is None]
    for result in results:
        rows.append(
            (
                result.student,
                _auto(result),
                _written(result),
                _late(result),
                _total(result),
                "; ".join(result.notes) or "-",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)) + "  " + row[-1]
        for row in rows
    ]
    pending = [r for r in results if r.pending]
    summary = f"{len(results)} student(s)"
    if pending:
        total = sum(r.pending_points for r in pending)
        summary += (
            f"; {len(pending)} with answers not graded yet ({points(total)} points in all): "
            "grade them in the formgrader (python -m course_build.formgrader)"
        )
    if dropped:
        summary += "; not counted, dropped from the course: " + ", ".join(
            f"{r.student} ({r.dropped})" for r in dropped
        )
    return "\n".join([heading, *lines, summary])


def sheet_tables(results: list[LessonResult]) -> str:
    """One table per lesson, in the order the results come."""
    tables = [lesson_table(list(group)) for _, group in groupby(results, key=lambda r: r.lesson)]
    return "\n\n".join(tables)

"""Submission times the instructor gives, for zips whose time stamps tell nothing.

Some LMS downloads stamp every entry with the time the zip was made; a late policy then cannot
count days late. The instructor sets the times the LMS shows instead:

    python -m course_build.grade 03_attention --zip Z --submitted-at smithjane=2026-10-14T09:30
    python -m course_build.grade 03_attention --zip Z --submitted-at-csv times.csv

``STUDENT`` is the student's LMS name, LMS user id or nbgrader id; the CSV has the columns
``student,submitted_at``. A time without an offset is in the late policy's time zone. Every
mistake (a malformed pair, a time that is no time, a missing column, a student the zip does not
hold or two students of the same name) is one ``SubmissionTimeError`` line, before anything runs.
"""

import csv
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

TIME_EXAMPLE = "2026-10-14T09:30 or 2026-10-14T09:30+02:00"


class SubmissionTimeError(ValueError):
    """A submission time given by the instructor cannot be used; the message says why."""


@dataclass(frozen=True)
class GivenTime:
    """A submission time the instructor set, and where it was written."""

    submitted_at: str  # ISO 8601, as datetime.fromisoformat reads it
    source: str  # "instructor (--submitted-at)" or "instructor (times.csv line 3)"


def _time(text: str, where: str) -> str:
    try:
        return datetime.fromisoformat(text.strip()).isoformat()
    except ValueError:
        raise SubmissionTimeError(f"{where}: {text.strip()!r} is not a time; write {TIME_EXAMPLE}") from None


def _add(given: dict[str, GivenTime], student: str, time: GivenTime, where: str) -> None:
    student = student.strip()
    if not student:
        raise SubmissionTimeError(f"{where}: the student is missing; write STUDENT=TIME")
    if student in given:
        raise SubmissionTimeError(f"{where}: {student!r} is given a time twice")
    given[student] = time


def instructor_times(pairs: list[str], csv_file: Path | None) -> dict[str, GivenTime]:
    """student as written -> time, from ``--submitted-at STUDENT=TIME`` pairs and the CSV file."""
    given: dict[str, GivenTime] = {}
    for pair in pairs:
        where = f"--submitted-at {pair}"
        student, equals, text = pair.partition("=")
        if not equals:
            raise SubmissionTimeError(f"{where}: write STUDENT=TIME, e.g. smithjane=2026-10-14T09:30")
        _add(given, student, GivenTime(_time(text, where), "instructor (--submitted-at)"), where)
    if csv_file is not None:
        given_in_file = _read_csv(csv_file)
        for student, time in given_in_file.items():
            _add(given, student, time, f"{csv_file}")
    return given


def _read_csv(path: Path) -> dict[str, GivenTime]:
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            rows = list(reader)
            columns = set(reader.fieldnames or ())
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise SubmissionTimeError(f"--submitted-at-csv {path}: cannot be read ({error})") from None
    if not {"student", "submitted_at"} <= columns:
        raise SubmissionTimeError(
            f"--submitted-at-csv {path}: needs the columns student,submitted_at (a header line, then "
            "one student per line)"
        )
    given: dict[str, GivenTime] = {}
    for line, row in enumerate(rows, start=2):
        where = f"{path} line {line}"
        _add(
            given,
            row["student"] or "",
            GivenTime(_time(row["submitted_at"] or "", where), f"instructor ({where})"),
            where,
        )
    return given


def match_students(given: dict[str, GivenTime], students: dict[str, tuple[str, str]]) -> dict[str, GivenTime]:
    """nbgrader id -> time, for ``students`` (id -> (LMS name, LMS user id)) of one zip; each
    student as written must name exactly one of them, by id, user id or LMS name."""
    matched: dict[str, GivenTime] = {}
    for written, time in given.items():
        found = sorted(
            student for student, (name, user_id) in students.items() if written in (student, name, user_id)
        )
        if not found:
            raise SubmissionTimeError(
                f"--submitted-at: no student {written!r} in this zip (use the LMS name, LMS user id or "
                "student id of someone whose file is in it)"
            )
        if len(found) > 1:
            raise SubmissionTimeError(
                f"--submitted-at: {written!r} names {len(found)} students ({', '.join(found)}): use "
                "their LMS user id or student id"
            )
        if found[0] in matched:
            raise SubmissionTimeError(f"--submitted-at: {found[0]} is given a time twice")
        matched[found[0]] = time
    return matched

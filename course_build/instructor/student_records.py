"""What the course keeps about each student of a lesson's batch, beside nbgrader's gradebook.

A record ``collected/<lesson>/<id>/record.json`` holds the name and LMS user id as the LMS wrote
them, lateness, the submission time and where it came from, the LMS submission id and provenance
of the graded file, and the notes for the instructor that collecting and fixing up the folder left
(``collect_zip``, ``submitted_folders``); the grade sheet reads it. The gradebook
keeps each student's LMS name and user id, so a later batch gives a student the same id.
"""

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from nbgrader.api import Gradebook


@dataclass
class StudentRecord:
    """What the collection knows about one student of a lesson's batch."""

    name: str
    user_id: str
    late: bool = False
    notes: list[str] = field(default_factory=list)
    submitted_at: str | None = None  # the graded file's submission time (local time unless an offset)
    fixup_notes: list[str] | None = None  # set once by normalize_submission
    submission_id: int | None = None  # the LMS submission id of the graded file
    time_source: str = ""  # where submitted_at came from: "zip entry time", "instructor (...)"
    source: dict | None = None  # the graded file's provenance (course_build.instructor.provenance)
    grade_by_hand: bool = False  # every autograded cell waits for the instructor (invalid_unicode)


def record_path(course: Path, lesson: str, student: str) -> Path:
    return course / "collected" / lesson / student / "record.json"


def read_record(course: Path, lesson: str, student: str) -> StudentRecord | None:
    path = record_path(course, lesson, student)
    return StudentRecord(**json.loads(path.read_text(encoding="utf-8"))) if path.is_file() else None


def write_record(course: Path, lesson: str, student: str, record: StudentRecord) -> None:
    path = record_path(course, lesson, student)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(asdict(record), indent=1, ensure_ascii=False), encoding="utf-8")


def known_students(course: Path) -> dict[str, str]:
    """LMS user id -> nbgrader id of every student the gradebook knows with an LMS user id."""
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        return {s.lms_user_id: s.id for s in gradebook.students if s.lms_user_id}


def remember_students(course: Path, lesson: str, students: list[str]) -> None:
    """Put each collected student's LMS name and user id in the gradebook (so later batches reuse
    the id, and the formgrader and nbgrader's export show the name)."""
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        for student in students:
            record = read_record(course, lesson, student)
            gradebook.update_or_create_student(student, last_name=record.name, lms_user_id=record.user_id)

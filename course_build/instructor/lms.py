"""The file names of a learning-management-system download, and who submitted what.

The course reads Canvas's "Download Submissions" naming (other LMSs can be renamed to it, or the
pattern changed here and nowhere else):

    <student>_[LATE_]<user id>_<submission id>_<file name as uploaded>
    smithjane_1234_5678_03_attention.ipynb
    doejohn_LATE_1240_5690_03_attention-1.ipynb    (a resubmission Canvas renamed)

Any student name is read as written (capitals, spaces, non-ASCII letters);
``course_build.instructor.student_ids`` turns it into a safe nbgrader id. Only the entry's last path
component is read, so folders in the zip (or ``../`` and absolute paths) never decide where anything
is written. Each entry's time stamp in the zip is kept as the submission time; a zip stores local
time without a zone, which the course's late policy names (``course_build.instructor.late_policy``).
"""

import re
import zipfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path, PurePosixPath

_PATTERN = re.compile(
    r"^(?P<student>.+?)_(?P<late>(?i:late)_)?(?P<user_id>\d+)_(?P<submission_id>\d+)_(?P<file_name>.+)$",
    re.S,
)


@dataclass(frozen=True)
class LmsFile:
    """One file of an LMS download, as the LMS named it."""

    entry: str  # the zip entry's full name
    index: int  # its position in the zip (a later entry is a later upload when nothing else tells)
    student: str  # the student's name as the LMS wrote it
    user_id: str
    submission_id: int
    late: bool  # Canvas's LATE_ marker
    file_name: str  # the name the student uploaded the file under
    size: int
    zip_time: str | None  # the entry's zip time stamp, ISO 8601 without a zone (zips store none)


def _zip_time(info: zipfile.ZipInfo) -> str | None:
    """The entry's time stamp, or None for the zip format's "no time" (1980-01-01 00:00:00)."""
    stamp = datetime(*info.date_time)
    return None if stamp == datetime(1980, 1, 1) else stamp.isoformat()


def parse_submission_name(entry: str) -> dict[str, str] | None:
    """The named parts of an LMS file name (student, late, user_id, submission_id, file_name)."""
    name = PurePosixPath(entry.replace("\\", "/")).name
    match = _PATTERN.match(name)
    return match.groupdict() if match else None


def read_lms_zip(archive: Path) -> tuple[list[LmsFile], list[str]]:
    """The LMS files in ``archive``, and the names of the entries that are not LMS files."""
    files, ignored = [], []
    with zipfile.ZipFile(archive) as zipped:
        for index, info in enumerate(zipped.infolist()):
            if info.is_dir():
                continue
            parts = parse_submission_name(info.filename)
            if parts is None:
                ignored.append(info.filename)
                continue
            files.append(
                LmsFile(
                    entry=info.filename,
                    index=index,
                    student=parts["student"],
                    user_id=parts["user_id"],
                    submission_id=int(parts["submission_id"]),
                    late=bool(parts["late"]),
                    file_name=parts["file_name"],
                    size=info.file_size,
                    zip_time=_zip_time(info),
                )
            )
    return files, ignored


def resubmission_number(file_name: str, lesson: str) -> int | None:
    """0 for ``<lesson>.ipynb``, N for Canvas's ``<lesson>-N.ipynb``, None for another name."""
    match = re.fullmatch(rf"{re.escape(lesson)}(?:-(\d{{1,6}}))?\.ipynb", file_name, re.IGNORECASE)
    return None if match is None else int(match[1] or 0)

"""The file names of a learning-management-system download, and who submitted what.

The course expects Canvas's "Download Submissions" naming (other LMSs can be renamed to it, or
the pattern changed here and nowhere else; ``autograder/nbgrader_config.py`` reads it):

    <student>_[LATE_]<user id>_<submission id>_<file name as uploaded>
    smithjane_1234_5678_03_attention.ipynb
    doejohn_LATE_1240_5690_03_attention-1.ipynb    (a resubmission Canvas renamed)

``<student>`` (lower-case letters and digits) becomes nbgrader's student id. The uploaded file
name is kept; ``course_build.collect`` accepts a renamed notebook when it is the student's only one.
"""

import re
import zipfile
from pathlib import Path, PurePosixPath

# nbgrader matches this against the extracted file's full path, hence the leading ``.*[\\/]``.
SUBMISSION_FILE_REGEXP = (
    r"^.*[\\/](?P<student_id>[a-z][a-z0-9]*)_(?:LATE_|late_)?\d+_\d+_(?P<file_id>[^\\/]+)$"
)
_PATTERN = re.compile(SUBMISSION_FILE_REGEXP)


def parse_submission_name(file_name: str) -> tuple[str, str] | None:
    """(student id, uploaded file name) of an LMS file name, or None if it does not match."""
    match = _PATTERN.match("/" + PurePosixPath(file_name).name)
    return (match["student_id"], match["file_id"]) if match else None


def submitted_files(archive: Path) -> dict[str, list[str]]:
    """student id -> the uploaded file names in an LMS zip (every file type, not only notebooks)."""
    students: dict[str, list[str]] = {}
    with zipfile.ZipFile(archive) as zipped:
        for name in zipped.namelist():
            parsed = None if name.endswith("/") else parse_submission_name(name)
            if parsed:
                students.setdefault(parsed[0], []).append(parsed[1])
    return students

"""Collect a lesson's submissions into nbgrader's ``submitted/`` folder, one gradable notebook each.

``collect_zip`` reads an LMS download (file names: ``course_build.instructor.lms``) instead of
``nbgrader zip_collect``, which stops the whole batch when two files map to one submission. Every
student in the zip gets exactly one folder ``submitted/<id>/<lesson>/`` with at most one notebook,
``<lesson>.ipynb``, and a record ``collected/<lesson>/<id>/record.json`` holding the name and LMS
user id as the LMS wrote them, Canvas's ``LATE_`` marker, the submission time (the zip time stamp
of the notebook graded) and notes for the instructor:

* ids come from ``course_build.instructor.student_ids`` (any name is safe; an id once given is
  reused, as the gradebook keeps each student's LMS user id);
* of several notebooks a student sent, the latest is graded (highest submission id, then Canvas's
  ``-N`` resubmission suffix, then position in the zip), preferring those named after the lesson,
  and the others are named in a note;
* files are written under names the grader chooses, never under a name from the zip, so no entry
  can land in another student's folder or outside the course; other files a student sent are kept
  beside the record for the instructor, not given to nbgrader.

The folders are then made gradable by ``course_build.instructor.submitted_folders``, whichever way
they were filled.
"""

import re
import shutil
import zipfile
from pathlib import Path

from course_build.instructor.lms import LmsFile, read_lms_zip, resubmission_number
from course_build.instructor.student_ids import assign_ids
from course_build.instructor.student_records import StudentRecord, record_path, write_record

MAX_FILE_BYTES = 50 * 2**20
MAX_KEPT_FILES = 50


def _latest_notebook(files: list[LmsFile], lesson: str) -> LmsFile | None:
    notebooks = [f for f in files if f.file_name.lower().endswith(".ipynb") and f.size <= MAX_FILE_BYTES]
    named = [f for f in notebooks if resubmission_number(f.file_name, lesson) is not None]
    candidates = named or notebooks
    if not candidates:
        return None
    return max(
        candidates, key=lambda f: (f.submission_id, resubmission_number(f.file_name, lesson) or 0, f.index)
    )


def _safe_name(file_name: str, used: set[str]) -> str:
    """A plain file name for something a student uploaded, unique among ``used``."""
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", file_name).lstrip(".")[:100] or "file"
    name, number = base, 1
    while name in used:
        number += 1
        name = f"{number}-{base}"
    used.add(name)
    return name


def submission_time(files: list[LmsFile], lesson: str, stamped: bool) -> str | None:
    """When a student submitted: the zip time of the notebook graded, else of their latest file;
    None when the zip's time stamps tell nothing (``stamped`` is False)."""
    if not stamped:
        return None
    chosen = _latest_notebook(files, lesson) or max(files, key=lambda f: (f.submission_id, f.index))
    return chosen.zip_time


def _collect_student(
    zipped: zipfile.ZipFile, files: list[LmsFile], lesson: str, folder: Path, kept: Path
) -> list[str]:
    """Write one student's notebook to ``folder`` and other files to ``kept``; return the notes."""
    notes = []
    chosen = _latest_notebook(files, lesson)
    too_big = [f.file_name for f in files if f.size > MAX_FILE_BYTES]
    if too_big:
        notes.append(f"files larger than {MAX_FILE_BYTES // 2**20} MiB were not read: {', '.join(too_big)}")
    if chosen is not None:
        folder.mkdir(parents=True)
        with zipped.open(zipped.infolist()[chosen.index]) as source:
            (folder / f"{lesson}.ipynb").write_bytes(source.read(MAX_FILE_BYTES + 1))
        if chosen.file_name != f"{lesson}.ipynb":
            notes.append(f"notebook submitted as {chosen.file_name!r}; graded as '{lesson}.ipynb'")
        others = [f for f in files if f is not chosen and f.file_name.lower().endswith(".ipynb")]
        if others:
            listed = ", ".join(repr(f.file_name) for f in sorted(others, key=lambda f: f.index))
            latest = f"graded the latest of {len(others) + 1} notebooks ({chosen.file_name!r})"
            notes.append(f"{latest}; not graded: {listed}")
    rest = [f for f in files if f is not chosen and f.size <= MAX_FILE_BYTES][:MAX_KEPT_FILES]
    if rest:
        kept.mkdir(parents=True, exist_ok=True)
        used: set[str] = set()
        for item in rest:
            with zipped.open(zipped.infolist()[item.index]) as source:
                (kept / _safe_name(item.file_name, used)).write_bytes(source.read(MAX_FILE_BYTES + 1))
        if chosen is None:
            listed = ", ".join(sorted(f.file_name for f in rest))
            notes.append(f"no notebook among the files submitted: {listed}")
    return notes


def collect_zip(
    course: Path, lesson: str, archive: Path, known: dict[str, str]
) -> tuple[list[str], list[str]]:
    """Collect every student of an LMS zip (see the module docstring); ``known`` maps LMS user ids
    to the ids earlier batches gave them (``known_students``).

    Returns the students' nbgrader ids and the zip entries that are no LMS file (ignored). When
    every entry carries the same time stamp (the time the zip was made, not when each file was
    submitted), no submission time is recorded.
    """
    files, ignored = read_lms_zip(archive)
    stamped = len({f.zip_time for f in files} - {None}) > 1
    by_user: dict[str, list[LmsFile]] = {}
    for item in files:
        by_user.setdefault(item.user_id, []).append(item)
    names = {user: max(items, key=lambda f: f.index).student for user, items in by_user.items()}
    ids = assign_ids(names, known)
    with zipfile.ZipFile(archive) as zipped:
        for user, items in by_user.items():
            student = ids[user]
            folder = course / "submitted" / student / lesson
            kept = record_path(course, lesson, student).parent / "files"
            shutil.rmtree(folder, ignore_errors=True)
            shutil.rmtree(kept.parent, ignore_errors=True)
            notes = []
            spellings = sorted({f.student for f in items} - {names[user]})
            if spellings:
                notes.append(f"the LMS also named this student {', '.join(map(repr, spellings))}")
            notes += _collect_student(zipped, items, lesson, folder, kept)
            record = StudentRecord(
                name=names[user],
                user_id=user,
                late=any(f.late for f in items),
                notes=notes,
                submitted_at=submission_time(items, lesson, stamped),
            )
            write_record(course, lesson, student, record)
    return sorted(ids.values()), ignored

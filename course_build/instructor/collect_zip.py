"""Collect a lesson's submissions into nbgrader's ``submitted/`` folder, one gradable notebook each.

``collect_zip`` reads an LMS download (file names: ``course_build.instructor.lms``) instead of
``nbgrader zip_collect``, which stops the whole batch when two files map to one submission. Every
student in the zip gets exactly one folder ``submitted/<id>/<lesson>/`` with at most one notebook,
``<lesson>.ipynb``, and a record ``collected/<lesson>/<id>/record.json`` holding the name and LMS
user id as the LMS wrote them, Canvas's ``LATE_`` marker, the submission time (the zip time stamp
of the notebook graded) and notes for the instructor:

* ids come from ``course_build.instructor.student_ids`` (any name is safe; an id once given is reused, as the
  gradebook keeps each student's LMS user id);
* of several notebooks a student sent, the latest is graded (highest submission id, then Canvas's
  ``-N`` resubmission suffix, then position in the zip), preferring those named after the lesson,
  and the others are named in a note;
* files are written under names the grader chooses, never under a name from the zip, so no entry
  can land in another student's folder or outside the course; other files a student sent are kept
  beside the record for the instructor, not given to nbgrader.

``normalize_submission`` then makes each folder gradable, however it was filled (this collection,
``nbgrader collect``, by hand): of ``<lesson>.ipynb`` and resubmissions ``<lesson>-N.ipynb`` the
latest is graded, a single notebook under another name is graded as ``<lesson>.ipynb``, and a
missing or unreadable one is replaced by the blank release, so the student gets a zero row with a
note instead of no row. Running it again changes nothing, so a
regrade gives the same scores and notes.
"""

import json
import re
import shutil
import zipfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook

from course_build.instructor.lms import LmsFile, read_lms_zip
from course_build.instructor.student_ids import assign_ids

MAX_FILE_BYTES = 50 * 2**20
MAX_KEPT_FILES = 50


@dataclass
class StudentRecord:
    """What the collection knows about one student of a lesson's batch."""

    name: str
    user_id: str
    late: bool = False
    notes: list[str] = field(default_factory=list)
    submitted_at: str | None = None  # the graded file's zip time stamp (local time, no zone)
    fixup_notes: list[str] | None = None  # set once by normalize_submission


def record_path(course: Path, lesson: str, student: str) -> Path:
    return course / "collected" / lesson / student / "record.json"


def read_record(course: Path, lesson: str, student: str) -> StudentRecord | None:
    path = record_path(course, lesson, student)
    return StudentRecord(**json.loads(path.read_text(encoding="utf-8"))) if path.is_file() else None


def write_record(course: Path, lesson: str, student: str, record: StudentRecord) -> None:
    path = record_path(course, lesson, student)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(asdict(record), indent=1, ensure_ascii=False), encoding="utf-8")


def _resubmission(file_name: str, lesson: str) -> int | None:
    """0 for ``<lesson>.ipynb``, N for Canvas's ``<lesson>-N.ipynb``, None for another name."""
    match = re.fullmatch(rf"{re.escape(lesson)}(?:-(\d{{1,6}}))?\.ipynb", file_name, re.IGNORECASE)
    return None if match is None else int(match[1] or 0)


def _latest_notebook(files: list[LmsFile], lesson: str) -> LmsFile | None:
    notebooks = [f for f in files if f.file_name.lower().endswith(".ipynb") and f.size <= MAX_FILE_BYTES]
    named = [f for f in notebooks if _resubmission(f.file_name, lesson) is not None]
    candidates = named or notebooks
    if not candidates:
        return None
    return max(candidates, key=lambda f: (f.submission_id, _resubmission(f.file_name, lesson) or 0, f.index))


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


def _readable(path: Path) -> str | None:
    """None if ``path`` is a valid notebook, else why not."""
    try:
        notebook = nbformat.read(path, as_version=4)
        nbformat.validate(notebook)
    except Exception as error:  # noqa: BLE001 - any failure to read means "not gradable"
        return f"{type(error).__name__}: {str(error).splitlines()[0][:120] if str(error) else ''}"
    return None


def _set_aside(path: Path) -> None:
    path.rename(path.with_name(path.name + ".submitted"))


def normalize_submission(course: Path, lesson: str, student: str) -> list[str]:
    """Make ``submitted/<student>/<lesson>/`` gradable (see the module docstring); return the notes."""
    record = read_record(course, lesson, student) or StudentRecord(name=student, user_id="")
    if record.fixup_notes is not None:
        return record.fixup_notes
    folder = course / "submitted" / student / lesson
    blank = course / "release" / lesson / f"{lesson}.ipynb"
    folder.mkdir(parents=True, exist_ok=True)
    expected = folder / f"{lesson}.ipynb"
    notes: list[str] = []
    notebooks = sorted(folder.glob("*.ipynb"))
    named = [p for p in notebooks if _resubmission(p.name, lesson) is not None]
    chosen = max(named, key=lambda p: _resubmission(p.name, lesson)) if named else None
    if chosen is None and len(notebooks) == 1:
        chosen = notebooks[0]
    if chosen is not None and chosen != expected:
        if expected.exists():
            _set_aside(expected)
            others = ", ".join(repr(p.name) for p in named if p != chosen)
            notes.append(
                f"graded the latest of {len(named)} notebooks ({chosen.name!r}); not graded: {others}"
            )
        shutil.copy(chosen, expected)
        _set_aside(chosen)
        notes.append(f"notebook submitted as {chosen.name!r}; graded as {expected.name!r}")
    if not expected.exists():
        files = sorted(p.name for p in folder.iterdir())
        shutil.copy(blank, expected)
        found = f" (files found: {', '.join(files)})" if files else ""
        notes.append(f"no {lesson}.ipynb was submitted{found}; graded as a blank notebook")
    else:
        problem = _readable(expected)
        if problem:
            _set_aside(expected)
            shutil.copy(blank, expected)
            notes.append(f"the notebook could not be read ({problem}); graded as a blank notebook")
    record.fixup_notes = notes
    write_record(course, lesson, student, record)
    return notes

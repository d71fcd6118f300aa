"""One gradable notebook in every student's submitted folder, whatever the folder holds.

``normalize_submission`` makes each ``submitted/<student>/<lesson>/`` folder gradable, however it
was filled (``collect_zip``, ``nbgrader collect``, by hand): of ``<lesson>.ipynb`` and
resubmissions ``<lesson>-N.ipynb`` the latest is graded, a single notebook under another name is
graded as ``<lesson>.ipynb``, and a missing or unreadable one is replaced by the blank release, so
the student gets a zero row with a note instead of no row. A notebook whose cells hold text that
is not valid Unicode is graded as an escaped copy, by hand (``invalid_unicode``). What was
submitted under another name, or is not graded as it is, is kept beside it as
``<name>.submitted``. Running it again changes nothing, so a regrade gives the same scores and
notes.
"""

import shutil
from pathlib import Path

import nbformat

from course_build.instructor.invalid_unicode import cells_not_unicode, escape_cells, hand_grading_note
from course_build.instructor.lms import resubmission_number
from course_build.instructor.student_records import StudentRecord, read_record, write_record


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


def _escape_invalid_unicode(expected: Path, copied_from: Path | None, record: StudentRecord) -> list[str]:
    """Where cells of ``expected`` hold text that is not valid Unicode, keep the submitted file
    aside (``copied_from``, set aside already, when ``expected`` is a copy of it) and grade a copy
    with those characters escaped, by hand (``invalid_unicode``); the notes."""
    notebook = nbformat.read(expected, as_version=4)
    cells = cells_not_unicode(notebook)
    if not cells:
        return []
    if copied_from is None:
        _set_aside(expected)
    kept_as = (copied_from or expected).name + ".submitted"
    escape_cells(notebook, cells)
    nbformat.write(notebook, expected)
    record.grade_by_hand = True
    return [hand_grading_note(cells, kept_as)]


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
    notebooks = sorted(p for p in folder.iterdir() if p.suffix.lower() == ".ipynb" and p.is_file())
    named = [p for p in notebooks if resubmission_number(p.name, lesson) is not None]
    chosen = max(named, key=lambda p: resubmission_number(p.name, lesson)) if named else None
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
        else:
            copied_from = chosen if chosen is not None and chosen != expected else None
            notes += _escape_invalid_unicode(expected, copied_from, record)
    record.fixup_notes = notes
    write_record(course, lesson, student, record)
    return notes

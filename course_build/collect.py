"""Make each student's submitted folder gradable: one readable notebook under the expected name.

nbgrader skips a notebook with another name (``03_attention-1.ipynb``: an LMS resubmission),
gives nothing to a student who sent no notebook, and fails on a file that is not valid notebook
JSON. Here, before autograding, ``submitted/<student>/<lesson>/`` is fixed up once:

* a single notebook under another name is graded as ``<lesson>.ipynb``;
* a missing or unreadable notebook is replaced by the blank release, so the student gets a zero
  row instead of no row (the original stays beside it as ``*.submitted``);

and what was done is written to ``grader_notes.json`` there. Running it again changes nothing,
so regrading gives the same scores and the same notes.
"""

import json
import shutil
from pathlib import Path

import nbformat

NOTES_FILE = "grader_notes.json"


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


def normalize_submission(folder: Path, lesson: str, blank: Path) -> list[str]:
    """Fix up ``folder`` (see the module docstring) and return the notes about it."""
    notes_path = folder / NOTES_FILE
    if notes_path.is_file():
        return json.loads(notes_path.read_text(encoding="utf-8"))
    folder.mkdir(parents=True, exist_ok=True)
    expected = folder / f"{lesson}.ipynb"
    notes: list[str] = []
    if not expected.exists():
        others = sorted(p for p in folder.glob("*.ipynb"))
        if len(others) > 1:
            others = [p for p in others if p.stem.startswith(lesson)]
        if len(others) == 1:
            shutil.copy(others[0], expected)
            _set_aside(others[0])
            notes.append(f"notebook submitted as {others[0].name!r}; graded as {expected.name!r}")
    if not expected.exists():
        files = sorted(p.name for p in folder.iterdir() if p.name != NOTES_FILE)
        shutil.copy(blank, expected)
        found = f" (files found: {', '.join(files)})" if files else ""
        notes.append(f"no {lesson}.ipynb was submitted{found}; graded as a blank notebook")
    else:
        problem = _readable(expected)
        if problem:
            _set_aside(expected)
            shutil.copy(blank, expected)
            notes.append(f"the notebook could not be read ({problem}); graded as a blank notebook")
    notes_path.write_text(json.dumps(notes, indent=1), encoding="utf-8")
    return notes

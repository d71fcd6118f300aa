"""Notes for the instructor, written only by the grader's own processes.

Each grading step that changes or penalizes something a student submitted (a restored cell, a
dead kernel, a warning that was not penalized, a suspicious change that cost nothing, a notebook
that used up its time budget) says so here, so the grade sheet can show why a score is what it is.

Where they live, and why there: ``<course>/grader_notes/<student>/<lesson>.json``, a file in the
course directory that only the grading processes write. Not in the notebook's metadata: the
notebook is the student's, who can fill any key of it with anything (a forged audit trail, or a
value of a type that crashes whoever reads it). Not beside the autograded notebook: nbgrader copies
every file a student submitted into that folder, so a student could submit the file. Not in
nbgrader's gradebook: it has no free text per submission (its comments belong to cells and are
shown to the student). The course directory is invisible to the sandboxed kernel.

The file also says whether the notebook's last grading run was finished (``finished``): grading
marks a run started (``start_run``, which clears the notes of the run before) and the execute step
marks it finished, so a run that was killed half-way is told apart from one that ran to the end;
the two times say how long the run took (``run_seconds``: tests and benchmarks check budgets).
Notes are cleaned on the way in (no lone surrogates, a length cap, a cap on their number), so the
sheet and the report can always write them.
"""

import json
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

UNPROTECTED_NOTE = (
    "UNPROTECTED: graded without the sandbox (--unsandboxed), so this student's code could read the "
    "solutions and change files, including other students' submissions and the gradebook"
)
NOTES_FOLDER = "grader_notes"
MAX_NOTE_CHARS = 500
MAX_NOTES = 200
UNREADABLE_NOTE = "the grader's notes for this notebook could not be read"


def is_valid_unicode(text: str) -> bool:
    """Whether ``text`` can be written as UTF-8 (it holds no lone surrogate)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def encodable(text: str) -> str:
    """``text`` with its lone surrogates escaped (as ``\\udc80``), so any UTF-8 file can hold it."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def clean_note(note: object) -> str:
    """``note`` as text any file can hold: lone surrogates escaped, at most MAX_NOTE_CHARS long."""
    text = encodable(str(note))
    return text if len(text) <= MAX_NOTE_CHARS else text[: MAX_NOTE_CHARS - 1] + "…"


@dataclass(frozen=True)
class NotebookNotes:
    """The grader's notes on one student's notebook of one lesson (see the module docstring)."""

    course: Path
    student: str
    lesson: str

    @property
    def path(self) -> Path:
        return Path(self.course) / NOTES_FOLDER / self.student / f"{self.lesson}.json"

    def start_run(self) -> None:
        """A grading run of this notebook begins: the notes of earlier runs go, it is not finished."""
        self._write({"notes": [], "finished": False, "started_at": time.time()})

    def add(self, note: object) -> None:
        """Add ``note`` (once)."""
        stored = self._read()
        note = clean_note(note)
        if note not in stored["notes"] and len(stored["notes"]) < MAX_NOTES:
            stored["notes"].append(note)
            self._write(stored)

    def mark_finished(self) -> None:
        """The grading run executed the notebook to its end (every cell run, failed or not run)."""
        stored = self._read()
        stored.update(finished=True, finished_at=time.time())
        self._write(stored)

    def notes(self) -> list[str]:
        """The notes, in the order they were made."""
        return self._read()["notes"]

    def finished(self) -> bool:
        """Whether the last grading run was finished (False where none was recorded)."""
        return self._read()["finished"]

    def run_seconds(self) -> float | None:
        """How long the last run took, from its start to its end; None if it did not finish."""
        stored = self._read()
        started, finished = stored.get("started_at"), stored.get("finished_at")
        if not stored["finished"] or not all(isinstance(t, float) for t in (started, finished)):
            return None
        return finished - started

    def _read(self) -> dict:
        if not self.path.is_file():
            return {"notes": [], "finished": False}
        try:
            stored = json.loads(self.path.read_text(encoding="utf-8"))
            notes, finished = stored["notes"], stored["finished"]
            if not isinstance(notes, list) or not isinstance(finished, bool):
                raise TypeError("unexpected types")
        except (OSError, ValueError, KeyError, TypeError):
            return {"notes": [UNREADABLE_NOTE], "finished": False}
        return {**stored, "notes": [clean_note(note) for note in notes], "finished": finished}

    def _write(self, stored: dict) -> None:
        """Replace the file in one step, so a reader never sees half of it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".notes-", suffix=".tmp")
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            json.dump(stored, file, indent=1)
        os.replace(temporary, self.path)

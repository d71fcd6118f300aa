"""Notes for the instructor, kept in the graded notebook's metadata.

Each grading step that changes or penalizes something a student submitted (a restored cell, a
dead kernel, a warning that was not penalized, a suspicious change that cost nothing) says so
here, so the grades table can show why a score is what it is.
"""

from nbformat import NotebookNode

NOTES_KEY = "course_grader_notes"
UNPROTECTED_NOTE = (
    "UNPROTECTED: graded without the sandbox (--unsandboxed), so this student's code could read the "
    "solutions and change files, including other students' submissions and the gradebook"
)


def add_note(notebook: NotebookNode, note: str) -> None:
    notes = notebook.metadata.setdefault(NOTES_KEY, [])
    if note not in notes:
        notes.append(note)


def notes_of(notebook: NotebookNode) -> list[str]:
    return list(notebook.metadata.get(NOTES_KEY, []))

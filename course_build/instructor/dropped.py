"""Which students were dropped from the course, kept as an append-only list of events.

Dropping a student deletes nothing: their submissions, grades and feedback stay where they are
(nbgrader's ``db student remove`` would delete their grades and stop ``report``). The course
directory's ``roster.json`` only records, in order, each drop (with a reason) and each restore;
the grade sheet marks a dropped student's rows and leaves them out of the class's counts, and
the exports leave them out. ``python -m course_build.roster`` is the command.
"""

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path


class RosterError(ValueError):
    """The roster cannot be read or changed as asked; the message says why, in one line."""


@dataclass(frozen=True)
class Dropped:
    """A student dropped from the course: when and why."""

    student: str
    reason: str
    since: str  # ISO 8601, UTC


def roster_path(course: Path) -> Path:
    return course / "roster.json"


def _events(course: Path) -> list[dict]:
    path = roster_path(course)
    if not path.is_file():
        return []
    try:
        events = json.loads(path.read_text(encoding="utf-8"))["events"]
    except (ValueError, KeyError, TypeError) as error:
        raise RosterError(f"{path} cannot be read ({error}): restore it from a backup") from None
    if not isinstance(events, list):
        raise RosterError(f"{path} cannot be read (events is not a list): restore it from a backup")
    return events


def dropped_students(course: Path) -> dict[str, Dropped]:
    """student id -> Dropped, for every student dropped and not restored since."""
    dropped: dict[str, Dropped] = {}
    for event in _events(course):
        if event.get("action") == "drop":
            dropped[event["student"]] = Dropped(event["student"], event.get("reason", ""), event["at"])
        elif event.get("action") == "restore":
            dropped.pop(event["student"], None)
    return dropped


def _append(course: Path, event: dict) -> None:
    events = _events(course)
    event = {**event, "at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    roster_path(course).write_text(
        json.dumps({"events": [*events, event]}, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )


def drop(course: Path, student: str, reason: str = "") -> bool:
    """Mark ``student`` dropped; False if they already were (nothing is written then)."""
    if student in dropped_students(course):
        return False
    _append(course, {"action": "drop", "student": student, "reason": reason})
    return True


def restore(course: Path, student: str) -> None:
    """Take ``student`` back into the course; RosterError if they were not dropped."""
    if student not in dropped_students(course):
        raise RosterError(f"{student} is not dropped (python -m course_build.roster list shows who is)")
    _append(course, {"action": "restore", "student": student})

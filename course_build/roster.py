"""``python -m course_build.roster drop|restore|list``: who is still in the course.

    python -m course_build.roster drop STUDENT [--reason TEXT]
    python -m course_build.roster restore STUDENT
    python -m course_build.roster list

``STUDENT`` is the student id the grade sheet shows, the LMS name or the LMS user id. Dropping
deletes nothing (``course_build.instructor.dropped``): every later command (grade, report,
regrade, export) still runs, the grade sheet marks the student's rows "dropped" and leaves them out
of the class's counts, and ``restore`` brings them back as they were. Run from the repository root
(or pass ``--course``).
"""

import argparse
import sys
from pathlib import Path

from nbgrader.api import Gradebook

from course_build.instructor.course_dir import CourseDirError, has_gradebook, resolve_course
from course_build.instructor.dropped import RosterError, drop, dropped_students, restore


def _students(course: Path) -> dict[str, tuple[str, str]]:
    """student id -> (LMS name, LMS user id) of everyone the gradebook knows."""
    if not has_gradebook(course):
        return {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        return {s.id: (s.last_name or "", s.lms_user_id or "") for s in gradebook.students}


def find_student(course: Path, written: str) -> str:
    """The id of the one student ``written`` names (id, LMS name or LMS user id); RosterError if
    none or several. A dropped student no longer in the gradebook is found by id."""
    students = _students(course)
    found = sorted(s for s, (name, user_id) in students.items() if written in (s, name, user_id))
    if not found and written in dropped_students(course):
        return written
    if not found:
        raise RosterError(
            f"no student {written!r} in the gradebook (python -m course_build.roster list shows everyone)"
        )
    if len(found) > 1:
        raise RosterError(
            f"{written!r} names {len(found)} students ({', '.join(found)}): give the student id"
        )
    return found[0]


def roster_lines(course: Path) -> list[str]:
    """One line per student: id, LMS name and user id, and whether (since when, why) dropped."""
    students = _students(course)
    dropped = dropped_students(course)
    lines = []
    for student in sorted(set(students) | set(dropped)):
        name, user_id = students.get(student, ("", ""))
        who = f"{student}  {name or '-'}  (LMS user id {user_id or '-'})"
        if student in dropped:
            why = f": {dropped[student].reason}" if dropped[student].reason else ""
            lines.append(f"{who}  dropped since {dropped[student].since}{why}")
        else:
            lines.append(f"{who}  enrolled")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m course_build.roster",
        description="Drop a student (keeping all their files and grades), restore one, or list the class.",
    )
    course = argparse.ArgumentParser(add_help=False)
    course.add_argument("--course", type=Path, help="course directory (default: autograder)")
    commands = parser.add_subparsers(dest="command", required=True)
    dropping = commands.add_parser(
        "drop", parents=[course], help="leave a student out of the grade sheet's counts and exports"
    )
    dropping.add_argument("student", help="student id, LMS name or LMS user id")
    dropping.add_argument(
        "--reason", default="", help="why, for the grade sheet (e.g. 'withdrew 2026-11-02')"
    )
    restoring = commands.add_parser("restore", parents=[course], help="take a dropped student back")
    restoring.add_argument("student", help="student id, LMS name or LMS user id")
    commands.add_parser("list", parents=[course], help="every student, enrolled or dropped")
    args = parser.parse_args(argv)
    try:
        course = resolve_course(args.course)
        if args.command == "list":
            print("\n".join(roster_lines(course)) or "no students yet: grade a lesson first")
            return 0
        student = find_student(course, args.student)
        if args.command == "drop":
            if drop(course, student, args.reason):
                restoring = f"python -m course_build.roster restore {student}"
                print(f"dropped {student}; their files and grades are kept (to undo: {restoring})")
            else:
                print(f"{student} was already dropped; nothing changed")
        else:
            restore(course, student)
            print(f"restored {student}")
    except (CourseDirError, RosterError) as error:
        parser.exit(2, f"{error}\n")
    print("Write the grade sheet again to show it: python -m course_build.report")
    return 0


if __name__ == "__main__":
    sys.exit(main())

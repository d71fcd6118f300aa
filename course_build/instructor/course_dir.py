"""Find the nbgrader course directory the instructor's commands work on, or say why not.

The term's commands (``course_build.grade``, ``.formgrader``, ``.report``) are documented to run
from the repository root with the course in ``autograder/``; run from inside ``autograder/`` they
work too. Anywhere else they stop with a message naming the folder they looked for, instead of
doing nothing (nbgrader started in the wrong folder shows an empty course without a word).
"""

import argparse
from pathlib import Path

from course_build.instructor.late_policy import LatePolicy, LatePolicyError, course_late_policy

DEFAULT = Path("autograder")


class CourseDirError(ValueError):
    """The course directory is missing or is not an nbgrader course of this project."""


def is_course_dir(path: Path) -> bool:
    return (path / "nbgrader_config.py").is_file() and (path / "source").is_dir()


def resolve_course(given: Path | None) -> Path:
    """The course directory: ``given``, else ``./autograder``, else the current folder if it is
    one; absolute. Raises CourseDirError with what to do."""
    if given is not None:
        if not is_course_dir(given):
            raise CourseDirError(
                f"{given} is not a course directory (it needs nbgrader_config.py and source/); "
                "pass --course with the folder that holds them, usually autograder/ of the repository"
            )
        return given.resolve()
    for candidate in (DEFAULT, Path(".")):
        if is_course_dir(candidate):
            return candidate.resolve()
    raise CourseDirError(
        f"no course directory here ({Path.cwd()}): run this from the repository root (the folder "
        "that holds autograder/), or pass --course PATH/TO/autograder"
    )


def has_gradebook(course: Path) -> bool:
    return (course / "gradebook.db").is_file()


def open_course(
    parser: argparse.ArgumentParser, given: Path | None, *, need_gradebook: bool = False
) -> tuple[Path, LatePolicy]:
    """The course directory a command works on and its late policy; where either is unusable (or
    there is no gradebook yet and the command needs one), the command exits with one line on why."""
    try:
        course = resolve_course(given)
        policy = course_late_policy(course)
    except (CourseDirError, LatePolicyError) as error:
        parser.exit(2, f"{error}\n")
    if need_gradebook and not has_gradebook(course):
        parser.exit(
            2, f"{course} has no gradebook yet: grade a lesson first (python -m course_build.grade)\n"
        )
    return course, policy

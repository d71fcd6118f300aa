"""``python -m course_build.formgrader``: grade the written answers in nbgrader's formgrader.

Run from the repository root after ``python -m course_build.grade``. It starts JupyterLab in the
course directory (``autograder/``), where nbgrader's formgrader finds the course and its gradebook,
with the course's additions loaded (``course_build.nbgrader_plugins.formgrader_extension``: the
model answer and rubric beside each written answer, names shown, math rendered offline), and opens
the formgrader. Started anywhere else, or before anything was graded, it says what to do instead of
showing an empty course. Stop it with Ctrl-C; then run ``python -m course_build.report``.
"""

import argparse
import os
import sys
from datetime import UTC
from pathlib import Path

from nbgrader.api import Gradebook

from course_build.instructor.course_dir import has_gradebook, open_course
from course_build.instructor.late_policy import LatePolicy
from course_build.instructor.results import graded_lessons

EXTENSION = "course_build.nbgrader_plugins.formgrader_extension"


def lab_command(course: Path, port: int | None, open_browser: bool, ip: str) -> list[str]:
    """The JupyterLab command line that serves ``course`` with the formgrader as its start page."""
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        f"--ServerApp.root_dir={course}",
        f"--ServerApp.ip={ip}",
        f"--ServerApp.jpserver_extensions={EXTENSION}=True",
        "--LabApp.default_url=/formgrader",
        f"--ServerApp.open_browser={open_browser}",
    ]
    if port is not None:
        command += [f"--ServerApp.port={port}", "--ServerApp.port_retries=0"]
    if os.geteuid() == 0:
        command.append("--allow-root")
    return command


def record_due_dates(gradebook: Gradebook, policy: LatePolicy, lessons: list[str]) -> None:
    """Give each lesson's gradebook entry the deadline of the course's late policy, so the
    formgrader shows it (nbgrader's own due date is never set by this course's commands and read
    "None"). nbgrader stores UTC without a zone."""
    for lesson in lessons:
        deadline = policy.deadline(lesson)
        if deadline is not None:
            gradebook.update_or_create_assignment(
                lesson, duedate=deadline.astimezone(UTC).replace(tzinfo=None)
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m course_build.formgrader",
        description="Open nbgrader's formgrader on the course, to grade the written answers.",
    )
    parser.add_argument("--course", type=Path, help="course directory (default: autograder)")
    parser.add_argument("--port", type=int, help="port to serve on (default: the first free from 8888)")
    parser.add_argument("--ip", default="127.0.0.1", help="address to listen on (default: this machine only)")
    parser.add_argument("--no-browser", action="store_true", help="do not open a browser")
    args = parser.parse_args(argv)
    course, policy = open_course(parser, args.course)
    lessons = []
    if has_gradebook(course):
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
            lessons = graded_lessons(gradebook)
            record_due_dates(gradebook, policy, lessons)
    if not lessons:
        parser.exit(
            2, f"nothing is graded in {course} yet: grade a lesson first (python -m course_build.grade)\n"
        )
    print(
        f"Formgrader for {course} (graded: {', '.join(lessons)}). In 'Manual Grading', open a lesson, "
        "then a submission; Ctrl-C here stops it, then run `python -m course_build.report`.",
        flush=True,
    )
    os.chdir(course)  # nbgrader's formgrader reads nbgrader_config.py from the working directory
    env_path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    os.environ["PATH"] = env_path
    command = lab_command(course, args.port, not args.no_browser, args.ip)
    os.execv(command[0], command)
    return 0  # not reached: execv replaces this process


if __name__ == "__main__":
    sys.exit(main())

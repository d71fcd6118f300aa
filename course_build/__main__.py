"""``python -m course_build``: regenerate the lessons' artifacts, or ``--check`` they are current."""

import argparse
import sys
import time

from course_build.authoring.execute import export_file_as_found
from course_build.authoring.generate import regenerate, stale_artifacts
from course_build.authoring.hidden_messages import revealing_messages
from course_build.authoring.source import build_source_notebook
from course_build.paths import lesson_names
from course_build.test_cell_comparisons import comparison_problems
from course_build.test_cells import convention_problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m course_build",
        description="Regenerate nbgrader source, student and solution notebooks from lessons/*.md.",
    )
    parser.add_argument(
        "--lesson",
        action="append",
        choices=lesson_names(),
        help="only this lesson (repeatable); default: every lesson",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 if any generated file is stale or missing (cells, or a saved "
        "quiz that its quiz file no longer makes), a test cell uses a "
        "name it may not use when graded or a comparison that passes on an empty array (np.allclose, "
        "np.all, ...), or a hidden test's message gives an Apply answer away",
    )
    args = parser.parse_args(argv)
    lessons = args.lesson or lesson_names()
    if args.check:
        sources = {lesson: build_source_notebook(lesson) for lesson in lessons}
        problems = stale_artifacts(sources)
        for problem in problems:
            print(f"STALE: {problem}")
        if problems:
            print("Run `python -m course_build` to regenerate.")
        tests = [
            f"{lesson}: {problem}"
            for lesson, notebook in sources.items()
            for problem in convention_problems(notebook)
            + comparison_problems(notebook)
            + revealing_messages(notebook)
        ]
        for problem in tests:
            print(f"TEST CELL: {problem}")
        if problems or tests:
            return 1
        print(
            f"{len(lessons)} lesson(s) in sync with their sources; their test cells are self-contained "
            "and compare strictly, and their hidden tests give no Apply answer away."
        )
        return 0
    with export_file_as_found():
        for lesson in lessons:
            started = time.perf_counter()
            regenerate(lesson)
            print(f"{lesson}: regenerated in {time.perf_counter() - started:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

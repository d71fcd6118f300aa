"""How fast does the real grading pipeline get through a class? Prints figures, asserts nothing.

    python benchmarks/grading_scale.py                       # every graded lesson, 20 submissions
    python benchmarks/grading_scale.py --lesson 03_attention -n 100 --jobs 2

For each lesson it autogrades N synthetic submissions (half the reference answers, a quarter
blank, a quarter with one answer left as the stub) with exactly the path
``python -m course_build.grade`` takes (``course_build.grading.grade_lesson``), then prints
submissions per minute, the wall time of each phase, how much of the autograde phase the
notebooks' own cells took (from nbclient's per-cell timestamps), and an extrapolation to a class
of 100: generate_assignment once plus every other phase's measured cost per submission (an
upper bound: nbgrader's own start-up in each phase is counted as if it grew with the class).
"""

import argparse
import os
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from course_build.grading import default_jobs, grade_lesson, prepare_course, write_submissions  # noqa: E402
from course_build.paths import lesson_names, nbgrader_source_notebook  # noqa: E402
from course_build.submissions import make_submission, solution_answers  # noqa: E402


def synthetic_class(lesson: str, n: int) -> dict:
    """N submissions: reference answers, blank notebooks and one-stub-short answers, interleaved."""
    reference = solution_answers(lesson)
    code_answers = sorted(reference)
    submissions = {}
    for i in range(n):
        kind = ("correct", "correct", "blank", "one_wrong")[i % 4]
        if kind == "correct":
            answers = reference
        elif kind == "blank":
            answers = {}
        else:
            left_out = code_answers[i % len(code_answers)]
            answers = {g: s for g, s in reference.items() if g != left_out}
        submissions[f"s{i:03d}_{kind}"] = make_submission(lesson, answers)
    return submissions


def cell_seconds(notebook_path: Path) -> float:
    """Seconds the kernel spent running the notebook's cells (nbclient's timing metadata)."""
    total = 0.0
    for cell in nbformat.read(notebook_path, as_version=4).cells:
        execution = cell.get("metadata", {}).get("execution", {})
        start, end = execution.get("iopub.execute_input"), execution.get("shell.execute_reply")
        if start and end:
            total += (
                datetime.fromisoformat(end.rstrip("Z")) - datetime.fromisoformat(start.rstrip("Z"))
            ).total_seconds()
    return total


def benchmark(lesson: str, n: int, jobs: int) -> None:
    with tempfile.TemporaryDirectory(prefix="grading-scale-") as tmp:
        timings: dict[str, float] = {}
        started = time.perf_counter()
        course = prepare_course(Path(tmp), lesson)
        timings["generate_assignment"] = time.perf_counter() - started
        lap = time.perf_counter()
        submissions = synthetic_class(lesson, n)
        write_submissions(course, lesson, submissions)
        timings["write submissions"] = time.perf_counter() - lap
        reports = grade_lesson(course, lesson, submissions, jobs=jobs, timings=timings)
        wall = time.perf_counter() - started
        kernel = [cell_seconds(course / "autograded" / s / lesson / f"{lesson}.ipynb") for s in submissions]
    per_kind: dict[str, list[float]] = {}
    for student, report in reports.items():
        per_kind.setdefault(student.split("_", 1)[1], []).append(report.auto_total / report.auto_max)
    autograde_s = timings["nbgrader autograde"]
    fixed = timings["generate_assignment"]  # everything else grows with the class (an upper bound)
    per_submission = (wall - fixed) / n  # wall seconds per submission with this many jobs
    print(f"\n{lesson}: {n} submissions, {jobs} parallel nbgrader process(es), {os.cpu_count()} CPU(s)")
    print(f"  total {wall:7.1f} s   {60 * n / wall:6.1f} submissions/minute")
    for phase, seconds in timings.items():
        print(f"  {phase:<28} {seconds:7.1f} s  ({100 * seconds / wall:4.1f} %)")
    mean_cells = sum(kernel) / n
    print(
        f"  notebook cells: {mean_cells:.1f} s per submission on average, i.e. "
        f"{100 * mean_cells * n / (autograde_s * jobs):.0f} % of the autograde processes' time; the rest is "
        "kernel start-up, nbgrader's sanitizing and gradebook writes"
    )
    print(
        "  mean score by kind: "
        + ", ".join(f"{k} {sum(v) / len(v):.2f}" for k, v in sorted(per_kind.items()))
    )
    print(f"  extrapolated class of 100: {(fixed + 100 * per_submission) / 60:.1f} min")


def main() -> int:
    graded = [lesson for lesson in lesson_names() if nbgrader_source_notebook(lesson).is_file()]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lesson", action="append", choices=graded, help="default: every graded lesson")
    parser.add_argument("-n", type=int, default=20, help="submissions per lesson (default 20)")
    parser.add_argument("--jobs", type=int, default=default_jobs(), help="parallel nbgrader processes")
    args = parser.parse_args()
    for lesson in args.lesson or graded:
        benchmark(lesson, args.n, args.jobs)
    return 0


if __name__ == "__main__":
    sys.exit(main())

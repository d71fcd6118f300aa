"""Do parallel ``nbgrader autograde`` processes sharing one SQLite gradebook fail with "database is locked"?

    python benchmarks/gradebook_contention.py                 # 1, 4 and 8 processes, 8 students each
    python benchmarks/gradebook_contention.py --processes 8 16 -n 12

Prints a table, asserts nothing. Each process runs the real ``nbgrader autograde`` of the course's
configuration on its own students of lesson 1, with one change: the notebooks are not executed
(``SandboxedExecute`` left out), so every process does nothing but nbgrader's gradebook work
(the student and submission rows, the grades ``SaveAutoGrades`` writes, the late penalty) back
to back, as close together as they can come: the worst case for the gradebook's lock. Real
grading spends seconds executing each notebook between those writes. It counts the runs that
failed and the "database is locked" errors in their output, and checks every submission got
its grades.
"""

import argparse
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # the grading harness

from grading_harness import make_submission, prepare_course, solution_answers  # noqa: E402

from course_build.nbgrader_runner import NbgraderError, finish_nbgrader, start_nbgrader  # noqa: E402

LESSON = "01_sequence_problem"
NO_EXECUTION = """
c.Autograde.autograde_preprocessors = [
    p for p in c.Autograde.autograde_preprocessors if p.__name__ != "SandboxedExecute"
]
"""


def run(processes: int, per_process: int, workdir: Path) -> dict:
    course = prepare_course(workdir, LESSON)
    with (course / "nbgrader_config.py").open("a", encoding="utf-8") as config:
        config.write(NO_EXECUTION)
    notebook = nbformat.writes(make_submission(LESSON, solution_answers(LESSON)))
    groups = [[f"p{p:02d}s{s:03d}" for s in range(per_process)] for p in range(processes)]
    everyone = [student for group in groups for student in group]
    for student in everyone:
        folder = course / "submitted" / student / LESSON
        folder.mkdir(parents=True)
        (folder / f"{LESSON}.ipynb").write_text(notebook, encoding="utf-8")
    started = time.perf_counter()
    jobs = []
    for group in groups:
        exclude = ",".join(s for s in everyone if s not in group)
        jobs.append(
            start_nbgrader(
                course, "autograde", LESSON, "--force", f"--CourseDirectory.student_id_exclude={exclude}"
            )
        )
    failed, locked = 0, 0
    for job in jobs:
        try:
            output = finish_nbgrader(job, timeout_s=1800)
        except NbgraderError as error:
            failed, output = failed + 1, str(error)
        locked += output.count("database is locked")
    wall = time.perf_counter() - started
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        graded = sum(
            1
            for student in everyone
            if all(g.auto_score is not None or g.cell_type == "markdown" for g in _grades(gradebook, student))
        )
    return {"failed": failed, "locked": locked, "graded": graded, "students": len(everyone), "wall": wall}


def _grades(gradebook: Gradebook, student: str) -> list:
    try:
        return gradebook.find_submission_notebook(LESSON, LESSON, student).grades
    except Exception:  # noqa: BLE001 - a missing submission counts as not graded
        return [None]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, nargs="+", default=[1, 4, 8])
    parser.add_argument("-n", type=int, default=8, help="students per process (default 8)")
    args = parser.parse_args()
    print(
        f"{'processes':>9}  {'students':>8}  {'failed runs':>11}  {'locked errors':>13}  {'graded':>6}  wall"
    )
    for processes in args.processes:
        with tempfile.TemporaryDirectory() as workdir:
            result = run(processes, args.n, Path(workdir))
        print(
            f"{processes:>9}  {result['students']:>8}  {result['failed']:>11}  {result['locked']:>13}  "
            f"{result['graded']:>6}  {result['wall']:.0f} s"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

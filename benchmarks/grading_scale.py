"""How fast does the real grading pipeline get through a class, and what does the sandbox cost?

    python benchmarks/grading_scale.py                        # lesson 3, 100 submissions, sandbox on
    python benchmarks/grading_scale.py --lesson 01_sequence_problem -n 20 --jobs 2
    python benchmarks/grading_scale.py -n 20 --compare-unsandboxed

Prints figures, asserts nothing. For each lesson it autogrades N synthetic submissions (half the
reference answers, a quarter blank, a quarter with one answer left as the stub) with exactly the
path ``python -m course_build.grade`` takes (``course_build.instructor.grade_batch.grade_lesson``, bubblewrap
sandbox and trusted checker on), then prints the wall time and the CPU time of each phase and
submissions per minute. The sandbox's own cost is measured apart: the time from starting a
kernel to its first reply, inside the sandbox and without it (median of several starts), and,
with ``--compare-unsandboxed``, the same class graded without the sandbox.
"""

import argparse
import asyncio
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # the grading harness

from grading_harness import (  # noqa: E402
    make_submission,
    prepare_course,
    solution_answers,
    write_submissions,
)

from course_build.instructor.grade_batch import default_jobs, grade_lesson  # noqa: E402
from course_build.nbgrader_plugins.sandbox import SandboxedKernelManager  # noqa: E402
from course_build.paths import lesson_names, nbgrader_source_notebook  # noqa: E402


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


class CpuMeter:
    """CPU seconds used by this process and its descendants, the kernels in their sandboxes included.

    Through a cgroup of its own where one can be made (root, cgroup v1 ``cpuacct``): it counts every
    process the benchmark starts and nothing else the (shared) machine runs. Otherwise
    ``RUSAGE_CHILDREN``, which misses processes their parents never reap (the kernel of a sandbox
    that is killed). Use it as a context manager, so that the cgroup is removed however the run ends.
    """

    ROOT = Path("/sys/fs/cgroup/cpuacct")

    def __enter__(self) -> "CpuMeter":
        self.home = self._current_group()
        self.group: Path | None = self.ROOT / f"course-grading-scale-{os.getpid()}"
        try:
            self.group.mkdir(exist_ok=True)
            (self.group / "cgroup.procs").write_text(str(os.getpid()))
        except OSError:
            self.group = None
        self.source = (
            "a cgroup (cpuacct) of its own" if self.group else "getrusage (undercounts killed kernels)"
        )
        return self

    def _current_group(self) -> Path:
        """The cpuacct cgroup this process starts in, to go back to when done."""
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            if "cpuacct" in controllers.split(","):
                return self.ROOT / path.lstrip("/")
        return self.ROOT

    def seconds(self) -> float:
        if self.group is not None:
            return int((self.group / "cpuacct.usage").read_text()) / 1e9
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime

    def __exit__(self, *exc_info: object) -> None:
        if self.group is not None:
            (self.home / "cgroup.procs").write_text(str(os.getpid()))
            self.group.rmdir()


async def _start_and_reply(manager_class: type, workdir: Path) -> float:
    """Seconds from asking for a kernel to its reply to kernel_info."""
    started = time.perf_counter()
    manager = manager_class(kernel_name="python3")
    await manager.start_kernel(cwd=str(workdir))
    client = manager.client()
    client.start_channels()
    try:
        await client.wait_for_ready(timeout=120)
        return time.perf_counter() - started
    finally:
        client.stop_channels()
        await manager.shutdown_kernel(now=True)


def kernel_start_seconds(manager_class: type, repeats: int) -> list[float]:
    with tempfile.TemporaryDirectory(prefix="kernel-start-") as tmp:
        (Path(tmp) / "notebook.ipynb").write_text("{}")
        return [asyncio.run(_start_and_reply(manager_class, Path(tmp))) for _ in range(repeats)]


def grade_class(lesson: str, n: int, jobs: int, unsandboxed: bool, meter: CpuMeter) -> dict[str, float]:
    """Grade a synthetic class; wall seconds per phase, plus ``cpu`` (all processes) and scores."""
    with tempfile.TemporaryDirectory(prefix="grading-scale-") as tmp:
        timings: dict[str, float] = {}
        cpu_before, started = meter.seconds(), time.perf_counter()
        course = prepare_course(Path(tmp), lesson)
        timings["generate_assignment"] = time.perf_counter() - started
        submissions = synthetic_class(lesson, n)
        write_submissions(course, lesson, submissions)
        reports = grade_lesson(
            course, lesson, submissions, jobs=jobs, timings=timings, unsandboxed=unsandboxed
        )
        timings["total"] = time.perf_counter() - started
        timings["cpu"] = meter.seconds() - cpu_before
    graded_correct = [r.auto_total == r.auto_max for s, r in reports.items() if s.endswith("_correct")]
    timings["correct_full_marks"] = sum(graded_correct) / len(graded_correct)
    return timings


def report(lesson: str, n: int, jobs: int, timings: dict[str, float], label: str) -> None:
    wall = timings["total"]
    print(
        f"\n{lesson}: {n} submissions, {label}, {jobs} parallel nbgrader process(es), {os.cpu_count()} CPU(s)"
    )
    print(f"  total {wall:7.1f} s wall ({wall / 60:.1f} min), {60 * n / wall:6.1f} submissions/minute")
    print(f"  CPU time of every process: {timings['cpu']:7.1f} s, {timings['cpu'] / n:.1f} s per submission")
    for phase, seconds in timings.items():
        if phase not in ("total", "cpu", "correct_full_marks"):
            print(f"  {phase:<28} {seconds:7.1f} s  ({100 * seconds / wall:4.1f} %)")
    print(f"  reference submissions with full marks: {100 * timings['correct_full_marks']:.0f} %")


def main() -> int:
    graded = [lesson for lesson in lesson_names() if nbgrader_source_notebook(lesson).is_file()]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lesson", action="append", choices=graded, help="default: 03_attention")
    parser.add_argument("-n", type=int, default=100, help="submissions per lesson (default 100)")
    parser.add_argument("--jobs", type=int, default=default_jobs(), help="parallel nbgrader processes")
    parser.add_argument("--starts", type=int, default=5, help="kernel starts to time each way (default 5)")
    parser.add_argument(
        "--compare-unsandboxed", action="store_true", help="also grade the class without the sandbox"
    )
    args = parser.parse_args()

    with CpuMeter() as meter:
        print(f"CPU time measured with {meter.source}")
        print("kernel start to first reply (median of", args.starts, "starts):")
        for label, manager_class in (
            ("without sandbox", AsyncKernelManager),
            ("in the sandbox", SandboxedKernelManager),
        ):
            seconds = kernel_start_seconds(manager_class, args.starts)
            spread = f"min {min(seconds):.2f} s, max {max(seconds):.2f} s"
            print(f"  {label:<16} {statistics.median(seconds):.2f} s  ({spread})")

        for lesson in args.lesson or ["03_attention"]:
            sandboxed = grade_class(lesson, args.n, args.jobs, unsandboxed=False, meter=meter)
            report(lesson, args.n, args.jobs, sandboxed, "sandbox on")
            if args.compare_unsandboxed:
                plain = grade_class(lesson, args.n, args.jobs, unsandboxed=True, meter=meter)
                report(lesson, args.n, args.jobs, plain, "sandbox OFF")
                extra = (sandboxed["cpu"] - plain["cpu"]) / args.n
                print(
                    f"\n  the sandbox's cost: {extra:+.2f} s of CPU per notebook "
                    f"({(sandboxed['total'] - plain['total']) / args.n:+.2f} s of wall time per notebook)"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())

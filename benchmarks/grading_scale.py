"""How fast does the real grading pipeline get through a class, phase by phase, at 1 and 2 workers?

    python benchmarks/grading_scale.py                        # lesson 3, 100 submissions, 1 and 2 workers
    python benchmarks/grading_scale.py --lesson 10_decoder_only -n 20 --jobs 1 --jobs 4
    python benchmarks/grading_scale.py -n 20 --compare-unsandboxed

Prints a table, asserts nothing. For each lesson and each number of workers (parallel nbgrader
processes, ``--jobs``; default 1 and 2) it grades N synthetic submissions (half the reference
answers, a quarter blank, a quarter with one answer left as the stub) with exactly the path
``python -m course_build.grade`` takes: ``nbgrader generate_assignment`` in a fresh course,
``course_build.instructor.grade_batch.grade_lesson`` (bubblewrap sandbox and trusted checker on)
and the grade sheet (``course_build.report.write_grade_sheet``). The table has the wall and CPU
seconds of each phase, submissions per minute (over the whole run, generate_assignment included)
and CPU seconds per submission at each number of workers (in all, and for each phase), and the
speed-up of each over 1 worker.
CPU time counts every process the benchmark starts (kernels in their sandboxes, checkers,
nbgrader), and is split by process (the student's kernel, the trusted checker and its zygote,
nbgrader, bubblewrap) where the benchmark has a cgroup of its own. Before grading, the meter is
checked: a sandboxed process that burns a known amount of CPU (its own count) must show up in the
meter's figure, so a run whose meter misses sandboxed kernels says so. The sandbox's own cost is
measured apart: the time from starting a kernel to its first reply, inside the sandbox and
without it (median of several starts), and, with ``--compare-unsandboxed``, the same class graded
without the sandbox.
"""

import argparse
import asyncio
import os
import resource
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
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

from course_build.instructor.grade_batch import grade_lesson  # noqa: E402
from course_build.nbgrader_plugins.sandbox import (  # noqa: E402
    SandboxedKernelManager,
    readable_paths,
    run_sandboxed,
)
from course_build.paths import lesson_names, nbgrader_source_notebook  # noqa: E402
from course_build.report import write_grade_sheet  # noqa: E402


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
        self.processes = ProcessCpu(self.group) if self.group else None
        if self.processes:
            self.processes.start()
        return self

    def _current_group(self) -> Path:
        """The cpuacct cgroup this process starts in, to go back to when done."""
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            if "cpuacct" in controllers.split(","):
                return self.ROOT / path.lstrip("/")
        return self.ROOT

    def seconds(self) -> float:
        """CPU seconds so far, less what the meter's own sampling thread used: it samples for as
        long as the run lasts, so it would make a run on a loaded machine look costlier."""
        if self.group is not None:
            used = int((self.group / "cpuacct.usage").read_text()) / 1e9
            return used - (self.processes.own_seconds if self.processes else 0.0)
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime

    def by_process(self) -> Counter:
        """CPU seconds so far by kind of process (empty without a cgroup of its own)."""
        return self.processes.by_kind(self.seconds()) if self.processes else Counter()

    def __exit__(self, *exc_info: object) -> None:
        if self.processes is not None:
            self.processes.stop()
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


BURN_CODE = (
    "import time\n"
    "started = time.process_time()\n"
    "while time.process_time() - started < {seconds}:\n"
    "    pass\n"
    "print(time.process_time())\n"
)


def sandboxed_cpu_check(meter: "CpuMeter", seconds: float = 1.0) -> tuple[float, float]:
    """CPU seconds a sandboxed process says it used, and what ``meter`` saw meanwhile.

    The process runs in the grading sandbox (bubblewrap, its pid namespace, an unprivileged uid
    when root, the sandbox's own memory cgroup), as a grading kernel does; a meter that counts
    sandboxed kernels sees at least its own count (plus the sandbox's start-up), one that does not
    (``getrusage``: the sandbox's processes are never its children's children it waits for) sees
    almost nothing.
    """
    before = meter.seconds()
    result = run_sandboxed([sys.executable, "-c", BURN_CODE.format(seconds=seconds)], readable_paths([]))
    seen = meter.seconds() - before
    if result.returncode != 0:
        raise RuntimeError(f"the sandboxed CPU check failed: {(result.stderr or result.stdout)[-300:]}")
    return float(result.stdout.split()[-1]), seen


# Which process a command line belongs to, first match wins; anything else is "other".
PROCESS_KINDS = (
    ("kernel", "ipykernel"),
    ("checker and zygote", "course_build.checking"),
    ("nbgrader", "nbgrader"),
    ("bubblewrap", "bwrap"),
)


class ProcessCpu(threading.Thread):
    """CPU seconds of the processes in a cgroup, by kind (``PROCESS_KINDS``), sampled from ``/proc``.

    Every ``interval_s`` it reads each process's user and system time. A process keeps its last
    sample when it ends, so the CPU it used after that sample, and all of a process shorter than
    one sample, is missed: ``by_kind`` reports it as "missed (short-lived)", the cgroup's total
    less what the samples saw.
    """

    def __init__(self, group: Path, interval_s: float = 0.1) -> None:
        super().__init__(daemon=True)
        self.group, self.interval_s = group, interval_s
        self._seconds: dict[str, float] = {}
        self._kind: dict[str, str] = {}
        self._tick = os.sysconf("SC_CLK_TCK")
        self._done = threading.Event()
        self._lock = threading.Lock()
        self.own_seconds = 0.0  # this sampling thread's CPU, left out of every figure

    def run(self) -> None:
        own = Path(f"/proc/self/task/{threading.get_native_id()}/stat")
        while not self._done.wait(self.interval_s):
            self.sample()
            fields = own.read_text().rsplit(")", 1)[1].split()
            self.own_seconds = (int(fields[11]) + int(fields[12])) / self._tick

    def sample(self) -> None:
        for pid in (self.group / "cgroup.procs").read_text().split():
            try:
                stat = Path(f"/proc/{pid}/stat").read_text()
                command = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
            except OSError:  # it ended
                continue
            fields = stat.rsplit(")", 1)[1].split()
            with self._lock:
                self._seconds[pid] = (int(fields[11]) + int(fields[12])) / self._tick
                if command:  # a process that is being replaced (exec) has none for a moment
                    self._kind[pid] = next((kind for kind, mark in PROCESS_KINDS if mark in command), "other")

    def by_kind(self, total_s: float) -> Counter:
        """CPU seconds so far by kind; what the samples missed is the rest of ``total_s``."""
        self.sample()
        seconds: Counter = Counter()
        with self._lock:
            for pid, used in self._seconds.items():
                seconds[self._kind.get(pid, "other")] += used
            seconds[self._kind.get(str(os.getpid()), "other")] -= self.own_seconds
        seconds["missed (short-lived)"] = total_s - sum(seconds.values())
        return seconds

    def stop(self) -> None:
        self._done.set()
        self.join()


class PhaseTimings(dict):
    """Wall seconds per phase, as ``grade_lesson(timings=...)`` fills them in, and CPU seconds beside.

    ``grade_lesson`` adds each phase's wall time to ``timings[phase]`` as the phase ends, so reading
    the CPU meter at each of those moments gives each phase's CPU time too (``cpu``), without the
    grading code knowing about the meter. ``lap`` ends a phase of the benchmark's own.
    """

    def __init__(self, meter: CpuMeter) -> None:
        super().__init__()
        self.meter, self.cpu = meter, {}
        self.start()

    def start(self) -> None:
        """A phase starts now (for the CPU meter; ``grade_lesson`` keeps its own wall clock)."""
        self._cpu_mark, self._wall_mark = self.meter.seconds(), time.perf_counter()

    def __setitem__(self, phase: str, seconds: float) -> None:
        super().__setitem__(phase, seconds)
        now = self.meter.seconds()
        self.cpu[phase] = self.cpu.get(phase, 0.0) + now - self._cpu_mark
        self._cpu_mark = now

    def lap(self, phase: str) -> None:
        now = time.perf_counter()
        self[phase] = self.get(phase, 0.0) + now - self._wall_mark
        self._wall_mark = now


def grade_class(lesson: str, n: int, jobs: int, unsandboxed: bool, meter: CpuMeter) -> dict:
    """Grade a synthetic class from scratch: its ``PhaseTimings``, totals and the share of
    reference submissions with full marks."""
    with tempfile.TemporaryDirectory(prefix="grading-scale-") as tmp:
        submissions = synthetic_class(lesson, n)
        started, cpu_before, processes_before = time.perf_counter(), meter.seconds(), meter.by_process()
        phases = PhaseTimings(meter)
        course = prepare_course(Path(tmp), lesson)
        phases.lap("generate_assignment")
        write_submissions(course, lesson, submissions)
        phases.lap("write the submissions")
        phases.start()
        reports = grade_lesson(
            course, lesson, submissions, jobs=jobs, timings=phases, unsandboxed=unsandboxed
        )
        phases.start()
        write_grade_sheet(course, course / "grades.csv")
        phases.lap("grade sheet")
        wall, cpu = time.perf_counter() - started, meter.seconds() - cpu_before
        processes = meter.by_process()
        processes.subtract(processes_before)
    correct = [r.auto_total == r.auto_max for s, r in reports.items() if s.endswith("_correct")]
    return {
        "phases": phases,
        "wall": wall,
        "cpu": cpu,
        "processes": processes,
        "full_marks": sum(correct) / len(correct),
    }


def print_table(lesson: str, n: int, label: str, runs: dict[int, dict]) -> None:
    """One column (wall and CPU seconds) per number of workers; phases as rows, then the rates."""
    jobs = sorted(runs)

    def row(name: str, cells: list[str]) -> None:
        print(f"  {name:<30}" + "  ".join(f"{cell:>24}" for cell in cells))

    def seconds(wall: float, cpu: float) -> str:
        return f"{wall:8.1f} {cpu:8.1f} {cpu / n:6.2f}"

    print(f"\n{lesson}: {n} submissions, {label}, {os.cpu_count()} CPU(s)")
    row("", [f"{j} worker(s)" for j in jobs])
    row("seconds", [f"{'wall':>8} {'CPU':>8} {'CPU/n':>6}" for _ in jobs])
    for phase in dict.fromkeys(p for j in jobs for p in runs[j]["phases"]):
        timings = [runs[j]["phases"] for j in jobs]
        row(phase, [seconds(t.get(phase, 0.0), t.cpu.get(phase, 0.0)) for t in timings])
    row("total", [seconds(runs[j]["wall"], runs[j]["cpu"]) for j in jobs])
    rates = {j: 60 * n / runs[j]["wall"] for j in jobs}
    row("submissions per minute", [f"{rates[j]:.1f}" for j in jobs])
    row("CPU s per submission", [f"{runs[j]['cpu'] / n:.2f}" for j in jobs])
    kinds = [kind for kind, _ in PROCESS_KINDS] + ["other", "missed (short-lived)"]
    for kind in (k for k in kinds if any(k in runs[j]["processes"] for j in jobs)):
        row(f"  of it {kind}", [f"{runs[j]['processes'][kind] / n:.2f}" for j in jobs])
    row("reference answers, full marks", [f"{100 * runs[j]['full_marks']:.0f} %" for j in jobs])
    if 1 in rates:
        row("speed-up over 1 worker", [f"{rates[j] / rates[1]:.2f}x" for j in jobs])


def main() -> int:
    graded = [lesson for lesson in lesson_names() if nbgrader_source_notebook(lesson).is_file()]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lesson", action="append", choices=graded, help="default: 03_attention")
    parser.add_argument("-n", type=int, default=100, help="submissions per lesson (default 100)")
    parser.add_argument(
        "--jobs", type=int, action="append", help="parallel nbgrader processes, repeatable (default 1 and 2)"
    )
    parser.add_argument(
        "--starts", type=int, default=5, help="kernel starts to time each way (default 5; 0: none)"
    )
    parser.add_argument(
        "--compare-unsandboxed", action="store_true", help="also grade the class without the sandbox"
    )
    args = parser.parse_args()
    if args.n < 4:
        parser.error("-n must be at least 4 (every kind of synthetic submission)")
    jobs = sorted(set(args.jobs or [1, 2]))

    with CpuMeter() as meter:
        print(f"CPU time measured with {meter.source}")
        own, seen = sandboxed_cpu_check(meter)
        print(
            f"  check: a sandboxed process that used {own:.2f} s of CPU (its own count), read as {seen:.2f} s"
        )
        if seen < 0.9 * own:
            print("  the meter misses sandboxed kernels here: every CPU figure below is too low")
        if args.starts:
            print("kernel start to first reply (median of", args.starts, "starts):")
        for label, manager_class in (
            ("without sandbox", AsyncKernelManager),
            ("in the sandbox", SandboxedKernelManager),
        ):
            seconds = kernel_start_seconds(manager_class, args.starts) if args.starts else []
            if seconds:
                spread = f"min {min(seconds):.2f} s, max {max(seconds):.2f} s"
                print(f"  {label:<16} {statistics.median(seconds):.2f} s  ({spread})")

        for lesson in args.lesson or ["03_attention"]:
            sandboxed = {j: grade_class(lesson, args.n, j, unsandboxed=False, meter=meter) for j in jobs}
            print_table(lesson, args.n, "sandbox on", sandboxed)
            if args.compare_unsandboxed:
                plain = {j: grade_class(lesson, args.n, j, unsandboxed=True, meter=meter) for j in jobs}
                print_table(lesson, args.n, "sandbox OFF", plain)
                for j in jobs:
                    extra = (sandboxed[j]["cpu"] - plain[j]["cpu"]) / args.n
                    wall = (sandboxed[j]["wall"] - plain[j]["wall"]) / args.n
                    print(
                        f"  the sandbox's cost at {j} worker(s): {extra:+.2f} s of CPU per notebook "
                        f"({wall:+.2f} s of wall time per notebook)"
                    )
        if meter.processes:
            own = meter.processes.own_seconds
            print(f"\n(the meter's sampling thread used {own:.1f} s of CPU, left out above)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

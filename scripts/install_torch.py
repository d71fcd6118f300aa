"""Install PyTorch 2.13.0 into the Python that runs this script (the course's virtual environment).

Run by ``scripts/venv.sh`` and ``scripts/install-student.ps1``; standard library only, so it runs
before anything else is installed. Why it exists: on Linux, PyPI's torch wheel is the CUDA build
(2.7 GB of downloads with its ``nvidia-*`` wheels), which a student without an NVIDIA GPU does not
need, so Linux gets the CPU build (about 200 MB) from PyTorch's CPU wheel index unless the GPU
build is asked for (``--gpu`` or ``COURSE_TORCH=gpu``). On macOS and Windows PyPI's wheel is the
CPU build already (with Apple's MPS on macOS), so plain pip is right there.

Where PyTorch's CPU index cannot be reached (a firewall, a mirror-only network), a probe bounded to
a few seconds notices and the plain pin from pip's own index is installed instead, with one line
saying so. An installed torch 2.13.0, whatever its build, is kept: the pin is never an open range.

Sizes measured on 2026-11-25 for CPython 3.11 (downloads, not unpacked): CPU build 192 MB (+ 10 MB
of dependencies); PyPI's Linux x86_64 build 527 MB + 2,204 MB of CUDA wheels; PyPI's Windows wheel
122 MB; PyPI's macOS (Apple silicon) wheel 111 MB.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass
from importlib import metadata

TORCH_VERSION = "2.13.0"
TORCH_PIN = f"torch=={TORCH_VERSION}"
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
# Tests (and a site with its own mirror of PyTorch's CPU index) point this elsewhere.
CPU_INDEX_VARIABLE = "COURSE_TORCH_CPU_INDEX"
BUILD_VARIABLE = "COURSE_TORCH"
# The whole probe, DNS included, gives up after this long: the fallback costs seconds in CI.
PROBE_SECONDS = 5.0


@dataclass(frozen=True)
class TorchPlan:
    """What to run: pip argument lists in order, and the one line that says what is installed."""

    pip_runs: tuple[tuple[str, ...], ...]
    message: str


def index_problem(index_url: str, timeout: float = PROBE_SECONDS) -> str | None:
    """Why ``index_url`` cannot serve torch (a short reason), or None when its torch page answers."""
    outcome: list[str | None] = []

    def probe() -> None:
        try:
            with urllib.request.urlopen(f"{index_url.rstrip('/')}/torch/", timeout=timeout):
                outcome.append(None)
        except urllib.error.HTTPError as error:
            outcome.append(f"HTTP {error.code}")
        except (OSError, ValueError) as error:
            reason = getattr(error, "reason", error)
            outcome.append(str(reason) or type(reason).__name__)

    # A thread bounds the DNS lookup too, which urlopen's timeout does not cover.
    thread = threading.Thread(target=probe, daemon=True)
    thread.start()
    thread.join(timeout)
    return outcome[0] if outcome else f"no answer within {timeout:.0f} s"


def plan_torch_install(system: str, build: str, cpu_index: str, problem: str | None) -> TorchPlan:
    """The pip runs for ``build`` ("cpu" or "gpu") on ``system`` (a ``sys.platform`` value).

    ``problem`` is why the CPU index is unreachable (None: reachable); it matters on Linux only.
    The CPU build is fetched with ``--no-deps`` and its dependencies then come from pip's own
    index (the second run, which keeps the installed torch), so nothing depends on which other
    packages PyTorch's index mirrors.
    """
    plain = (TORCH_PIN,)
    if system != "linux":
        what = "the CPU build with Apple's MPS" if system == "darwin" else "the CPU build"
        return TorchPlan((plain,), f"torch {TORCH_VERSION} from PyPI ({what}, about 110-120 MB)")
    if build == "gpu":
        return TorchPlan((plain,), f"torch {TORCH_VERSION}, PyPI's CUDA build (about 2.7 GB of downloads)")
    if problem is None:
        cpu_only = ("--no-deps", "--index-url", cpu_index, TORCH_PIN)
        return TorchPlan(
            (cpu_only, plain), f"torch {TORCH_VERSION}, the CPU build (about 200 MB) from {cpu_index}"
        )
    return TorchPlan(
        (plain,),
        f"PyTorch's CPU index {cpu_index} is unreachable ({problem}): torch {TORCH_VERSION} from pip's "
        "own index instead (from PyPI on Linux x86_64 that is the CUDA build, about 2.7 GB)",
    )


def installed_torch() -> str | None:
    """The torch version installed beside this Python, or None."""
    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return None


def main(argv: list[str] | None = None) -> int:
    """Choose the build, refuse what cannot work in one line, then run (or print) the pip runs."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--gpu", action="store_true", help="PyPI's CUDA build on Linux (also COURSE_TORCH=gpu)"
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="print the pip commands instead of running them"
    )
    options = parser.parse_args(argv)

    build = "gpu" if options.gpu else os.environ.get(BUILD_VARIABLE, "cpu").strip().lower() or "cpu"
    if build not in ("cpu", "gpu"):
        print(f"{BUILD_VARIABLE}={build!r} is not a choice: use cpu (the default) or gpu.", file=sys.stderr)
        return 2
    if build == "gpu" and sys.platform == "win32":
        print(
            f"PyPI's torch for Windows is the CPU build: for CUDA, install torch {TORCH_VERSION} from the "
            "index https://pytorch.org/get-started/locally/ names, then run this again (it keeps it).",
            file=sys.stderr,
        )
        return 2
    if sys.platform == "darwin" and platform.machine() != "arm64":
        print(
            f"PyTorch {TORCH_VERSION} has no build for Intel Macs (their last was 2.2): "
            "use Colab, or a Linux or Windows machine.",
            file=sys.stderr,
        )
        return 2
    present = installed_torch()
    if present is not None and present.split("+")[0] == TORCH_VERSION:
        print(f"torch {present} is installed already: kept (pip uninstall torch first to change builds)")
        return 0

    cpu_index = os.environ.get(CPU_INDEX_VARIABLE, CPU_INDEX)
    needs_probe = sys.platform == "linux" and build == "cpu"
    plan = plan_torch_install(
        sys.platform, build, cpu_index, index_problem(cpu_index) if needs_probe else None
    )
    print(plan.message)
    for pip_args in plan.pip_runs:
        command = [sys.executable, "-m", "pip", "install", "--quiet", *pip_args]
        if options.dry_run:
            print(" ".join(command[2:]))
        elif subprocess.run(command).returncode != 0:
            print(f"pip could not install {TORCH_PIN} (its message is above).", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

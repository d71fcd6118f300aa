"""Check the course's environment: print what is missing or too old, or one line saying what is installed.

The install scripts run it as their last step; run it by hand any time, in the activated virtual
environment: ``python scripts/check_environment.py``. Standard library only, so it still reports
when an install stopped half-way. It compares the running Python with ``requires-python`` in
``pyproject.toml`` and every installed package with its pin in the requirements file (following
``-r`` includes); git and Node.js are noted when absent, since only cloning and the book need them.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
COURSE_PACKAGE = "transformer_course"
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;#]+)")


def minimum_python(pyproject_text: str) -> tuple[int, int]:
    """The (major, minor) floor that ``requires-python = ">=X.Y"`` sets."""
    found = re.search(r'^requires-python\s*=\s*">=\s*(\d+)\.(\d+)', pyproject_text, re.M)
    if found is None:
        raise ValueError('pyproject.toml has no requires-python = ">=X.Y"')
    return int(found.group(1)), int(found.group(2))


def pinned_requirements(path: Path) -> dict[str, str]:
    """``name == version`` pins of a requirements file and the files it includes with ``-r``."""
    pins: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line.startswith("-r "):
            pins.update(pinned_requirements(path.parent / line[3:].strip()))
        elif pin := PIN.match(line):
            pins[pin.group(1)] = pin.group(2)
    return pins


def installed_version(name: str) -> str | None:
    """The version of distribution ``name`` installed beside this Python, or None."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def find_problems(
    python: tuple[int, int, int],
    minimum: tuple[int, int],
    pins: dict[str, str],
    requirements_name: str,
    installed: Callable[[str], str | None] = installed_version,
) -> list[str]:
    """One line per thing that is missing, too old or not the pinned version."""
    problems = []
    if python[:2] < minimum:
        floor = ".".join(map(str, minimum))
        problems.append(f"Python {'.'.join(map(str, python))} is too old: the course needs {floor} or newer")
    for name, pinned in pins.items():
        version = installed(name)
        if version is None:
            problems.append(f"{name} is missing ({requirements_name} pins {pinned})")
        elif version.split("+")[0].lower() != pinned.lower():
            problems.append(f"{name} {version} is installed; {requirements_name} pins {pinned}")
    if installed(COURSE_PACKAGE) is None:
        problems.append(f"the course package {COURSE_PACKAGE} is missing (pip install --no-deps -e .)")
    return problems


def tool_notes(which: Callable[[str], str | None] = shutil.which) -> list[str]:
    """Lines about optional tools that are absent: git (cloning, updates) and Node.js (the book)."""
    notes = []
    if which("git") is None:
        notes.append("git is not installed: it is needed to clone the course and to fetch its updates")
    if which("npm") is None:
        notes.append("Node.js/npm is not installed: needed only to build the book (scripts/book.sh)")
    return notes


def main(argv: list[str] | None = None) -> int:
    """Print notes, then the problems (exit 1) or the one line saying what is installed (exit 0)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requirements", default="requirements.txt", help="the pins to check against")
    parser.add_argument("--next", default="", help="what to do next, said after a clean check")
    options = parser.parse_args(argv)

    requirements = REPO_ROOT / options.requirements
    if not requirements.is_file():
        print(f"check_environment: no {options.requirements} in {REPO_ROOT}", file=sys.stderr)
        return 2
    pins = pinned_requirements(requirements)
    minimum = minimum_python((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    python = tuple(sys.version_info[:3])
    for note in tool_notes():
        print(f"Note: {note}.")
    problems = find_problems(python, minimum, pins, options.requirements)
    if problems:
        print(f"The environment check found {len(problems)} problem(s):", file=sys.stderr)
        for problem in problems:
            print(f"  - {problem}", file=sys.stderr)
        print("Run the install script again, or install what is listed by hand.", file=sys.stderr)
        return 1
    torch = installed_version("torch")
    others = len(pins) - (1 if "torch" in pins else 0)
    done = (
        f"Installed for Python {'.'.join(map(str, python))}: torch {torch}, the {others} other packages "
        f"{options.requirements} pins and the course package."
    )
    print(f"{done} Next: {options.next}" if options.next else done)
    return 0


if __name__ == "__main__":
    sys.exit(main())

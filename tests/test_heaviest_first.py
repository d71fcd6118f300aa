"""The suite hands its heaviest files to pytest-xdist's workers first (tests/heaviest_first.py)."""

import shlex
import subprocess
import sys

from heaviest_first import HEAVIEST_FILES, TESTS

from course_build.paths import REPO_ROOT


def test_every_file_named_heaviest_exists():
    """A renamed or removed file fails here instead of silently losing its place at the front."""
    missing = [name for name in HEAVIEST_FILES if not (TESTS / name).is_file()]
    assert missing == [], f"tests/heaviest_first.py names files that do not exist: {missing}"
    assert len(set(HEAVIEST_FILES)) == len(HEAVIEST_FILES)


def _collected_files(*paths: str) -> list[str]:
    """The file of each test pytest collects from ``paths``, in the order it would run them."""
    listing = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *paths],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert listing.returncode == 0, listing.stdout[-2000:] + listing.stderr[-2000:]
    return [line.split("::", 1)[0] for line in listing.stdout.splitlines() if "::" in line]


def test_the_heaviest_files_come_first_and_each_files_tests_stay_together():
    light = ["tests/test_roundoff.py", "tests/test_heaviest_first.py"]
    heavy = [f"tests/{name}" for name in HEAVIEST_FILES[:3]]
    files = _collected_files(*light, *reversed(heavy))
    runs = [name for position, name in enumerate(files) if position == 0 or files[position - 1] != name]
    assert runs == heavy + light, "the heaviest files should come first, each file's tests in one run"


def test_the_suite_keeps_that_order_under_pytest_xdist():
    """xdist's default order (files with most tests first) would undo the one above."""
    command = next(
        shlex.split(line)
        for line in (REPO_ROOT / "scripts" / "test.sh").read_text(encoding="utf-8").splitlines()
        if line.startswith("python -m pytest")
    )
    assert {"--dist", "loadfile", "--no-loadscope-reorder"} <= set(command), command

"""The student repository as students get it: written by ``course_build.student_tree``, committed,
``git clone``d over file://, and its book built by its own Pages workflow's build step.

The workflow's install step (``bash scripts/install.sh``, tested in ``test_install_scripts.py``)
is stood in for by this test run's environment: the clone's ``.venv/bin/activate`` puts this
Python's tools on ``PATH`` and the clone's own packages first on ``PYTHONPATH`` (what the install's
``pip install -e .`` gives), and ``node_modules`` is this checkout's (what ``npm ci`` installs
from the same ``package-lock.json``).
"""

import os
import subprocess
import sys
from pathlib import Path

import yaml

from course_build.paths import REPO_ROOT
from course_build.student_tree import PAGES_WORKFLOW, write_student_tree

GIT_IDENTITY = ["-c", "user.name=Course tests", "-c", "user.email=tests@example.invalid"]


def student_book_steps(tree: Path) -> tuple[str, str]:
    """(install, build): the commands of the student Pages workflow's two run steps after npm's."""
    steps = yaml.safe_load((tree / PAGES_WORKFLOW).read_text(encoding="utf-8"))["jobs"]["book"]["steps"]
    runs = [step["run"] for step in steps if "run" in step]
    install = [run for run in runs if "scripts/install.sh" in run]
    build = [run for run in runs if "jupyter-book build" in run]
    assert len(install) == 1 and len(build) == 1, runs
    return install[0], build[0]


def publish_and_clone(folder: Path) -> Path:
    """Write the student tree into ``folder/published`` as a git repository; return its clone."""
    published, clone = folder / "published", folder / "clone"
    write_student_tree(published)
    git = ["git", *GIT_IDENTITY]
    subprocess.run([*git, "init", "-q", "-b", "main", str(published)], check=True)
    subprocess.run([*git, "-C", str(published), "add", "-A"], check=True)
    subprocess.run([*git, "-C", str(published), "commit", "-q", "-m", "Student tree"], check=True)
    subprocess.run(["git", "clone", "-q", published.as_uri(), str(clone)], check=True)
    return clone


def build_student_book(clone: Path) -> subprocess.CompletedProcess:
    """Run the clone's Pages workflow build step in the clone, the install stood in for."""
    _, build = student_book_steps(clone)
    activate = clone / ".venv" / "bin" / "activate"
    activate.parent.mkdir(parents=True)
    activate.write_text(
        f'export PATH="{Path(sys.executable).parent}:$PATH"\nexport PYTHONPATH="{clone}"\n', encoding="utf-8"
    )
    (clone / "node_modules").symlink_to(REPO_ROOT / "node_modules", target_is_directory=True)
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    return subprocess.run(
        ["bash", "-e", "-c", build], cwd=clone, env=env, capture_output=True, text=True, timeout=1200
    )

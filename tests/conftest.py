"""Shared fixtures: grading runs and book builds are expensive, so each happens once per session."""

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from filelock import FileLock

# Under pytest-xdist there is one worker per CPU, each running tests, notebooks and kernels:
# PyTorch's and BLAS's own threads (one per core each) would only fight over the same cores. On the
# 2-core machine, busy with other jobs, test_sanity_task_learns_to_reverse took 108 s of CPU (191 s)
# with PyTorch's two threads and 12 s (13 s) with one. Set before anything imports torch; notebooks'
# kernels and nbgrader inherit it. An explicit setting in the environment is kept.
if os.environ.get("PYTEST_XDIST_WORKER"):
    for _variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(_variable, "1")

sys.path.insert(0, str(Path(__file__).parent))

from grading_harness import share_course_templates  # noqa: E402
from heaviest_first import heaviest_first  # noqa: E402
from student_repository import build_student_book, publish_and_clone  # noqa: E402


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files that take minutes first, heaviest first (``heaviest_first``), so that under
    pytest-xdist no worker starts a long file when the others are nearly done."""
    items[:] = heaviest_first(items)


def _run_folder(tmp_path_factory) -> Path:
    """The folder every process of this test run shares (pytest-xdist's workers included)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session", autouse=True)
def course_templates(tmp_path_factory) -> Iterator[Path]:
    """Each lesson's ``nbgrader generate_assignment`` runs once per test run; batches get copies."""
    folder = _run_folder(tmp_path_factory) / "course-templates"
    share_course_templates(folder)
    yield folder
    share_course_templates(None)


@pytest.fixture(scope="session")
def student_book(tmp_path_factory) -> Path:
    """A clone of the published student repository with its book built by its Pages workflow."""
    # One build for the whole run: under pytest-xdist every worker asks for it, so the first one
    # builds while the others wait on the lock, in the run's folder that all workers share.
    shared = _run_folder(tmp_path_factory)
    clone = shared / "student-repository" / "clone"
    with FileLock(shared / "student-repository.lock"):
        if not (clone / "_build" / "html" / "index.html").is_file():
            shutil.rmtree(shared / "student-repository", ignore_errors=True)
            clone = publish_and_clone(shared / "student-repository")
            result = build_student_book(clone)
            assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    return clone


@pytest.fixture(scope="session")
def built_site(request) -> Path:
    """The published book's HTML: ``$COURSE_SITE_DIR`` when set (an existing build), else the
    student repository's, built from its clone (``student_book``)."""
    given = os.environ.get("COURSE_SITE_DIR")
    if given:
        site = Path(given)
        if not (site / "index.html").is_file():
            pytest.skip(f"COURSE_SITE_DIR={given} holds no built site (no index.html); build the book")
        return site
    return request.getfixturevalue("student_book") / "_build" / "html"

"""The adversarial suite's lesson-3 batch: functions called by the trusted checker
(tests/integrity_suite.py)."""

import sqlite3
import time
from pathlib import Path

import nbformat
import pytest
from integrity_cases import DETACHED_WRITER_DELAY_S, FULL, LESSON3
from integrity_suite import *  # noqa: F403 - the shared tests and fixtures, run for LESSONS

pytestmark = pytest.mark.slow

LESSONS = (LESSON3,)


def _wait_out_the_detached_writer(course: Path) -> None:
    """Sleep until the detached writer would have written, had it outlived its sandbox: it starts
    while its notebook runs, so at most ``DETACHED_WRITER_DELAY_S`` after that notebook was graded
    (usually minutes before the batch ends)."""
    student = "a_detached_process_edits_the_gradebook"
    graded = course / "autograded" / student / LESSON3 / f"{LESSON3}.ipynb"
    ended = graded.stat().st_mtime if graded.is_file() else time.time()
    time.sleep(max(0.0, ended + DETACHED_WRITER_DELAY_S + 2 - time.time()))


def test_attacks_outside_the_sandbox_changed_nothing(batches):
    course, reports = batches(LESSON3)
    _wait_out_the_detached_writer(course)
    assert reports["victim"].auto_total == FULL[LESSON3]
    assert sorted(p.name for p in course.rglob("PWNED*")) == []
    assert sorted(p.name for p in Path("/tmp").glob("PWNED*")) == []
    with sqlite3.connect(course / "gradebook.db") as db:
        assert db.execute("SELECT COUNT(*) FROM grade WHERE manual_score = 100").fetchone() == (0,)
    victim = course / "submitted" / "victim" / LESSON3 / f"{LESSON3}.ipynb"
    assert nbformat.read(victim, as_version=4).cells, "the victim's submission was overwritten"


def test_passing_tests_confirm_themselves_in_the_feedback(batches):
    report = batches(LESSON3)[1]["reference"]
    assert "✓ softmax leaves its input unchanged" in report.feedback_html

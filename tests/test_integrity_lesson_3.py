"""The adversarial suite's lesson-3 batch: functions called by the trusted checker
(tests/integrity_suite.py)."""

import sqlite3
import time
from pathlib import Path

import nbformat
import pytest
from integrity_cases import FULL, LESSON3
from integrity_suite import *  # noqa: F403 - the shared tests and fixtures, run for LESSONS

pytestmark = pytest.mark.slow

LESSONS = (LESSON3,)


def test_attacks_outside_the_sandbox_changed_nothing(batches):
    course, reports = batches(LESSON3)
    time.sleep(10)  # the detached writer waits 8 s after its notebook; it must not exist by now
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

"""Three shards run as three processes, then merged, leave the course as one unsharded run does.

Two copies of a course that already graded an earlier zip (one student then got a hand grade)
grade a second zip: one with ``python -m course_build.grade``, the other with ``--shard 1/3``,
``2/3`` and ``3/3`` running at once, then ``python -m course_build.merge``. The second zip has a
resubmission marked late whose written answer did not change (the hand grade stays), a student
whose graded submission is newer than the zip's (kept), new students, a broken notebook, and
written answers still pending. The sheet and every feedback page must be byte-identical, the
gradebook's scores and the ledger's lines equal, and the shard jobs must not touch the course.

Two executions of one notebook differ where the lesson measures time (cells tagged ``measured``)
and in each widget's random model id, whichever way it is graded; the course's configuration here
clears those outputs in both courses alike (``SAME_OUTPUTS_EVERY_RUN``), so every other byte of
the pages is compared.
"""

import csv
import hashlib
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
from grading_harness import make_submission, solution_answers
from nbgrader.api import Gradebook

from course_build.instructor.provenance import read_ledger
from course_build.instructor.shards import SHARDS_FOLDER, shard_of
from course_build.paths import AUTOGRADER_DIR, REPO_ROOT

pytestmark = pytest.mark.slow
LESSON = "01_sequence_problem"
NOTEBOOK = f"{LESSON}.ipynb"
WRONG = {"apply_paths": "rnn_path_40 = 40\nattention_path_40 = 1"}
WHEN = (2026, 10, 14, 9, 30, 0)
SAME_OUTPUTS_EVERY_RUN = """
from nbconvert.preprocessors import Preprocessor


class SameOutputsEveryRun(Preprocessor):
    enabled = True  # nbconvert runs a preprocessor only when enabled
    def preprocess_cell(self, cell, resources, index):
        if "measured" in cell.metadata.get("tags", []):
            cell.outputs = []
        elif cell.cell_type == "code":
            widget = "application/vnd.jupyter.widget-view+json"
            cell.outputs = [o for o in cell.outputs if widget not in o.get("data", {})]
        return cell, resources


_steps = list(c.Autograde.autograde_preprocessors)
_after = [step.__name__ for step in _steps].index("SandboxedExecute") + 1
c.Autograde.autograde_preprocessors = [*_steps[:_after], SameOutputsEveryRun, *_steps[_after:]]
"""


def _notebook(**answers: str) -> bytes:
    return nbformat.writes(make_submission(LESSON, {**solution_answers(LESSON), **answers})).encode()


def _archive(path: Path, files: list[tuple[str, bytes, tuple]]) -> Path:
    with zipfile.ZipFile(path, "w") as zipped:
        for name, data, when in files:
            zipped.writestr(zipfile.ZipInfo(name, date_time=when), data)
    return path


def _command(module: str, course: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", module, LESSON, "--course", str(course), *args]


def _run(module: str, course: Path, *args: str) -> str:
    done = subprocess.run(
        _command(module, course, *args), cwd=REPO_ROOT, capture_output=True, text=True, timeout=1800
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _tree(root: Path, skip: str = SHARDS_FOLDER) -> dict[str, str]:
    """relative path -> SHA-256 of every file under ``root`` (the shards' folder left out)."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.relative_to(root).parts[0] != skip
    }


def _scores(course: Path) -> dict:
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        return {
            (student.id, student.last_name, student.lms_user_id): sorted(
                (g.name, g.auto_score, g.manual_score, g.extra_credit, g.needs_manual_grade)
                for g in gradebook.find_submission_notebook(LESSON, LESSON, student.id).grades
            )
            for student in gradebook.students
        }


def _ledger(course: Path) -> list[dict]:
    return [{k: v for k, v in line.items() if k != "collected_at"} for line in read_ledger(course)]


@pytest.fixture(scope="module")
def graded_both_ways(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("shards")
    base = tmp / "base" / "autograder"
    shutil.copytree(AUTOGRADER_DIR / "source" / LESSON, base / "source" / LESSON)
    config = (AUTOGRADER_DIR / "nbgrader_config.py").read_text(encoding="utf-8")
    (base / "nbgrader_config.py").write_text(config + SAME_OUTPUTS_EVERY_RUN, encoding="utf-8")
    first = [
        (f"alice_2001_3001_{NOTEBOOK}", _notebook(**WRONG), WHEN),
        (f"bob_2002_3009_{NOTEBOOK}", _notebook(), WHEN),
    ]
    _run("course_build.grade", base, "--zip", str(_archive(tmp / "first.zip", first)))
    with Gradebook(f"sqlite:///{base / 'gradebook.db'}") as gradebook:  # the grader marks alice's answer
        grade = gradebook.find_grade("recall_sequential", LESSON, LESSON, "alice")
        grade.manual_score, grade.needs_manual_grade = 2.0, False
        gradebook.db.commit()
    later = (2026, 10, 16, 8, 0, 0)
    second = _archive(
        tmp / "second.zip",
        [
            (f"alice_LATE_2001_3010_{LESSON}-1.ipynb", _notebook(), later),  # fixed code, same words
            (f"bob_2002_3002_{NOTEBOOK}", _notebook(**WRONG), WHEN),  # older than the graded 3009
            (f"carol_2003_3003_{NOTEBOOK}", _notebook(), later),
            (f"dävid_2004_3004_{NOTEBOOK}", _notebook(**WRONG), later),
            (f"erin_2005_3005_{NOTEBOOK}", b'{"cells": [', later),
        ],
    )
    single, sharded = tmp / "single" / "autograder", tmp / "sharded" / "autograder"
    shutil.copytree(base, single)
    shutil.copytree(base, sharded)
    _run("course_build.grade", single, "--zip", str(second))
    before = _tree(sharded)
    jobs = [
        subprocess.Popen(
            _command("course_build.grade", sharded, "--zip", str(second), "--shard", f"{k}/3"),
            cwd=REPO_ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for k in (1, 2, 3)
    ]
    outputs = [job.communicate(timeout=1800)[0] for job in jobs]
    for job, output in zip(jobs, outputs, strict=True):
        assert job.returncode == 0, output
    untouched = _tree(sharded) == before
    merged = _run("course_build.merge", sharded)
    return single, sharded, untouched, outputs, merged


def test_the_zip_falls_in_more_than_one_shard():
    """The zip's users spread over the shards, so the merge below really combines shards."""
    assert len({shard_of(user, 3) for user in ("2001", "2002", "2003", "2004", "2005")}) >= 2


def test_shard_jobs_leave_the_course_untouched(graded_both_ways):
    _, _, untouched, outputs, _ = graded_both_ways
    assert untouched
    assert all("python -m course_build.merge" in output for output in outputs)


def test_the_merged_sheet_is_byte_identical_to_one_run(graded_both_ways):
    single, sharded, _, _, merged = graded_both_ways
    assert (sharded / "grades.csv").read_bytes() == (single / "grades.csv").read_bytes()
    with (sharded / "grades.csv").open(encoding="utf-8") as handle:
        rows = {row["student_id"]: row for row in csv.DictReader(handle)}
    assert rows["alice"]["manual_score"] == "2"  # the hand grade of the unchanged answer is kept
    assert rows["alice"]["lms_late"] == "yes"
    assert "3009" in rows["bob"]["source_file"]  # the newer graded submission stays
    assert "could not be read" in rows["erin"]["notes"]
    assert "carol" in merged and "3 shard(s) of second.zip merged" in merged


def test_every_feedback_page_is_byte_identical_to_one_run(graded_both_ways):
    single, sharded, _, _, _ = graded_both_ways
    pages = _tree(single / "feedback")
    students = {Path(page).parts[0] for page in pages if page.endswith(f"/{LESSON}.html")}
    assert len(students) == 5 and {"alice", "bob", "carol", "erin"} < students  # and dävid
    assert _tree(sharded / "feedback") == pages


def test_gradebook_scores_and_ledger_equal_one_run(graded_both_ways):
    single, sharded, _, _, _ = graded_both_ways
    assert _scores(sharded) == _scores(single)
    assert _ledger(sharded) == _ledger(single)

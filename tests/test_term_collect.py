"""A term's collections through the real commands: resubmissions, a one-student late zip, an older
zip run again, a dropped student and one nbgrader removed (slow: real nbgrader runs).

One course directory goes through it in order, as an instructor's term would:
1. the first zip (Canvas names, ``LATE_``, times from the LMS): Jane's answers are partly wrong;
2. Jane's resubmission alone, 4.5 days after the deadline: a one-entry zip whose time is trusted,
   so the per-day penalty applies (5 started days at 5 % of the lesson's 10 points);
3. the first zip again (the documented way to regrade): Jane keeps her resubmission, its grade and
   lateness; John keeps his late status;
4. ``roster drop`` John, then ``report``: it works and the sheet says he was dropped;
5. ``nbgrader db student remove`` for Mac, then ``report``: it still works.
"""

import csv
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
from grading_harness import make_submission, solution_answers

from course_build.paths import AUTOGRADER_DIR, REPO_ROOT

pytestmark = pytest.mark.slow
LESSON = "01_sequence_problem"
NOTEBOOK = f"{LESSON}.ipynb"
POLICY = f"""
c.LatePolicy.deadlines = {{"{LESSON}": "2026-10-12T23:59"}}
c.LatePolicy.penalty_per_day = 0.05
"""
WRONG = {
    "apply_paths": "rnn_path_40 = 40\nattention_path_40 = 1",
    "apply_crossover": "largest_cheaper_n = 512",
}


def _notebook(**answers: str) -> bytes:
    return nbformat.writes(make_submission(LESSON, {**solution_answers(LESSON), **answers})).encode()


def _zip(path: Path, entries) -> Path:
    with zipfile.ZipFile(path, "w") as zipped:
        for name, data, when in entries:
            zipped.writestr(zipfile.ZipInfo(name, date_time=when), data)
    return path


def _run(course: Path, *args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", *args, "--course", str(course)]
    return subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=1800)


def _rows(course: Path) -> dict[str, dict[str, str]]:
    with (course / "grades.csv").open(encoding="utf-8") as handle:
        return {row["lms_name"]: row for row in csv.DictReader(handle)}


@pytest.fixture(scope="module")
def term(tmp_path_factory):
    """Each step's command output and grade sheet, in order."""
    tmp_path = tmp_path_factory.mktemp("term")
    course = tmp_path / "autograder"
    shutil.copytree(AUTOGRADER_DIR / "source" / LESSON, course / "source" / LESSON)
    config = (AUTOGRADER_DIR / "nbgrader_config.py").read_text(encoding="utf-8")
    (course / "nbgrader_config.py").write_text(config + POLICY, encoding="utf-8")
    first = _zip(
        tmp_path / "first.zip",
        [
            (f"smithjane_1001_5001_{NOTEBOOK}", _notebook(**WRONG), (2026, 10, 12, 20, 0, 0)),
            (f"doejohn_LATE_1002_5002_{NOTEBOOK}", _notebook(), (2026, 10, 13, 9, 0, 0)),
            (f"MacDonald_1003_5003_{NOTEBOOK}", _notebook(), (2026, 10, 12, 10, 0, 0)),
        ],
    )
    late = _zip(
        tmp_path / "jane-resubmitted.zip",
        [(f"smithjane_LATE_1001_5101_{LESSON}-1.ipynb", _notebook(), (2026, 10, 17, 11, 59, 0))],
    )
    steps = {}
    for step, archive in (("first", first), ("late", late), ("first again", first)):
        done = _run(course, "course_build.grade", LESSON, "--zip", str(archive))
        assert done.returncode == 0, done.stdout + done.stderr
        steps[step] = (done.stdout, _rows(course))
    dropped = _run(course, "course_build.roster", "drop", "doejohn", "--reason", "withdrew")
    assert dropped.returncode == 0, dropped.stdout + dropped.stderr
    report = _run(course, "course_build.report")
    steps["dropped"] = (report.stdout + report.stderr, _rows(course) if report.returncode == 0 else {})
    mac = steps["first"][1]["MacDonald"]["student_id"]
    removed = subprocess.run(
        [sys.executable, "-m", "nbgrader", "db", "student", "remove", mac, "--force"],
        cwd=course,
        capture_output=True,
        text=True,
    )
    assert removed.returncode == 0, removed.stdout + removed.stderr
    report = _run(course, "course_build.report")
    steps["removed"] = (report.stdout + report.stderr, _rows(course) if report.returncode == 0 else {})
    return steps


def test_a_one_student_late_zip_gets_the_per_day_penalty(term):
    _, rows = term["late"]
    jane = rows["smithjane"]
    assert (jane["auto_score"], jane["late"], jane["late_penalty"], jane["total"]) == (
        "5",
        "5 days late",
        "2.5",
        "2.5",
    )
    assert (jane["submitted_at"], jane["submitted_at_source"]) == (
        "2026-10-17T11:59:00+00:00",
        "zip entry time",
    )
    assert "days late unknown" not in jane["notes"]
    assert jane["source_file"].startswith(f"jane-resubmitted.zip: smithjane_LATE_1001_5101_{LESSON}-1.ipynb")


def test_running_the_first_zip_again_keeps_the_resubmission_and_everyones_lateness(term):
    output, rows = term["first again"]
    _, first = term["first"]
    assert (first["smithjane"]["auto_score"], first["smithjane"]["late"]) == ("3", "on time")
    jane = rows["smithjane"]
    assert (jane["auto_score"], jane["late"], jane["late_penalty"]) == ("5", "5 days late", "2.5")
    assert jane["source_file"].startswith("jane-resubmitted.zip:")
    assert "submission 5001 of first.zip is older than the graded submission 5101" in jane["notes"]
    assert "smithjane: submission 5001 of first.zip is older" in output
    assert (rows["doejohn"]["late"], rows["doejohn"]["late_penalty"]) == ("1 day late", "0.5")
    assert rows["MacDonald"]["late"] == "on time"


def test_a_dropped_student_keeps_their_row_and_report_still_works(term):
    output, rows = term["dropped"]
    assert rows, output
    assert rows["doejohn"]["status"] == "dropped: withdrew" and rows["doejohn"]["auto_score"] == "5"
    assert "not counted, dropped from the course: doejohn (withdrew)" in output


def test_report_works_after_nbgrader_removes_a_student(term):
    output, rows = term["removed"]
    assert rows, output
    assert set(rows) == {"smithjane", "doejohn"}

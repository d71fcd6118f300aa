"""The adversarial grading suite: honest work keeps its points, attacks gain nothing.

Every case of ``integrity_cases`` goes through one real nbgrader batch per lesson, with the
sandbox on. Then: each honest style gets full marks; each attack gets at most its baseline (the
same answers without the attack), and the baseline is below full marks, so the comparison can
fail; exact cases get exactly their score; every case leaves the note it must (and honest ones
none); nothing an attack aimed at outside its sandbox changed (another student's files, the
gradebook, the course directory, the host's /tmp); regrading gives identical scores and notes;
no feedback page shows hidden test code. A web server on the host's loopback serves the
reference solutions, for the attack that tries to fetch them.
"""

import csv
import hashlib
import html
import http.server
import io
import sqlite3
import threading
import time
from pathlib import Path

import nbformat
import pytest
from grading_harness import autograde, solution_answers
from integrity_cases import FULL, LESSON1, LESSON1_CASES, LESSON3, LESSON3_CASES
from integrity_cases_gradepipe import (
    FORGED_PHRASE,
    GRADEPIPE1_CASES,
    GRADEPIPE3_CASES,
    NOTEBOOK_BUDGET_S,
    SLOW_CALL_S,
    SLOW_CALLS,
    TEST_CELL_BUDGET_S,
)
from integrity_cases_sandbox import SANDBOX_CASES1, SANDBOX_CASES3

from course_build import report as report_command
from course_build.grader_notes import NotebookNotes
from course_build.instructor.grade_batch import grade_lesson
from course_build.paths import lesson_names, nbgrader_source_notebook

pytestmark = pytest.mark.slow

CASES = {
    LESSON1: {**LESSON1_CASES, **SANDBOX_CASES1, **GRADEPIPE1_CASES},
    LESSON3: {**LESSON3_CASES, **SANDBOX_CASES3, **GRADEPIPE3_CASES},
}
TIMEOUT_S = {LESSON1: 20, LESSON3: 40}  # far above the slowest honest cell, even on a busy machine


class _Solutions(http.server.BaseHTTPRequestHandler):
    body = b""

    def do_GET(self):  # noqa: N802 - the http.server API
        self.send_response(200)
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def solutions_server():
    _Solutions.body = "\n\n".join(solution_answers(LESSON3).values()).encode()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Solutions)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()


@pytest.fixture(scope="module")
def batches(tmp_path_factory, solutions_server):
    """lesson -> (course directory, {case: GradeReport}, {case: submitted bytes}), graded on first use."""
    graded = {}

    def grade(lesson):
        if lesson not in graded:
            workdir = tmp_path_factory.mktemp(f"integrity_{lesson}")
            course = workdir / "course"
            submissions = {name: case.build(course, solutions_server) for name, case in CASES[lesson].items()}
            reports = autograde(
                lesson,
                submissions,
                workdir,
                timeout_s=TIMEOUT_S[lesson],
                notebook_budget_s=NOTEBOOK_BUDGET_S[lesson],
                test_cell_budget_s=TEST_CELL_BUDGET_S[lesson],
            )
            graded[lesson] = (course, reports)
        return graded[lesson]

    return grade


CASE_IDS = [(lesson, name) for lesson, cases in CASES.items() for name in cases]


@pytest.mark.parametrize("lesson, name", CASE_IDS)
def test_case_gets_what_it_earned_and_a_clear_note(batches, lesson, name):
    case = CASES[lesson][name]
    reports = batches(lesson)[1]
    report = reports[name]
    got = f"{name}: scored {report.auto_total}/{report.auto_max}; notes {report.notes}"
    if case.kind == "honest":
        assert report.auto_total == FULL[lesson], got
    elif case.kind == "exact":
        assert report.auto_total == case.score, got
    else:
        baseline = reports[case.baseline].auto_total
        assert report.auto_total <= baseline, f"{got}; its baseline {case.baseline} scored {baseline}"
    if case.note is not None:
        assert any(case.note in note for note in report.notes), got
    elif case.kind != "attack":
        assert report.notes == (), got


@pytest.mark.parametrize("lesson", CASES)
def test_the_lessons_it_grades_exist_with_the_points_it_expects(lesson):
    """A renamed or removed lesson, or a change to its points, fails the suite instead of shrinking it."""
    assert lesson in lesson_names(), f"the adversarial suite grades {lesson}, which is no longer a lesson"
    source = nbformat.read(nbgrader_source_notebook(lesson), as_version=4)
    points = sum(
        cell.metadata.nbgrader.get("points", 0)
        for cell in source.cells
        if cell.metadata.get("nbgrader", {}).get("grade") and cell.cell_type == "code"
    )
    assert points == FULL[lesson], (
        f"{lesson}'s tests are worth {points} points; the suite expects {FULL[lesson]}"
    )


@pytest.mark.parametrize("lesson", CASES)
def test_every_attack_has_a_baseline_below_full_marks_or_a_victim(lesson):
    for name, case in CASES[lesson].items():
        if case.kind == "attack":
            baseline = CASES[lesson][case.baseline]
            assert baseline.kind in ("exact", "honest"), name
            if baseline.kind == "exact":
                assert baseline.score < FULL[lesson], name


def test_the_suite_is_big_enough():
    named = [(name, case) for cases in CASES.values() for name, case in cases.items()]
    assert sum(case.kind == "honest" for _, case in named) >= 20
    assert sum(name.startswith("a_") for name, _ in named) >= 20


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


def _fingerprint(report):
    return report.scores, report.notes, hashlib.sha256(report.feedback_html.encode()).hexdigest()


def test_regrading_gives_identical_scores_and_notes(batches):
    course, first = batches(LESSON1)
    again_students = [
        "reference",
        "deleted_test_cell",
        "a_int_subclass_equal_to_anything",
        "renamed_notebook",
        "invalid_json",
        "missing_notebook",
    ]
    again = grade_lesson(course, LESSON1, again_students, timeout_s=TIMEOUT_S[LESSON1])
    for student in again_students:
        assert again[student].scores == first[student].scores, student
        assert again[student].notes == first[student].notes, student


def _hidden_test_lines(lesson):
    source = nbformat.read(nbgrader_source_notebook(lesson), as_version=4)
    lines = []
    for cell in source.cells:
        for region in cell.source.split("### BEGIN HIDDEN TESTS")[1:]:
            body = region.split("### END HIDDEN TESTS", 1)[0]
            lines += [line.strip() for line in body.splitlines() if len(line.strip()) > 12]
    return lines


@pytest.mark.parametrize("lesson", CASES)
def test_feedback_never_shows_hidden_test_code(batches, lesson):
    hidden = _hidden_test_lines(lesson)
    assert hidden
    for name, report in batches(lesson)[1].items():
        assert report.feedback_html, f"{name} got no feedback"
        assert "HIDDEN TESTS" not in report.feedback_html
        shown = [
            line
            for line in hidden
            if html.escape(line, quote=False) in report.feedback_html
            or html.escape(line) in report.feedback_html
        ]
        # assert messages are the feedback, so a line that is only a message string may appear
        shown = [line for line in shown if not line.startswith(('"', 'f"', "'", "f'"))]
        assert shown == [], f"{name}'s feedback shows hidden test code: {shown[:3]}"


def test_passing_tests_confirm_themselves_in_the_feedback(batches):
    report = batches(LESSON3)[1]["reference"]
    assert "✓ softmax leaves its input unchanged" in report.feedback_html


@pytest.mark.parametrize("lesson", CASES)
def test_forged_notes_never_reach_the_sheet_and_the_report_is_written(batches, lesson, tmp_path, capsys):
    course, reports = batches(lesson)
    for name, graded in reports.items():
        assert not any(FORGED_PHRASE in note for note in graded.notes), f"{name}: {graded.notes}"
    assert report_command.main(["--course", str(course), "--out", str(tmp_path / "grades.csv")]) == 0
    sheet = (tmp_path / "grades.csv").read_text(encoding="utf-8")
    rows = [row for row in csv.DictReader(io.StringIO(sheet)) if row["assignment"] == lesson]
    assert sorted(row["student_id"] for row in rows) == sorted(reports), "one row per student"
    assert FORGED_PHRASE not in sheet and FORGED_PHRASE not in capsys.readouterr().out


@pytest.mark.parametrize("lesson", CASES)
def test_every_notebook_finishes_inside_its_budgets(batches, lesson):
    course, reports = batches(lesson)
    took = {name: NotebookNotes(course, name, lesson).run_seconds() for name in reports}
    graded = {name: seconds for name, seconds in took.items() if seconds is not None}
    assert graded["reference"] is not None
    slack_s = 60  # a kernel restart and replay after the budget ran out, on a busy machine
    over = {name: s for name, s in graded.items() if s > NOTEBOOK_BUDGET_S[lesson] + slack_s}
    assert over == {}, f"notebooks that outlasted the {NOTEBOOK_BUDGET_S[lesson]} s budget: {over}"
    if lesson == LESSON3:
        slow = graded["slow_calls_in_one_test_cell"]
        assert slow < graded["reference"] + TEST_CELL_BUDGET_S[lesson] + slack_s, took
        assert slow < SLOW_CALLS * SLOW_CALL_S, "the test cell's budget did not hold"

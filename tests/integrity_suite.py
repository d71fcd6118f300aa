"""The adversarial grading suite: honest work keeps its points, attacks gain nothing.

Every case of ``integrity_cases`` goes through one real nbgrader batch per lesson, with the
sandbox on. Then: each honest style gets full marks; each attack gets at most its baseline (the
same answers without the attack), and the baseline is below full marks, so the comparison can
fail; exact cases get exactly their score; every case leaves the note it must (and honest ones
none); nothing an attack aimed at outside its sandbox changed (another student's files, the
gradebook, the course directory, the host's /tmp); regrading gives identical scores and notes;
no feedback page shows hidden test code. The reference and the blank release are also checked cell
by cell (as tests/lesson_variants.py does for the lessons with realistic submissions). A web server
on the host's loopback serves the reference solutions, for the attack that tries to fetch them.

The tests live here; ``test_integrity_lesson_1.py`` and ``test_integrity_lesson_3.py`` import them
for their own ``LESSONS`` (``pytest_generate_tests``), so the test suite's workers can grade the
two batches in parallel (a file stays on one worker). Most cases wait on a time limit (a loop
interrupted, a budget used up, a sleeping writer), so a batch runs more nbgrader processes than
the machine has cores (``JOBS``).
"""

import csv
import html
import http.server
import io
import threading

import nbformat
import pytest
from grading_harness import autograde, check_blank_report, check_reference_report, solution_answers
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
from course_build.paths import lesson_names, nbgrader_source_notebook

# What each tests/test_integrity_lesson_<n>.py file takes (``from integrity_suite import *``).
__all__ = [
    "batches",
    "pytest_generate_tests",
    "solutions_server",
    "test_case_gets_what_it_earned_and_a_clear_note",
    "test_every_attack_has_a_baseline_below_full_marks_or_a_victim",
    "test_every_notebook_finishes_inside_its_budgets",
    "test_feedback_never_shows_hidden_test_code",
    "test_forged_notes_never_reach_the_sheet_and_the_report_is_written",
    "test_the_blank_release_scores_zero_on_every_cell",
    "test_the_lessons_it_grades_exist_with_the_points_it_expects",
    "test_the_reference_gets_every_point_and_its_written_answers_wait_for_the_instructor",
]

CASES = {
    LESSON1: {**LESSON1_CASES, **SANDBOX_CASES1, **GRADEPIPE1_CASES},
    LESSON3: {**LESSON3_CASES, **SANDBOX_CASES3, **GRADEPIPE3_CASES},
}
TIMEOUT_S = {LESSON1: 20, LESSON3: 40}  # far above the slowest honest cell, even on a busy machine
# nbgrader processes per batch: the cases that wait on a limit overlap instead of queueing on two
# (lesson 1's batch: 223 s with 2, 181 s with 6, on this 2-core machine while others ran).
JOBS = 6


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize the tests over the lessons the importing file names in ``LESSONS``."""
    lessons = metafunc.module.LESSONS
    if "name" in metafunc.fixturenames:
        pairs = [(lesson, name) for lesson in lessons for name in CASES[lesson]]
        metafunc.parametrize("lesson, name", pairs, ids=[f"{lesson}-{name}" for lesson, name in pairs])
    elif "lesson" in metafunc.fixturenames:
        metafunc.parametrize("lesson", lessons)


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
                jobs=JOBS,
                notebook_budget_s=NOTEBOOK_BUDGET_S[lesson],
                test_cell_budget_s=TEST_CELL_BUDGET_S[lesson],
            )
            graded[lesson] = (course, reports)
        return graded[lesson]

    return grade


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


def test_the_reference_gets_every_point_and_its_written_answers_wait_for_the_instructor(batches, lesson):
    check_reference_report(lesson, batches(lesson)[1]["reference"])


def test_the_blank_release_scores_zero_on_every_cell(batches, lesson):
    check_blank_report(lesson, batches(lesson)[1]["blank"])


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


def test_every_attack_has_a_baseline_below_full_marks_or_a_victim(lesson):
    for name, case in CASES[lesson].items():
        if case.kind == "attack":
            baseline = CASES[lesson][case.baseline]
            assert baseline.kind in ("exact", "honest"), name
            if baseline.kind == "exact":
                assert baseline.score < FULL[lesson], name


def _hidden_test_lines(lesson):
    source = nbformat.read(nbgrader_source_notebook(lesson), as_version=4)
    lines = []
    for cell in source.cells:
        for region in cell.source.split("### BEGIN HIDDEN TESTS")[1:]:
            body = region.split("### END HIDDEN TESTS", 1)[0]
            lines += [line.strip() for line in body.splitlines() if len(line.strip()) > 12]
    return lines


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


def test_forged_notes_never_reach_the_sheet_and_the_report_is_written(batches, lesson, tmp_path, capsys):
    course, reports = batches(lesson)
    for name, graded in reports.items():
        assert not any(FORGED_PHRASE in note for note in graded.notes), f"{name}: {graded.notes}"
    assert report_command.main(["--course", str(course), "--out", str(tmp_path / "grades.csv")]) == 0
    sheet = (tmp_path / "grades.csv").read_text(encoding="utf-8")
    rows = [row for row in csv.DictReader(io.StringIO(sheet)) if row["assignment"] == lesson]
    assert sorted(row["student_id"] for row in rows) == sorted(reports), "one row per student"
    assert FORGED_PHRASE not in sheet and FORGED_PHRASE not in capsys.readouterr().out


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

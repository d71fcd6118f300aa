"""Grading integrity: broken and dishonest submissions earn nothing they did not earn honestly.

Every case of ``integrity_cases`` goes through one real nbgrader batch per lesson (so a case
that broke the batch or leaked into a neighbour's grade shows up as wrong neighbours' scores),
then: each case gets exactly its score and its note, regrading changes nothing, and no feedback
page shows hidden test code. The kernel guard is also tested on its own, without the static scan
in front of it, to show it catches at run time what a scan might miss.
"""

import html
import importlib
import pkgutil

import lesson_submissions
import nbformat
import pytest
from integrity_cases import LESSON1, LESSON1_CASES, LESSON3, LESSON3_CASES

from course_build.grading import autograde, grade_lesson
from course_build.guarded_execute import GuardedExecute
from course_build.paths import lesson_names, nbgrader_source_notebook
from course_build.submissions import solution_answers
from course_build.tamper_scan import scan

CASES = {LESSON1: LESSON1_CASES, LESSON3: LESSON3_CASES}
TIMEOUT_S = {LESSON1: 20, LESSON3: 60}  # far above the slowest honest cell, even on a busy machine


@pytest.fixture(scope="module")
def batches(tmp_path_factory):
    """lesson -> (course directory, {case name: GradeReport}), each lesson graded on first use."""
    graded = {}

    def grade(lesson):
        if lesson not in lesson_names():
            pytest.skip(f"{lesson} is not written yet")
        if lesson not in graded:
            workdir = tmp_path_factory.mktemp(f"integrity_{lesson}")
            submissions = {name: case.build() for name, case in CASES[lesson].items()}
            reports = autograde(lesson, submissions, workdir, timeout_s=TIMEOUT_S[lesson])
            graded[lesson] = (workdir / "course", reports)
        return graded[lesson]

    return grade


@pytest.mark.slow
@pytest.mark.parametrize(
    "lesson, name", [(lesson, name) for lesson, cases in CASES.items() for name in cases]
)
def test_case_gets_exactly_its_score_and_a_clear_note(batches, lesson, name):
    case = CASES[lesson][name]
    report = batches(lesson)[1][name]
    assert report.auto_total == case.score, (
        f"{name}: scored {report.auto_total}/{report.auto_max}, expected {case.score}; notes {report.notes}"
    )
    if case.note is None:
        assert report.notes == ()
    else:
        assert any(case.note in note for note in report.notes), f"{name}: notes {report.notes}"


@pytest.mark.slow
@pytest.mark.parametrize("lesson", CASES)
def test_every_student_has_the_same_maximum(batches, lesson):
    reports = batches(lesson)[1]
    assert len({report.auto_max for report in reports.values()}) == 1


@pytest.mark.slow
def test_regrading_gives_identical_scores_and_notes(batches):
    course, first = batches(LESSON1)
    again_students = ["correct", "deleted_test_cells", "eq_always_true", "renamed_notebook"]
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


@pytest.mark.slow
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


def test_honest_answers_are_never_flagged():
    """The scan must not cost honest work anything: every reference and realistic answer passes."""
    generated = [lesson for lesson in lesson_names() if nbgrader_source_notebook(lesson).is_file()]
    answers = [source for lesson in generated for source in solution_answers(lesson).values()]
    for info in pkgutil.iter_modules(lesson_submissions.__path__):
        module = importlib.import_module(f"lesson_submissions.{info.name}")
        for variants in (getattr(module, "CORRECT", {}), getattr(module, "WRONG", {})):
            answers += [source for submission in variants.values() for source in submission.values()]
    assert len(answers) > 10
    flagged = {source[:60]: scan(source) for source in answers if scan(source)}
    assert flagged == {}


def _test_cell(source, grade_id):
    metadata = {"grade": True, "solution": False, "locked": True, "grade_id": grade_id, "points": 1}
    return nbformat.v4.new_code_cell(source, metadata={"nbgrader": metadata})


@pytest.mark.slow
def test_kernel_guard_catches_tampering_at_run_time(tmp_path):
    """Without the static scan: a dead kernel, a hang, patched numpy and a blanking transformer."""
    cells = [
        nbformat.v4.new_code_cell("import numpy as np\nx = 1"),
        _test_cell("assert x == 1", "honest"),
        nbformat.v4.new_code_cell("import os\nos._exit(3)"),
        _test_cell("assert x == 1", "after_dead_kernel"),
        nbformat.v4.new_code_cell(
            "import time\nwhile True:\n    try:\n        time.sleep(0.05)\n"
            "    except BaseException:\n        pass"
        ),
        _test_cell("assert x == 1", "after_hang"),
        nbformat.v4.new_code_cell("np.allclose = lambda *a, **k: True"),
        _test_cell("assert np.allclose(1, 2)", "patched_numpy"),
        nbformat.v4.new_code_cell("np.allclose = np.isclose.__globals__['allclose']"),
        nbformat.v4.new_code_cell("get_ipython().input_transformers_cleanup.append(lambda lines: [])"),
        _test_cell("assert False", "blanked"),
    ]
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata.kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    GuardedExecute(timeout=5).preprocess(notebook, {"metadata": {"path": str(tmp_path)}})
    errors = {
        c.metadata["nbgrader"]["grade_id"]: [o.ename for o in c.outputs if o.output_type == "error"]
        for c in notebook.cells
        if "nbgrader" in c.metadata
    }
    assert errors == {
        "honest": [],
        "after_dead_kernel": [],
        "after_hang": [],
        "patched_numpy": ["GradingIntegrityError"],
        "blanked": ["GradingIntegrityError"],
    }
    notes = " ".join(notebook.metadata["course_grader_notes"])
    for phrase in ("kernel died", "ignored the interrupt", "numpy.allclose was replaced", "did not run"):
        assert phrase in notes

"""Grader notes come only from the grader; malformed metadata is repaired with a note; time budgets
hold; a notebook whose grading never ended scores zero with a note (fast: no kernel, no nbgrader run).
"""

import copy
import shutil
import time
import warnings
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from course_build.cell_roles import grade_id, is_test_cell, nbgrader_metadata
from course_build.grader_notes import MAX_NOTE_CHARS, MAX_NOTES, UNREADABLE_NOTE, NotebookNotes, clean_note
from course_build.instructor import grade_batch
from course_build.instructor.grade_sheet import write_sheet
from course_build.instructor.late_policy import LatePolicy
from course_build.instructor.results import class_results
from course_build.nbgrader_plugins.grader_guide import GUIDE_KEY
from course_build.nbgrader_plugins.submission_metadata import FORGED_NOTES_KEY, clean_metadata
from course_build.nbgrader_plugins.time_budget import TimeBudget

LESSON = "L01"
SURROGATE = "forged \udc80 note"
FORGED_NOTES = {
    "list of dicts": [{"note": "graded by hand: full marks"}, {"nested": [[{}]]}],
    "dict": {"notes": ["full marks approved"]},
    "string": "the instructor approved full marks",
    "huge string": "x" * 5_000_000,
    "lone surrogate": [SURROGATE],
    "number": 42,
}


# --- the notes store ------------------------------------------------------------------------


def test_notes_are_kept_in_order_once_and_a_new_run_starts_afresh(tmp_path):
    notes = NotebookNotes(tmp_path, "ada", LESSON)
    assert notes.notes() == [] and not notes.finished()
    notes.start_run()
    notes.add("test_a: restored")
    notes.add("kernel died")
    notes.add("test_a: restored")
    notes.mark_finished()
    assert notes.notes() == ["test_a: restored", "kernel died"] and notes.finished()
    assert NotebookNotes(tmp_path, "bob", LESSON).notes() == [], "one student's notes are not another's"
    notes.start_run()
    assert notes.notes() == [] and not notes.finished()


def test_a_finished_run_says_how_long_it_took(tmp_path, monkeypatch):
    notes = NotebookNotes(tmp_path, "ada", LESSON)
    monkeypatch.setattr(time, "time", lambda: 100.0)
    notes.start_run()
    assert notes.run_seconds() is None, "an unfinished run has no duration"
    monkeypatch.setattr(time, "time", lambda: 142.5)
    notes.mark_finished()
    assert notes.run_seconds() == 42.5


def test_notes_live_in_the_course_directory_not_beside_the_students_files(tmp_path):
    notes = NotebookNotes(tmp_path, "ada", LESSON)
    notes.add("a note")
    assert notes.path == tmp_path / "grader_notes" / "ada" / f"{LESSON}.json"
    assert "autograded" not in notes.path.parts and "submitted" not in notes.path.parts


def test_notes_any_file_can_hold_lone_surrogates_escaped_long_ones_cut_and_few(tmp_path):
    notes = NotebookNotes(tmp_path, "ada", LESSON)
    notes.add(SURROGATE)
    notes.add("y" * (MAX_NOTE_CHARS * 3))
    for number in range(MAX_NOTES + 50):
        notes.add(f"note {number}")
    kept = notes.notes()
    assert kept[0] == "forged \\udc80 note"
    assert len(kept[1]) == MAX_NOTE_CHARS
    assert len(kept) == MAX_NOTES
    "\n".join(kept).encode("utf-8")  # would raise UnicodeEncodeError on a lone surrogate
    assert clean_note(["not", "text"]) == "['not', 'text']"


@pytest.mark.parametrize("content", ["{broken", '{"notes": "a string", "finished": true}', "[]", "\udc80"])
def test_an_unreadable_notes_file_says_so_and_counts_as_unfinished(tmp_path, content):
    notes = NotebookNotes(tmp_path, "ada", LESSON)
    notes.path.parent.mkdir(parents=True)
    notes.path.write_bytes(content.encode("utf-8", "surrogateescape"))
    assert notes.notes() == [UNREADABLE_NOTE] and not notes.finished()


# --- a submission's metadata ------------------------------------------------------------------


def _submission() -> nbformat.NotebookNode:
    def meta(grade_id, **flags):
        return {"nbgrader": {"grade_id": grade_id, "grade": False, "solution": False, **flags}}

    return nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell("x = 1", metadata=meta("answer", solution=True)),
            nbformat.v4.new_code_cell("assert x == 1", metadata=meta("t1", grade=True, points=2)),
        ]
    )


@pytest.mark.parametrize("forged", FORGED_NOTES.values(), ids=FORGED_NOTES.keys())
def test_a_notebooks_own_grader_notes_are_removed_and_never_become_notes(forged):
    notebook = _submission()
    notebook.metadata[FORGED_NOTES_KEY] = forged
    notes = clean_metadata(notebook)
    assert FORGED_NOTES_KEY not in notebook.metadata
    assert notes == [
        f"the notebook's metadata held {FORGED_NOTES_KEY!r}; ignored (notes come only from the grader)"
    ]
    assert [cell.source for cell in notebook.cells] == ["x = 1", "assert x == 1"], "the code is untouched"


@pytest.mark.parametrize("odd", [[], ["nbgrader"], "metadata", 7, None])
def test_metadata_of_an_unexpected_type_is_replaced_with_a_note(odd):
    notebook = _submission()
    notebook.metadata = odd
    notebook.cells[0].metadata = odd
    notes = clean_metadata(notebook)
    assert notebook.metadata == {} and notebook.cells[0].metadata == {}
    assert "the notebook's metadata was not a dictionary; it was ignored" in notes
    assert "cell 0: its metadata was not a dictionary; it was ignored" in notes
    assert grade_id(notebook.cells[1]) == "t1" and is_test_cell(notebook.cells[1])


@pytest.mark.parametrize("odd", [["grade", True], "t1", 1, {"grade_id": ["t1"], "grade": True}])
def test_odd_nbgrader_metadata_reads_as_an_ordinary_cell_everywhere(odd):
    notebook = _submission()
    notebook.cells[1].metadata.nbgrader = odd
    assert isinstance(nbgrader_metadata(notebook.cells[1]), dict)
    assert grade_id(notebook.cells[1]) is None, "a grade id that is not text is no grade id"
    notes = clean_metadata(notebook)
    if not isinstance(odd, dict):
        assert "nbgrader" not in notebook.cells[1].metadata
        assert notes == ["cell 1: its nbgrader metadata was not a dictionary; graded as an ordinary cell"]


def test_entries_that_are_not_cells_and_sources_that_are_not_text_are_repaired():
    notebook = _submission()
    notebook.cells.insert(0, ["not", "a", "cell"])
    notebook.cells[2].source = {"code": "assert True"}
    notes = clean_metadata(notebook)
    assert len(notebook.cells) == 2 and notebook.cells[1].source == ""
    assert notes == [
        "1 entries of the notebook's cells were not cells; ignored",
        "cell 1: its source was not text; graded as an empty cell",
    ]


def test_a_cell_posing_as_the_graders_guide_is_no_guide():
    notebook = _submission()
    notebook.cells[0].metadata[GUIDE_KEY] = {"grade_id": "w1", "points": 3}
    notes = clean_metadata(notebook)
    assert GUIDE_KEY not in notebook.cells[0].metadata
    assert notes == [f"cell 0: its metadata held {GUIDE_KEY!r} (the formgrader's guide for graders); ignored"]


def test_text_that_is_not_valid_unicode_in_any_metadata_is_escaped_so_the_notebook_can_be_written():
    notebook = _submission()
    deep: list = ["tag \udc80"]
    for _ in range(5000):  # deeper than Python's recursion limit
        deep = [deep]
    dict.__setitem__(notebook.metadata, "author", {"name \udcff": deep})  # as JSON would nest it
    notebook.cells[1].metadata.tags = ["\ud800"]
    notes = clean_metadata(notebook)
    assert notes == [
        "the notebook's metadata held text that is not valid Unicode; it was escaped",
        "cell 1: its metadata held text that is not valid Unicode; it was escaped",
    ]
    assert notebook.cells[1].metadata.tags == ["\\ud800"] and "name \\udcff" in notebook.metadata.author
    assert grade_id(notebook.cells[1]) == "t1"


def test_a_well_formed_submission_gets_no_note():
    notebook = _submission()
    before = copy.deepcopy(notebook)
    assert clean_metadata(notebook) == [] and notebook == before


# --- time budgets -------------------------------------------------------------------------------


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_test_cells_budget_limits_every_wait_and_says_it_ran_out():
    clock = _Clock()
    notebook = TimeBudget("the notebook", 600, clock=clock)
    cell = TimeBudget("this test cell", 30, within=notebook, clock=clock)
    assert cell.wait_s(120) == 30 and cell.wait_s(None) == 30 and cell.wait_s(5) == 5
    clock.now += 29.5
    assert cell.wait_s(120) == 0.5 and cell.whole_seconds(120) == 1 and not cell.spent()
    assert cell.ran_out() is None
    clock.now += 1
    assert cell.spent() and cell.wait_s(120) == 0 and cell.whole_seconds(120) == 1
    assert cell.ran_out() == "this test cell used up its time budget of 30 s"
    assert not notebook.spent() and notebook.left() == pytest.approx(569.5)


def test_the_notebooks_budget_ends_a_test_cell_that_has_time_of_its_own():
    clock = _Clock()
    notebook = TimeBudget("the notebook", 100, clock=clock)
    clock.now += 90
    cell = TimeBudget("this test cell", 30, within=notebook, clock=clock)
    assert cell.wait_s(120) == 10
    clock.now += 12
    assert cell.spent() and cell.ran_out() == "the notebook used up its time budget of 100 s"


def test_thousands_of_calls_just_under_the_call_limit_cannot_outlast_the_cell_budget():
    clock = _Clock()
    notebook = TimeBudget("the notebook", 1200, clock=clock)
    cell = TimeBudget("this test cell", 60, within=notebook, clock=clock)
    calls = 0
    while not cell.spent() and calls < 10_000:
        clock.now += min(cell.wait_s(120), 119.9 if calls % 2 else 0.9)  # a slow call, then a quick one
        calls += 1
    assert cell.spent() and clock.now - 1000.0 == pytest.approx(60)
    assert calls < 100


# --- a notebook whose grading never ended ------------------------------------------------------


@pytest.fixture(scope="module")
def _course_template(tmp_path_factory):
    """A gradebook with one lesson (two test cells, a written answer) and three submissions."""
    course = tmp_path_factory.mktemp("template") / "course"
    source = course / "source" / LESSON / f"{LESSON}.ipynb"
    source.parent.mkdir(parents=True)
    nbformat.write(_submission(), source)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nbgrader's own SQLAlchemy warnings on add_submission
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
            gradebook.add_assignment(LESSON)
            gradebook.add_notebook(LESSON, LESSON)
            gradebook.add_grade_cell("t1", LESSON, LESSON, max_score=2, cell_type="code")
            gradebook.add_grade_cell("t2", LESSON, LESSON, max_score=3, cell_type="code")
            gradebook.add_grade_cell("w1", LESSON, LESSON, max_score=4, cell_type="markdown")
            gradebook.add_solution_cell("w1", LESSON, LESSON)
            for student in ("ada", "bob", "cleo"):
                gradebook.add_student(student)
                gradebook.add_submission(LESSON, student)
    return course


@pytest.fixture
def course(_course_template, tmp_path):
    return Path(shutil.copytree(_course_template, tmp_path / "course"))


def _set_grades(course: Path, student: str, **scores) -> None:
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        for name, (auto, manual) in scores.items():
            grade = gradebook.find_grade(name, LESSON, LESSON, student)
            grade.auto_score, grade.manual_score = auto, manual
            grade.needs_manual_grade = auto is None and manual is None
        gradebook.db.commit()


def _fake_nbgrader(course: Path, runs: dict[str, list[str]], outcomes: dict[str, list[str]]):
    """An ``_autograde`` that records who it graded and, per student and attempt, either finishes
    ("finished"), leaves an unexecuted notebook ("killed") or writes nothing ("failed")."""

    def autograde(course_, lesson, students, jobs, extra):
        runs.setdefault("calls", []).append(list(students))
        for student in students:
            outcome = outcomes[student].pop(0)
            notes = NotebookNotes(course, student, lesson)
            notes.start_run()
            graded = course / "autograded" / student / lesson / f"{lesson}.ipynb"
            shutil.rmtree(graded.parent, ignore_errors=True)
            if outcome != "failed":
                graded.parent.mkdir(parents=True)
                nbformat.write(_submission(), graded)
            if outcome == "finished":
                _set_grades(course, student, t1=(2.0, None), t2=(3.0, None))
                notes.mark_finished()
        return []

    return autograde


def test_a_killed_run_is_regraded_once_then_scores_zero_with_a_note_never_pending(course, monkeypatch):
    runs: dict[str, list[str]] = {}
    outcomes = {"ada": ["finished"], "bob": ["killed", "killed"], "cleo": ["failed", "finished"]}
    monkeypatch.setattr(grade_batch, "_autograde", _fake_nbgrader(course, runs, outcomes))
    grade_batch.autograde_with_one_retry(course, LESSON, ["ada", "bob", "cleo"], 2, [])
    assert runs["calls"] == [["ada", "bob", "cleo"], ["bob", "cleo"]], "each unfinished run once more"
    results = {r.student: r for r in class_results(course, LatePolicy())}
    bob = results["bob"]
    assert [(item.grade_id, item.score) for item in bob.items if not item.written] == [("t1", 0), ("t2", 0)]
    assert [item.grade_id for item in bob.pending] == ["w1"], "only the written answer waits for a grader"
    assert any("regraded once, it stopped again: its autograded cells score zero" in n for n in bob.notes)
    assert results["cleo"].auto_score == 5 and results["cleo"].notes == ()
    assert results["ada"].auto_score == 5 and results["ada"].notes == ()


def test_a_notebook_nbgrader_never_graded_scores_zero_after_its_retry(course, monkeypatch):
    outcomes = {"ada": ["failed", "failed"]}
    monkeypatch.setattr(grade_batch, "_autograde", _fake_nbgrader(course, {}, outcomes))
    grade_batch.autograde_with_one_retry(course, LESSON, ["ada"], 1, [])
    ada = {r.student: r for r in class_results(course, LatePolicy())}["ada"]
    assert ada.auto_score == 0 and [i.grade_id for i in ada.pending] == ["w1"]
    assert ada.notes == ("nbgrader could not grade this notebook; it scores zero",)


def test_zero_for_an_unfinished_run_keeps_a_grade_given_by_hand(course):
    _set_grades(course, "ada", t1=(2.0, None), t2=(None, 1.5))
    grade_batch.score_autograded_cells_zero(course, LESSON, "ada", "stopped")
    ada = {r.student: r for r in class_results(course, LatePolicy())}["ada"]
    assert {i.grade_id: i.score for i in ada.items if not i.written} == {"t1": 0, "t2": 1.5}
    assert "stopped" in ada.notes


def test_a_forged_notes_key_in_a_graded_notebook_never_reaches_the_sheet(course, tmp_path):
    """Even a notebook graded before this fix (the key still in its metadata) shows no forged note."""
    for student, forged in zip(("ada", "bob", "cleo"), FORGED_NOTES.values(), strict=False):
        notebook = _submission()
        notebook.metadata[FORGED_NOTES_KEY] = forged
        graded = course / "autograded" / student / LESSON / f"{LESSON}.ipynb"
        graded.parent.mkdir(parents=True)
        nbformat.write(notebook, graded)
        _set_grades(course, student, t1=(2.0, None), t2=(0.0, None))
    NotebookNotes(course, "bob", LESSON).add("test_b: restored from the release")
    results = class_results(course, LatePolicy())
    assert [r.notes for r in results] == [(), ("test_b: restored from the release",), ()]
    write_sheet(results, tmp_path / "grades.csv")
    sheet = (tmp_path / "grades.csv").read_text(encoding="utf-8")
    assert "approved" not in sheet and "graded by hand" not in sheet and "forged" not in sheet


def test_an_nbgrader_process_is_stopped_only_once_each_of_its_notebooks_could_have_used_its_budget(
    tmp_path, monkeypatch
):
    (tmp_path / "nbgrader_config.py").write_text(
        "c = get_config()\nc.SandboxedExecute.notebook_budget = 50\n"
    )
    assert grade_batch.notebook_budget(tmp_path, []) == 50
    assert grade_batch.notebook_budget(tmp_path, ["--SandboxedExecute.notebook_budget=7.5"]) == 7.5
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\n")
    assert grade_batch.notebook_budget(tmp_path, []) == 1200, "the default of SandboxedExecute"
    waited = []
    monkeypatch.setattr(grade_batch, "submitted_students", lambda course, lesson: ["a", "b", "c"])
    monkeypatch.setattr(grade_batch, "start_nbgrader", lambda course, *args, **kw: args)
    monkeypatch.setattr(grade_batch, "finish_nbgrader", lambda process, timeout_s: waited.append(timeout_s))
    extra = ["--SandboxedExecute.notebook_budget=30"]
    grade_batch._autograde(tmp_path, LESSON, ["a", "b", "c"], 2, extra)
    margin = grade_batch.STARTUP_MARGIN_S
    assert waited == [2 * (30 + margin), 1 * (30 + margin)]

"""Rebuilding a submission on the release's graded cells (fast: plain notebooks, no nbgrader run).

What students rely on: a test cell they deleted or re-tagged comes back (so correct code still
scores), their own code and cells are never lost or rewritten, and every repair is noted.
"""

import copy
import logging
from types import SimpleNamespace

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
from nbgrader.utils import compute_checksum

from course_build.nbgrader_plugins.restore_cells import (
    PutBackHiddenTests,
    earlier_releases_dir,
    keep_release,
    restore_structure,
)


def _meta(grade_id, *, solution=False, grade=False, locked=False, points=0):
    return {
        "nbgrader": {
            "grade_id": grade_id,
            "solution": solution,
            "grade": grade,
            "locked": locked,
            "points": points,
            "schema_version": 3,
        }
    }


def _release():
    return new_notebook(
        cells=[
            new_markdown_cell("# Lesson", id="title"),
            new_code_cell(
                "def f(x):\n    raise NotImplementedError()", id="f", metadata=_meta("f", solution=True)
            ),
            new_code_cell(
                "assert f(1) == 2", id="f_test", metadata=_meta("f_test", grade=True, locked=True, points=2)
            ),
            new_markdown_cell("Why?", id="q", metadata=_meta("intro", locked=True)),
            new_markdown_cell(
                "YOUR ANSWER HERE", id="why", metadata=_meta("why", solution=True, grade=True, points=1)
            ),
        ]
    )


def _answered():
    submitted = _release()
    submitted.cells[1].source = "def f(x):\n    return 2 * x"
    submitted.cells[4].source = "Because."
    return submitted


def _ids(notebook):
    return [c.metadata.get("nbgrader", {}).get("grade_id", c.source[:12]) for c in notebook.cells]


def test_an_untouched_submission_comes_back_unchanged_and_without_notes():
    submitted = _answered()
    restored, notes = restore_structure(submitted, _release())
    assert notes == []
    assert [c.source for c in restored.cells] == [c.source for c in submitted.cells]
    assert [c.metadata for c in restored.cells] == [c.metadata for c in submitted.cells]


def test_a_deleted_test_cell_is_restored_in_place_and_noted():
    submitted = _answered()
    del submitted.cells[2]
    restored, notes = restore_structure(submitted, _release())
    assert _ids(restored) == ["# Lesson", "f", "f_test", "intro", "why"]
    assert restored.cells[2].source == "assert f(1) == 2"
    assert notes == ["f_test: the cell was missing and was restored from the release"]


def test_a_deleted_written_answer_is_restored_but_a_deleted_code_answer_is_only_noted():
    submitted = _answered()
    del submitted.cells[4]
    del submitted.cells[1]
    restored, notes = restore_structure(submitted, _release())
    assert _ids(restored) == ["# Lesson", "f_test", "intro", "why"]
    assert "f: the answer cell was missing" in notes
    assert "why: the cell was missing and was restored from the release" in notes


def test_a_retagged_test_cell_gets_the_release_metadata_and_source_back():
    submitted = _answered()
    submitted.cells[2].metadata = _meta("f_test", solution=True, grade=True, points=2)
    submitted.cells[2].source = "pass  # the student emptied the test"
    restored, notes = restore_structure(submitted, _release())
    assert restored.cells[2].metadata == _release().cells[2].metadata
    assert restored.cells[2].source == "assert f(1) == 2"
    assert notes == ["f_test: its cell type or nbgrader metadata had been changed; restored"]


def test_an_edited_locked_cell_is_restored_and_noted():
    submitted = _answered()
    submitted.cells[2].source = "assert True"
    restored, notes = restore_structure(submitted, _release())
    assert restored.cells[2].source == "assert f(1) == 2"
    assert notes == ["f_test: the locked cell had been edited; restored"]


def test_answers_keep_the_students_text_and_outputs():
    submitted = _answered()
    submitted.cells[1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="hi\n")]
    restored, _ = restore_structure(submitted, _release())
    assert restored.cells[1].source == "def f(x):\n    return 2 * x"
    assert restored.cells[1].outputs[0]["text"] == "hi\n"
    assert restored.cells[4].source == "Because."


def test_moved_graded_cells_go_back_in_order_and_the_students_cells_follow_their_anchor():
    submitted = _answered()
    helper = new_code_cell("import math", id="mine")
    submitted.cells.insert(2, helper)  # after the answer f
    submitted.cells[1], submitted.cells[3] = submitted.cells[3], submitted.cells[1]  # test above answer
    restored, notes = restore_structure(submitted, _release())
    # the student's cell stays after the graded cell it followed (the test cell, here)
    assert [c.id for c in restored.cells] == ["title", "f", "f_test", "mine", "q", "why"]
    assert "graded cells had been moved; they were put back in the released order" in notes
    assert sum(c.source == "import math" for c in restored.cells) == 1


def test_a_copied_or_invented_graded_cell_becomes_an_ordinary_cell():
    submitted = _answered()
    copied = copy.deepcopy(submitted.cells[2])
    copied.id = "copy"
    copied.source = "assert f(2) == 4"
    invented = new_code_cell("x = 1", id="fake", metadata=_meta("bonus", grade=True, points=100))
    submitted.cells += [copied, invented]
    restored, notes = restore_structure(submitted, _release())
    graded = [c for c in restored.cells if "nbgrader" in c.metadata]
    assert sorted(c.metadata.nbgrader.grade_id for c in graded) == ["f", "f_test", "intro", "why"]
    assert [c.source for c in restored.cells[-2:]] == ["assert f(2) == 4", "x = 1"]  # kept, as plain cells
    assert "a cell claiming a repeated grade_id 'f_test' was graded as an ordinary cell" in notes
    assert "a cell claiming an unknown grade_id 'bonus' was graded as an ordinary cell" in notes


def test_the_submission_given_is_not_changed_and_cell_ids_stay_unique():
    submitted = _answered()
    submitted.cells.append(copy.deepcopy(submitted.cells[0]))  # a duplicated cell id
    before = copy.deepcopy(submitted)
    restored, _ = restore_structure(submitted, _release())
    assert submitted == before
    ids = [c.id for c in restored.cells]
    assert len(ids) == len(set(ids))
    nbformat.validate(restored)


def test_a_test_cell_as_an_earlier_release_had_it_is_not_called_edited():
    """After a test was fixed and the lesson regenerated, submissions still hold the old test."""
    handed_out = _release()
    handed_out.cells[2].metadata["nbgrader"]["checksum"] = "old"
    submitted = _answered()
    submitted.cells[2] = copy.deepcopy(handed_out.cells[2])
    fixed = _release()
    fixed.cells[2].source = "assert f(2) == 4"
    fixed.cells[2].metadata["nbgrader"]["checksum"] = "new"
    restored, notes = restore_structure(submitted, fixed, [handed_out])
    assert notes == [] and restored.cells[2].source == "assert f(2) == 4"
    _, notes_without_history = restore_structure(submitted, fixed)
    assert notes_without_history == ["f_test: the locked cell had been edited; restored"]
    submitted.cells[2].source = "assert True"
    _, notes = restore_structure(submitted, fixed, [handed_out])
    assert notes == ["f_test: the locked cell had been edited; restored"], "a real edit is still noted"


class _SourceCells:
    """The two gradebook look-ups OverwriteCells makes, for one locked 2-point test cell."""

    def __init__(self, source: str) -> None:
        self.cell = SimpleNamespace(
            cell_type="code", locked=True, source=source, checksum=compute_checksum(_test_cell(source))
        )

    def find_source_cell(self, *_):
        return self.cell

    def find_graded_cell(self, *_):
        return SimpleNamespace(max_score=2)


def _test_cell(source: str, points: int = 2):
    return new_code_cell(source, metadata=_meta("f_test", grade=True, locked=True, points=points))


def _put_back(cell, caplog):
    step = PutBackHiddenTests()
    step.gradebook = _SourceCells(
        "assert f(1) == 2\n### BEGIN HIDDEN TESTS\nassert f(3) == 6\n### END HIDDEN TESTS"
    )
    step.notebook_id = step.assignment_id = "L01"
    caplog.clear()
    with caplog.at_level(logging.DEBUG):
        restored, _ = step.preprocess_cell(cell, {}, 0)
    return restored, [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def test_putting_back_hidden_tests_is_quiet_but_other_changes_still_warn(caplog):
    restored, warnings = _put_back(_test_cell("assert f(1) == 2"), caplog)
    assert "BEGIN HIDDEN TESTS" in restored.source and warnings == []
    _, warnings = _put_back(_test_cell("assert f(1) == 2", points=5), caplog)
    assert warnings == ["Attribute 'points' for cell f_test has changed! (should be: 2.0, got: 5.0)"]


def test_each_release_handed_out_is_kept_once(tmp_path):
    release = tmp_path / "release" / "L01" / "L01.ipynb"
    release.parent.mkdir(parents=True)
    nbformat.write(_release(), release)
    keep_release(tmp_path, "L01")
    keep_release(tmp_path, "L01")  # graded again from the same release: nothing new to keep
    fixed = _release()
    fixed.cells[2].source = "assert f(2) == 4"
    nbformat.write(fixed, release)
    keep_release(tmp_path, "L01")
    kept = sorted(earlier_releases_dir(tmp_path, "L01").glob("*-L01.ipynb"))
    assert [nbformat.read(path, as_version=4).cells[2].source for path in kept] == [
        "assert f(1) == 2",
        "assert f(2) == 4",
    ]

"""The LMS import file and the feedback bundle read a real gradebook (fast: no kernel, no nbgrader run).

The course of ``test_grade_sheet``: Ada's written answer is pending, Bob handed nothing in, Cleo is
two days late. A total with pending points must never reach the LMS looking final.
"""

import csv
import zipfile

import pytest
import test_grade_sheet as sheet

from course_build import export
from course_build.instructor import dropped
from course_build.instructor.results import class_results

LESSON, POLICY = sheet.LESSON, sheet.POLICY
_course_template, course = sheet._course_template, sheet.course  # the fixtures: a gradebook, no nbgrader
_grade_by_hand = sheet._grade_by_hand


def _table(course, include_pending=False, titles=None):
    return export.lms_table(class_results(course, POLICY), titles or {}, include_pending)


def test_the_lms_file_has_canvas_columns_one_row_per_student_and_a_column_per_lesson(course, tmp_path):
    _grade_by_hand(course, "cleo", "w1", 3)
    table = _table(course, titles={LESSON: "Lesson 1 (4521)"})
    out = tmp_path / "canvas.csv"
    export.write_lms_csv(table, out)
    with out.open(encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Lesson 1 (4521)"]
    assert rows[1] == ["    Points Possible", "", "", "", "", "5"]
    # Ada: pending, left empty; Bob: nothing handed in; Cleo: 5 points, 2 days late at 10 % a day.
    assert rows[2:] == [
        ["Ada", "1", "", "", "", ""],
        ["Bob", "bob", "", "", "", ""],
        ["Cleo", "3", "", "", "", "4"],
    ]


def test_pending_cells_are_left_out_and_counted_unless_asked_for(course, tmp_path):
    table = _table(course)
    assert ("L01", "ada", "3 points pending") in table.left_out
    summary = export.lms_summary(table, tmp_path / "canvas.csv")
    assert "2 cell(s) left empty because written answers are not graded yet (L01: ada, cleo)" in summary
    assert "--include-pending" in summary and "nothing handed in (L01: bob)" in summary
    included = _table(course, include_pending=True)
    assert [row[5] for row in included.rows[1:]] == ["2", "", "1"]  # totals so far, Cleo's after the penalty
    assert "2 cell(s) hold a total so far" in export.lms_summary(included, tmp_path / "canvas.csv")


def test_a_dropped_student_has_no_row_and_the_summary_names_them(course, tmp_path):
    dropped.drop(course, "bob", "withdrew")
    table = _table(course)
    assert [row[0] for row in table.rows[1:]] == ["Ada", "Cleo"]
    assert table.dropped == ["bob"]
    assert "1 dropped student(s) left out (bob;" in export.lms_summary(table, tmp_path / "canvas.csv")


def test_the_feedback_bundle_names_each_page_with_the_lms_id_and_zips_it(course, tmp_path):
    for student in ("ada", "cleo"):
        page = course / "feedback" / student / LESSON / f"{LESSON}.html"
        page.parent.mkdir(parents=True)
        page.write_text(f"<html>{student}'s feedback</html>", encoding="utf-8")
    out = tmp_path / "bundle"
    pages, skipped = export.bundle_feedback(course, class_results(course, POLICY, [LESSON]), out)
    assert [p.name for p in pages] == ["1_ada_L01.html", "3_cleo_L01.html"] and skipped == []
    assert (out / "3_cleo_L01.html").read_text(encoding="utf-8") == "<html>cleo's feedback</html>"
    with (out / "manifest.csv").open(encoding="utf-8") as handle:
        manifest = list(csv.DictReader(handle))
    assert [(m["lms_user_id"], m["lms_name"], m["file"]) for m in manifest] == [
        ("1", "Ada", "1_ada_L01.html"),
        ("3", "Cleo", "3_cleo_L01.html"),
    ]
    assert manifest[0]["status"] == "3 points not graded yet"
    with zipfile.ZipFile(tmp_path / "bundle.zip") as zipped:
        assert sorted(zipped.namelist()) == ["1_ada_L01.html", "3_cleo_L01.html", "manifest.csv"]


def test_a_student_without_a_page_is_listed_not_bundled(course, tmp_path):
    pages, skipped = export.bundle_feedback(course, class_results(course, POLICY, [LESSON]), tmp_path / "b")
    assert pages == [] and len(skipped) == 2 and "no feedback page" in skipped[0]


def test_the_command_refuses_an_ungraded_lesson_in_one_line(course, tmp_path, capsys):
    (course / "nbgrader_config.py").write_text("", encoding="utf-8")
    with pytest.raises(SystemExit) as stop:
        export.main(["feedback", "99_none", "--out", str(tmp_path / "x"), "--course", str(course)])
    assert stop.value.code == 2
    error = capsys.readouterr().err.strip()
    assert error == "not graded yet: 99_none (graded lessons: L01)"


def test_the_lms_command_writes_the_file_and_says_what_it_left_out(course, tmp_path, capsys):
    (course / "nbgrader_config.py").write_text("", encoding="utf-8")
    assert export.main(["lms", "--out", str(tmp_path / "canvas.csv"), "--course", str(course)]) == 0
    said = capsys.readouterr().out
    assert "3 student(s), 1 lesson(s)" in said and "left empty because written answers" in said
    assert (tmp_path / "canvas.csv").is_file()

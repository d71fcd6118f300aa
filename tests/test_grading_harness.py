"""The grading harness's courses: one ``generate_assignment`` per lesson per test run, copied for
each batch, and every copy a course of its own (its gradebook, its grades)."""

import multiprocessing
import sqlite3
import time
from pathlib import Path

import grading_harness
import pytest
from grading_harness import make_submission, prepare_course, solution_answers, write_submissions
from nbgrader.api import Gradebook

from course_build.instructor.grade_batch import grade_lesson

LESSON = "01_sequence_problem"  # the lesson with the fewest test cells


def _submissions(gradebook: Path) -> list[str]:
    with sqlite3.connect(gradebook) as db:
        return [student for (student,) in db.execute("SELECT student_id FROM submitted_assignment")]


@pytest.mark.slow
def test_two_batches_get_independent_copies_of_one_generated_course(tmp_path, course_templates):
    first = prepare_course(tmp_path / "first", LESSON)
    second = prepare_course(tmp_path / "second", LESSON)
    assert (course_templates / LESSON / "course" / "gradebook.db").is_file()  # generated once, here
    for name in ("gradebook.db", f"release/{LESSON}/{LESSON}.ipynb", f"source/{LESSON}/{LESSON}.ipynb"):
        assert (first / name).read_bytes() == (second / name).read_bytes()  # copies of one generation

    with Gradebook(f"sqlite:///{first / 'gradebook.db'}") as gradebook:
        gradebook.add_student("only_in_first")
    with Gradebook(f"sqlite:///{second / 'gradebook.db'}") as gradebook:
        assert [student.id for student in gradebook.students] == []

    submissions = {"solution": make_submission(LESSON, solution_answers(LESSON))}
    write_submissions(second, LESSON, submissions)
    report = grade_lesson(second, LESSON, submissions, jobs=1)["solution"]
    assert report.auto_max > 0
    assert report.auto_total == report.auto_max
    assert _submissions(second / "gradebook.db") == ["solution"]
    assert _submissions(first / "gradebook.db") == []
    assert _submissions(course_templates / LESSON / "course" / "gradebook.db") == []


def _fake_generation(counter: Path):
    """A stand-in for generate_assignment: counts its runs, takes a moment, writes a course."""

    def generate(workdir: Path, lesson: str) -> Path:
        with counter.open("a") as runs:
            runs.write(f"{lesson}\n")
        time.sleep(0.5)
        course = workdir / "course"
        course.mkdir(parents=True)
        (course / "gradebook.db").write_text(f"the gradebook of {lesson}")
        return course

    return generate


def _copy_in_a_process(templates: Path, counter: Path, workdir: Path) -> None:
    grading_harness._generate_course = _fake_generation(counter)
    grading_harness.share_course_templates(templates)
    grading_harness.prepare_course(workdir, LESSON)


def test_processes_of_one_run_generate_a_lesson_once_and_each_get_a_copy(tmp_path):
    """Workers of one test run ask at once: one generates while the other waits, both get copies."""
    counter = tmp_path / "generations.txt"
    context = multiprocessing.get_context("fork")
    workers = [
        context.Process(target=_copy_in_a_process, args=(tmp_path / "templates", counter, tmp_path / name))
        for name in ("gw0", "gw1")
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    assert counter.read_text() == f"{LESSON}\n"
    for name in ("gw0", "gw1"):
        assert (tmp_path / name / "course" / "gradebook.db").read_text() == f"the gradebook of {LESSON}"


def test_a_template_left_half_made_is_generated_again(tmp_path, monkeypatch):
    counter = tmp_path / "generations.txt"
    monkeypatch.setattr(grading_harness, "_generate_course", _fake_generation(counter))
    monkeypatch.setattr(grading_harness, "_templates", tmp_path / "templates")
    (tmp_path / "templates" / LESSON / "course").mkdir(parents=True)  # a run killed mid-generation
    course = grading_harness.prepare_course(tmp_path / "batch", LESSON)
    assert (course / "gradebook.db").is_file()
    assert counter.read_text() == f"{LESSON}\n"

"""The instructor's term, scripted end to end: zip → grade → written answers graded in the
formgrader in Chromium → feedback and grade sheet → regrade, with every number checked.

Three students hand in lesson 1 through an LMS zip: Ada on time with full answers, Grace two days
late under a 10 %-per-day policy with one wrong Apply answer and a renamed notebook, and Blank with
nothing filled in. The formgrader, started by ``python -m course_build.formgrader`` and reached
only on localhost (every other request is blocked), must show each written answer's model answer
and rubric, names and typeset math; a grader gives Ada's two written answers points and a comment
there. ``python -m course_build.report`` must then put exactly those points in Ada's feedback and
in the sheet, keep Grace's written answers "not graded yet" (never 0) with her late penalty, and a
regrade of the same zip must keep the hand-given points.
"""

from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
import zipfile
from pathlib import Path

import nbformat
import pytest
from conftest import BADGE_STAND_IN, COLAB_BADGE, Watch, free_port, offline_context, screenshot_path
from grading_harness import make_submission, solution_answers
from nbgrader.api import Gradebook

from course_build.paths import AUTOGRADER_DIR, REPO_ROOT

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LESSON = "01_sequence_problem"
POLICY = """
c.LatePolicy.deadlines = {"01_sequence_problem": "2026-10-12T23:59"}
c.LatePolicy.timezone = "UTC"
c.LatePolicy.penalty_per_day = 0.1
c.LatePolicy.max_penalty = 0.5
"""
ADA_RECALL = (
    "Each state $h_t$ is computed from $h_{t-1}$, so the steps form a chain that cannot run in "
    "parallel; self-attention computes every output from the inputs at once."
)
ADA_EXTEND = "With $n \\gg d$ attention costs $n^2 d$; a window of $r$ neighbours costs $r n d$."
COMMENT = "Right about the chain; say why attention has none."
START_TIMEOUT_S = 90


def _notebook(answers: dict[str, str]) -> bytes:
    return nbformat.writes(make_submission(LESSON, answers)).encode()


def _zip(path: Path) -> Path:
    full = solution_answers(LESSON)
    written = {"recall_sequential": ADA_RECALL, "extend_long_inputs": ADA_EXTEND}
    wrong_paths = {"apply_paths": "rnn_path_40 = 40\nattention_path_40 = 1"}
    entries = [  # (name in the zip, zip time stamp, notebook)
        (f"Ada Lovelace_2001_3001_{LESSON}.ipynb", (2026, 10, 12, 20, 0, 0), _notebook({**full, **written})),
        ("grace_LATE_2002_3002_my work.ipynb", (2026, 10, 14, 1, 30, 0), _notebook({**full, **wrong_paths})),
        (f"blank_2003_3003_{LESSON}.ipynb", (2026, 10, 12, 10, 0, 0), _notebook({})),
    ]
    with zipfile.ZipFile(path, "w") as zipped:
        for name, stamp, data in entries:
            zipped.writestr(zipfile.ZipInfo(name, date_time=stamp), data)
    return path


def _run(*args: str) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [sys.executable, "-m", *args], cwd=REPO_ROOT, capture_output=True, text=True, timeout=1800
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    return result


def _rows(path: Path) -> dict[str, dict[str, str]]:
    with path.open(encoding="utf-8") as handle:
        return {row["lms_name"]: row for row in csv.DictReader(handle)}


def _start_formgrader(course: Path, log: Path) -> tuple[subprocess.Popen, str]:
    """Start ``python -m course_build.formgrader`` on a free port; return it and its URL with token."""
    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("JUPYTER")},
        "JUPYTER_RUNTIME_DIR": str(log.parent / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(log.parent / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(log.parent / "workspaces"),
    }
    with log.open("w") as handle:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "course_build.formgrader",
                "--course",
                str(course),
                "--port",
                str(port),
                "--no-browser",
            ],
            cwd=REPO_ROOT,
            env=env,
            stdout=handle,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the formgrader exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        token = re.search(r"token=([0-9a-f]+)", log.read_text())
        if token:
            try:
                with urllib.request.urlopen(
                    f"http://127.0.0.1:{port}/api/status?token={token[1]}", timeout=2
                ):
                    return process, f"http://127.0.0.1:{port}/"
            except OSError:
                pass
        time.sleep(0.5)
    process.terminate()
    pytest.fail(f"the formgrader did not start within {START_TIMEOUT_S} s:\n{log.read_text()[-3000:]}")


def _stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _wait_for_grade(course: Path, student: str, grade_id: str, score: float, comment: str | None) -> None:
    """Wait until the formgrader has saved ``score`` (and ``comment``) in the gradebook."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
            grade = gradebook.find_grade(grade_id, LESSON, LESSON, student)
            saved = gradebook.find_comment(grade_id, LESSON, LESSON, student).manual_comment
            if grade.manual_score == score and (comment is None or saved == comment):
                return
        time.sleep(0.3)
    pytest.fail(f"the formgrader did not save {score} points for {student}'s {grade_id}")


def _give_points(page, grade_id: str, score: float, comment: str | None) -> None:
    page.fill(f"input.score#{grade_id}", str(score))
    page.press(f"input.score#{grade_id}", "Tab")
    if comment is not None:
        page.fill(f"textarea#{grade_id}-comment", comment)
        page.press(f"textarea#{grade_id}-comment", "Tab")


def _text(html: str) -> str:
    """The visible text of an HTML page, whitespace collapsed."""
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).replace("&#39;", "'").replace("&amp;", "&")


def _cell(page, address: str, row_text: str, cell: str) -> str:
    """The text of ``cell`` in the row of nbgrader's table at ``address`` that holds ``row_text``."""
    page.goto(address)
    row = page.locator("#main-table tr", has_text=row_text).first
    row.locator(cell).filter(has_text="/").wait_for()
    return row.locator(cell).inner_text().strip()


def _every_score_view_marks_pending_answers(page, url: str) -> None:
    """Before anything is graded by hand: Grace's written answers are pending and Blank's are a
    real 0, in every view of the formgrader that shows a score (nbgrader shows pending as 0)."""
    lesson_page, grace_page = f"{url}formgrader/gradebook/{LESSON}", f"{url}formgrader/manage_students/grace"
    lessons = f"{url}formgrader/gradebook"
    assert _cell(page, lessons, LESSON, ".score").endswith("so far, some answers pending")
    assert _cell(page, lesson_page, LESSON, ".avg-score").endswith("so far")
    assert _cell(page, lesson_page, LESSON, ".avg-written-score").endswith("pending")
    students = f"{url}formgrader/manage_students"
    assert _cell(page, students, "grace", ".score").endswith("so far, some answers pending")
    assert _cell(page, students, "blank", ".score") == "0 / 10"  # nothing pending: a final score
    for address in (grace_page, f"{grace_page}/{LESSON}"):
        assert _cell(page, address, LESSON, ".score").endswith("so far"), address
        assert _cell(page, address, LESSON, ".written-score").endswith("pending"), address
    submissions = f"{url}formgrader/manage_submissions/{LESSON}"
    assert _cell(page, submissions, "grace", ".score").endswith("so far")
    assert _cell(page, submissions, "blank", ".score") == "0 / 10"


@pytest.fixture(scope="module")
def term(tmp_path_factory):
    """A course with lesson 1 graded from the zip, its first grade sheet, and the zip."""
    base = tmp_path_factory.mktemp("term")
    course = base / "autograder"
    shutil.copytree(AUTOGRADER_DIR / "source" / LESSON, course / "source" / LESSON)
    config = (AUTOGRADER_DIR / "nbgrader_config.py").read_text(encoding="utf-8")
    (course / "nbgrader_config.py").write_text(config + POLICY, encoding="utf-8")
    archive = _zip(base / "submissions.zip")
    graded = _run("course_build.grade", LESSON, "--zip", str(archive), "--course", str(course))
    return course, archive, graded.stdout


def test_grading_the_zip_shows_pending_written_answers_and_lateness(term):
    course, _, output = term
    rows = _rows(course / "grades.csv")
    ada, grace, blank = rows["Ada Lovelace"], rows["grace"], rows["blank"]
    assert (ada["auto_score"], ada["manual_score"], ada["manual_pending"], ada["total"]) == (
        "5",
        "",
        "5",
        "5",
    )
    assert ada["late"] == "on time" and ada["submitted_at"] == "2026-10-12T20:00:00+00:00"
    # Two started days late: 2 x 10 % of 10 points, taken from the 4 points earned so far.
    assert (grace["auto_score"], grace["manual_pending"], grace["lms_late"]) == ("4", "5", "yes")
    assert (grace["late"], grace["late_penalty"], grace["total"]) == ("2 days late", "2", "2")
    assert "submitted as 'my work.ipynb'" in grace["notes"]
    # A blank written answer is a real zero (nbgrader scores an unchanged answer cell 0).
    assert (blank["auto_score"], blank["manual_score"], blank["manual_pending"]) == ("0", "0", "0")
    assert blank["status"] == "complete" and ada["status"].startswith("5 points pending")
    # nbgrader's own feedback command, as an instructor might run it, warns about no setting.
    by_hand = subprocess.run(
        [sys.executable, "-m", "nbgrader", "generate_feedback", LESSON, "--force"],
        cwd=course,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert by_hand.returncode == 0, by_hand.stdout + by_hand.stderr
    warnings = [line for line in (by_hand.stdout + by_hand.stderr).splitlines() if "WARNING" in line]
    assert not [
        w for w in warnings if "Config option" in w or "not absolute" in w or "config" in w.lower()
    ], warnings
    table = output[output.index(f"{LESSON}:") :]
    assert "pending (5)" in table and "5/10 so far" in table and "2 days late, -2" in table
    assert "0/5" not in next(line for line in table.splitlines() if line.startswith("ada-lovelace"))


def test_written_answers_graded_in_the_formgrader_reach_the_feedback_and_the_sheet(term, chromium, tmp_path):
    course, archive, _ = term
    process, url = _start_formgrader(course, tmp_path / "formgrader.log")
    token = re.search(r"token=([0-9a-f]+)", (tmp_path / "formgrader.log").read_text())[1]
    watch = Watch()
    context = offline_context(
        chromium, url, watch, stand_ins={COLAB_BADGE: ("image/svg+xml", BADGE_STAND_IN)}
    )
    page = context.new_page()
    try:
        page.goto(f"{url}formgrader/manage_assignments?token={token}")
        lesson_row = page.locator("table tr", has_text=LESSON).first
        lesson_row.wait_for()
        assert page.locator("#warning-exchange").count() == 0
        assert "2026-10-12 23:59" in lesson_row.locator(".duedate").inner_text()  # the late policy's deadline
        _every_score_view_marks_pending_answers(page, url)

        page.goto(f"{url}formgrader/gradebook/{LESSON}/{LESSON}")
        ada_link = page.locator("a.name-shown", has_text="ada-lovelace")
        ada_link.wait_for(state="visible")  # names are shown from the start
        assert page.locator("a.name-hidden:visible").count() == 0
        assert page.locator("#toggle_names").inner_text() == "Hide All Names"
        ada_row = page.locator("#main-table tr", has=ada_link)
        assert ada_row.locator(".score").inner_text().endswith("so far")  # written answers pending, not 0
        assert ada_row.locator(".written-score").inner_text().endswith("pending")
        ada_link.click()

        guide = page.locator(".grader-guide[data-grade-id='recall_sequential']")
        guide.wait_for()
        guide_text = guide.inner_text()
        assert (
            "Model answer" in guide_text
            and "Rubric" in guide_text
            and "students never see this" in guide_text
        )
        page.wait_for_function("() => MathJax.loaded === true", timeout=30_000)  # formgrade.js: typeset
        assert guide.locator("mjx-container").count() > 0, "the model answer's math is not typeset"
        answer = page.locator(".nbgrader_cell", has=page.locator("#recall_sequential"))
        assert answer.locator("mjx-container").count() > 0, "the student's math is not typeset"
        assert "{cite}" not in page.content()
        assert page.locator(".breadcrumb a.name-shown").is_visible()

        page.wait_for_function("() => formgrader.grades.loaded && formgrader.comments.loaded")
        _give_points(page, "recall_sequential", 1.5, COMMENT)
        _give_points(page, "extend_long_inputs", 3, None)
        student = page.locator(".breadcrumb a.name-shown").inner_text().strip()
        _wait_for_grade(course, student, "recall_sequential", 1.5, COMMENT)
        _wait_for_grade(course, student, "extend_long_inputs", 3, None)
        page.evaluate("() => document.getElementById('recall_sequential').scrollIntoView()")
        page.wait_for_timeout(500)
        page.screenshot(path=str(screenshot_path("formgrader/written_answer_graded")))

        page.goto(f"{url}formgrader/manage_assignments?token={token}")
        page.locator("table tr", has_text=LESSON).first.locator(".release-feedback a").click()
        released = page.locator("#success-modal")
        released.wait_for(timeout=300_000)  # nbgrader generate_feedback runs behind the button
        assert "course_build.export feedback" in released.inner_text()
        assert page.locator("#error-modal").count() == 0
    finally:
        context.close()
        _stop(process)
    assert watch.blocked == [], f"the formgrader asked for outside resources: {watch.blocked}"
    assert watch.failed == [], watch.failed

    sheet = tmp_path / "sheet.csv"
    report = _run("course_build.report", "--course", str(course), "--out", str(sheet))
    rows = _rows(sheet)
    ada, grace = rows["Ada Lovelace"], rows["grace"]
    assert (ada["auto_score"], ada["manual_score"], ada["manual_pending"]) == ("5", "4.5", "0")
    assert (ada["total"], ada["max_score"], ada["status"]) == ("9.5", "10", "complete")
    assert (grace["manual_score"], grace["manual_pending"], grace["total"]) == ("", "5", "2")
    assert "9.5/10" in report.stdout and "2/10 so far" in report.stdout

    feedback = course / "feedback"
    assert sorted(p.relative_to(feedback).as_posix() for p in feedback.rglob("*") if p.is_file()) == sorted(
        f"{s}/{LESSON}/{LESSON}.html" for s in (student, "grace", "blank")
    )
    ada_page = _text((feedback / student / LESSON / f"{LESSON}.html").read_text(encoding="utf-8"))
    assert "Written answers 4.5 / 5" in ada_page and "Total 9.5 / 10" in ada_page
    assert "recall_sequential : Score: 1.5 / 2" in ada_page and COMMENT in ada_page
    assert "Not graded yet" not in ada_page and "Model answer" not in ada_page
    grace_html = (feedback / "grace" / LESSON / f"{LESSON}.html").read_text(encoding="utf-8")
    grace_page = _text(grace_html)
    assert "recall_sequential : Not graded yet (2 points)" in grace_page
    assert "Score: 0 / 2" not in grace_page and "Score: 0 / 3" not in grace_page
    assert (
        "2 days late: -2 points" in grace_page
        and "Total 2 / 10 so far (5 points not graded yet)" in grace_page
    )
    assert "my work.ipynb" not in grace_page, "a grader's note reached the student"
    # The wrong Apply answer's hidden test says what is wrong, never the expected value (39 steps).
    failures = re.findall(r"AssertionError: ([^<\n]*)", grace_html)
    assert failures and not any("39" in message for message in failures), failures
    assert "BEGIN HIDDEN TESTS" not in grace_html

    _run(
        "course_build.grade",
        LESSON,
        "--zip",
        str(archive),
        "--course",
        str(course),
        "--out",
        str(tmp_path / "again.csv"),
    )
    assert _rows(tmp_path / "again.csv") == rows, "a regrade changed the sheet (hand-given points lost?)"

"""The pieces behind the formgrader and the term's commands (fast: no server, no kernel)."""

import subprocess
import sys

import nbformat
import pytest
from nbgrader.exchange.abc import ExchangeError

from course_build.authoring.rubric import RubricError, check_manual, parse_manual
from course_build.formgrader import lab_command
from course_build.instructor.course_dir import CourseDirError, resolve_course
from course_build.nbgrader_plugins import no_exchange
from course_build.nbgrader_plugins.grader_guide import GUIDE_KEY, add_grader_guides, guide_text, source_guides
from course_build.paths import AUTOGRADER_DIR, REPO_ROOT

MANUAL = """*Model answer.* Each $h_t$ needs $h_{t-1}$.

*Rubric.*
- 1 point: the chain of hidden states.
- 0.5 points: attention computes all outputs
  at once.
"""


def test_a_manual_cell_splits_into_model_answer_and_rubric():
    answer = parse_manual(MANUAL)
    assert answer.model_answer.startswith("*Model answer.* Each $h_t$")
    assert [(i.points, i.text) for i in answer.rubric] == [
        (1.0, "the chain of hidden states."),
        (0.5, "attention computes all outputs at once."),
    ]
    assert check_manual(MANUAL, 1.5).points == 1.5


@pytest.mark.parametrize(
    "source, points, says",
    [
        ("*Model answer.* x", 1, "needs a rubric"),
        ("*Model answer.* x\n\n*Rubric.*\n- one point: y", 1, "'- N point"),
        ("*Model answer.* x\n\n*Rubric.*\n", 1, "lists no points"),
        (MANUAL, 2, "gives 1.5 points but the cell is worth 2"),
        ("The answer.", 1, "starts with"),
    ],
)
def test_a_malformed_rubric_is_refused_with_what_to_write(source, points, says):
    with pytest.raises(RubricError, match=says):
        check_manual(source, points)


def test_the_guide_shows_the_model_answer_and_rubric():
    text = guide_text(MANUAL)
    assert (
        "*Rubric.*" in text and "- **1 point**: the chain" in text and "- **0.5 points**: attention" in text
    )
    assert text.startswith("*Model answer.* Each $h_t$")


def test_guides_follow_each_written_answer_of_a_graded_notebook():
    written = nbformat.v4.new_markdown_cell(
        "my answer", metadata={"nbgrader": {"grade": True, "solution": True, "grade_id": "w1", "points": 2}}
    )
    other = nbformat.v4.new_markdown_cell("prose")
    notebook = add_grader_guides(nbformat.v4.new_notebook(cells=[other, written]), {"w1": "guide"})
    assert [c.source for c in notebook.cells] == ["prose", "my answer", "guide"]
    assert notebook.cells[2].metadata[GUIDE_KEY] == {"grade_id": "w1", "points": 2}
    assert "nbgrader" not in notebook.cells[2].metadata


def test_every_written_answer_of_the_course_has_a_guide():
    for lesson_dir in sorted((AUTOGRADER_DIR / "source").iterdir()):
        lesson = lesson_dir.name
        source = nbformat.read(lesson_dir / f"{lesson}.ipynb", as_version=4)
        written = [
            c.metadata["nbgrader"]["grade_id"]
            for c in source.cells
            if c.cell_type == "markdown" and c.metadata.get("nbgrader", {}).get("grade")
        ]
        guides = source_guides(AUTOGRADER_DIR, lesson)
        assert sorted(guides) == sorted(written), lesson
        assert all("*Rubric.*" in guide for guide in guides.values()), (
            f"{lesson}: a written answer has no rubric"
        )


def test_the_course_directory_is_found_from_the_repository_root_or_inside_it(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO_ROOT)
    assert resolve_course(None) == AUTOGRADER_DIR
    monkeypatch.chdir(AUTOGRADER_DIR)
    assert resolve_course(None) == AUTOGRADER_DIR
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CourseDirError, match="run this from the repository root"):
        resolve_course(None)
    with pytest.raises(CourseDirError, match="is not a course directory"):
        resolve_course(tmp_path)


@pytest.mark.parametrize("command", ["course_build.formgrader", "course_build.report"])
def test_the_term_commands_explain_where_to_run_them(command, tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", command], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 2 and "run this from the repository root" in result.stderr, result.stderr


def test_the_formgrader_refuses_a_course_with_nothing_graded(tmp_path):
    course = tmp_path / "autograder"
    (course / "source").mkdir(parents=True)
    (course / "nbgrader_config.py").write_text("")
    result = subprocess.run(
        [sys.executable, "-m", "course_build.formgrader", "--course", str(course)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2 and "nothing is graded" in result.stderr, result.stderr


def test_the_formgrader_starts_jupyterlab_in_the_course_with_the_extension(tmp_path):
    command = lab_command(tmp_path, 8899, False, "127.0.0.1")
    assert f"--ServerApp.root_dir={tmp_path}" in command
    assert (
        "--ServerApp.jpserver_extensions=course_build.nbgrader_plugins.formgrader_extension=True" in command
    )
    assert "--LabApp.default_url=/formgrader" in command and "--ServerApp.port=8899" in command


def test_the_exchange_stand_ins_list_nothing_and_explain_themselves():
    assert no_exchange.NoExchangeList().start() == []
    with pytest.raises(ExchangeError, match="does not use nbgrader's exchange"):
        no_exchange.NoReleaseAssignment().start()


def test_the_feedback_and_formgrader_templates_are_found_where_nbgrader_looks():
    """nbgrader renders no feedback page at all, and says little, when a template is missing."""
    from jinja2 import Environment, FileSystemLoader

    from course_build.nbgrader_plugins.feedback import FEEDBACK_TEMPLATE, TEMPLATE_DIRS
    from course_build.nbgrader_plugins.formgrader_extension import FORMGRADE_TEMPLATE, FORMGRADE_TEMPLATE_FILE

    loader = FileSystemLoader(TEMPLATE_DIRS)
    for name in (f"{FEEDBACK_TEMPLATE}/index.html.j2", f"{FORMGRADE_TEMPLATE}/{FORMGRADE_TEMPLATE_FILE}"):
        _, filename, _ = loader.get_source(Environment(), name)  # raises TemplateNotFound
        assert filename.startswith(TEMPLATE_DIRS[0]), f"{name} is nbgrader's, not the course's"

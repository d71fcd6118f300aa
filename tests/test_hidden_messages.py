"""Failed hidden tests never give away an Apply answer (the rule in book/instructors.md)."""

import nbformat
import pytest

from course_build.authoring.hidden_messages import revealing_messages
from course_build.authoring.source import build_source_notebook
from course_build.paths import lesson_names


def _lesson(test_code: str) -> nbformat.NotebookNode:
    solution = nbformat.v4.new_code_cell(
        "def f(x):\n    return x\n\nrnn_path_40 = 39\ncheaper = 'attention'\nweight = 0.8808",
        metadata={"nbgrader": {"solution": True, "grade": False, "grade_id": "answers"}},
    )
    test = nbformat.v4.new_code_cell(
        f"### BEGIN HIDDEN TESTS\n{test_code}\n### END HIDDEN TESTS",
        metadata={"nbgrader": {"solution": False, "grade": True, "grade_id": "t", "points": 1}},
    )
    return nbformat.v4.new_notebook(cells=[solution, test])


@pytest.mark.parametrize(
    "test_code, says",
    [
        ('assert int(rnn_path_40) == 39, "the RNN takes 39 steps"', "reveals the expected 39"),
        ('assert int(rnn_path_40) == 40 - 1, "40 - 1 steps"', "spells out arithmetic"),
        ('assert cheaper == "attention", "self-attention does fewer"', "reveals the expected attention"),
        (
            "assert np.isclose(weight, np.exp(2) / (np.exp(2) + 1), atol=1e-3), 'about 0.881'",
            "reveals the expected 0.881",
        ),
        ('_e = 39\nassert rnn_path_40 == _e, f"expected {_e}"', "interpolates '_e'"),
        ('assert close(rnn_path_40, 39, what="the path"), "39 steps"', "reveals the expected 39"),
    ],
)
def test_a_message_that_gives_the_answer_away_is_found(test_code, says):
    problems = revealing_messages(_lesson(test_code))
    assert problems and says in problems[0], problems


@pytest.mark.parametrize(
    "test_code",
    [
        'assert int(rnn_path_40) == 39, "count the steps between the tokens, not the tokens"',
        'assert int(rnn_path_40) == 39, f"rnn_path_40 is {rnn_path_40}: count the steps between the tokens"',
        'assert np.isclose(weight, np.exp(2) / (np.exp(2) + 1), atol=1e-3), "scale the scores, then softmax"',
        'assert f(3) == 3, f"f(3) should be {3}"',  # a function's test may show expected outputs
        # what= names the student's value in the strict helper's own message; it is not compared with
        'assert close(cheaper, "attention", what="cheaper"), "cheaper names the layer with fewer operations"',
    ],
)
def test_a_message_that_names_the_idea_passes(test_code):
    assert revealing_messages(_lesson(test_code)) == []


@pytest.mark.parametrize("lesson", lesson_names())
def test_no_lesson_reveals_an_apply_answer_in_a_hidden_test(lesson):
    assert revealing_messages(build_source_notebook(lesson)) == []

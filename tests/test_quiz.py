"""The quick-check quiz: each answer is explained, and bad questions are refused."""

import pytest

from transformer_course.quiz import Question, Quiz


def make_question() -> Question:
    return Question("2 + 2?", ("4", "5"), correct=0, explanations=("Right: 4.", "5 is one too many."))


def test_checking_a_right_answer_says_so_and_explains():
    quiz = Quiz([make_question()])
    item = quiz.questions[0]
    item.choices.value = "4"
    item.check_button.click()
    assert "Correct." in item.feedback.value and "Right: 4." in item.feedback.value
    assert item.answered_correctly


def test_checking_a_wrong_answer_explains_that_option():
    item = Quiz([make_question()]).questions[0]
    item.choices.value = "5"
    item.check_button.click()
    assert "Not quite." in item.feedback.value and "one too many" in item.feedback.value
    assert not item.answered_correctly


def test_checking_without_an_answer_asks_for_one():
    item = Quiz([make_question()]).questions[0]
    item.check_button.click()
    assert "Pick an answer" in item.feedback.value


def test_questions_are_numbered_and_escaped():
    quiz = Quiz([make_question(), Question("a < b?", ("yes", "no"), 1, ("x", "y"))])
    assert quiz.questions[1].prompt.value.startswith("<b>2. a &lt; b?")


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"options": ("only",), "explanations": ("x",)}, "at least two"),
        ({"explanations": ("one",)}, "one explanation per option"),
        ({"correct": 2}, "not an option index"),
    ],
)
def test_malformed_questions_are_refused(kwargs, message):
    fields = {"prompt": "q", "options": ("a", "b"), "correct": 0, "explanations": ("x", "y")} | kwargs
    with pytest.raises(ValueError, match=message):
        Question(**fields)


def test_empty_quiz_is_refused():
    with pytest.raises(ValueError):
        Quiz([])

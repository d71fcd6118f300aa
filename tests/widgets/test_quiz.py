"""The quick-check quizzes: loaded from the package by lesson, shuffled the same way every time,
every option explained, and no answer in a student notebook."""

from collections import Counter

import nbformat
import pytest
import yaml

from course_build.paths import lesson_names, student_notebook
from transformer_course.widgets import quiz as quiz_module
from transformer_course.widgets.quiz import (
    RIGHT_BACKGROUND,
    WRONG_BACKGROUND,
    Option,
    Question,
    Quiz,
    QuizDataError,
    answer_positions,
    lesson_quiz,
    load_questions,
)


def make_question(key: str = "sum") -> Question:
    return Question(
        key,
        "2 + 2?",
        (
            Option("4", "Right: 4.", correct=True),
            Option("5", "5 is one too many."),
            Option("3", "One short."),
        ),
    )


def two_options(prompt: str = "p", text: str = "a", why: str = "x") -> dict:
    """A quiz file's data with one question whose first option has ``text`` and ``why``."""
    options = [{"text": text, "why": why, "correct": True}, {"text": "b", "why": "y"}]
    return {"q": {"prompt": prompt, "options": options}}


def item_with_choice(text: str):
    item = Quiz([make_question()]).questions[0]
    item.choices.value = text
    item.check_button.click()
    return item


def test_checking_a_right_answer_says_so_and_explains():
    item = item_with_choice("4")
    assert "Correct." in item.feedback.value and "Right: 4." in item.feedback.value
    assert item.answered_correctly


def test_checking_a_wrong_answer_explains_that_option():
    item = item_with_choice("5")
    assert "Not quite." in item.feedback.value and "one too many" in item.feedback.value
    assert not item.answered_correctly


def test_explanations_typeset_their_math_instead_of_showing_tex():
    question = Question(
        "rotary",
        "What does the score depend on?",
        (
            Option("The offset n - m", r"$q^\top R_{n-m}\, k$: only the offset.", correct=True),
            Option("m and n", r"Only $R_{n-m}$ is left."),
        ),
    )
    item = Quiz([question]).questions[0]
    item.choices.value = "The offset n - m"
    item.check_button.click()
    assert type(item.feedback).__name__ == "HTMLMath" and type(item.prompt).__name__ == "HTMLMath"
    assert r"$q^\top R_{n-m}\, k$" in item.feedback.value


def test_no_quiz_of_the_course_shows_tex_raw():
    for lesson in lesson_names():
        for question in load_questions(lesson):
            for option in question.options:
                assert "_{" not in quiz_module.MATH.sub("", option.why), (lesson, option.why)


def test_checking_without_an_answer_asks_for_one():
    item = Quiz([make_question()]).questions[0]
    item.check_button.click()
    assert "Pick an answer" in item.feedback.value and not item.answered_correctly


def test_questions_are_numbered_and_escaped():
    second = Question("lt", "a < b?", (Option("yes", "x", correct=True), Option("no", "y")))
    quiz = Quiz([make_question(), second])
    assert quiz.questions[1].prompt.value.startswith("<b>2. a &lt; b?")


def relative_luminance(hex_colour: str) -> float:
    channels = [int(hex_colour.lstrip("#")[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


@pytest.mark.parametrize("background", [RIGHT_BACKGROUND, WRONG_BACKGROUND])
def test_verdict_badges_have_readable_contrast_on_any_theme(background):
    """The verdict is white on its own background, so the page's theme does not matter."""
    ratio = (1.0 + 0.05) / (relative_luminance(background) + 0.05)
    assert ratio >= 4.5, f"white on {background}: contrast {ratio:.2f} < 4.5 (WCAG AA)"
    item = item_with_choice("4")
    assert f"background:{RIGHT_BACKGROUND}" in item.feedback.value and "color:#ffffff" in item.feedback.value


def test_shown_order_ignores_the_order_options_are_written_in():
    question = make_question()
    reversed_options = Question(question.key, question.prompt, tuple(reversed(question.options)))
    for position in range(3):
        shown = question.shown_options(position)
        assert shown == reversed_options.shown_options(position)
        assert shown[position].correct and sorted(o.text for o in shown) == ["3", "4", "5"]


def test_answer_positions_are_fixed_by_the_seed_and_never_mostly_the_same():
    questions = [make_question(f"q{i}") for i in range(7)]
    positions = answer_positions(questions, "some_lesson")
    assert positions == answer_positions(questions, "some_lesson"), "the same on every run"
    assert max(Counter(positions).values()) <= 4, f"more than half in one place: {positions}"
    assert any(answer_positions(questions, f"lesson{i}") != positions for i in range(5)), "seed unused"


@pytest.mark.parametrize(
    "data, message",
    [
        ({"q": {"prompt": "p", "options": [{"text": "a", "why": "x", "correct": True}]}}, "at least two"),
        (
            {"q": {"prompt": "p", "options": [{"text": "a", "why": "x"}, {"text": "b", "why": "y"}]}},
            "exactly one",
        ),
        (
            {"q": {"prompt": "p", "options": [{"text": "a", "why": "x", "correct": True}, {"text": "b"}]}},
            "needs a `text` and a `why`",
        ),
        (
            {
                "q": {
                    "prompt": "p",
                    "options": [{"text": "a", "why": "x", "correct": True}, {"text": "a", "why": "y"}],
                }
            },
            "same text",
        ),
        ({"q": {"prompt": "p", "options": [{"text": "a", "why": "x", "right": True}]}}, "fields other than"),
        ({"q": {"prompt": "p"}}, "list of `options`"),
        ({"q": {"prompt": "p", "options": [], "answer": 0}}, "unknown fields"),
        ([], "must map question keys"),
        (two_options(why="q R_{n-m} k"), r"the `why` of option 'a' has TeX markup '_\{' outside"),
        (two_options(text="$R_m$"), "shown raw by radio buttons"),
        (two_options(prompt="costs $5"), "opens no math"),
    ],
)
def test_malformed_quiz_files_are_refused_with_a_reason(tmp_path, monkeypatch, data, message):
    folder = tmp_path / "transformer_course" / "quizzes"
    folder.mkdir(parents=True)
    (folder / "99_test.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    monkeypatch.setattr(quiz_module.resources, "files", lambda package: tmp_path / package)
    with pytest.raises(QuizDataError, match=message):
        load_questions("99_test")


def test_a_lesson_without_a_quiz_file_gets_a_clear_error():
    with pytest.raises(FileNotFoundError, match="no quiz for lesson '99_nothing'; quizzes exist for 01_"):
        load_questions("99_nothing")


def test_every_lesson_has_a_quiz_file_and_every_quiz_file_a_lesson():
    folder = quiz_module.resources.files("transformer_course") / quiz_module.QUIZ_FOLDER
    quizzes = sorted(p.name.removesuffix(".yaml") for p in folder.iterdir() if p.name.endswith(".yaml"))
    assert quizzes == lesson_names()
    for lesson in quizzes:
        assert len(lesson_quiz(lesson).questions) >= 3, f"{lesson}: a quick check has at least 3 questions"


def test_across_the_course_the_answer_is_in_every_position_and_in_none_more_than_half():
    shown = [
        position
        for lesson in lesson_names()
        for position in answer_positions(load_questions(lesson), seed=lesson)
    ]
    counts = Counter(shown)
    widest = max(len(q.options) for lesson in lesson_names() for q in load_questions(lesson))
    assert sorted(counts) == list(range(widest)), f"positions used: {dict(counts)}"
    assert max(counts.values()) <= len(shown) / 2, f"positions used: {dict(counts)}"


@pytest.mark.parametrize("lesson", lesson_names())
def test_no_student_notebook_shows_a_quiz_answer_or_explanation(lesson):
    """The quiz cell only names the lesson: no option marked correct, no explanation."""
    sources = [cell.source for cell in nbformat.read(student_notebook(lesson), as_version=4).cells]
    text = "\n".join(sources)
    assert f'lesson_quiz("{lesson}")' in text, f"{lesson}: the notebook does not show its quiz"
    for name in ("Question(", "explanations=", "correct="):
        assert name not in text, f"{lesson}: quiz data ({name}) in the notebook"
    for question in load_questions(lesson):
        for option in question.options:
            assert option.why not in text, f"{lesson}: the explanation of {question.key!r} is in the notebook"


def _correct_is_strictly(question: Question, compare) -> bool:
    """Whether the correct option's text is strictly longer (or shorter) than every other's."""
    right = next(len(o.text) for o in question.options if o.correct)
    return all(compare(right, len(o.text)) for o in question.options if not o.correct)


def test_the_correct_option_is_not_given_away_by_its_length():
    """Rule: across the course, the correct option is the strictly longest (and the strictly
    shortest) in no more questions than chance would make it, where chance gives a question of
    k options 1/k. A test-wise student who picks the longest option must do no better than one who
    guesses."""
    questions = [q for lesson in lesson_names() for q in load_questions(lesson)]
    chance = sum(1 / len(q.options) for q in questions)
    longest = [q.key for q in questions if _correct_is_strictly(q, int.__gt__)]
    shortest = [q.key for q in questions if _correct_is_strictly(q, int.__lt__)]
    assert len(longest) <= chance, f"the correct option is the longest in {len(longest)}: {longest}"
    assert len(shortest) <= chance, f"the correct option is the shortest in {len(shortest)}: {shortest}"


@pytest.mark.parametrize("lesson", lesson_names())
def test_each_quiz_spreads_its_answers_over_the_positions(lesson):
    """Shown in the notebook, no position holds more than half of a quiz's answers, and a quiz of
    three or more questions uses at least two positions."""
    questions = load_questions(lesson)
    positions = answer_positions(questions, seed=lesson)
    assert max(Counter(positions).values()) <= max(1, -(-len(questions) // 2)), positions
    assert len(set(positions)) >= 2, f"{lesson}: every answer in position {positions[0]}"

"""Whether a lesson's saved quiz still shows what its quiz file says.

The quiz's questions live in ``transformer_course/quizzes/NN_slug.yaml``, not in the lesson, so
editing them changes no cell: the generated notebooks keep showing the old prompts and options
in their saved widget state (and on the book's page) until the lesson is regenerated. Lesson 2
once shipped stale options that way for a whole session. ``python -m course_build --check``
therefore compares the saved quiz with the quiz the file makes today.
"""

from __future__ import annotations

from collections import Counter

from nbformat import NotebookNode

from course_build.authoring.saved_widgets import widget_state
from transformer_course.widgets.quiz import lesson_quiz


def _saved_quiz(notebook: NotebookNode) -> Counter:
    """Every question-like group in the saved widget state: radio-button labels, counted."""
    models = widget_state(notebook)
    return Counter(
        tuple(model["state"].get("_options_labels", ()))
        for model in models.values()
        if isinstance(model, dict) and model.get("model_name") == "RadioButtonsModel"
    )


def _saved_texts(notebook: NotebookNode) -> set[str]:
    models = widget_state(notebook)
    return {
        model["state"].get("value")
        for model in models.values()
        if isinstance(model, dict) and model.get("model_name") == "HTMLMathModel"
    }


def stale_quiz(lesson: str, notebook: NotebookNode) -> list[str]:
    """Why ``notebook``'s saved quiz differs from ``lesson``'s quiz file; empty: it matches."""
    quiz = lesson_quiz(lesson)
    wanted = Counter(tuple(question.choices.options) for question in quiz.questions)
    saved = _saved_quiz(notebook)
    problems = []
    missing_options = wanted - saved
    if missing_options:
        first = next(iter(missing_options))
        problems.append(f"its saved quiz lacks the options {list(first)}")
    texts = _saved_texts(notebook)
    missing_prompts = [q.prompt.value for q in quiz.questions if q.prompt.value not in texts]
    if missing_prompts:
        problems.append(f"its saved quiz lacks the prompt {missing_prompts[0]!r}")
    return problems

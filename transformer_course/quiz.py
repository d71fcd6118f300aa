"""The quick-check quiz at the end of every lesson.

Each question is multiple choice; checking an answer explains why the chosen option is right or
wrong, so a wrong click teaches as much as a right one. Only the ipywidgets API common to
versions 7 (Colab) and 8 (JupyterLab 4) is used.
"""

from dataclasses import dataclass
from html import escape

import ipywidgets as widgets

from transformer_course.display import ShowsView


@dataclass(frozen=True)
class Question:
    """One multiple-choice question.

    ``explanations[i]`` says why ``options[i]`` is right or wrong; ``correct`` indexes ``options``.
    """

    prompt: str
    options: tuple[str, ...]
    correct: int
    explanations: tuple[str, ...]

    def __post_init__(self) -> None:
        if len(self.options) < 2:
            raise ValueError(f"a question needs at least two options, got {len(self.options)}")
        if len(self.explanations) != len(self.options):
            raise ValueError(
                f"give one explanation per option: {len(self.options)} options, "
                f"{len(self.explanations)} explanations"
            )
        if not 0 <= self.correct < len(self.options):
            raise ValueError(f"correct={self.correct} is not an option index")


class QuestionWidget:
    """Radio buttons, a Check button and a feedback line for one question."""

    def __init__(self, number: int, question: Question) -> None:
        self.question = question
        self.prompt = widgets.HTML(value=f"<b>{number}. {escape(question.prompt)}</b>")
        self.choices = widgets.RadioButtons(
            options=list(question.options),
            value=None,
            layout=widgets.Layout(width="auto"),
        )
        self.check_button = widgets.Button(description="Check", button_style="info")
        self.feedback = widgets.HTML(value="")
        self.check_button.on_click(self._on_check)
        self.view = widgets.VBox([self.prompt, self.choices, self.check_button, self.feedback])

    @property
    def answered_correctly(self) -> bool:
        return self.choices.index == self.question.correct

    def _on_check(self, _button: widgets.Button | None = None) -> None:
        index = self.choices.index
        if index is None:
            self.feedback.value = "<i>Pick an answer first.</i>"
            return
        verdict = "Correct." if index == self.question.correct else "Not quite."
        colour = "#1a7f37" if index == self.question.correct else "#cf222e"
        explanation = escape(self.question.explanations[index])
        self.feedback.value = f'<span style="color:{colour}"><b>{verdict}</b></span> {explanation}'


class Quiz(ShowsView):
    """A column of questions; display ``quiz.view`` in a notebook."""

    def __init__(self, questions: list[Question]) -> None:
        if not questions:
            raise ValueError("a quiz needs at least one question")
        self.questions = [QuestionWidget(i + 1, q) for i, q in enumerate(questions)]
        self.view = widgets.VBox([q.view for q in self.questions])

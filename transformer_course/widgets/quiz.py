"""The quick-check quiz at the end of every lesson, loaded from the package by lesson name.

The questions of lesson ``NN_slug`` live in ``transformer_course/quizzes/NN_slug.yaml``, not in
the notebook, so the answers are not one click away from the student (the lesson's cell only
says ``lesson_quiz("NN_slug")``). Each option carries its own explanation, shown when the student
checks it, so a wrong click teaches as much as a right one.

Options are shown in a shuffled order that is the same on every run (:func:`answer_positions`), so
the correct answer's position gives nothing away and saved notebooks do not change between
builds. Only the ipywidgets API common to versions 7 (Colab) and 8 (JupyterLab 4) is used.

Prompts and explanations may hold TeX between dollar signs (``$R_{n-m}$``), typeset by
``HTMLMath``. Option texts are radio-button labels, which show plain text only, so they hold none;
TeX markup outside dollar signs would show raw, and the loader refuses it.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import re
from collections import Counter
from dataclasses import dataclass
from html import escape
from importlib import resources

import ipywidgets as widgets
import yaml

from transformer_course.widgets.base import ShowsView

QUIZ_FOLDER = "quizzes"  # inside the transformer_course package
# The verdict is a badge with its own background, so it reads the same on light and dark themes:
# white on these greens and reds has a contrast ratio above 4.5 (WCAG AA).
VERDICT_STYLE = "color:#ffffff;background:{};padding:0 0.4em;border-radius:0.25em;font-weight:bold"
RIGHT_BACKGROUND = "#1a7f37"
WRONG_BACKGROUND = "#cf222e"
TEX_MARKUP = re.compile(r"[_^]\{|\\[A-Za-z,;!]")  # R_{n-m}, x^{2}, \top, \,
MATH = re.compile(r"\$[^$]+\$")


def raw_tex(text: str, math_allowed: bool) -> str | None:
    """Why ``text`` would show TeX markup or stray dollar signs raw (``None``: it reads as meant)."""
    outside = MATH.sub("", text) if math_allowed else text
    if "$" in outside:
        return "has a `$` that opens no math" if math_allowed else "has `$` math, shown raw by radio buttons"
    found = TEX_MARKUP.search(outside)
    if found:
        return f"has TeX markup {found.group()!r} outside `$...$`, which shows raw"
    return None


class QuizDataError(ValueError):
    """A quiz file breaks the format described in ``transformer_course/quizzes/README.md``."""


@dataclass(frozen=True)
class Option:
    """One answer to a question: its text, whether it is the right one, and why."""

    text: str
    why: str
    correct: bool = False


@dataclass(frozen=True)
class Question:
    """One multiple-choice question with exactly one correct option.

    ``key`` names the question in its quiz file (unique there); with the options' text it also
    fixes the order of the wrong options.
    """

    key: str
    prompt: str
    options: tuple[Option, ...]

    def __post_init__(self) -> None:
        where = f"question {self.key!r}"
        if not self.prompt.strip():
            raise QuizDataError(f"{where} has an empty prompt")
        if len(self.options) < 2:
            raise QuizDataError(f"{where} needs at least two options, got {len(self.options)}")
        if sum(option.correct for option in self.options) != 1:
            raise QuizDataError(f"{where} must mark exactly one option `correct: true`")
        texts = [option.text for option in self.options]
        if len(set(texts)) != len(texts):
            raise QuizDataError(f"{where} has two options with the same text")
        for option in self.options:
            if not option.text.strip() or not option.why.strip():
                raise QuizDataError(f"{where}: every option needs a `text` and a `why`")
        for part, text, math_allowed in (
            ("the prompt", self.prompt, True),
            *((f"option {o.text!r}", o.text, False) for o in self.options),
            *((f"the `why` of option {o.text!r}", o.why, True) for o in self.options),
        ):
            problem = raw_tex(text, math_allowed)
            if problem:
                raise QuizDataError(f"{where}: {part} {problem}")

    def shown_options(self, answer_position: int) -> tuple[Option, ...]:
        """The options as students see them: the correct one at ``answer_position``, the others
        in an order fixed by the question's key and their text."""
        if not 0 <= answer_position < len(self.options):
            raise ValueError(f"answer_position {answer_position} is not a position of {self.key!r}")
        wrong = sorted((o for o in self.options if not o.correct), key=lambda o: _digest(self.key, o.text))
        right = next(o for o in self.options if o.correct)
        return (*wrong[:answer_position], right, *wrong[answer_position:])


def _digest(*parts: str) -> int:
    """A number fixed by ``parts``, the same on every machine and Python version."""
    return int(hashlib.sha256("\n".join(parts).encode()).hexdigest(), 16)


def answer_positions(questions: list[Question], seed: str) -> list[int]:
    """Where each question shows its correct option: drawn at random, fixed by ``seed`` (the
    lesson's name), and drawn again while one position would hold more than half the questions,
    so a quiz never has most of its answers in the same place."""
    limit = max(1, math.ceil(len(questions) / 2))
    for attempt in itertools.count():
        positions = [_digest(seed, str(attempt), q.key) % len(q.options) for q in questions]
        if max(Counter(positions).values()) <= limit:
            return positions
    raise AssertionError("unreachable")  # pragma: no cover (itertools.count never ends)


def _question(key: object, entry: object) -> Question:
    if not isinstance(entry, dict) or not isinstance(entry.get("options"), list):
        raise QuizDataError(f"question {key!r} needs a `prompt` and a list of `options`")
    unknown = set(entry) - {"prompt", "options"}
    if unknown:
        raise QuizDataError(f"question {key!r} has unknown fields {sorted(unknown)}")
    options = []
    for item in entry["options"]:
        if not isinstance(item, dict) or set(item) - {"text", "why", "correct"}:
            raise QuizDataError(f"question {key!r}: an option has fields other than text, why, correct")
        options.append(
            Option(
                text=str(item.get("text", "")),
                why=str(item.get("why", "")),
                correct=item.get("correct") is True,
            )
        )
    return Question(key=str(key), prompt=str(entry.get("prompt", "")), options=tuple(options))


def load_questions(lesson: str) -> list[Question]:
    """The questions of ``lesson`` (e.g. ``"03_attention"``) in the order of its quiz file."""
    folder = resources.files("transformer_course") / QUIZ_FOLDER
    path = folder / f"{lesson}.yaml"
    if not path.is_file():
        known = sorted(p.name.removesuffix(".yaml") for p in folder.iterdir() if p.name.endswith(".yaml"))
        raise FileNotFoundError(f"no quiz for lesson {lesson!r}; quizzes exist for {', '.join(known)}")
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not data:
        raise QuizDataError(f"{lesson}.yaml must map question keys to questions")
    return [_question(key, entry) for key, entry in data.items()]


def _verdict(text: str, background: str) -> str:
    return f'<span style="{VERDICT_STYLE.format(background)}">{text}</span>'


class QuestionWidget(ShowsView):
    """Radio buttons, a Check button and a feedback line for one question."""

    def __init__(self, number: int, question: Question, answer_position: int = 0) -> None:
        self.question = question
        self.options = question.shown_options(answer_position)
        self.prompt = widgets.HTMLMath(value=f"<b>{number}. {escape(question.prompt)}</b>")
        self.choices = widgets.RadioButtons(
            options=[option.text for option in self.options],
            value=None,
            layout=widgets.Layout(width="auto"),
        )
        self.check_button = widgets.Button(description="Check", button_style="info")
        self.feedback = widgets.HTMLMath(value="")
        self.check_button.on_click(self._on_check)
        self.view = widgets.VBox([self.prompt, self.choices, self.check_button, self.feedback])

    @property
    def answered_correctly(self) -> bool:
        index = self.choices.index
        return index is not None and self.options[index].correct

    def _on_check(self, _button: widgets.Button | None = None) -> None:
        index = self.choices.index
        if index is None:
            self.feedback.value = "<i>Pick an answer first.</i>"
            return
        option = self.options[index]
        verdict = (
            _verdict("Correct.", RIGHT_BACKGROUND)
            if option.correct
            else _verdict("Not quite.", WRONG_BACKGROUND)
        )
        self.feedback.value = f"{verdict} {escape(option.why)}"


class Quiz(ShowsView):
    """A column of numbered questions; ``seed`` (the lesson's name) fixes where answers are shown."""

    def __init__(self, questions: list[Question], seed: str = "") -> None:
        if not questions:
            raise QuizDataError("a quiz needs at least one question")
        positions = answer_positions(questions, seed)
        self.questions = [
            QuestionWidget(i + 1, q, position)
            for i, (q, position) in enumerate(zip(questions, positions, strict=True))
        ]
        self.view = widgets.VBox([q.view for q in self.questions])


def lesson_quiz(lesson: str) -> Quiz:
    """The quick-check quiz of ``lesson``, the lesson notebook's last cell."""
    return Quiz(load_questions(lesson), seed=lesson)

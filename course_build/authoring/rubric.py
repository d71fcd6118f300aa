"""The model answer and rubric of a written (manual) answer, as lesson sources write them.

A ``manual`` cell of a lesson source holds, for the grader only (students get "YOUR ANSWER HERE"):

    *Model answer.* What a full-marks answer says.

    *Rubric.*
    - 1 point: the first thing an answer must get right.
    - 1 point: the second.

Each rubric line starts with its points; together they make the cell's points. ``parse_manual``
splits a cell into the two parts and checks that; the formgrader shows both to the grader next
to each student's answer (``course_build.formgrader``).
"""

import re
from dataclasses import dataclass

MODEL_ANSWER = "*Model answer.*"
RUBRIC = "*Rubric.*"
_ITEM = re.compile(r"^- (?P<points>\d+(?:\.\d+)?) points?: (?P<text>\S.*)$")


class RubricError(ValueError):
    """A manual cell's model answer or rubric is not written as the lesson format asks."""


@dataclass(frozen=True)
class RubricItem:
    points: float
    text: str


@dataclass(frozen=True)
class ManualAnswer:
    model_answer: str  # Markdown, starting with *Model answer.*
    rubric: tuple[RubricItem, ...]

    @property
    def points(self) -> float:
        return sum(item.points for item in self.rubric)


def parse_manual(source: str) -> ManualAnswer:
    """Split a manual cell's source into its model answer and rubric (RubricError if malformed)."""
    if not source.startswith(MODEL_ANSWER):
        raise RubricError(f"a manual cell starts with {MODEL_ANSWER!r}")
    if RUBRIC not in source:
        raise RubricError(f"a manual cell needs a rubric after the model answer, starting with {RUBRIC!r}")
    answer, rubric = source.split(RUBRIC, 1)
    items: list[RubricItem] = []
    for line in rubric.strip().splitlines():
        match = _ITEM.match(line)
        if match:
            items.append(RubricItem(float(match["points"]), match["text"]))
        elif line.startswith("  ") and items and line.strip():
            last = items.pop()
            items.append(RubricItem(last.points, f"{last.text} {line.strip()}"))
        elif line.strip():
            raise RubricError(f"a rubric line reads '- N point(s): what earns them', not {line!r}")
    if not items:
        raise RubricError("the rubric lists no points: write lines like '- 1 point: names the chain'")
    return ManualAnswer(model_answer=answer.strip(), rubric=tuple(items))


def check_manual(source: str, points: float) -> ManualAnswer:
    """``parse_manual``, and the rubric's points must add up to the cell's ``points``."""
    answer = parse_manual(source)
    if abs(answer.points - points) > 1e-9:
        raise RubricError(f"the rubric gives {answer.points:g} points but the cell is worth {points:g}")
    return answer

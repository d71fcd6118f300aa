"""Every graded exercise says what it is worth, in its name: **Apply 2: softmax (3 points).**

Students budget their time by points, so each exercise shows them, written the same way in every
lesson. The number comes from the nbgrader points of the exercise's graded cells, so the prose
cannot disagree with the grade. An exercise runs from the markdown line that names it to the next
such line or the next heading: a line that opens with a bold name (``**Recall 1.**``,
``**Apply 2: softmax.**``, ``**Extend.**``), or a heading whose section holds graded cells of its
own (``### Splitting and combining heads``, where a lesson builds a graded function in the text).
A name that already states its points is checked against them; one that does not gets them.
"""

import re

from nbformat import NotebookNode

EXERCISE_NAME = re.compile(
    r"^\*\*(?P<label>(?:Recall|Apply|Extend)\b[^*]*?)(?: \((?P<points>\d+(?:\.\d+)?) points?\))?\.\*\*"
)


HEADING = re.compile(r"^(?P<label>#+ .*?)(?: \((?P<points>\d+(?:\.\d+)?) points?\))?$")


class ExercisePointsError(ValueError):
    """An exercise's bold name states points that its graded cells do not add up to."""


def points_text(points: float) -> str:
    """``1 point``, ``2 points``, ``0.5 points``."""
    number = f"{points:g}"
    return f"{number} point" if number == "1" else f"{number} points"


def _cell_points(cell: NotebookNode) -> float:
    nbgrader = cell.metadata.get("nbgrader") or {}
    return float(nbgrader.get("points", 0)) if nbgrader.get("grade") else 0.0


def label_exercise_points(cells: list[NotebookNode], lesson: str) -> None:
    """Write each exercise's points into its name (in place); refuse names that state others."""
    exercises: list[tuple[NotebookNode, int, re.Match[str], list[float]]] = []
    current: list[float] = []
    for cell in cells:
        if cell.cell_type == "markdown":
            in_fence = False
            for number, line in enumerate(cell.source.split("\n")):
                if line.startswith(("```", "~~~")):
                    in_fence = not in_fence
                found = None if in_fence else EXERCISE_NAME.match(line) or HEADING.match(line)
                if found:
                    current = []
                    exercises.append((cell, number, found, current))
        current.append(_cell_points(cell))
    for cell, number, found, points in exercises:
        total = sum(points)
        if total == 0:
            continue
        label, stated = found.group("label"), found.group("points")
        if stated is not None:
            if float(stated) != total:
                raise ExercisePointsError(
                    f"{lesson}: {label!r} says {points_text(float(stated))} "
                    f"but its graded cells give {points_text(total)}"
                )
            continue
        lines = cell.source.split("\n")
        if found.re is EXERCISE_NAME:
            lines[number] = f"**{label} ({points_text(total)}).**" + lines[number][found.end() :]
        else:
            lines[number] = f"{label} ({points_text(total)})"
        cell.source = "\n".join(lines)

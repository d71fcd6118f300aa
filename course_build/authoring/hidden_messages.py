"""The rule for failed hidden tests' messages: an Apply answer's expected value is never revealed.

Feedback shows a failed test's message (``course_build.nbgrader_plugins.feedback``). An Apply
exercise's answer is one fixed value (``rnn_path_40 = 39``), so a hidden test whose message printed it, or the
arithmetic that gives it, would hand the answer to anyone who reads a classmate's feedback before
handing in. So a hidden assertion about an Apply value says what the quantity is and the idea
that gives it, and may show the student's own value, nothing else (book/instructors.md, *What
students see*). Tests of functions are not concerned: their expected outputs on the tests' own
random inputs give nothing away.

``revealing_messages`` checks a lesson's nbgrader source notebook: for each hidden ``assert`` on an
Apply value (a name a solution cell assigns, not a function it defines), the value it compares
with (the other side of a comparison or the other arguments of ``np.isclose`` and the like,
evaluated with ``np`` and ``math``) must not appear in the message, nor arithmetic on numbers,
and the message may interpolate only the student's values.
"""

import ast
import math
import re
from typing import Any

import numpy as np
from nbformat import NotebookNode

from course_build.cell_roles import grade_id, is_code_answer, is_test_cell

HIDDEN = re.compile(r"### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS", re.S)
# Two numbers joined by an operator: "40 - 1", "512 × 64", "2·1" (arithmetic that gives a value).
ARITHMETIC = re.compile(r"\d\s*[-+×*/·=]\s*-?\d")
# Keyword arguments that are not compared with: tolerances, and the name a strict comparison of
# transformer_course.checks gives the value in its own message (what="dot_answer").
NOT_COMPARED = {"atol", "rtol", "tol", "rel_tol", "abs_tol", "what"}


def apply_values(cells: list[NotebookNode]) -> set[str]:
    """Names the lesson's code solution cells assign at their top level (its Apply answers)."""
    names: set[str] = set()
    for cell in cells:
        if not is_code_answer(cell):
            continue
        for statement in ast.parse(cell.source).body:
            targets = statement.targets if isinstance(statement, ast.Assign) else []
            for target in targets:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return names


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _compared_with(test: ast.expr, answers: set[str]) -> list[ast.expr]:
    """The expressions an assertion compares a student's value with: the other operands of a
    comparison, the other arguments of a call such as ``close`` (tolerances and ``what`` left out)."""
    found = []
    for node in ast.walk(test):
        if isinstance(node, ast.Compare) and _names(node) & answers:
            found += [e for e in (node.left, *node.comparators) if not _names(e) & answers]
        elif isinstance(node, ast.Call) and any(_names(a) & answers for a in node.args):
            found += [a for a in node.args if not _names(a) & answers]
            found += [
                k.value for k in node.keywords if k.arg not in NOT_COMPARED and not _names(k.value) & answers
            ]
    return found


def _expected_values(test: ast.expr, answers: set[str]) -> list[Any]:
    """The values an Apply assertion expects (those of its compared expressions that are constant)."""
    values = []
    for node in _compared_with(test, answers):
        if _names(node) - {"np", "math"}:
            continue
        try:
            value = eval(compile(ast.Expression(node), "<test>", "eval"), {"np": np, "math": math})  # noqa: S307
        except Exception:  # noqa: BLE001 - not a value after all
            continue
        if isinstance(value, bool):
            continue
        if isinstance(value, int | float | str | np.number):
            values.append(value.item() if isinstance(value, np.number) else value)
    return values


def _spellings(value: Any) -> list[str]:
    """How a value may appear in a message: 511, 511.0, 26,214,400, 0.881 ..."""
    if isinstance(value, str):
        return [value] if len(value) > 1 else []
    if float(value).is_integer():
        number = int(value)
        return [] if abs(number) <= 1 else sorted({str(number), f"{number:,}"})
    return [f"{value:.{digits}f}" for digits in (2, 3, 4)]


def _message_parts(message: ast.expr) -> tuple[str, list[ast.expr]]:
    """A message's literal text and the expressions it interpolates."""
    if isinstance(message, ast.Constant) and isinstance(message.value, str):
        return message.value, []
    if isinstance(message, ast.JoinedStr):
        text = "".join(v.value for v in message.values if isinstance(v, ast.Constant))
        return text, [v.value for v in message.values if isinstance(v, ast.FormattedValue)]
    return "", [message]


def revealing_messages(notebook: NotebookNode) -> list[str]:
    """Hidden assertions on Apply values whose message gives the expected value away."""
    answers = apply_values(notebook.cells)
    problems = []
    for cell in notebook.cells:
        if not is_test_cell(cell):
            continue
        test_id = grade_id(cell)
        for hidden in HIDDEN.findall(cell.source):
            for node in ast.walk(ast.parse(hidden)):
                if not isinstance(node, ast.Assert) or node.msg is None or not _names(node.test) & answers:
                    continue
                text, interpolated = _message_parts(node.msg)
                for value in _expected_values(node.test, answers):
                    for spelling in _spellings(value):
                        if re.search(rf"(?<![\w.]){re.escape(spelling)}(?![\w]|\.\d)", text):
                            problems.append(
                                f"{test_id}: the message {text!r} reveals the expected {spelling}"
                            )
                if ARITHMETIC.search(text):
                    problems.append(
                        f"{test_id}: the message {text!r} spells out arithmetic that gives the answer"
                    )
                for expression in interpolated:
                    if _names(expression) - answers - {"type", "np", "len", "int", "float", "str"}:
                        problems.append(
                            f"{test_id}: the message interpolates {ast.unparse(expression)!r}, which is not "
                            "the student's value"
                        )
    return problems

"""Lessons 8 and 9's export step: the student's solution code, copied into ``my_transformer.py``.

Lesson 9's last run trains the classes and functions the student wrote, so they must leave the
notebook. A notebook does not know its own file name in every front end (JupyterLab, Colab), but
its kernel keeps every executed cell in IPython's input history. :func:`export_solutions` takes,
for each requested name, the most recent executed cell that defines it at top level, and copies
that cell's imports and definitions verbatim (other statements, such as a quick ``print`` test,
are left out so that importing the module runs no notebook code). The student's code is never
rewritten: an exercise still holding its placeholder is exported as it is and reported, and a name
no executed cell defines is written as a comment saying so.

The file holds one block per lesson between marker lines, so lesson 9 adds its functions without
touching lesson 8's classes. :func:`read_blocks` is how the loader
(:mod:`transformer_course.translation.your_pieces`) finds them again.

While nbgrader grades a notebook nothing is exported: no graded answer depends on the file, and
grading must not write beside the submission.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from transformer_course.runtime import is_grading

EXPORT_FILE = "my_transformer.py"
HEADER = '''"""Your code from lessons 8 and 9 of "Attention, Built Up", written by the lessons' export cells.

Do not edit it here: edit the notebook's cells and run the export cell again, which rewrites the
lesson's block below. Lesson 9's "Train your translator" cell builds and trains a model from it.
"""

import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
'''
_BEGIN = "# >>> exported from lesson "
_END = "# <<< end of lesson "
_IMPORTS = (ast.Import, ast.ImportFrom)
_KEPT = (ast.Import, ast.ImportFrom, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(frozen=True)
class Found:
    """Where a name's definition was found: the cell's position in the history, and whether the
    definition still raises ``NotImplementedError`` (the exercise's placeholder)."""

    cell: int
    placeholder: bool


def _parse(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except SyntaxError:
        return None


def _defined_names(tree: ast.Module) -> dict[str, ast.stmt]:
    """The top-level classes and functions of a cell, by name (the last definition wins)."""
    return {
        node.name: node
        for node in tree.body
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
    }


def _raises_not_implemented(node: ast.stmt) -> bool:
    for inner in ast.walk(node):
        if isinstance(inner, ast.Raise) and inner.exc is not None:
            raised = inner.exc.func if isinstance(inner.exc, ast.Call) else inner.exc
            if isinstance(raised, ast.Name) and raised.id == "NotImplementedError":
                return True
    return False


def find_definitions(names: Sequence[str], cells: Sequence[str]) -> dict[str, Found | None]:
    """For each name, the most recent cell (of ``cells``, oldest first) that defines it at top level.

    Cells that are not valid Python (a half-typed cell that failed to run) are skipped.
    """
    found: dict[str, Found | None] = dict.fromkeys(names)
    for index in range(len(cells) - 1, -1, -1):
        if all(found.values()):
            break
        tree = _parse(cells[index])
        if tree is None:
            continue
        defined = _defined_names(tree)
        for name in names:
            if found[name] is None and name in defined:
                found[name] = Found(index, _raises_not_implemented(defined[name]))
    return found


def _is_constant(node: ast.stmt) -> bool:
    """An assignment a definition may rely on: ``NAME = ...`` in capitals, or any name = a literal."""
    if not isinstance(node, ast.Assign):
        return False
    names = [t.id for t in node.targets if isinstance(t, ast.Name)]
    if len(names) != len(node.targets):
        return False
    return isinstance(node.value, ast.Constant) or all(n.isupper() for n in names)


def exported_code(cell: str) -> str:
    """The cell's imports, classes, functions and constants, each copied verbatim, in their order."""
    tree = _parse(cell)
    if tree is None:
        return ""
    lines = cell.splitlines()
    code, previous = "", None
    for node in tree.body:
        if isinstance(node, _KEPT) or _is_constant(node):
            first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
            imports = isinstance(node, _IMPORTS) and isinstance(previous, _IMPORTS)
            code += ("\n" if imports else "\n\n\n") if code else ""
            code += "\n".join(lines[first - 1 : node.end_lineno])
            previous = node
    return code


def lesson_block(lesson: int, names: Sequence[str], cells: Sequence[str]) -> tuple[str, list[str]]:
    """The file's block for ``lesson`` and one line per name saying what was exported."""
    found = find_definitions(names, cells)
    chosen = sorted({f.cell for f in found.values() if f is not None})
    parts = [f"{_BEGIN}{lesson}: {', '.join(names)}"]
    parts += [exported_code(cells[index]) for index in chosen]
    report = []
    for name, where in found.items():
        if where is None:
            parts.append(f"# {name}: not written yet (no executed cell defines it)")
            report.append(f"{name}: no executed cell defines it yet, so it is not in the file")
        elif where.placeholder:
            report.append(f"{name}: exported, but it still raises NotImplementedError (not written yet)")
        else:
            report.append(f"{name}: exported")
    parts.append(f"{_END}{lesson}")
    return "\n\n".join(part for part in parts if part) + "\n", report


def read_blocks(text: str) -> dict[int, str]:
    """The lesson blocks of an export file, by lesson number, markers included."""
    blocks: dict[int, str] = {}
    current: int | None = None
    lines: list[str] = []
    for line in text.splitlines():
        if line.startswith(_BEGIN):
            current, lines = int(line[len(_BEGIN) :].split(":")[0]), []
        if current is not None:
            lines.append(line)
        if current is not None and line.startswith(_END):
            blocks[current] = "\n".join(lines) + "\n"
            current = None
    return blocks


def _history() -> list[str]:
    """The kernel's executed cells, oldest first, as IPython ran them (magics already translated)."""
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None:
        raise RuntimeError("the export step reads the notebook's history: run it in a Jupyter kernel")
    return list(shell.history_manager.input_hist_parsed)


def export_solutions(
    lesson: int, names: Sequence[str], path: str | Path = EXPORT_FILE, cells: Sequence[str] | None = None
) -> None:
    """Write ``lesson``'s block of ``path`` from the cells that define ``names`` and print one line
    per name. ``cells`` defaults to the kernel's history. Other lessons' blocks are kept.

    While grading nothing is read, written or printed.
    """
    if is_grading():
        return
    if not isinstance(lesson, int) or isinstance(names, str) or not all(isinstance(n, str) for n in names):
        raise TypeError("export_solutions takes a lesson number and a list of the names to export")
    if not isinstance(path, (str, Path)) or not str(path).endswith(".py"):
        raise ValueError(f"the export file must be a Python file, such as {EXPORT_FILE!r}; got {path!r:.60}")
    block, report = lesson_block(lesson, names, _history() if cells is None else cells)
    path = Path(path)
    blocks = read_blocks(path.read_text(encoding="utf-8")) if path.is_file() else {}
    blocks[lesson] = block
    path.write_text(HEADER + "".join(f"\n\n{blocks[k]}" for k in sorted(blocks)), encoding="utf-8")
    report.append(f"written to {path}")
    for line in report:
        print(line)

"""The strict-comparison rule: a test cell compares results only through ``transformer_course.checks``.

numpy's and torch's comparisons and truth reductions broadcast, and a zero-size array broadcasts
against anything: ``np.allclose(np.zeros((1, 0)), expected)`` is True, and so is ``all([])``. A
student returning an empty array would pass such a test. ``transformer_course.checks`` checks the
shape (zero size included) and the kind of dtype first, so ``python -m course_build --check``
reports every test cell (visible and hidden part) that calls one of the broadcasting functions
instead, with the line and the helper to use. The check reads the cell's syntax tree, so an alias
(``import numpy as xp``, ``from numpy import allclose as same``) is followed too.
"""

import ast

from nbformat import NotebookNode

from course_build.cell_roles import grade_id, is_test_cell
from course_build.test_cells import bound_names, parse_cell

# Dotted names (and everything under them) a test cell may not use, each with the helper to use.
FORBIDDEN = {
    "numpy.allclose": "close",
    "numpy.isclose": "close",
    "numpy.array_equal": "equal",
    "numpy.array_equiv": "equal",
    "numpy.testing": "close or equal",
    "numpy.all": "all_of",
    "numpy.any": "all_of",
    "numpy.alltrue": "all_of",
    "numpy.sometrue": "all_of",
    "torch.allclose": "close",
    "torch.isclose": "close",
    "torch.equal": "equal",
    "torch.testing": "close or equal",
    "torch.all": "all_of",
    "torch.any": "all_of",
}
# Methods of arrays and tensors that reduce truth values the same broadcasting way.
FORBIDDEN_METHODS = {"all": "all_of", "any": "all_of"}
SHORT_NAMES = {"numpy": "np"}


def _module_aliases(tree: ast.AST) -> dict[str, str]:
    """Each name the cell's imports bind, mapped to the dotted name it stands for."""
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    aliases[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    aliases[top] = top
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return aliases


def _dotted(node: ast.AST, aliases: dict[str, str]) -> str | None:
    """The dotted name an expression like ``np.testing.assert_allclose`` resolves to, if any."""
    if isinstance(node, ast.Name):
        return aliases.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value, aliases)
        return f"{base}.{node.attr}" if base else None
    return None


def _forbidden_helper(dotted: str) -> str | None:
    for name, helper in FORBIDDEN.items():
        if dotted == name or dotted.startswith(name + "."):
            return helper
    return None


def _shown(dotted: str) -> str:
    top, _, rest = dotted.partition(".")
    return f"{SHORT_NAMES.get(top, top)}.{rest}" if rest else dotted


def forbidden_comparisons(code: str) -> list[tuple[int, str, str]]:
    """``(line, what the code uses, the helper to use instead)`` for each forbidden comparison."""
    tree = parse_cell(code)
    aliases = _module_aliases(tree)
    builtin_all_shadowed = "all" in bound_names(tree)
    found: list[tuple[int, str, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute | ast.Name) and isinstance(node.ctx, ast.Load):
            dotted = _dotted(node, aliases)
            helper = _forbidden_helper(dotted) if dotted else None
            parent_is_forbidden = isinstance(node, ast.Attribute) and _forbidden_helper(
                _dotted(node.value, aliases) or ""
            )
            if helper and not parent_is_forbidden:
                found.append((node.lineno, _shown(dotted), helper))
            elif isinstance(node, ast.Name) and node.id == "all" and not builtin_all_shadowed:
                found.append((node.lineno, "the builtin all() (all([]) is True)", "all_of"))
            elif isinstance(node, ast.Attribute) and node.attr in FORBIDDEN_METHODS and not helper:
                found.append((node.lineno, f"the .{node.attr}() method", FORBIDDEN_METHODS[node.attr]))
    return sorted(found)


def comparison_problems(notebook: NotebookNode) -> list[str]:
    """Test cells of an nbgrader source notebook that compare results without the strict helpers."""
    problems = []
    for cell in notebook.cells:
        if is_test_cell(cell):
            for line, used, helper in forbidden_comparisons(cell.source):
                imports = helper.replace(" or ", ", ")
                problems.append(
                    f"test cell {grade_id(cell)!r}, line {line}: uses {used}, which passes on an empty "
                    f"array; use {helper} (from transformer_course.checks import {imports})"
                )
    return problems

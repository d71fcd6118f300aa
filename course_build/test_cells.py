"""The test-cell convention: what a test cell may use, and a static check that lessons follow it.

Test cells run in the trusted checker (``course_build.checking.checker``), not in the student's kernel, with
only two kinds of names available: those the cell imports or defines itself, and those the
lesson's solution cells define (bound to the student's values and functions). A test cell that
reads a worked example's variable or an earlier test's ``_x`` works in the student's notebook but
fails when graded, so ``convention_problems`` finds such names before a lesson ships
(``python -m course_build --check``). That arguments are plain data is checked when the reference
solution is graded (tests/test_lesson_pipeline.py).
"""

import ast
import builtins

from IPython.core.inputtransformer2 import TransformerManager
from nbformat import NotebookNode

from course_build.cell_roles import grade_id, is_code_answer, is_test_cell


def parse_cell(code: str) -> ast.Module:
    """The cell as the kernel runs it: a cell magic's body, other magics turned into calls."""
    if code.lstrip().startswith("%%"):
        return parse_cell(code.lstrip().split("\n", 1)[1] if "\n" in code.lstrip() else "")
    try:
        return ast.parse(code)
    except SyntaxError:
        return ast.parse(TransformerManager().transform_cell(code))


def statement_bindings(statement: ast.stmt) -> set[str]:
    """Names a top-level statement binds: functions, classes, assignment targets, imports
    (``from m import *`` binds names nobody can list: it reads as ``*``)."""
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {statement.name}
    if isinstance(statement, ast.Import | ast.ImportFrom):
        return {(alias.asname or alias.name).split(".")[0] for alias in statement.names}
    return {
        node.id
        for node in ast.walk(statement)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
    }


def defined_names(code: str) -> set[str]:
    """Names a cell binds at its top level (functions, classes, assignments), not its imports."""
    names: set[str] = set()
    for statement in parse_cell(code).body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(statement.name)
        elif isinstance(statement, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            for target in targets:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return names


def solution_names(cells: list[NotebookNode]) -> set[str]:
    """Every name the code solution cells among ``cells`` define."""
    names: set[str] = set()
    for cell in cells:
        if is_code_answer(cell):
            names |= defined_names(cell.source)
    return names


def bound_names(tree: ast.AST) -> set[str]:
    """Every name bound anywhere in ``tree``: assignments, imports, definitions, parameters."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            bound.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return bound


def free_names(code: str) -> set[str]:
    """Names the code reads without binding them anywhere, other than builtins."""
    tree = parse_cell(code)
    read = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return read - bound_names(tree) - set(dir(builtins))


def convention_problems(notebook: NotebookNode) -> list[str]:
    """Test cells of an nbgrader source notebook that read names they may not use when graded."""
    allowed = solution_names(notebook.cells)
    problems = []
    for cell in notebook.cells:
        if is_test_cell(cell):
            stray = sorted(free_names(cell.source) - allowed)
            if stray:
                problems.append(
                    f"test cell {grade_id(cell)!r} uses {', '.join(stray)}, which it neither imports nor "
                    "defines and no solution cell defines (test cells must be self-contained: see "
                    "lessons/README.md)"
                )
    return problems

"""Which cells of a lesson raise while its exercises are still stubs, so Run All can go past them.

In a student notebook the solution regions are ``raise NotImplementedError()``. Three kinds of
cells then raise: the exercise cells themselves (a value answer raises at once), the test cells
(they call the unwritten functions), and ordinary cells further down that use an answer (a demo
calling the student's ``positional_encoding``). All of them get JupyterLab's ``raises-exception``
tag, so Run All carries on to the end instead of stopping at the first exercise. The ordinary
ones are found here by following names: what a solution region defines, then every later cell
that reads such a name (and what those cells define in turn). Their saved outputs would show the
solution's results next to a stub, so the student notebook carries none for them.
"""

import ast

from nbformat import NotebookNode

from course_build.cell_roles import is_answer, scores_points
from course_build.test_cells import statement_bindings

RAISES_EXCEPTION = "raises-exception"
BEGIN_SOLUTION = "### BEGIN SOLUTION"
END_SOLUTION = "### END SOLUTION"


def _read_names(source: str) -> set[str]:
    return {
        node.id
        for node in ast.walk(_parse(source))
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
    }


def _parse(source: str) -> ast.Module:
    """Cell source as Python, with IPython magics and shell escapes replaced by ``pass``."""
    lines = [
        line[: len(line) - len(line.lstrip())] + "pass" if line.lstrip().startswith(("%", "!")) else line
        for line in source.splitlines()
    ]
    return ast.parse("\n".join(lines))


def _solution_lines(source: str) -> set[int]:
    """Line numbers (1-based) inside the solution regions of a cell."""
    inside, lines = False, set()
    for number, line in enumerate(source.splitlines(), start=1):
        if line.strip() == BEGIN_SOLUTION:
            inside = True
        elif line.strip() == END_SOLUTION:
            inside = False
        elif inside:
            lines.add(number)
    return lines


def answer_names(source: str) -> set[str]:
    """Names a solution cell defines through its solution region: the stub leaves them missing
    (a value answer) or raising (a function whose body is the region)."""
    region = _solution_lines(source)
    names: set[str] = set()
    for statement in _parse(source).body:
        span = set(range(statement.lineno, (statement.end_lineno or statement.lineno) + 1))
        if span & region:
            names |= statement_bindings(statement)
    return names


def names_left_undefined(source: str) -> set[str]:
    """Names a solution cell binds only inside its solution region (a value answer): in the
    student notebook the stub raises before any of them is defined."""
    region = _solution_lines(source)
    names: set[str] = set()
    for statement in _parse(source).body:
        span = set(range(statement.lineno, (statement.end_lineno or statement.lineno) + 1))
        if span <= region:
            names |= statement_bindings(statement)
    return names


def value_answers(cells: list[NotebookNode]) -> list[str]:
    """The names the lesson's value exercises define, cell by cell in the order of the lesson."""
    names: dict[str, None] = {}
    for cell in cells:
        if cell.cell_type == "code" and _role(cell) == "solution":
            names |= dict.fromkeys(sorted(names_left_undefined(cell.source)))
    return list(names)


def _role(cell: NotebookNode) -> str | None:
    if is_answer(cell):
        return "solution"
    if scores_points(cell):
        return "tests"
    return None


def cells_using_answers(cells: list[NotebookNode]) -> list[int]:
    """Indices of ordinary code cells that read an exercise's answer, directly or through
    another such cell."""
    tainted: set[str] = set()
    found = []
    for index, cell in enumerate(cells):
        if cell.cell_type != "code":
            continue
        role = _role(cell)
        if role == "solution":
            tainted |= answer_names(cell.source)
        elif role is None and _read_names(cell.source) & tainted:
            found.append(index)
            tainted |= set().union(*(statement_bindings(s) for s in _parse(cell.source).body))
    return found


def cells_that_may_raise(cells: list[NotebookNode]) -> list[int]:
    """Indices of the cells that raise while the exercises are stubs: exercise and test cells,
    and the ordinary cells that use an answer."""
    graded = [i for i, c in enumerate(cells) if c.cell_type == "code" and _role(c) is not None]
    return sorted(set(graded) | set(cells_using_answers(cells)))

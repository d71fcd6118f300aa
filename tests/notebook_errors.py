"""Which errors a student notebook may raise when run with its stubs still in place."""

import ast

from nbformat import NotebookNode


def names_defined_by_answers(source_notebook: NotebookNode) -> set[str]:
    """Names that the reference answers assign or define: blank stubs leave them undefined."""
    names: set[str] = set()
    for cell in source_notebook.cells:
        nbgrader = cell.metadata.get("nbgrader", {})
        if cell.cell_type != "code" or not nbgrader.get("solution"):
            continue
        for node in ast.walk(ast.parse(cell.source)):
            if isinstance(node, ast.FunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
    return names


def unexpected_errors(executed_student: NotebookNode, answer_names: set[str]) -> list[str]:
    """Errors other than a stub's NotImplementedError or a missing answer name, one line each."""
    problems = []
    for cell in executed_student.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") != "error":
                continue
            ename, evalue = output["ename"], output["evalue"]
            if ename == "NotImplementedError":
                continue
            if ename == "NameError" and any(f"'{name}'" in evalue for name in answer_names):
                continue
            problems.append(f"cell {cell.get('id')}: {ename}: {evalue}")
    return problems

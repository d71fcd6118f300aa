"""Give a submitted notebook back the graded structure of the released one.

Students delete, copy, move and re-tag cells, by accident or not. nbgrader 0.9.6 restores the
source of locked cells and their points, but not a test cell that was deleted (it scores 0 even
for correct code), nor a test cell re-tagged as an answer (it becomes a manual grade), and it
re-inserts cells by the gradebook's unordered list. Here the released notebook is the reference:

* every graded or locked cell of the release (an *anchor*) appears exactly once, in the release's
  order, with the release's nbgrader metadata and cell type; a missing test cell or written-answer
  cell is re-inserted from the release (nbgrader then puts the hidden tests back); a missing
  code answer is not re-inserted, so a stub cannot overwrite an answer the student moved;
* the student's own cells stay where they were, after the anchor they followed;
* a cell claiming an unknown or repeated ``grade_id`` becomes an ordinary cell.
"""

import copy

from nbformat import NotebookNode


def _grade_id(cell: NotebookNode) -> str | None:
    return cell.metadata.get("nbgrader", {}).get("grade_id")


def _is_anchor(cell: NotebookNode) -> bool:
    nbgrader = cell.metadata.get("nbgrader", {})
    return bool(nbgrader.get("grade") or nbgrader.get("solution") or nbgrader.get("locked"))


def _as_release(student_cell: NotebookNode, release_cell: NotebookNode) -> NotebookNode:
    """The student's cell with the release's type and metadata; answers keep the student's text."""
    restored = copy.deepcopy(release_cell)
    if release_cell.metadata["nbgrader"].get("solution"):
        restored.source = student_cell.source
    if restored.cell_type == "code" and student_cell.cell_type == "code":
        restored.outputs = student_cell.get("outputs", [])
    return restored


def restore_structure(submitted: NotebookNode, release: NotebookNode) -> tuple[NotebookNode, list[str]]:
    """``submitted`` rebuilt on the release's graded cells, and notes on what was repaired."""
    submitted = copy.deepcopy(submitted)
    anchors = {_grade_id(c): c for c in release.cells if _is_anchor(c) and _grade_id(c)}
    order = list(anchors)
    notes: list[str] = []
    leading: list[NotebookNode] = []
    found: dict[str, NotebookNode] = {}
    followers: dict[str, list[NotebookNode]] = {grade_id: [] for grade_id in order}
    seen_order: list[str] = []
    current: list[NotebookNode] = leading
    for cell in submitted.cells:
        grade_id = _grade_id(cell) if "nbgrader" in cell.metadata else None
        if "nbgrader" in cell.metadata and (grade_id not in anchors or grade_id in found):
            why = "a repeated" if grade_id in found else "an unknown"
            notes.append(f"a cell claiming {why} grade_id {grade_id!r} was graded as an ordinary cell")
            cell = copy.deepcopy(cell)
            del cell.metadata["nbgrader"]
            current.append(cell)
            continue
        if grade_id is None:
            current.append(cell)
            continue
        release_cell = anchors[grade_id]
        changed = cell.metadata["nbgrader"] != release_cell.metadata["nbgrader"]
        if changed or cell.cell_type != release_cell.cell_type:
            notes.append(f"{grade_id}: its cell type or nbgrader metadata had been changed; restored")
        elif release_cell.metadata["nbgrader"].get("locked") and cell.source != release_cell.source:
            notes.append(f"{grade_id}: the locked cell had been edited; restored")
        found[grade_id] = _as_release(cell, release_cell)
        seen_order.append(grade_id)
        current = followers[grade_id]
    if [g for g in order if g in found] != seen_order:
        notes.append("graded cells had been moved; they were put back in the released order")
    cells = list(leading)
    for grade_id in order:
        if grade_id in found:
            cells.append(found[grade_id])
        else:
            release_cell = anchors[grade_id]
            nbgrader = release_cell.metadata["nbgrader"]
            if nbgrader.get("solution") and release_cell.cell_type == "code":
                notes.append(f"{grade_id}: the answer cell was missing")
            else:
                cells.append(copy.deepcopy(release_cell))
                notes.append(f"{grade_id}: the cell was missing and was restored from the release")
        cells.extend(followers[grade_id])
    _unique_cell_ids(cells)
    submitted.cells = cells
    return submitted, notes


def _unique_cell_ids(cells: list[NotebookNode]) -> None:
    """Copied cells share an id; nbformat needs them unique."""
    used: set[str] = set()
    for index, cell in enumerate(cells):
        if "id" not in cell:
            continue
        if cell.id in used:
            cell.id = f"{cell.id[:50]}-{index}"
        used.add(cell.id)

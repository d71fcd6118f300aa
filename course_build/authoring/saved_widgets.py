"""Saved widget outputs that read well before anything runs, and saved widget state kept lean.

A notebook opened in JupyterLab is untrusted until the student runs it, and an untrusted output
is never drawn by the widget renderer: a saved widget used to show its text fallback,
``VBox(children=(HBox(children=(IntSlider(…``. So every saved widget output gets a static HTML
picture of its default view (controls with their values, readouts and plots), drawn from the
widget state the notebook already stores, and a one-line text fallback that says to run the cell.
Running the cell replaces both with the live widget; the book page still draws the widget from
the stored state (its renderer prefers the widget view).

The stored state keeps only the models that some saved output displays, so withholding an output
(``course_build.authoring.generate``) also withholds what its widgets showed.

A widget's plot is therefore stored twice in a student notebook, in the state and in the picture:
27% of ``notebooks/``'s bytes (``python benchmarks/notebook_sizes.py``). Both copies have a
reader: the book, built from these same files, draws widgets from the state (tests/test_book.py,
tests/browser/test_site.py), and an untrusted notebook in JupyterLab shows only the picture.
Dropping either would need separate files for the book and for students.
"""

from __future__ import annotations

import re
from html import escape
from typing import Any

from nbformat import NotebookNode

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
MODEL_REFERENCE = re.compile(r"IPY_MODEL_([0-9A-Za-z_-]+)")
PLAIN_TEXT = "Interactive widget: run this cell to use it."
NOTE = "<i>Saved view of an interactive widget: run the cell to use it.</i>"
BOXES = {"VBoxModel": "column", "BoxModel": "column", "HBoxModel": "row", "GridBoxModel": "row"}
CHOICES = {"DropdownModel", "SelectModel", "SelectionSliderModel", "ToggleButtonsModel"}


def widget_state(notebook: NotebookNode) -> dict[str, Any]:
    """model id -> saved model (``model_name``, ``state``); empty when nothing was saved."""
    return notebook.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})


def _displayed_ids(notebook: NotebookNode) -> list[str]:
    return [
        output["data"][WIDGET_VIEW]["model_id"]
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
        if WIDGET_VIEW in output.get("data", {})
    ]


def _references(model: Any) -> list[str]:
    return MODEL_REFERENCE.findall(repr(model.get("state", {})))


def _format(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _labelled(state: dict[str, Any], text: str) -> str:
    description = state.get("description") or ""
    label = f"<b>{escape(description)}</b> " if description else ""
    return f"<div>{label}{text}</div>"


def _snapshot(models: dict[str, Any], model_id: str) -> str:
    """Static HTML for one model and its children (controls shown with their current values)."""
    model = models.get(model_id)
    if model is None:
        return ""
    name, state = model.get("model_name", ""), model.get("state", {})
    if name in BOXES:
        children = "".join(
            _snapshot(models, child) for child in MODEL_REFERENCE.findall(repr(state["children"]))
        )
        return f'<div style="display:flex;flex-direction:{BOXES[name]};gap:0.5em">{children}</div>'
    if name in ("HTMLModel", "HTMLMathModel"):
        return f"<div>{state.get('value', '')}</div>"
    if name == "LabelModel":
        return f"<div>{escape(str(state.get('value', '')))}</div>"
    if name.endswith("SliderModel") and "value" in state:
        return _labelled(state, escape(_format(state["value"])))
    if name in CHOICES and state.get("index") is not None:
        return _labelled(state, escape(str(state["_options_labels"][state["index"]])))
    if name == "RadioButtonsModel":
        items = "".join(f"<li>{escape(str(label))}</li>" for label in state.get("_options_labels", []))
        return _labelled(state, f"<ul>{items}</ul>")
    if name == "CheckboxModel":
        return _labelled(state, "☑" if state.get("value") else "☐")
    if name in ("TextModel", "TextareaModel"):
        return _labelled(state, escape(str(state.get("value", ""))))
    return ""  # buttons, layouts, styles: nothing to show without a kernel


def snapshot_html(models: dict[str, Any], model_id: str) -> str:
    """The static picture of the widget ``model_id`` shown before its cell runs."""
    return f'<div class="course-widget-snapshot">{NOTE}{_snapshot(models, model_id)}</div>'


def reachable_models(models: dict[str, Any], roots: list[str]) -> set[str]:
    """The models ``roots`` display, with every model they refer to (children, layouts, styles)."""
    seen: set[str] = set()
    stack = list(roots)
    while stack:
        model_id = stack.pop()
        if model_id in seen or model_id not in models:
            continue
        seen.add(model_id)
        stack.extend(_references(models[model_id]))
    return seen


def prepare_saved_widgets(notebook: NotebookNode, snapshots: bool) -> None:
    """Keep only the widget models saved outputs display; with ``snapshots``, give every saved
    widget output its static HTML picture and a text fallback that says to run the cell."""
    models = widget_state(notebook)
    if not models:
        return
    displayed = _displayed_ids(notebook)
    keep = reachable_models(models, displayed)
    for model_id in [m for m in models if m not in keep]:
        del models[model_id]
    if not snapshots:
        return
    for cell in notebook.cells:
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            data = output.get("data", {})
            if WIDGET_VIEW in data:
                data["text/html"] = snapshot_html(models, data[WIDGET_VIEW]["model_id"])
                data["text/plain"] = PLAIN_TEXT

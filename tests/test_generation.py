"""Generated notebooks: byte-identical on regeneration, small diffs for small changes, and a
student notebook that reads well before it runs (widget pictures, no solution outputs)."""

import difflib

import nbformat
import pytest
from lesson_header import MYST_HEADER

from course_build.authoring import generate
from course_build.authoring import source as source_module
from course_build.authoring.execute import execute_notebook, export_file_as_found, merge_adjacent_streams
from course_build.authoring.saved_widgets import PLAIN_TEXT, WIDGET_STATE, WIDGET_VIEW, prepare_saved_widgets

LESSON = (
    MYST_HEADER
    + """
# 99. A test lesson

Some prose about encodings.

```{code-cell} ipython3
import time

import ipywidgets as widgets

from transformer_course.widgets.figures import figure_to_html, new_figure

figure = new_figure(2, 2)
figure.add_subplot().plot([0, 1], [1, 0])
plot = widgets.HTML(figure_to_html(figure, "a line"))
widgets.VBox([widgets.IntSlider(value=8, description="d_model"), plot])
```

```{code-cell} ipython3
:tags: [measured]

print(f"measured {time.perf_counter()} s")
```

```{code-cell} ipython3
:tags: [solution]
:grade_id: double

def double(x):
    ### BEGIN SOLUTION
    return 2 * x
    ### END SOLUTION
```

```{code-cell} ipython3
:tags: [tests]
:grade_id: double_test
:points: 1

assert double(2) == 4
```

```{code-cell} ipython3
print("the answer's output:", double(21))
```

```{code-cell} ipython3
from transformer_course.widgets.quiz import lesson_quiz

lesson_quiz("03_attention")
```
"""
)


@pytest.fixture
def generated(tmp_path, monkeypatch):
    """Regenerate the test lesson into ``tmp_path``; returns a function that does it once more
    from a given lesson text and gives back the three files' bytes."""
    lesson = "99_test"
    source_path = tmp_path / "lessons" / f"{lesson}.md"
    source_path.parent.mkdir()
    monkeypatch.setattr(source_module, "lesson_source", lambda name: source_path)
    monkeypatch.setattr(source_module, "REPO_ROOT", tmp_path)
    paths = {
        "nbgrader_source_notebook": tmp_path / "autograder" / "source" / lesson / f"{lesson}.ipynb",
        "solution_notebook": tmp_path / "solutions" / f"{lesson}.ipynb",
        "student_notebook": tmp_path / "notebooks" / f"{lesson}.ipynb",
    }
    for name, path in paths.items():
        monkeypatch.setattr(generate, name, lambda _lesson, path=path: path)

    def run(text: str) -> dict[str, bytes]:
        source_path.write_text(text, encoding="utf-8")
        generate.regenerate(lesson)
        return {name: path.read_bytes() for name, path in paths.items()}

    return run


def changed_lines(before: bytes, after: bytes) -> list[str]:
    diff = difflib.unified_diff(before.decode().splitlines(), after.decode().splitlines(), n=0, lineterm="")
    return [line for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---")]


@pytest.mark.slow
def test_regenerating_gives_the_same_bytes_and_a_prose_edit_changes_only_its_lines(generated):
    """A timing tagged ``measured`` keeps its committed value while its cell is unchanged."""
    first = generated(LESSON)
    again = generated(LESSON)
    for name in first:
        assert again[name] == first[name], f"{name} differs between two regenerations"

    edited = generated(LESSON.replace("Some prose about encodings.", "Some prose about positions."))
    for name in first:
        changes = changed_lines(first[name], edited[name])
        # The edited line itself, and the edited cell's id (ids follow cell content).
        assert len(changes) <= 4, f"{name}: {len(changes)} changed lines for a one-line edit:\n{changes}"
        assert any("positions." in line for line in changes), f"{name}: the edit is missing"

    student = nbformat.reads(first["student_notebook"].decode(), as_version=4)
    by_source = {cell.source.splitlines()[0]: cell for cell in student.cells if cell.cell_type == "code"}
    measured = by_source['print(f"measured {time.perf_counter()} s")'].outputs[0].text
    assert measured.startswith("measured "), "the measurement is kept, measured once"
    assert by_source['print("the answer\'s output:", double(21))'].outputs == [], "no solution output"
    assert "raises-exception" in by_source['print("the answer\'s output:", double(21))'].metadata["tags"]
    widget_outputs = [
        o for cell in student.cells if cell.cell_type == "code" for o in cell.outputs if "data" in o
    ]
    assert len(widget_outputs) == 2 and all(WIDGET_VIEW in o.data for o in widget_outputs)
    for output in widget_outputs:
        assert output.data["text/plain"] == PLAIN_TEXT, "no stale VBox(children=...) text"
        assert "Saved view of an interactive widget" in output.data["text/html"]
    heatmap, quiz = (o.data["text/html"] for o in widget_outputs)
    assert "<b>d_model</b> 8" in heatmap and "data:image/png;base64," in heatmap
    assert "What is the shape of the attention output?" in quiz and "<li>(2, 10, 4, 32)</li>" in quiz

    remeasured = generated(LESSON.replace("measured {time", "took {time"))
    student = nbformat.reads(remeasured["student_notebook"].decode(), as_version=4)
    assert any(o.get("text", "").startswith("took ") for c in student.cells for o in c.get("outputs", [])), (
        "an edited measured cell measures again"
    )


def widget(model_name: str, **state) -> dict:
    return {"model_module": "@jupyter-widgets/controls", "model_name": model_name, "state": state}


def test_saved_widgets_keep_only_displayed_models_and_get_a_picture():
    models = {
        "box": widget("VBoxModel", children=["IPY_MODEL_slider", "IPY_MODEL_readout", "IPY_MODEL_choice"]),
        "slider": widget("IntSliderModel", description="n", value=32, layout="IPY_MODEL_layout"),
        "layout": widget("LayoutModel"),
        "readout": widget("HTMLModel", value="<b>32 steps</b>"),
        "choice": widget("RadioButtonsModel", _options_labels=["yes", "no <b>"], index=None),
        "orphan": widget("HTMLModel", value="shown by an output that was withheld"),
    }
    output = nbformat.v4.new_output(
        "display_data", data={WIDGET_VIEW: {"model_id": "box"}, "text/plain": "VBox(children=(IntSlider(…"}
    )
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x", outputs=[output])])
    notebook.metadata["widgets"] = {WIDGET_STATE: {"state": models}}
    prepare_saved_widgets(notebook, snapshots=True)
    kept = notebook.metadata["widgets"][WIDGET_STATE]["state"]
    assert sorted(kept) == ["box", "choice", "layout", "readout", "slider"]
    data = notebook.cells[0].outputs[0].data
    assert data["text/plain"] == PLAIN_TEXT
    html = data["text/html"]
    assert "<b>n</b> 32" in html and "<b>32 steps</b>" in html
    assert "<li>yes</li><li>no &lt;b&gt;</li>" in html, "labels are escaped"


def test_consecutive_stream_chunks_are_joined_but_never_reordered():
    chunks = [
        nbformat.v4.new_output("stream", name="stdout", text="k = 1"),
        nbformat.v4.new_output("stream", name="stdout", text="\nk = 5\n"),
        nbformat.v4.new_output("display_data", data={"text/plain": "picture"}),
        nbformat.v4.new_output("stream", name="stdout", text="after\n"),
        nbformat.v4.new_output("stream", name="stderr", text="warning\n"),
    ]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x", outputs=chunks)])
    merge_adjacent_streams(notebook)
    outputs = notebook.cells[0].outputs
    assert [o.get("text") for o in outputs] == ["k = 1\nk = 5\n", None, "after\n", "warning\n"]


def test_building_lessons_leaves_the_export_file_as_it_found_it(tmp_path):
    """Lessons 8 and 9's export cells write my_transformer.py, with the solutions in it, into the
    folder the lessons run in, and lesson 9 reads what lesson 8 wrote: a build keeps it from one
    lesson to the next, then must neither leave it in notebooks/ (the student repository copies
    the folder) nor replace an export the author made by hand."""

    def run(code: str) -> str:
        notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
        return execute_notebook(notebook, cwd=tmp_path).cells[0].outputs[0]["text"]

    lesson_8 = (
        "from pathlib import Path\nPath('my_transformer.py').write_text('### BEGIN SOLUTION')\nprint(1)"
    )
    lesson_9 = "from pathlib import Path\nprint(Path('my_transformer.py').read_text())"
    with export_file_as_found(tmp_path):
        run(lesson_8)
        assert run(lesson_9) == "### BEGIN SOLUTION\n"
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "my_transformer.py").write_text("the author's own export")
    with export_file_as_found(tmp_path):
        run(lesson_8)
    assert (tmp_path / "my_transformer.py").read_text() == "the author's own export"

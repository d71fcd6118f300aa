"""Lessons 8 and 9's export step: the student's cells from the kernel's history into my_transformer.py."""

import pytest

from transformer_course.translation.solution_export import (
    HEADER,
    export_solutions,
    exported_code,
    find_definitions,
    lesson_block,
    read_blocks,
)

OLD_ATTENTION = "class MultiHeadAttention:\n    version = 1\n"
NEW_ATTENTION = (
    "import torch\nfrom torch import nn\n\nSCALE = 2\n\n\nclass MultiHeadAttention(nn.Module):\n"
    "    version = 2\n\n\nprint(MultiHeadAttention().version)\nlayer = MultiHeadAttention()\n"
)
PLACEHOLDER = (
    "class EncoderLayer:\n    def __init__(self):\n        # YOUR CODE HERE\n"
    "        raise NotImplementedError()\n"
)


def test_the_most_recent_defining_cell_wins_and_placeholders_are_flagged():
    cells = ["", OLD_ATTENTION, "x = 1", NEW_ATTENTION, PLACEHOLDER, "def broken(:"]
    found = find_definitions(["MultiHeadAttention", "EncoderLayer", "Embedding"], cells)
    assert found["MultiHeadAttention"].cell == 3 and not found["MultiHeadAttention"].placeholder
    assert found["EncoderLayer"].cell == 4 and found["EncoderLayer"].placeholder
    assert found["Embedding"] is None


def test_a_cell_that_does_not_parse_is_skipped_for_an_older_one():
    found = find_definitions(["f"], ["def f():\n    return 1\n", "def f(:\n"])
    assert found["f"].cell == 0


def test_imports_definitions_and_constants_are_copied_verbatim_and_calls_left_out():
    code = exported_code(NEW_ATTENTION)
    assert code == (
        "import torch\nfrom torch import nn\n\n\nSCALE = 2\n\n\nclass MultiHeadAttention(nn.Module):\n"
        "    version = 2"
    )
    assert "print" not in code and "layer =" not in code


def test_decorators_stay_with_their_definition():
    cell = "import functools\n\n\n@functools.cache\ndef f(x):\n    return x\n"
    assert "@functools.cache\ndef f(x):" in exported_code(cell)


def test_block_reports_each_name_in_one_line():
    block, report = lesson_block(
        8, ["MultiHeadAttention", "EncoderLayer", "Embedding"], [NEW_ATTENTION, PLACEHOLDER]
    )
    assert report == [
        "MultiHeadAttention: exported",
        "EncoderLayer: exported, but it still raises NotImplementedError (not written yet)",
        "Embedding: no executed cell defines it yet, so it is not in the file",
    ]
    assert "# Embedding: not written yet" in block
    assert "raise NotImplementedError()" in block  # the placeholder is exported as it is
    assert read_blocks(block) == {8: block}


def test_each_lesson_rewrites_only_its_own_block(tmp_path, capsys):
    path = tmp_path / "my_transformer.py"
    export_solutions(8, ["MultiHeadAttention"], path, cells=[OLD_ATTENTION])
    export_solutions(9, ["f"], path, cells=["def f():\n    return 9\n"])
    export_solutions(8, ["MultiHeadAttention"], path, cells=[NEW_ATTENTION])
    text = path.read_text(encoding="utf-8")
    assert text.startswith(HEADER)
    blocks = read_blocks(text)
    assert sorted(blocks) == [8, 9]
    assert "version = 2" in blocks[8] and "version = 1" not in text
    assert "return 9" in blocks[9]
    namespace: dict = {}
    exec(text, namespace)  # the file imports and runs no notebook code
    assert namespace["f"]() == 9 and namespace["SCALE"] == 2
    assert "f: exported" in capsys.readouterr().out


def test_nothing_is_written_while_grading(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    path = tmp_path / "my_transformer.py"
    export_solutions(8, ["MultiHeadAttention"], path)  # not even the history is read
    assert not path.exists() and capsys.readouterr().out == ""


def test_outside_a_kernel_the_history_is_asked_for_in_one_line(tmp_path):
    with pytest.raises(RuntimeError, match="run it in a Jupyter kernel"):
        export_solutions(8, ["MultiHeadAttention"], tmp_path / "m.py")


def test_a_kernels_history_is_read_with_its_magics_translated(tmp_path, capsys):
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    shell = InteractiveShell.instance(config=config)
    try:
        shell.run_cell("def learning_rate(step):\n    return 1.0\n", store_history=True)
        shell.run_cell("%time x = 1\ndef learning_rate(step):\n    return 2.0\n", store_history=True)
        shell.run_cell("print(learning_rate(1))", store_history=True)
        export_solutions(9, ["learning_rate"], tmp_path / "my_transformer.py")
    finally:
        InteractiveShell.clear_instance()
    namespace: dict = {}
    exec((tmp_path / "my_transformer.py").read_text(encoding="utf-8"), namespace)
    assert namespace["learning_rate"](1) == 2.0  # the latest definition; the magic line left out
    assert "learning_rate: exported" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("arguments", "error", "message"),
    [
        ((8, "MultiHeadAttention", "m.py"), TypeError, "a list of the names"),
        (("8", ["MultiHeadAttention"], "m.py"), TypeError, "a lesson number"),
        ((8, ["MultiHeadAttention"], "notes.txt"), ValueError, "must be a Python file"),
    ],
)
def test_odd_arguments_get_one_line_errors(arguments, error, message):
    with pytest.raises(error, match=message):
        export_solutions(*arguments, cells=[])

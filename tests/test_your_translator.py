"""Lesson 9's "Train your translator": the student's pieces loaded, checked, replaced, assembled.

The reference solutions of lessons 8 and 9 are exported through the lessons' own export step
(from their solution cells, as a kernel's history would hold them). With them, the assembled model
*is* the package's model: the same initial weights and the same logits. A wrong piece is named in
one line and the package's own code does its part (never a package piece with the lesson's
interface: the package holds no graded answer).
"""

from pathlib import Path

import nbformat
import numpy as np
import pytest
import torch

from course_build.cell_roles import is_code_answer
from course_build.paths import solution_notebook
from transformer_course.shipped import shipped_checkpoint
from transformer_course.translation.decoding import beam_search
from transformer_course.translation.model import DecoderLayer, EncoderLayer, Transformer
from transformer_course.translation.settings import preset
from transformer_course.translation.solution_export import export_solutions
from transformer_course.translation.translator import load_translator
from transformer_course.translation.your_pieces import (
    CLASSES,
    FALLBACKS,
    FUNCTIONS,
    assemble,
    choose_pieces,
    load_pieces,
)
from transformer_course.translation.your_translator import search_with_step, train_your_translator

# Right at the small steps the check tries (lengths 1 and 3), wrong in a real search.
LATE_ERROR = (
    "    vocab = log_probs.shape[1]\n    if length > 3:\n        log_probs = np.roll(log_probs, 1, axis=1)\n"
)
UNWRITTEN_FORWARD = (
    "def forward(self, ids):\n        raise NotImplementedError()\n\n    def _unused(self, ids):"
)


def _solution_cells(lesson: str) -> list[str]:
    """The lesson's solution cells, as a kernel that ran the solutions notebook holds them."""
    notebook = nbformat.read(solution_notebook(lesson), as_version=4)
    return [cell.source for cell in notebook.cells if is_code_answer(cell)]


def reference_solutions() -> dict[int, list[str]]:
    """Lessons 8 and 9's solution cells, by lesson."""
    return {8: _solution_cells("08_encoder_decoder"), 9: _solution_cells("09_translator")}


def export_reference_solutions(path: Path, solutions: dict[int, list[str]] | None = None) -> Path:
    """``path`` written by lessons 8 and 9's export cells from the reference solutions."""
    solutions = solutions or reference_solutions()
    export_solutions(8, CLASSES, path, cells=solutions[8])
    export_solutions(9, FUNCTIONS, path, cells=solutions[9])
    return path


@pytest.fixture(scope="module")
def solutions() -> dict[int, list[str]]:
    return reference_solutions()


@pytest.fixture
def exported(tmp_path, solutions):
    return export_reference_solutions(tmp_path / "my_transformer.py", solutions)


def _replace(path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_the_reference_solutions_are_all_kept(exported):
    chosen = choose_pieces(exported)
    assert all(chosen.yours.values()), chosen.lines
    assert chosen.lines == [f"✓ {name}: yours" for name in CLASSES + FUNCTIONS]


def test_with_the_reference_classes_the_model_is_the_package_model(exported):
    config = preset("quick").model
    pieces = choose_pieces(exported).pieces
    torch.manual_seed(0)
    yours = assemble(pieces, config)
    torch.manual_seed(0)
    package = Transformer(config)
    ours, theirs = yours.state_dict(), package.state_dict()
    assert ours.keys() == theirs.keys()
    assert all(torch.equal(ours[name], theirs[name]) for name in theirs)  # the same draws, in order
    src = torch.randint(3, config.src_vocab_size, (3, 9))
    src[1, 6:] = 0
    tgt_in = torch.randint(3, config.tgt_vocab_size, (3, 7))
    tgt_in[2, 5:] = 0
    yours.eval(), package.eval()
    with torch.no_grad():
        gap = (yours(src, tgt_in) - package(src, tgt_in)).abs()[tgt_in != 0].max().item()
    assert gap < 1e-5


def test_without_student_classes_the_model_is_the_package_model_too():
    config = preset("tiny").model
    torch.manual_seed(1)
    course = assemble({}, config)
    torch.manual_seed(1)
    package = Transformer(config)
    assert all(
        torch.equal(a, b)
        for a, b in zip(course.state_dict().values(), package.state_dict().values(), strict=True)
    )


@pytest.mark.parametrize(
    ("piece", "old", "new", "reason"),
    [
        ("EncoderLayer", "x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask)))",
         "x = self.norm1(self.dropout(self.self_attn(x, x, x, mask)))", "differs from the course's"),
        ("learning_rate", "step * warmup**-1.5", "step * warmup**-0.5", "the course's scheduler sets"),
        ("label_smoothed_cross_entropy", "per_position[keep].sum() / keep.sum()",
         "per_position.mean()", "PyTorch's cross_entropy gives"),
        ("beam_step", "penalty = ((5 + length) / 6) ** alpha", "penalty = 1.0",
         "divided by the length penalty"),
        ("beam_step", "for i in order[:beam_size] if i % vocab == eos_id]",
         "for i in order if i % vocab == eos_id]", "EOS is among the best 4 extensions"),
        ("beam_step", "    vocab = log_probs.shape[1]\n", LATE_ERROR, "inside the course's search loop"),
        ("Embedding", "def forward(self, ids):", UNWRITTEN_FORWARD,
         "not written yet"),
    ],
)  # fmt: skip
def test_one_wrong_piece_is_named_and_replaced(exported, piece, old, new, reason):
    _replace(exported, old, new)
    chosen = choose_pieces(exported)
    assert [name for name, yours in chosen.yours.items() if not yours] == [piece]
    line = next(line for line in chosen.lines if line.startswith(f"✗ {piece}:"))
    assert reason in line and line.endswith(FALLBACKS[piece])
    assert piece not in chosen.pieces and len(chosen.pieces) == len(CLASSES + FUNCTIONS) - 1


def test_a_wrong_class_is_replaced_by_the_package_layer_in_the_assembled_model(exported):
    _replace(exported, "x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask)))",
             "x = self.norm1(self.dropout(self.self_attn(x, x, x, mask)))")  # fmt: skip
    pieces = choose_pieces(exported).pieces
    config = preset("tiny").model
    torch.manual_seed(0)
    model = assemble(pieces, config)
    assert all(type(layer) is EncoderLayer for layer in model.encoder.layers)
    assert all(type(layer).__module__ == "my_transformer" for layer in model.decoder.layers)
    torch.manual_seed(0)
    package = Transformer(config)
    assert model.state_dict().keys() == package.state_dict().keys()
    assert all(
        torch.equal(a, b)
        for a, b in zip(model.state_dict().values(), package.state_dict().values(), strict=True)
    )
    src = torch.randint(3, config.src_vocab_size, (2, 6))
    src[1, 4:] = 0  # the package's layers get the package's padding mask
    tgt_in = torch.randint(3, config.tgt_vocab_size, (2, 5))
    model.eval(), package.eval()
    with torch.no_grad():
        assert torch.allclose(model(src, tgt_in), package(src, tgt_in), atol=1e-5)


def test_a_wrong_attention_takes_the_layers_that_build_it_with_it(exported):
    _replace(exported, "attn_mask=mask,", "attn_mask=None if mask is None else ~mask,")
    chosen = choose_pieces(exported)
    failed = [name for name, yours in chosen.yours.items() if not yours]
    assert failed == ["MultiHeadAttention", "EncoderLayer", "DecoderLayer"]
    assert all("it builds your MultiHeadAttention, which failed its check" in line
               for line in chosen.lines[1:3])  # fmt: skip
    model = assemble(chosen.pieces, preset("tiny").model)
    assert type(model.encoder.layers[0]) is EncoderLayer and type(model.decoder.layers[0]) is DecoderLayer
    assert type(model.encoder.embed).__module__ == "my_transformer"  # the student's embedding stays


def test_a_missing_file_or_block_names_every_piece_it_lacks(tmp_path, solutions):
    _, problems = load_pieces(tmp_path / "my_transformer.py")
    assert set(problems) == set(CLASSES + FUNCTIONS)
    assert "run the export cells of lessons 8 and 9" in problems["beam_step"]
    path = tmp_path / "my_transformer.py"
    export_solutions(8, CLASSES, path, cells=solutions[8])
    _, problems = load_pieces(path)
    assert set(problems) == set(FUNCTIONS)
    assert problems["learning_rate"] == "lesson 9's export cell has not written it"


def test_a_block_that_fails_to_run_loses_only_its_lesson(exported):
    _replace(exported, "def learning_rate", "undefined_name()\n\n\ndef learning_rate")
    chosen = choose_pieces(exported)
    assert [name for name, yours in chosen.yours.items() if not yours] == list(FUNCTIONS)
    assert "NameError: name 'undefined_name' is not defined" in chosen.lines[-1]


def test_an_error_names_its_line_in_the_file(exported):
    _replace(exported, "return float(per_position[keep].sum() / keep.sum())", "return float(missing_name)")
    chosen = choose_pieces(exported)
    line = next(line for line in chosen.lines if "label_smoothed_cross_entropy" in line)
    lines = exported.read_text(encoding="utf-8").splitlines()
    number = next(i for i, text in enumerate(lines, start=1) if "missing_name" in text)
    assert f"NameError: name 'missing_name' is not defined (line {number} of my_transformer.py)" in line


def test_the_search_with_the_lesson_step_is_the_course_beam_search(exported):
    translator = load_translator(shipped_checkpoint("translator_quick.pt"), device="cpu")
    model, tokenizer = translator.model, translator.tokenizer
    step = choose_pieces(exported).pieces["beam_step"]  # the reference solution
    for sentence in ("the children saw a small bird .",):  # the check itself searches another
        src = torch.tensor([tokenizer.encode(sentence)])
        max_len = 2 * src.shape[1] + 10
        ours = search_with_step(model, src, tokenizer.bos_id, tokenizer.eos_id, max_len, step)
        theirs = beam_search(model, src, tokenizer.bos_id, tokenizer.eos_id, max_len)[0]
        assert ours == [t for t in theirs.tolist() if t != tokenizer.pad_id]


def test_while_grading_nothing_is_loaded_or_trained(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert train_your_translator(tmp_path / "absent.py") is None
    assert capsys.readouterr().out == ""


def test_without_training_the_checks_are_printed(exported, capsys):
    assert train_your_translator(exported, train=False) is None
    assert capsys.readouterr().out.count("✓") == len(CLASSES + FUNCTIONS)


def test_the_student_loss_is_compared_with_pytorchs_on_a_real_batch(exported):
    from transformer_course.translation.batching import BatchStream
    from transformer_course.translation.training import prepare_data
    from transformer_course.translation.your_translator import check_loss

    settings = preset("tiny")
    data = prepare_data(settings)
    model = Transformer(settings.with_vocabulary(data.tokenizer.vocab_size).model)
    batch = BatchStream(data.train, settings.max_tokens, 0).batch_at(0)
    check = check_loss(
        model, batch, choose_pieces(exported).pieces["label_smoothed_cross_entropy"], 0.1, "now"
    )
    assert check.yours == pytest.approx(check.pytorch, rel=1e-6)
    assert np.isfinite(check.yours) and check.yours > 1.0


def test_the_blank_release_falls_back_to_every_course_piece_and_still_assembles(tmp_path, capsys):
    import nbformat

    from course_build.paths import NOTEBOOKS_DIR

    path = tmp_path / "my_transformer.py"
    for lesson, names in ((8, CLASSES), (9, FUNCTIONS)):
        notebook = nbformat.read(next(NOTEBOOKS_DIR.glob(f"0{lesson}_*.ipynb")), as_version=4)
        cells = [cell.source for cell in notebook.cells if cell.cell_type == "code"]
        export_solutions(lesson, names, path, cells=cells)
    assert capsys.readouterr().out.count("still raises NotImplementedError") == len(CLASSES + FUNCTIONS)
    chosen = choose_pieces(path)
    assert not any(chosen.yours.values())
    assert all("not written yet (it raises NotImplementedError)" in line for line in chosen.lines)
    assert chosen.pieces == {}
    assert isinstance(assemble(chosen.pieces, preset("tiny").model), Transformer)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: train_your_translator("the cat sat"), "expected the path of the export file"),
        (lambda: train_your_translator("my_transformer.py", train="yes"), "train must be True or False"),
        (lambda: choose_pieces(3), "expected the path of the export file"),
        (lambda: assemble({}, "quick"), "a TransformerConfig"),
    ],
)
def test_odd_arguments_get_one_line_errors(call, message):
    with pytest.raises((TypeError, ValueError), match=message):
        call()


@pytest.mark.parametrize(
    ("lesson", "number", "names"), [("08_encoder_decoder", 8, CLASSES), ("09_translator", 9, FUNCTIONS)]
)
def test_each_lessons_export_cell_saves_the_pieces_the_run_loads(lesson, number, names):
    from course_build.paths import lesson_source

    call = (
        f"export_solutions({number}, [{', '.join(repr(name).replace(chr(39), chr(34)) for name in names)}])"
    )
    assert call in lesson_source(lesson).read_text(encoding="utf-8")

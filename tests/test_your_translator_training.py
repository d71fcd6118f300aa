"""Issue 25's end-to-end bar: lesson 9's "Train your translator" path, from the reference solutions
saved through the export step, trains as well as the course's model at the same steps and seed.

One run of each, kept small for the suite's time budget: the quick preset's model and data,
STEPS = 250 steps, dropout off, float64, one thread. The student path's run has one wrong piece, the loss
(it averages over the padding too): the cell must name it and only report it. The loss does not
change training (PyTorch computes the gradient either way), so the BLEU comparison still measures
the student's classes, ``learning_rate`` and ``beam_step`` against the course's model, scheduler
and ``beam_search`` (beam 4 on the first 50 test sentences).

Why dropout is off and why both models train in float64: with the reference pieces both models
start from the same weights (checked exactly in ``tests/test_your_translator.py``) and compute the
same function, so in training they differ only by float rounding, which Adam amplifies (a weight
whose gradient is near zero moves by about the learning rate, its sign set by rounding). Dropout
would add a different random stream on top (``nn.Dropout`` in the student's classes, ``torch.rand``
in the course's). In float32 the rounding alone moved BLEU by several points on this 2-core
machine (torch 2.13, one thread; 50 sentences at 250 steps: student path 73.5 against the course's
67.3; on 200 sentences at 500 to 1,000 steps, gaps of 0.5 to 2.9), and an earlier machine gave
68.7 against 68.8: at 250 steps BLEU is still climbing fast (0.4 at 100 steps, 56.8 at 200, 67.3
at 250), so a small drift is several points. In float64 the drift starts about 10^5 times smaller:
after 250 steps, 71.1 against 71.3 (final losses 1.625 and 1.603). A broken assembly (positions
removed) reached 39.5 at 250 steps, so BLEU near 70 still leaves it no way to pass. Cost measured:
about 110 s of CPU time per training path in float64 (about twice float32's), both evaluations
included.
"""

import pytest
import torch

from transformer_course.translation import your_translator
from transformer_course.translation.model import Transformer
from transformer_course.translation.settings import preset
from transformer_course.translation.training import Trainer, prepare_data
from transformer_course.translation.your_pieces import assemble
from transformer_course.translation.your_translator import beam_scores, train_your_translator

pytestmark = pytest.mark.slow

STEPS = 250
N_TEST = 50


@pytest.fixture
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_the_reference_solutions_train_as_well_as_the_course_model(tmp_path, capsys, one_thread, monkeypatch):
    from test_your_translator import export_reference_solutions

    # the cell's own path, with the model it assembles in float64 (see the module's docstring)
    monkeypatch.setattr(your_translator, "assemble", lambda pieces, config: assemble(pieces, config).double())

    path = export_reference_solutions(tmp_path / "my_transformer.py")
    text = path.read_text(encoding="utf-8")
    wrong = text.replace("per_position[keep].sum() / keep.sum()", "per_position.mean()")
    assert wrong != text
    path.write_text(wrong, encoding="utf-8")

    settings = preset("quick", max_steps=STEPS, time_budget_s=None, dropout=0.0)
    data = prepare_data(settings)
    yours = train_your_translator(path, settings=settings, data=data, n_test=N_TEST, progress=False)
    out = capsys.readouterr().out
    assert "✗ label_smoothed_cross_entropy: it gives" in out
    assert "it is only reported (PyTorch's loss trains the model either way)" in out
    assert out.count("✓") == 6  # the other six pieces are the student's
    assert yours.loss_checks == []  # a loss that failed its check is not compared again
    assert yours.translator.state.step == STEPS

    assert next(yours.translator.model.parameters()).dtype == torch.float64
    course = Trainer(
        settings, data.tokenizer, data.train, model_factory=lambda config: Transformer(config).double()
    )
    course.train(progress=False)
    pairs = data.corpus.test[:N_TEST]
    course_scores = beam_scores(course.model, data.tokenizer, pairs, None, "", progress=False)
    print(f"yours: {yours.scores.summary()}\ncourse: {course_scores.summary()}")
    assert course_scores.bleu > 20, "the step count no longer reaches a BLEU that can tell a broken model"
    assert abs(yours.scores.bleu - course_scores.bleu) <= 2.0

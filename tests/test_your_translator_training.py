"""Issue 25's end-to-end bar: lesson 9's "Train your translator" path, from the reference solutions
saved through the export step, trains as well as the course's model at the same steps and seed.

One run of each, kept small for the suite's time budget: the quick preset's model and data,
STEPS = 250 steps, dropout off, one thread. The student path's run has one wrong piece, the loss
(it averages over the padding too): the cell must name it and only report it. The loss does not
change training (PyTorch computes the gradient either way), so the BLEU comparison still measures
the student's classes, ``learning_rate`` and ``beam_step`` against the course's model, scheduler
and ``beam_search`` (beam 4 on the first 50 test sentences).

Why dropout is off: with the reference pieces both models start from the same weights (checked
exactly in ``tests/test_your_translator.py``), and in training they differ only by how dropout
draws its masks (``nn.Dropout`` in the student's classes, ``torch.rand`` in the course's) and by
float rounding. With dropout on, that is a different random stream, i.e. seed noise: measured on
this 2-core machine (torch 2.13, one thread), student path 72.5 BLEU against the course's 74.3,
a gap of 1.8 on one seed, too close to the bound to tell a broken assembly from noise. With dropout
off only rounding remains: 68.7 against 68.8 (final losses 1.615 and 1.638), and BLEU near 70
leaves a broken model no way to pass. Cost measured: about 230 s of CPU time in all (data 9 s,
the student path with both evaluations 115 s, the course's run 109 s).
"""

import pytest
import torch

from transformer_course.translation.settings import preset
from transformer_course.translation.solution_export import export_solutions
from transformer_course.translation.training import Trainer, prepare_data
from transformer_course.translation.your_pieces import CLASSES, FUNCTIONS
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


def test_the_reference_solutions_train_as_well_as_the_course_model(tmp_path, capsys, one_thread):
    from test_your_translator import _solution_cells

    path = tmp_path / "my_transformer.py"
    export_solutions(8, CLASSES, path, cells=_solution_cells("08_encoder_decoder"))
    export_solutions(9, FUNCTIONS, path, cells=_solution_cells("09_translator"))
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

    course = Trainer(settings, data.tokenizer, data.train)
    course.train(progress=False)
    pairs = data.corpus.test[:N_TEST]
    course_scores = beam_scores(course.model, data.tokenizer, pairs, None, "", progress=False)
    print(f"yours: {yours.scores.summary()}\ncourse: {course_scores.summary()}")
    assert course_scores.bleu > 20, "the step count no longer reaches a BLEU that can tell a broken model"
    assert abs(yours.scores.bleu - course_scores.bleu) <= 2.0

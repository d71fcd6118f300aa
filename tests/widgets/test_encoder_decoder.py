"""Lesson 8's widgets: changing a control changes what they show, and the numbers are right."""

import math

import numpy as np
import pytest

from transformer_course.translation.schedule import peak_lr
from transformer_course.widgets.encoder_decoder import (
    LabelSmoothingExplorer,
    ScheduleExplorer,
    _smoothed_loss,
    mask_figure,
)


def test_schedule_explorer_redraws_on_change():
    explorer = ScheduleExplorer()
    before_plot, before_text = explorer.plot.value, explorer.readout.value
    assert "<img" in before_plot and "step 4,000" in before_text
    explorer.warmup.value = 8000
    assert explorer.plot.value != before_plot and "step 8,000" in explorer.readout.value
    steps, rates = explorer.curve()
    assert int(steps[np.argmax(rates)]) == 8000
    explorer.d_model.value = 128
    assert math.isclose(explorer.curve()[1].max(), peak_lr(128, 8000), rel_tol=1e-12)
    assert f"{peak_lr(128, 8000):.2e}" in explorer.readout.value


def test_label_smoothing_explorer_minimum_sits_at_the_target():
    explorer = LabelSmoothingExplorer(epsilon=0.1, vocab_size=10)
    assert np.isclose(explorer.target().sum(), 1.0)
    assert math.isclose(explorer.best_probability(), 0.91)
    before = explorer.plot.value
    explorer.epsilon.value = 0.3
    assert explorer.plot.value != before and "0.730" in explorer.readout.value
    p = np.linspace(0.05, 0.999, 2000)
    assert abs(p[np.argmin(_smoothed_loss(p, 0.3, 10))] - 0.73) < 1e-3
    explorer.epsilon.value = 0.0
    assert explorer.best_probability() == 1.0


def test_mask_figure_and_errors():
    assert mask_figure([4, 2], width=4).startswith("<img")
    assert mask_figure([3], width=4) != mask_figure([2], width=4)
    with pytest.raises(ValueError, match="1..4"):
        mask_figure([5], width=4)
    with pytest.raises(ValueError, match="d_model"):
        ScheduleExplorer(d_model=300)
    with pytest.raises(ValueError, match="epsilon"):
        LabelSmoothingExplorer(epsilon=0.9)

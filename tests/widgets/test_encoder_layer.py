"""Lesson 7's word-order explorer, driven by a reference encoder layer written here."""

import numpy as np
import pytest
import torch

from transformer_course.layers import sinusoidal_encodings
from transformer_course.widgets.encoder_layer import WordOrderExplorer

RNG = np.random.default_rng(0)
D = 8
W_Q, W_K, W_V = (RNG.normal(size=(D, D)) / np.sqrt(D) for _ in range(3))


def layer(x):
    """One self-attention head with a residual: permutation-equivariant, as an encoder layer is."""
    weights = torch.softmax(torch.from_numpy((x @ W_Q) @ (x @ W_K).T / np.sqrt(D)), dim=-1).numpy()
    return x + weights @ (x @ W_V), weights


def layer_with_positions(x):
    return layer(x + sinusoidal_encodings(torch.arange(len(x)), D).double().numpy())


@pytest.fixture
def explorer():
    return WordOrderExplorer(["the", "cat", "sat"], RNG.normal(size=(3, D)), layer, layer_with_positions)


def test_without_positions_no_order_moves_any_output(explorer):
    for _, order in explorer.order.options:
        explorer.order.value = order
        assert explorer.shifts().max() < 1e-12


def test_with_positions_a_new_order_moves_the_outputs_and_the_original_does_not(explorer):
    explorer.positions.value = True
    explorer.order.value = (0, 1, 2)
    assert explorer.shifts().max() < 1e-12
    explorer.order.value = (2, 0, 1)
    assert explorer.shifts().min() > 1e-3


def test_controls_redraw_the_readout_and_the_plot(explorer):
    readout, plot = explorer.readout.value, explorer.plot.value
    explorer.order.value = (1, 0, 2)
    assert explorer.readout.value != readout and explorer.plot.value != plot
    assert "cat the sat" in explorer.readout.value
    explorer.positions.value = True
    assert "with positional encodings" in explorer.readout.value
    assert explorer.plot.value.startswith('<img src="data:image/png;base64,')


@pytest.mark.parametrize("words, rows", [(["one"], 1), (["a", "b"], 3), (list("abcdef"), 6)])
def test_bad_sizes_are_refused(words, rows):
    with pytest.raises(ValueError):
        WordOrderExplorer(words, np.zeros((rows, D)), layer, layer_with_positions)

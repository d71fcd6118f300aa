"""Lesson 6's widgets: ReLU sparsity, gradient norms through deep stacks, layer norm before/after."""

import numpy as np
import pytest
import torch

from transformer_course.widgets.ffn_residual_layer_norm import (
    LayerNormExplorer,
    ReluSparsity,
    ResidualDepth,
    first_layer_gradient_norms,
)


def test_relu_sparsity_follows_the_bias_shift():
    widget = ReluSparsity(shift=0.0)
    before, after = widget.hidden()
    assert np.array_equal(after, np.maximum(before, 0.0))
    middle = widget.zero_fraction()
    assert 0.3 < middle < 0.7
    before_plot = widget.plot.value
    widget.shift.value = -1.5
    assert widget.zero_fraction() > middle
    assert widget.plot.value != before_plot
    assert f"{100 * widget.zero_fraction():.0f}%" in widget.readout.value
    widget.shift.value = 1.5
    assert widget.zero_fraction() < middle


def test_one_layer_gradient_matches_a_hand_derivation():
    # Depth 1: loss = sum(r * relu(x W + b)), so dloss/dW = xᵀ (r ⊙ [x W + b > 0]).
    width, batch = 32, 16
    generator = torch.Generator().manual_seed(0)
    bound = 1.0 / width**0.5
    w = ((torch.rand(width, width, generator=generator) * 2 - 1) * bound).numpy()
    b = ((torch.rand(width, generator=generator) * 2 - 1) * bound).numpy()
    x = torch.randn(batch, width, generator=generator).numpy()
    r = torch.randn(batch, width, generator=generator).numpy()
    expected = np.linalg.norm(x.T @ (r * (x @ w + b > 0)))
    for residual in (False, True):  # the skip adds x, which does not depend on W
        norms = first_layer_gradient_norms(1, residual=residual, width=width, batch=batch)
        assert norms[0] == pytest.approx(expected, rel=1e-5)


def test_residuals_keep_the_gradient_from_vanishing():
    plain = first_layer_gradient_norms(30, residual=False)
    skip = first_layer_gradient_norms(30, residual=True)
    assert plain[-1] < 1e-6 * plain[0]
    assert skip[-1] > skip[0]
    skip_ln = first_layer_gradient_norms(30, residual=True, layer_norm=True)
    assert 0.1 < skip_ln[-1] / skip_ln[0] < 10


def test_residual_depth_widget_redraws_for_depth_and_layer_norm():
    widget = ResidualDepth(depth=10)
    assert len(widget.norms(residual=False)) == 10
    text, plot = widget.readout.value, widget.plot.value
    widget.depth.value = 25
    assert len(widget.norms(residual=True)) == 25
    assert widget.readout.value != text and widget.plot.value != plot
    assert f"{widget.norms(residual=False)[-1]:.1e}" in widget.readout.value
    text = widget.readout.value
    widget.layer_norm.value = True
    assert widget.readout.value != text and widget.readout.value.startswith("With layer norm")
    assert np.allclose(
        widget.norms(residual=True), first_layer_gradient_norms(60, True, layer_norm=True)[:25]
    )


def test_layer_norm_explorer_matches_torch_and_removes_scale_and_shift():
    widget = LayerNormExplorer()
    widget.gamma.value = -2.0
    widget.beta.value = 1.5
    before, after = widget.vectors()
    expected = torch.nn.functional.layer_norm(
        torch.from_numpy(before),
        (before.size,),
        torch.full((before.size,), -2.0, dtype=torch.float64),
        torch.full((before.size,), 1.5, dtype=torch.float64),
        eps=1e-5,
    ).numpy()
    assert np.allclose(after, expected, atol=1e-6)
    assert after.mean() == pytest.approx(1.5) and after.std() == pytest.approx(2.0, rel=1e-4)
    text, plot = widget.readout.value, widget.plot.value
    widget.shift.value = -8.0
    widget.scale.value = 0.5
    new_before, new_after = widget.vectors()
    assert not np.allclose(new_before, before)
    assert np.allclose(new_after, after, atol=1e-3)  # normalisation removes input scale and shift
    assert widget.readout.value != text and widget.plot.value != plot


@pytest.mark.parametrize(
    "factory, message",
    [
        (lambda: ReluSparsity(d_ff=0), "positive"),
        (lambda: first_layer_gradient_norms(0, residual=True), "positive"),
        (lambda: ResidualDepth(depth=1), "depth must lie"),
        (lambda: LayerNormExplorer(size=1), "at least 2 features"),
    ],
)
def test_bad_input_gets_a_clear_error(factory, message):
    with pytest.raises(ValueError, match=message):
        factory()

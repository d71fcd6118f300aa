"""Lesson 3's saturation study: the Jacobian formula, the measurement and its figure."""

import numpy as np
import pytest
import torch

from transformer_course.widgets.softmax_jacobian import (
    saturation_figure,
    saturation_study,
    share_below,
    softmax_jacobian,
)


def test_jacobian_matches_autograd_with_batch_dimensions():
    scores = torch.randn(3, 2, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    weights = torch.softmax(scores, dim=-1)
    ours = softmax_jacobian(weights.numpy())
    assert ours.shape == (3, 2, 5, 5)
    for index in np.ndindex(3, 2):
        expected = torch.autograd.functional.jacobian(lambda s: torch.softmax(s, dim=-1), scores[index])
        np.testing.assert_allclose(ours[index], expected.numpy(), atol=1e-12)


def test_one_hot_weights_pass_back_nothing_and_uniform_weights_one_over_n():
    assert np.array_equal(softmax_jacobian(np.eye(4)[2]), np.zeros((4, 4)))
    assert np.isclose(np.linalg.eigvalsh(softmax_jacobian(np.full(5, 0.2)))[-1], 0.2)


@pytest.mark.parametrize("bad", [np.array([0.5, 0.6]), np.array([1.2, -0.2]), np.zeros(0)])
def test_jacobian_refuses_what_is_not_a_probability_vector(bad):
    with pytest.raises(ValueError, match="p must"):
        softmax_jacobian(bad)


def test_unscaled_scores_starve_the_gradient_and_scaled_ones_do_not():
    study = saturation_study([4, 64, 512], n_keys=16, draws=300, seed=3)
    assert study.norm_unscaled.shape == study.norm_scaled.shape == (3, 300)
    medians = np.median(study.norm_unscaled, axis=1)
    assert medians[0] > medians[1] > 100 * medians[2] > 0
    assert share_below(study.norm_unscaled)[2] > 0.4
    assert np.all(share_below(study.norm_scaled) == 0)
    top_unscaled = np.median(study.top_weight_unscaled, axis=1)
    assert np.all(top_unscaled[1:] > np.median(study.top_weight_scaled, axis=1)[1:])


def test_the_same_seed_gives_the_same_study_and_another_seed_another():
    first, again = saturation_study([8, 32], draws=20, seed=5), saturation_study([8, 32], draws=20, seed=5)
    assert np.array_equal(first.norm_unscaled, again.norm_unscaled)
    assert not np.array_equal(first.norm_unscaled, saturation_study([8, 32], draws=20, seed=6).norm_unscaled)


@pytest.mark.parametrize(
    "kwargs", [{"d_k_values": []}, {"d_k_values": [0, 4]}, {"d_k_values": [4], "n_keys": 1}]
)
def test_study_refuses_bad_sizes(kwargs):
    with pytest.raises(ValueError):
        saturation_study(**kwargs)


def test_figure_is_an_inline_png_with_a_description():
    html = saturation_figure(saturation_study([1, 16, 256], draws=10))
    assert html.startswith('<img src="data:image/png;base64,') and 'alt="The norm of the softmax' in html

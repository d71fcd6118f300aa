"""Lesson 3's widgets: the attention simulator's weights match PyTorch and every control changes
the view; the saturation study's Jacobian formula, its measurement and its figure."""

import numpy as np
import pytest
import torch

from transformer_course.widgets.attention import (
    AttentionSimulator,
    saturation_figure,
    saturation_study,
    share_below,
    softmax_jacobian,
)

TOKENS = ["the", "cat", "sat", "on"]
RNG = np.random.default_rng(0)
QUERIES = RNG.normal(size=(4, 3))
KEYS = RNG.normal(size=(4, 3))


def _torch_weights(temperature: float, causal: bool) -> np.ndarray:
    scores = torch.from_numpy(QUERIES @ KEYS.T) / (temperature * np.sqrt(3))
    if causal:
        scores = scores.masked_fill(~torch.ones(4, 4, dtype=torch.bool).tril(), float("-inf"))
    return torch.softmax(scores, dim=-1).numpy()


def test_weights_match_torch_for_every_setting():
    simulator = AttentionSimulator(TOKENS, QUERIES, KEYS)
    assert np.allclose(simulator.weights(), _torch_weights(1.0, False))
    simulator.temperature.value = 0.1
    simulator.causal.value = True
    assert np.allclose(simulator.weights(), _torch_weights(simulator.temperature.value, True))
    assert np.all(simulator.weights()[np.triu_indices(4, k=1)] == 0.0)
    assert np.allclose(simulator.weights().sum(axis=-1), 1.0)


def test_readout_follows_the_selected_query():
    simulator = AttentionSimulator(TOKENS, QUERIES, KEYS, query_index=0)
    before_text, before_plot = simulator.readout.value, simulator.plot.value
    simulator.query.value = 2
    row = simulator.weights()[2]
    top = int(np.argmax(row))
    assert simulator.readout.value != before_text and simulator.plot.value != before_plot
    assert f"<b>{TOKENS[2]}</b> (position 2)" in simulator.readout.value
    assert f"<b>{TOKENS[top]}</b> (position {top}): <b>{row[top]:.3f}</b>" in simulator.readout.value


def test_temperature_saturates_or_flattens_the_softmax():
    simulator = AttentionSimulator(TOKENS, QUERIES, KEYS, query_index=1)
    simulator.temperature.value = 10**simulator.temperature.max
    hot = simulator.weights()[1]
    assert simulator.entropy(hot) > 0.95 * np.log(4)  # nearly uniform
    simulator.temperature.value = 10**simulator.temperature.min
    cold = simulator.weights()[1]
    assert cold.max() > 0.95  # nearly one-hot
    assert f"{simulator.entropy(cold):.3f} nats" in simulator.readout.value


def test_causal_mask_leaves_the_first_token_only_itself():
    simulator = AttentionSimulator(TOKENS, QUERIES, KEYS, query_index=0)
    before = simulator.plot.value
    simulator.causal.value = True
    assert simulator.plot.value != before
    assert np.array_equal(simulator.weights()[0], [1.0, 0.0, 0.0, 0.0])
    assert "over 1 visible keys" in simulator.readout.value
    assert simulator.entropy(simulator.weights()[0]) == 0.0
    assert "Entropy 0.000 nats" in simulator.readout.value, "a one-hot row has entropy 0, not -0"


def test_tied_weights_are_named_together_not_as_one_winner():
    tokens = ["a", "b", "c", "d"]
    same = np.ones((4, 2))  # every key equal: every query spreads its weight evenly
    simulator = AttentionSimulator(tokens, same, same, query_index=3)
    assert simulator.top_keys(simulator.weights()[3]) == [0, 1, 2, 3]
    readout = simulator.readout.value
    assert "splits its largest weight equally between" in readout and "0.250</b> each" in readout
    assert all(f"<b>{t}</b> (position {j})" in readout for j, t in enumerate(tokens))
    assert "puts the most weight on" not in readout


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"queries": np.ones(4)}, "2-D"),
        ({"keys": np.ones((4, 2))}, "same shape"),
        ({"tokens": ["a", "b"]}, "2 tokens but 4"),
        ({"query_index": 4}, "not a token position"),
        ({"temperature": 0.0}, "positive"),
    ],
)
def test_bad_input_gets_a_clear_error(kwargs, message):
    arguments = {"tokens": TOKENS, "queries": QUERIES, "keys": KEYS, **kwargs}
    with pytest.raises(ValueError, match=message):
        AttentionSimulator(**arguments)


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

"""Lesson 3's attention simulator: its weights match PyTorch and every control changes the view."""

import numpy as np
import pytest
import torch

from transformer_course.widgets.attention import AttentionSimulator

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

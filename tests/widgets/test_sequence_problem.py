"""Lesson 1's helpers: the cost counts, the RNN, the timings and the explorer widget."""

import numpy as np
import pytest

from transformer_course.widgets.sequence_problem import (
    SequenceCostExplorer,
    best_time_s,
    measure_timings,
    previous_states,
    random_sequence,
    recurrent_cost,
    run_all_steps_at_once,
    run_rnn,
    run_self_attention,
    self_attention_cost,
)


def test_costs_follow_table_1():
    rnn, attention = recurrent_cost(100, 512), self_attention_cost(100, 512)
    assert (rnn.sequential_steps, rnn.max_path_length, rnn.operations) == (100, 99, 100 * 512**2)
    assert (attention.sequential_steps, attention.max_path_length) == (1, 1)
    assert attention.operations == 100**2 * 512


def test_attention_is_cheaper_exactly_below_the_width():
    d = 64
    for n in range(1, 200):
        cheaper = self_attention_cost(n, d).operations < recurrent_cost(n, d).operations
        assert cheaper == (n < d)


@pytest.mark.parametrize("bad", [0, -3])
def test_non_positive_sizes_are_refused(bad):
    with pytest.raises(ValueError, match="at least 1"):
        recurrent_cost(bad, 8)
    with pytest.raises(ValueError, match="at least 1"):
        self_attention_cost(8, bad)


@pytest.mark.parametrize("bad", [2.5, "8", True])
def test_non_integer_sizes_are_refused(bad):
    with pytest.raises(TypeError, match="whole number"):
        recurrent_cost(bad, 8)


def test_rnn_matches_its_recurrence_step_by_step():
    x, w_x, w_h = random_sequence(5, 3, seed=2)
    states = run_rnn(x, w_x, w_h)
    hidden = np.zeros(3)
    for t in range(5):
        hidden = np.tanh(x[t] @ w_x + hidden @ w_h)
        np.testing.assert_allclose(states[t], hidden)


def test_all_at_once_gives_the_rnn_states_from_the_previous_states():
    x, w_x, w_h = random_sequence(6, 4, seed=3)
    states = run_rnn(x, w_x, w_h)
    h_prev = previous_states(states)
    np.testing.assert_array_equal(h_prev[0], np.zeros(4))
    np.testing.assert_array_equal(h_prev[1:], states[:-1])
    np.testing.assert_allclose(run_all_steps_at_once(x, w_x, w_h, h_prev), states)


def test_self_attention_rows_are_convex_combinations():
    x, _, _ = random_sequence(7, 4, seed=4)
    out = run_self_attention(x)
    assert out.shape == x.shape
    assert np.all(out <= x.max(axis=0) + 1e-12) and np.all(out >= x.min(axis=0) - 1e-12)


def test_timings_have_one_positive_entry_per_length():
    timings = measure_timings([4, 8], d=8, repeats=1)
    for name in ("rnn", "all_at_once", "attention"):
        assert timings[name].shape == (2,) and np.all(timings[name] > 0)
    with pytest.raises(ValueError):
        best_time_s(lambda: None, repeats=0)
    with pytest.raises(ValueError):
        measure_timings([], d=8)


@pytest.fixture(scope="module")
def explorer():
    return SequenceCostExplorer(measure_timings([8, 16, 32, 64], d=16, repeats=1), d=16, n=8)


def test_explorer_shows_the_chosen_length(explorer):
    assert "n = 8" in explorer.table.value
    assert "<td style='text-align:right'>8</td>" in explorer.table.value  # RNN: 8 sequential steps
    assert explorer.plot.value.startswith('<img src="data:image/png;base64,')


def test_moving_the_slider_changes_table_and_plot(explorer):
    table, plot = explorer.table.value, explorer.plot.value
    explorer.length.value = 40
    assert explorer.table.value != table and explorer.plot.value != plot
    assert "n = 40" in explorer.table.value
    assert f"{40 * 16 * 16:,}" in explorer.table.value
    assert f"{40 * 40 * 16:,}" in explorer.table.value

"""Lesson 1: what a recurrent layer and a self-attention layer cost as sequences grow.

The counts follow Table 1 of Vaswani et al. (2017): per layer, a recurrent layer needs n
sequential steps, a maximum path length of n - 1 between two tokens and about n·d² operations;
self-attention needs one sequential step, path length 1 and about n²·d operations.
The timings are measured on whatever machine runs the notebook.
"""

import time
from dataclasses import dataclass

import ipywidgets as widgets
import numpy as np
import torch
from threadpoolctl import threadpool_limits

from transformer_course.widgets.base import ShowsView
from transformer_course.widgets.figures import figure_to_html, new_figure


@dataclass(frozen=True)
class LayerCost:
    """What one layer costs over a sequence of ``n`` tokens of width ``d``."""

    sequential_steps: int
    max_path_length: int
    operations: int


def _check_sizes(n: int, d: int) -> None:
    for name, value in (("n", n), ("d", d)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise TypeError(f"{name} must be a whole number, got {type(value).__name__}")
        if value < 1:
            raise ValueError(f"{name} must be at least 1, got {value}")


def recurrent_cost(n: int, d: int) -> LayerCost:
    """A recurrent layer: one step per token, and token 1 reaches token n through n - 1 steps."""
    _check_sizes(n, d)
    return LayerCost(sequential_steps=n, max_path_length=n - 1, operations=n * d * d)


def self_attention_cost(n: int, d: int) -> LayerCost:
    """Self-attention: every token sees every other token in one step (one matrix product)."""
    _check_sizes(n, d)
    return LayerCost(sequential_steps=1, max_path_length=1 if n > 1 else 0, operations=n * n * d)


def random_sequence(n: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Token vectors ``x`` (n, d) and recurrent weights ``W_x``, ``W_h`` (d, d) scaled to stay stable."""
    _check_sizes(n, d)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d))
    w_x = rng.standard_normal((d, d)) / np.sqrt(d)
    w_h = rng.standard_normal((d, d)) / np.sqrt(d)
    return x, w_x, w_h


def run_rnn(x: np.ndarray, w_x: np.ndarray, w_h: np.ndarray) -> np.ndarray:
    """All hidden states of a tanh RNN: each step needs the previous one, so it is a loop."""
    hidden = np.zeros(w_h.shape[0])
    states = np.empty((x.shape[0], w_h.shape[0]))
    for t, x_t in enumerate(x):
        hidden = np.tanh(x_t @ w_x + hidden @ w_h)
        states[t] = hidden
    return states


def previous_states(states: np.ndarray) -> np.ndarray:
    """``h_0 = 0, h_1, ..., h_{n-1}``: the state each RNN step starts from, one row per step."""
    return np.vstack([np.zeros((1, states.shape[1])), states[:-1]])


def run_all_steps_at_once(x: np.ndarray, w_x: np.ndarray, w_h: np.ndarray, h_prev: np.ndarray) -> np.ndarray:
    """The RNN's arithmetic, ``tanh(x W_x + h_prev W_h)``, with every previous state given up front.

    ``h_prev`` comes from :func:`previous_states` of an earlier :func:`run_rnn`, so the result is
    exactly the RNN's states, from the same multiply-adds (two ``d x d`` products per token). What
    it lacks is the chain: no step waits for another, so all n steps run as two matrix products.
    Not a usable model (it needs the answer first); it prices the arithmetic alone.
    """
    return np.tanh(x @ w_x + h_prev @ w_h)


def run_self_attention(x: np.ndarray) -> np.ndarray:
    """Self-attention of ``x`` on itself with no projections: all positions in a few matrix products."""
    scores = torch.from_numpy(x @ x.T / np.sqrt(x.shape[-1]))
    # PyTorch's softmax: the NumPy one is an exercise of lesson 3.
    return torch.softmax(scores, dim=-1).numpy() @ x


def best_time_s(function, *args, repeats: int = 5) -> float:
    """Best of ``repeats`` wall-clock runs: the least disturbed by other work on the machine."""
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        function(*args)
        best = min(best, time.perf_counter() - started)
    return best


def measure_timings(lengths: list[int], d: int, repeats: int = 5) -> dict[str, np.ndarray]:
    """Seconds, at each sequence length, for the RNN loop, the same arithmetic with the previous
    states given up front (:func:`run_all_steps_at_once`) and one self-attention pass.

    Everything runs on one core: multi-threaded matrix products on a busy machine (a laptop, a
    shared Colab VM) wait for threads more than they compute, which would blur the comparison
    of waiting (the loop) against arithmetic.
    """
    if not lengths:
        raise ValueError("give at least one sequence length")
    runs = {"rnn": [], "all_at_once": [], "attention": []}
    with threadpool_limits(limits=1):
        for n in lengths:
            x, w_x, w_h = random_sequence(n, d)
            runs["rnn"].append(best_time_s(run_rnn, x, w_x, w_h, repeats=repeats))
            h_prev = previous_states(run_rnn(x, w_x, w_h))
            at_once = best_time_s(run_all_steps_at_once, x, w_x, w_h, h_prev, repeats=repeats)
            runs["all_at_once"].append(at_once)
            runs["attention"].append(best_time_s(run_self_attention, x, repeats=repeats))
    return {"lengths": np.array(lengths)} | {name: np.array(times) for name, times in runs.items()}


class SequenceCostExplorer(ShowsView):
    """A slider over sequence length showing both layers' costs and the measured timings.

    ``timings`` comes from :func:`measure_timings` (measured once, when the widget is built);
    moving the slider updates the table and marks the chosen length on the plot.
    """

    def __init__(self, timings: dict[str, np.ndarray], d: int = 64, n: int = 32) -> None:
        self.timings = timings
        self.d = d
        lengths = timings["lengths"]
        self.length = widgets.IntSlider(
            value=n,
            min=int(lengths.min()),
            max=int(lengths.max()),
            step=1,
            description="tokens n",
            continuous_update=False,
        )
        self.table = widgets.HTML()
        self.plot = widgets.HTML()
        self.length.observe(self._on_change, names="value")
        self.view = widgets.VBox([self.length, self.table, self.plot])
        self.refresh()

    def _on_change(self, _change: dict) -> None:
        self.refresh()

    def refresh(self) -> None:
        n = self.length.value
        rnn, attention = recurrent_cost(n, self.d), self_attention_cost(n, self.d)
        rows = [
            ("sequential steps", rnn.sequential_steps, attention.sequential_steps),
            ("longest path between two tokens", rnn.max_path_length, attention.max_path_length),
            (f"multiply-adds, Table 1's leading term (d = {self.d})", rnn.operations, attention.operations),
        ]
        body = "".join(
            f"<tr><td>{name}</td><td style='text-align:right'>{a:,}</td>"
            f"<td style='text-align:right'>{b:,}</td></tr>"
            for name, a, b in rows
        )
        self.table.value = (
            f"<table><thead><tr><th>n = {n}</th><th>recurrent layer</th>"
            f"<th>self-attention</th></tr></thead><tbody>{body}</tbody></table>"
        )
        self.plot.value = self._draw(n)

    def _draw(self, n: int) -> str:
        fig = new_figure(6.5, 3.6)
        ax = fig.add_subplot()
        lengths = self.timings["lengths"]
        ax.plot(lengths, self.timings["rnn"] * 1e3, "o-", label="RNN loop (n sequential steps)")
        ax.plot(
            lengths, self.timings["all_at_once"] * 1e3, "^-", label="same arithmetic, no chain (one product)"
        )
        ax.plot(lengths, self.timings["attention"] * 1e3, "s-", label="self-attention (one pass)")
        ax.axvline(n, color="grey", linestyle="--", linewidth=1)
        ax.set_xscale("log", base=2)
        ax.set_xticks(lengths, [str(n) for n in lengths])
        ax.set_yscale("log")
        ax.set_xlabel("sequence length n (tokens)")
        ax.set_ylabel("time on one core here (ms)")
        ax.set_title(f"Measured here, d = {self.d}; dashed line: n = {n}")
        ax.legend(loc="upper left", fontsize="small")
        return figure_to_html(fig, alt=f"Measured RNN and self-attention times; n = {n} marked")

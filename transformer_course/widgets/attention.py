"""Widget for lesson 3: an attention simulator for a short sentence.

:class:`AttentionSimulator` shows the weight matrix ``softmax(QKᵀ / (τ √d_k))`` as a heatmap, the
distribution of one chosen query as bars, a temperature ``τ`` that shows how a softmax saturates
(small ``τ``: all weight on one key; large ``τ``: uniform) and a causal-mask toggle that leaves
the lower-triangular pattern a decoder uses.

The widget computes its weights with a private softmax; it is a demonstration, not the graded
``scaled_dot_product_attention`` students write in the lesson.
"""

from __future__ import annotations

from html import escape

import ipywidgets as widgets
import numpy as np
import torch
from matplotlib.patches import Rectangle

from transformer_course.widgets.base import ShowsView
from transformer_course.widgets.figures import figure_to_html, new_figure


def _softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """PyTorch's softmax, so the package never holds the NumPy code students write in lesson 3.

    Rows with ``-inf`` entries are fine as long as one entry is finite.
    """
    return torch.softmax(torch.as_tensor(x, dtype=torch.float64), dim=axis).numpy()


class AttentionSimulator(ShowsView):
    """Attention weights of a short sentence under a temperature and an optional causal mask.

    ``queries`` and ``keys`` hold one row per token (``(n, d_k)``); the widget shows how each
    token's query spreads its attention over the keys.
    """

    def __init__(
        self,
        tokens: list[str],
        queries: np.ndarray,
        keys: np.ndarray,
        query_index: int = 0,
        temperature: float = 1.0,
        causal: bool = False,
    ) -> None:
        queries = np.asarray(queries, dtype=float)
        keys = np.asarray(keys, dtype=float)
        if queries.ndim != 2 or keys.ndim != 2:
            raise ValueError(
                f"queries and keys must be 2-D (one row per token), got {queries.ndim}-D and {keys.ndim}-D"
            )
        if queries.shape != keys.shape:
            raise ValueError(
                f"queries {queries.shape} and keys {keys.shape} must have the same shape "
                "(self-attention: one query and one key per token, same d_k)"
            )
        if len(tokens) != queries.shape[0]:
            raise ValueError(f"{len(tokens)} tokens but {queries.shape[0]} query rows")
        if not 0 <= query_index < len(tokens):
            raise ValueError(f"query_index {query_index} is not a token position")
        if temperature <= 0:
            raise ValueError(f"temperature must be positive, got {temperature}")
        self.tokens = list(tokens)
        self.queries = queries
        self.keys = keys
        self.query = widgets.Dropdown(
            options=[(f"{i}: {t}", i) for i, t in enumerate(self.tokens)],
            value=query_index,
            description="query",
        )
        self.temperature = widgets.FloatLogSlider(
            value=temperature, base=10, min=-1.5, max=1.5, step=0.05, description="τ"
        )
        self.causal = widgets.Checkbox(value=causal, description="causal mask")
        self.readout = widgets.HTML()
        self.plot = widgets.HTML()
        for control in (self.query, self.temperature, self.causal):
            control.observe(self._on_change, names="value")
        controls = widgets.HBox([self.query, self.temperature, self.causal])
        self.view = widgets.VBox([controls, self.readout, self.plot])
        self._redraw()

    def scores(self) -> np.ndarray:
        """Scaled scores ``QKᵀ / (τ √d_k)``, with ``-inf`` where the causal mask forbids."""
        d_k = self.queries.shape[1]
        scores = self.queries @ self.keys.T / (self.temperature.value * np.sqrt(d_k))
        if self.causal.value:
            allowed = np.tril(np.ones(scores.shape, dtype=bool))
            scores = np.where(allowed, scores, -np.inf)
        return scores

    def weights(self) -> np.ndarray:
        """The ``(n, n)`` weight matrix currently shown; each row sums to 1."""
        return _softmax(self.scores())

    def entropy(self, row: np.ndarray) -> float:
        """Entropy of one weight row in nats: 0 for one-hot, ``log n`` for uniform over n keys."""
        positive = row[row > 0]
        # Every term -p log p is >= 0; max() turns the -0.0 of a one-hot row into 0.0.
        return max(0.0, float(-np.sum(positive * np.log(positive))))

    def top_keys(self, row: np.ndarray) -> list[int]:
        """Positions holding the largest weight of ``row``: several when weights tie."""
        return [int(j) for j in np.flatnonzero(np.isclose(row, row.max(), rtol=1e-9, atol=0.0))]

    def _on_change(self, _change: dict | None = None) -> None:
        self._redraw()

    def _redraw(self) -> None:
        weights = self.weights()
        i = self.query.value
        row = weights[i]
        top = self.top_keys(row)
        visible = int(np.count_nonzero(row))
        named = [f"<b>{escape(self.tokens[j])}</b> (position {j})" for j in top]
        if len(top) == 1:
            winner = f"puts the most weight on {named[0]}: <b>{row[top[0]]:.3f}</b>"
        else:
            winner = (
                f"splits its largest weight equally between {', '.join(named[:-1])} and {named[-1]}: "
                f"<b>{row[top[0]]:.3f}</b> each"
            )
        self.readout.value = (
            f"Query <b>{escape(self.tokens[i])}</b> (position {i}) {winner}. "
            f"Entropy {self.entropy(row):.3f} nats over {visible} visible keys "
            f"(uniform would be log {visible} = {np.log(visible):.3f}; one-hot would be 0)."
        )
        self.plot.value = self._draw(weights, i)

    def _draw(self, weights: np.ndarray, selected: int) -> str:
        n = len(self.tokens)
        labels = [f"{j}:{t}" for j, t in enumerate(self.tokens)]
        fig = new_figure(9.0, 3.8)
        heat, bars = fig.subplots(1, 2, width_ratios=[1.1, 1.0])
        heat.imshow(weights, cmap="viridis", vmin=0.0, vmax=1.0)
        for r in range(n):
            for c in range(n):
                colour = "black" if weights[r, c] > 0.6 else "white"
                heat.text(c, r, f"{weights[r, c]:.2f}", ha="center", va="center", fontsize=7, color=colour)
        heat.add_patch(Rectangle((-0.5, selected - 0.5), n, 1.0, fill=False, edgecolor="red", linewidth=2.0))
        heat.set_xticks(range(n), labels, rotation=45, ha="right", fontsize=8)
        heat.set_yticks(range(n), labels, fontsize=8)
        heat.set_xlabel("key")
        heat.set_ylabel("query")
        heat.set_title(f"weights, τ = {self.temperature.value:.2f}", fontsize=10)
        bars.bar(range(n), weights[selected], color="tab:red")
        bars.set_ylim(0.0, 1.0)
        bars.set_xticks(range(n), labels, rotation=45, ha="right", fontsize=8)
        bars.set_title(f"query {labels[selected]}: its weights over the keys", fontsize=10)
        mask_text = "with a causal mask" if self.causal.value else "without a mask"
        return figure_to_html(
            fig,
            alt=f"Attention weights of {n} tokens {mask_text}; the row of query "
            f"{self.tokens[selected]} is outlined and drawn as bars",
        )

"""Widgets and figures of lesson 3: an attention simulator, and the softmax's saturation measured.

* :class:`AttentionSimulator` shows the weight matrix ``softmax(QKᵀ / (τ √d_k))`` of a short
  sentence as a heatmap, the distribution of one chosen query as bars, a temperature ``τ`` that
  shows how a softmax saturates (small ``τ``: all weight on one key; large ``τ``: uniform) and a
  causal-mask toggle that leaves the lower-triangular pattern a decoder uses.
* :func:`saturation_study` and :func:`saturation_figure`: does a saturated softmax pass back tiny
  gradients? The paper only *suspects* it: "for large values of d_k, the dot products grow large
  in magnitude, pushing the softmax function into regions where it has extremely small
  gradients". The softmax's Jacobian is ``diag(p) - p pᵀ`` (:func:`softmax_jacobian`); its largest
  eigenvalue (it is symmetric and positive semi-definite) bounds how much of a loss gradient
  reaches the scores. The study draws random queries and keys with unit-variance entries, as the
  paper's footnote assumes, and measures that norm as ``d_k`` grows, with and without the
  ``1/√d_k`` scaling, over many draws per width.

Both compute softmaxes with PyTorch; they are demonstrations, not the graded
``scaled_dot_product_attention`` students write in the lesson.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

import ipywidgets as widgets
import numpy as np
import torch
from matplotlib.patches import Rectangle

from transformer_course.widgets.base import ShowsView
from transformer_course.widgets.figures import figure_to_html, new_figure


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
        # PyTorch's softmax, not a helper of our own: the package holds no answer to lesson 3's
        # graded softmax. A row with -inf entries is fine as long as one entry is finite.
        return torch.softmax(torch.as_tensor(self.scores(), dtype=torch.float64), dim=-1).numpy()

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


def softmax_jacobian(p: np.ndarray) -> np.ndarray:
    """``diag(p) - p pᵀ`` for probability vectors ``p`` of shape ``(..., n)``: entry ``(i, j)`` is
    ``∂p_i/∂s_j`` of ``p = softmax(s)``. Returns shape ``(..., n, n)``."""
    p = np.asarray(p, dtype=float)
    if p.ndim < 1 or p.shape[-1] < 1:
        raise ValueError(f"p must have a last axis of at least one probability, got shape {p.shape}")
    if np.any(p < 0) or not np.allclose(p.sum(axis=-1), 1.0):
        raise ValueError("p must hold probability vectors: non-negative entries summing to 1")
    return p[..., :, None] * np.eye(p.shape[-1]) - p[..., :, None] * p[..., None, :]


@dataclass(frozen=True)
class SaturationStudy:
    """Per width ``d_k`` (rows) and random draw (columns): the Jacobian's norm and the top weight."""

    d_k: np.ndarray
    n_keys: int
    seed: int
    norm_unscaled: np.ndarray
    norm_scaled: np.ndarray
    top_weight_unscaled: np.ndarray
    top_weight_scaled: np.ndarray


def saturation_study(
    d_k_values: Sequence[int], n_keys: int = 16, draws: int = 500, seed: int = 0
) -> SaturationStudy:
    """Draw ``draws`` queries and ``n_keys`` keys per width, entries standard normal, and measure.

    Scores are ``K q`` (unscaled) or ``K q / √d_k`` (scaled), from the same draws, so the two
    columns of the study differ only by the scaling.
    """
    widths = np.asarray(d_k_values)
    if widths.ndim != 1 or widths.size == 0 or np.any(widths < 1):
        raise ValueError(f"d_k_values must be a non-empty list of positive widths, got {d_k_values!r}")
    if n_keys < 2 or draws < 1:
        raise ValueError(f"need at least 2 keys and 1 draw, got n_keys={n_keys}, draws={draws}")
    rng = np.random.default_rng(seed)
    results: dict[str, list[np.ndarray]] = {"norm_u": [], "norm_s": [], "top_u": [], "top_s": []}
    for d_k in widths:
        queries = rng.standard_normal((draws, int(d_k)))
        keys = rng.standard_normal((draws, n_keys, int(d_k)))
        scores = np.einsum("bnd,bd->bn", keys, queries)
        for suffix, scaled_scores in (("u", scores), ("s", scores / np.sqrt(d_k))):
            weights = torch.softmax(torch.as_tensor(scaled_scores, dtype=torch.float64), dim=-1).numpy()
            results[f"norm_{suffix}"].append(np.linalg.eigvalsh(softmax_jacobian(weights))[:, -1])
            results[f"top_{suffix}"].append(weights.max(axis=-1))
    return SaturationStudy(
        d_k=widths,
        n_keys=n_keys,
        seed=seed,
        norm_unscaled=np.array(results["norm_u"]),
        norm_scaled=np.array(results["norm_s"]),
        top_weight_unscaled=np.array(results["top_u"]),
        top_weight_scaled=np.array(results["top_s"]),
    )


SMALL_GRADIENT = 1e-3  # a Jacobian norm below this passes back under 0.1 % of a loss gradient
_LOG_FLOOR = 1e-16  # norms that underflow to 0 are drawn here on the log axis


def share_below(norms: np.ndarray, threshold: float = SMALL_GRADIENT) -> np.ndarray:
    """Per width (row), the share of draws whose Jacobian norm is below ``threshold``."""
    return (np.asarray(norms) < threshold).mean(axis=-1)


def saturation_figure(study: SaturationStudy) -> str:
    """Left: the Jacobian's norm against ``d_k`` (median, interquartile band); right: the share of
    draws whose norm is below :data:`SMALL_GRADIENT`; both scalings from the same draws."""
    fig = new_figure(7.5, 3.4)
    norm_ax, share_ax = fig.subplots(1, 2, width_ratios=[3, 2])
    for norms, label, marker in (
        (study.norm_unscaled, r"$q\cdot k$ (unscaled)", "o-"),
        (study.norm_scaled, r"$q\cdot k/\sqrt{d_k}$ (scaled)", "s-"),
    ):
        low, median, high = np.maximum(np.percentile(norms, [25, 50, 75], axis=1), _LOG_FLOOR)
        (line,) = norm_ax.plot(study.d_k, median, marker, label=label)
        norm_ax.fill_between(study.d_k, low, high, color=line.get_color(), alpha=0.2)
        share_ax.plot(study.d_k, 100 * share_below(norms), marker, color=line.get_color())
    draws = study.norm_unscaled.shape[1]
    norm_ax.set_yscale("log")
    norm_ax.set_ylabel(r"$\|\mathrm{diag}(p) - pp^\top\|$")
    norm_ax.set_title(f"median and middle half of {draws} draws", fontsize="medium")
    norm_ax.legend(loc="lower left", fontsize="small")
    share_ax.set_ylim(-3, 103)
    share_ax.set_ylabel(f"% of draws with norm < {SMALL_GRADIENT:g}")
    share_ax.set_title("tiny gradients", fontsize="medium")
    for ax in (norm_ax, share_ax):
        ax.set_xscale("log", base=2)
        ax.set_xticks(study.d_k, [str(int(d)) if i % 2 == 0 else "" for i, d in enumerate(study.d_k)])
        ax.set_xlabel(r"$d_k$")
    fig.suptitle(f"Softmax over {study.n_keys} keys, random unit-variance q and k (seed {study.seed})")
    return figure_to_html(
        fig,
        alt="The norm of the softmax Jacobian against d_k: unscaled scores make its median fall by "
        "orders of magnitude and most draws pass back tiny gradients; scaled scores keep it steady",
    )

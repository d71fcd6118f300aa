"""Lesson 3: does a saturated softmax pass back tiny gradients? Measured, not assumed.

The paper only *suspects* it: "for large values of d_k, the dot products grow large in magnitude,
pushing the softmax function into regions where it has extremely small gradients". The softmax's
Jacobian is ``diag(p) - p pᵀ``; its largest eigenvalue (it is symmetric and positive semi-definite)
bounds how much of a loss gradient reaches the scores. This module draws random queries and keys
with unit-variance entries, as the paper's footnote assumes, and measures that norm as ``d_k``
grows, with and without the ``1/√d_k`` scaling, over many draws per width.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from transformer_course.figures import figure_to_html, new_figure


def softmax_jacobian(p: np.ndarray) -> np.ndarray:
    """``diag(p) - p pᵀ`` for probability vectors ``p`` of shape ``(..., n)``: entry ``(i, j)`` is
    ``∂p_i/∂s_j`` of ``p = softmax(s)``. Returns shape ``(..., n, n)``."""
    p = np.asarray(p, dtype=float)
    if p.ndim < 1 or p.shape[-1] < 1:
        raise ValueError(f"p must have a last axis of at least one probability, got shape {p.shape}")
    if np.any(p < 0) or not np.allclose(p.sum(axis=-1), 1.0):
        raise ValueError("p must hold probability vectors: non-negative entries summing to 1")
    return p[..., :, None] * np.eye(p.shape[-1]) - p[..., :, None] * p[..., None, :]


def _softmax(scores: np.ndarray) -> np.ndarray:
    """PyTorch's softmax over the last axis (lesson 3's exercise asks students for their own)."""
    return torch.softmax(torch.as_tensor(scores, dtype=torch.float64), dim=-1).numpy()


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
            weights = _softmax(scaled_scores)
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

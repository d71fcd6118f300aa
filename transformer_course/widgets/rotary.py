"""Widget for lesson 10: with rotary positions, a query–key score depends on the offset only.

:class:`RotaryScores` rotates one fixed query and one fixed key to every position and shows
``score[m, n] = rot(q, m) · rot(k, n)`` as a heatmap (constant along every diagonal) and as curves
against the offset ``n - m`` from two query positions (they coincide). The rotation is
:func:`transformer_course.gpt.rotate_pairs` (PyTorch); students write ``apply_rope`` in NumPy.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
import torch

from transformer_course.display import ShowsView
from transformer_course.figures import figure_to_html, new_figure
from transformer_course.gpt import rotary_angles, rotate_pairs

# Show the whole label: ipywidgets cuts descriptions longer than about ten characters.
_WIDE = {"description_width": "initial"}


def rotary_scores(query: np.ndarray, key: np.ndarray, length: int, base: float = 10000.0) -> np.ndarray:
    """``(length, length)``: the query rotated to position m dotted with the key rotated to n."""
    query = torch.as_tensor(query, dtype=torch.float64)
    key = torch.as_tensor(key, dtype=torch.float64)
    if query.dim() != 1 or query.shape != key.shape or len(query) % 2:
        raise ValueError(
            f"query and key must be 1-D of the same even length, got {query.shape} and {key.shape}"
        )
    angles = rotary_angles(length, len(query), base)
    rotated_q = rotate_pairs(query.expand(length, -1).float(), angles).double()
    rotated_k = rotate_pairs(key.expand(length, -1).float(), angles).double()
    return (rotated_q @ rotated_k.T).numpy()


class RotaryScores(ShowsView):
    """Scores of one query and one key at every pair of positions, under rotary positions."""

    def __init__(self, d_head: int = 16, length: int = 48, base: float = 10000.0, seed: int = 0) -> None:
        if d_head < 2 or d_head % 2 or d_head > 64:
            raise ValueError(f"d_head must be even, between 2 and 64, got {d_head}")
        if not 8 <= length <= 128:
            raise ValueError(f"length must lie in [8, 128], got {length}")
        self.length = length
        self.rng = np.random.default_rng(seed)
        self.d_head = widgets.IntSlider(
            value=d_head, min=2, max=64, step=2, description="d_head", style=_WIDE
        )
        self.base = widgets.FloatLogSlider(
            value=base, base=10, min=1, max=5, step=0.25, description="base", style=_WIDE
        )
        self.first = widgets.IntSlider(
            value=length // 2, min=0, max=length - 1, description="query at m =", style=_WIDE
        )
        self.readout = widgets.HTML()
        self.plot = widgets.HTML()
        for control in (self.d_head, self.base, self.first):
            control.observe(self._on_change, names="value")
        self.view = widgets.VBox(
            [widgets.HBox([self.d_head, self.base, self.first]), self.readout, self.plot]
        )
        self._new_vectors()
        self._redraw()

    def _new_vectors(self) -> None:
        d = self.d_head.value
        self.query, self.key = self.rng.normal(size=d), self.rng.normal(size=d)

    def scores(self) -> np.ndarray:
        return rotary_scores(self.query, self.key, self.length, self.base.value)

    def diagonal_spread(self) -> float:
        """The largest difference between two scores with the same offset n - m (0 in exact arithmetic)."""
        scores = self.scores()
        spreads = [np.ptp(np.diagonal(scores, offset)) for offset in range(-self.length + 1, self.length)]
        return float(max(spreads))

    def _on_change(self, change: dict | None = None) -> None:
        if change is not None and change.get("owner") is self.d_head:
            self._new_vectors()
        self._redraw()

    def _redraw(self) -> None:
        scores = self.scores()
        m = self.first.value
        spread = self.diagonal_spread()
        self.readout.value = (
            f"Scores with the same offset n − m differ by at most <b>{spread:.1e}</b> (rounding): "
            f"the score depends on the offset only. The row of m = {m} is the same curve as the "
            "row of m = 0, shifted."
        )
        fig = new_figure(8.0, 3.3)
        left, right = fig.subplots(1, 2)
        limit = np.abs(scores).max()
        image = left.imshow(scores, cmap="RdBu", vmin=-limit, vmax=limit, interpolation="nearest")
        left.set_xlabel("key position n")
        left.set_ylabel("query position m")
        left.set_title("rot(q, m) · rot(k, n)", fontsize=10)
        fig.colorbar(image, ax=left, shrink=0.8)
        offsets = np.arange(self.length) - m
        right.plot(np.arange(self.length), scores[0], label="query at m = 0", linewidth=3, alpha=0.5)
        right.plot(offsets, scores[m], "k--", label=f"query at m = {m}")
        right.set_xlabel("offset n − m")
        right.set_ylabel("score")
        right.legend(fontsize=8)
        self.plot.value = figure_to_html(
            fig, alt="Heatmap of rotary query-key scores, constant along diagonals, and two score curves"
        )

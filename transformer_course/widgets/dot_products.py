"""Widgets for lesson 2: the dot product as a similarity score.

Three small explorers, each a class whose callbacks a unit test can call:

* :class:`VectorPairExplorer` — two 2-D vectors set by length and angle sliders; shows the dot
  product, the cosine and the identity ``a·b = |a||b|cos θ`` with a plot of both arrows.
* :class:`SimilarityHeatmap` — every pairwise dot product (or cosine) of a handful of word
  vectors, i.e. the matrix ``X Xᵀ`` that attention computes as ``QKᵀ``.
* :class:`VarianceSimulation` — samples ``q·k`` for random vectors and shows that its variance
  grows like ``d_k``, the reason attention divides scores by ``√d_k``.

Plots are drawn into an ``ipywidgets.HTML`` (see :mod:`transformer_course.widgets.figures`) so the saved
notebook and the static book page show the default view.
"""

from __future__ import annotations

from html import escape

import ipywidgets as widgets
import numpy as np
import torch
from matplotlib.patches import Rectangle

from transformer_course.widgets.base import ShowsView
from transformer_course.widgets.figures import figure_to_html, new_figure

_ZERO_LENGTH = 1e-12


def _polar(length: float, degrees: float) -> np.ndarray:
    radians = np.deg2rad(degrees)
    return np.array([length * np.cos(radians), length * np.sin(radians)])


class VectorPairExplorer(ShowsView):
    """Two arrows in the plane; the readout shows how their dot product follows the angle.

    Turning one arrow shows the cosine at work (same lengths, different angle); stretching one
    shows that the dot product, unlike the cosine, also grows with length.
    """

    def __init__(
        self,
        length_a: float = 2.0,
        angle_a: float = 20.0,
        length_b: float = 1.5,
        angle_b: float = 70.0,
    ) -> None:
        self.length_a = widgets.FloatSlider(value=length_a, min=0.0, max=3.0, step=0.1, description="|a|")
        self.angle_a = widgets.FloatSlider(
            value=angle_a, min=-180.0, max=180.0, step=5.0, description="angle a (°)"
        )
        self.length_b = widgets.FloatSlider(value=length_b, min=0.0, max=3.0, step=0.1, description="|b|")
        self.angle_b = widgets.FloatSlider(
            value=angle_b, min=-180.0, max=180.0, step=5.0, description="angle b (°)"
        )
        self.readout = widgets.HTML()
        self.plot = widgets.HTML()
        for slider in (self.length_a, self.angle_a, self.length_b, self.angle_b):
            slider.observe(self._on_change, names="value")
        controls = widgets.HBox(
            [
                widgets.VBox([self.length_a, self.angle_a]),
                widgets.VBox([self.length_b, self.angle_b]),
            ]
        )
        self.view = widgets.VBox([controls, self.readout, self.plot])
        self._redraw()

    def vectors(self) -> tuple[np.ndarray, np.ndarray]:
        """The current vectors ``a`` and ``b`` as length-2 arrays."""
        return (
            _polar(self.length_a.value, self.angle_a.value),
            _polar(self.length_b.value, self.angle_b.value),
        )

    def dot_product(self) -> float:
        a, b = self.vectors()
        return float(a @ b)

    def cosine(self) -> float | None:
        """cos θ between the vectors, or ``None`` when one has length 0 (no direction)."""
        a, b = self.vectors()
        norms = float(np.linalg.norm(a) * np.linalg.norm(b))
        if norms < _ZERO_LENGTH:
            return None
        return float(a @ b) / norms

    def _on_change(self, _change: dict | None = None) -> None:
        self._redraw()

    def _redraw(self) -> None:
        a, b = self.vectors()
        dot = self.dot_product()
        cosine = self.cosine()
        angle = (self.angle_b.value - self.angle_a.value + 180.0) % 360.0 - 180.0
        if cosine is None:
            cosine_text = "undefined (a zero vector has no direction)"
        else:
            cosine_text = f"<b>{cosine:.3f}</b>"
        self.readout.value = (
            f"a = ({a[0]:.2f}, {a[1]:.2f}), b = ({b[0]:.2f}, {b[1]:.2f}), "
            f"angle between them θ = {abs(angle):.0f}°<br>"
            f"a·b = a₁b₁ + a₂b₂ = <b>{dot:.3f}</b>; "
            f"|a||b|cos θ = {self.length_a.value:.2f} × {self.length_b.value:.2f} × "
            f"{np.cos(np.deg2rad(angle)):.3f} = {dot:.3f}<br>"
            f"cosine similarity cos θ = {cosine_text}"
        )
        self.plot.value = self._draw(a, b, dot)

    def _draw(self, a: np.ndarray, b: np.ndarray, dot: float) -> str:
        fig = new_figure(4.0, 4.0)
        ax = fig.add_subplot()
        for vector, colour, name in ((a, "tab:blue", "a"), (b, "tab:orange", "b")):
            ax.annotate(
                "",
                xy=tuple(vector),
                xytext=(0.0, 0.0),
                arrowprops={"arrowstyle": "->", "color": colour, "lw": 2.5},
            )
            ax.text(vector[0] * 1.08, vector[1] * 1.08, name, color=colour, fontsize=13)
        norm_b = float(np.linalg.norm(b))
        if norm_b > _ZERO_LENGTH:
            # The projection of a onto b: its signed length times |b| is the dot product.
            projection = (a @ b) / norm_b**2 * b
            ax.plot([a[0], projection[0]], [a[1], projection[1]], ":", color="grey")
            ax.plot(
                [0.0, projection[0]],
                [0.0, projection[1]],
                color="tab:green",
                lw=9,
                alpha=0.35,
                solid_capstyle="butt",
            )
        ax.set_xlim(-3.3, 3.3)
        ax.set_ylim(-3.3, 3.3)
        ax.set_aspect("equal")
        ax.axhline(0.0, color="lightgrey", lw=0.8)
        ax.axvline(0.0, color="lightgrey", lw=0.8)
        ax.set_title(f"a·b = {dot:.2f} (green: projection of a onto b)", fontsize=10)
        return figure_to_html(fig, alt=f"Two arrows a and b whose dot product is {dot:.2f}")


class SimilarityHeatmap(ShowsView):
    """All pairwise similarities of a few word vectors, as one heatmap.

    The matrix of dot products ``X Xᵀ`` is what attention computes as ``QKᵀ``; switching to the
    cosine shows which similarities are due to direction only. Picking a word ranks the others.
    """

    MEASURES = ("dot product", "cosine similarity")

    def __init__(self, words: list[str], vectors: np.ndarray) -> None:
        vectors = np.asarray(vectors, dtype=float)
        if vectors.ndim != 2:
            raise ValueError(f"vectors must be a 2-D array (one row per word), got {vectors.ndim}-D")
        if len(words) != vectors.shape[0]:
            raise ValueError(f"{len(words)} words but {vectors.shape[0]} vector rows")
        if len(words) < 2:
            raise ValueError("give at least two words to compare")
        if np.any(np.linalg.norm(vectors, axis=1) < _ZERO_LENGTH):
            raise ValueError("every word vector needs a nonzero length (cosine is undefined at 0)")
        self.words = list(words)
        self.vectors = vectors
        self.measure = widgets.ToggleButtons(options=list(self.MEASURES), value=self.MEASURES[0])
        self.word = widgets.Dropdown(
            options=[(w, i) for i, w in enumerate(self.words)], value=0, description="word"
        )
        self.readout = widgets.HTML()
        self.plot = widgets.HTML()
        self.measure.observe(self._on_change, names="value")
        self.word.observe(self._on_change, names="value")
        self.view = widgets.VBox([widgets.HBox([self.measure, self.word]), self.readout, self.plot])
        self._redraw()

    def matrix(self) -> np.ndarray:
        """The similarity matrix currently shown (rows and columns follow ``words``)."""
        scores = self.vectors @ self.vectors.T
        if self.measure.value == "cosine similarity":
            norms = np.linalg.norm(self.vectors, axis=1)
            scores = scores / np.outer(norms, norms)
        return scores

    def ranking(self) -> list[tuple[str, float]]:
        """The other words, most similar to the selected one first."""
        row = self.matrix()[self.word.value]
        order = [i for i in np.argsort(-row, kind="stable") if i != self.word.value]
        return [(self.words[i], float(row[i])) for i in order]

    def _on_change(self, _change: dict | None = None) -> None:
        self._redraw()

    def _redraw(self) -> None:
        chosen = escape(self.words[self.word.value])
        ranked = ", ".join(f"{escape(w)} ({s:.2f})" for w, s in self.ranking())
        self.readout.value = f"Most similar to <b>{chosen}</b> by {self.measure.value}: {ranked}"
        self.plot.value = self._draw(self.matrix())

    def _draw(self, scores: np.ndarray) -> str:
        n = len(self.words)
        fig = new_figure(1.0 + 0.75 * n, 0.6 + 0.7 * n)
        ax = fig.add_subplot()
        limit = float(np.max(np.abs(scores)))
        image = ax.imshow(scores, cmap="RdBu_r", vmin=-limit, vmax=limit)
        for i in range(n):
            for j in range(n):
                # White on the dark ends of the colormap, black elsewhere, so every number reads.
                dark = abs(scores[i, j]) > 0.6 * limit
                ax.text(
                    j,
                    i,
                    f"{scores[i, j]:.2f}",
                    ha="center",
                    va="center",
                    fontsize=8,
                    color="white" if dark else "black",
                )
        ax.set_xticks(range(n), self.words, rotation=45, ha="right")
        ax.set_yticks(range(n), self.words)
        selected = self.word.value
        ax.add_patch(Rectangle((-0.5, selected - 0.5), n, 1.0, fill=False, edgecolor="black", linewidth=2.0))
        fig.colorbar(image, ax=ax, shrink=0.8)
        ax.set_title(self.measure.value, fontsize=10)
        return figure_to_html(fig, alt=f"Heatmap of the {self.measure.value} of {n} word vectors")


class VarianceSimulation(ShowsView):
    """Var(q·k) for random q, k with independent unit-variance entries, as ``d_k`` grows.

    Each of the ``d_k`` products ``q_i k_i`` has mean 0 and variance 1, so their sum has variance
    ``d_k``. Scores that spread out like that push a softmax into saturation; dividing by ``√d_k``
    brings the variance back to 1. The readout reports both effects for the current ``d_k``.
    """

    DIMENSIONS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
    KEYS_PER_QUERY = 8
    PLOT_RANGE = 60.0

    def __init__(self, n_samples: int = 4000, seed: int = 0) -> None:
        if n_samples < 2 * self.KEYS_PER_QUERY:
            raise ValueError(f"n_samples must be at least {2 * self.KEYS_PER_QUERY}")
        self.n_samples = n_samples
        self.seed = seed
        self.d_k = widgets.SelectionSlider(options=list(self.DIMENSIONS), value=64, description="d_k")
        self.scaled = widgets.Checkbox(value=False, description="divide by √d_k")
        self.resample = widgets.Button(description="New samples")
        self.readout = widgets.HTML()
        self.plot = widgets.HTML()
        self.d_k.observe(self._on_change, names="value")
        self.scaled.observe(self._on_change, names="value")
        self.resample.on_click(self._on_resample)
        self.view = widgets.VBox(
            [widgets.HBox([self.d_k, self.scaled, self.resample]), self.readout, self.plot]
        )
        self._redraw()

    def samples(self) -> np.ndarray:
        """``n_samples`` values of q·k (divided by √d_k when the box is ticked) for the seed."""
        rng = np.random.default_rng(self.seed)
        d_k = self.d_k.value
        q = rng.standard_normal((self.n_samples, d_k))
        k = rng.standard_normal((self.n_samples, d_k))
        scores = np.einsum("nd,nd->n", q, k)
        if self.scaled.value:
            scores = scores / np.sqrt(d_k)
        return scores

    def largest_weight(self, scores: np.ndarray) -> float:
        """Mean of the largest softmax weight when the scores are split into rows of 8 keys."""
        usable = len(scores) - len(scores) % self.KEYS_PER_QUERY
        rows = scores[:usable].reshape(-1, self.KEYS_PER_QUERY)
        # PyTorch's softmax, not a helper of our own: lesson 3 grades a softmax.
        weights = torch.softmax(torch.as_tensor(rows, dtype=torch.float64), dim=-1).numpy()
        return float(np.mean(np.max(weights, axis=-1)))

    def _on_change(self, _change: dict | None = None) -> None:
        self._redraw()

    def _on_resample(self, _button: widgets.Button | None = None) -> None:
        self.seed += 1
        self._redraw()

    def _redraw(self) -> None:
        scores = self.samples()
        d_k = self.d_k.value
        theory = 1.0 if self.scaled.value else float(d_k)
        label = "q·k/√d_k" if self.scaled.value else "q·k"
        self.readout.value = (
            f"{self.n_samples} samples of {label} with d_k = {d_k}: "
            f"empirical variance <b>{np.var(scores):.2f}</b> (theory: {theory:g}). "
            f"Softmax over {self.KEYS_PER_QUERY} such scores puts on average "
            f"<b>{self.largest_weight(scores):.2f}</b> of the weight on the top key "
            f"(1/{self.KEYS_PER_QUERY} = {1 / self.KEYS_PER_QUERY:.3f} would be uniform)."
        )
        self.plot.value = self._draw(scores, label, theory)

    def _draw(self, scores: np.ndarray, label: str, theory: float) -> str:
        fig = new_figure(6.0, 3.0)
        ax = fig.add_subplot()
        # A fixed axis makes the spreading visible as d_k grows (and its absence when scaled).
        spread = self.PLOT_RANGE
        ax.hist(scores, bins=120, range=(-spread, spread), density=True, color="tab:blue", alpha=0.6)
        grid = np.linspace(-spread, spread, 200)
        density = np.exp(-(grid**2) / (2 * theory)) / np.sqrt(2 * np.pi * theory)
        ax.plot(grid, density, color="black", lw=1.5, label=f"normal, variance {theory:g}")
        ax.set_xlabel(label)
        ax.set_ylabel("density")
        ax.legend(loc="upper right", fontsize=8)
        return figure_to_html(
            fig, alt=f"Histogram of {label} for d_k = {self.d_k.value}, variance near {theory:g}"
        )

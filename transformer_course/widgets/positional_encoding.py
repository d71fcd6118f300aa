"""Widgets for lesson 5: what the sinusoidal positional encoding looks like.

* :class:`EncodingHeatmap`: the whole table ``PE`` (positions × dimensions) with ``d_model`` and
  sequence-length sliders: fast stripes on the left, slow ones on the right.
* :class:`EncodingWaves`: up to four chosen dimensions as waves over the positions, with their
  wavelengths.
* :class:`PositionSimilarity`: the dot product ``PE[a] · PE[b]`` against the distance ``b - a``
  for two reference positions; the curves coincide, because the dot product depends on the
  offset only.

The table comes from the PyTorch model's encodings of chosen positions; students write the graded
``positional_encoding`` (the table from a count) themselves in the lesson.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
import torch

from transformer_course.layers import sinusoidal_encodings
from transformer_course.widgets.base import ShowsView
from transformer_course.widgets.figures import figure_to_html, new_figure

BASE = 10000.0


def _encodings(positions: np.ndarray, d_model: int) -> np.ndarray:
    """The PyTorch model's encodings of ``positions`` (a 1-D array of indices), as NumPy for plotting.

    Students write the table from a count in lesson 5 (graded ``positional_encoding``).
    """
    return sinusoidal_encodings(torch.from_numpy(positions), d_model).numpy().astype(np.float64)


def wavelength(dimension: int, d_model: int) -> float:
    """Wavelength in positions of column ``dimension``: ``2π · 10000^(2i/d_model)``, ``i = dim // 2``."""
    return float(2 * np.pi * BASE ** (2 * (dimension // 2) / d_model))


def _check_sizes(seq_len: int, d_model: int) -> None:
    if seq_len < 1 or d_model < 1:
        raise ValueError(f"seq_len and d_model must be positive, got {seq_len} and {d_model}")


class EncodingHeatmap(ShowsView):
    """The table ``PE`` as an image; sliders set ``d_model`` and the number of positions."""

    def __init__(self, seq_len: int = 64, d_model: int = 64) -> None:
        _check_sizes(seq_len, d_model)
        if seq_len > 256 or d_model > 256:
            raise ValueError(f"the sliders go up to 256; got seq_len={seq_len}, d_model={d_model}")
        self.seq_len = widgets.IntSlider(value=seq_len, min=1, max=256, step=1, description="positions")
        self.d_model = widgets.IntSlider(value=d_model, min=1, max=256, step=1, description="d_model")
        self.readout = widgets.HTML()
        self.plot = widgets.HTML()
        for control in (self.seq_len, self.d_model):
            control.observe(self._on_change, names="value")
        self.view = widgets.VBox([widgets.HBox([self.seq_len, self.d_model]), self.readout, self.plot])
        self._redraw()

    def table(self) -> np.ndarray:
        """The table currently shown."""
        return _encodings(np.arange(self.seq_len.value), self.d_model.value)

    def _on_change(self, _change: dict | None = None) -> None:
        self._redraw()

    def _caption(self) -> str:
        """How the fastest and slowest columns compare with the number of positions shown."""
        shown, d_model = self.seq_len.value, self.d_model.value
        fastest = wavelength(0, d_model)
        if d_model == 1:
            return f"Its only column, a sine, repeats every {fastest:.2f} positions."
        slowest = wavelength(d_model - 1, d_model)
        slowest_text = f"{slowest:,.0f}" if slowest >= 100 else f"{slowest:.1f}"
        if slowest > shown:
            reach = f"longer than the {shown} positions shown, so it never repeats here"
        else:
            reach = f"so it repeats {shown / slowest:.1f} times over the {shown} positions shown"
        return (
            f"Column 0 repeats every {fastest:.2f} positions; the last column (dimension "
            f"{d_model - 1}) every {slowest_text} positions, {reach}."
        )

    def _redraw(self) -> None:
        d_model = self.d_model.value
        pe = self.table()
        self.readout.value = f"PE has shape {pe.shape}. {self._caption()}"
        fig = new_figure(7.0, 3.6)
        ax = fig.subplots()
        image = ax.imshow(pe, aspect="auto", cmap="RdBu", vmin=-1.0, vmax=1.0, interpolation="nearest")
        ax.set_xlabel("dimension")
        ax.set_ylabel("position")
        ax.set_title(f"positional encoding, d_model = {d_model}", fontsize=10)
        fig.colorbar(image, ax=ax)
        self.plot.value = figure_to_html(
            fig,
            alt=f"Heatmap of the positional encoding for {self.seq_len.value} positions and "
            f"d_model = {d_model}",
        )


class EncodingWaves(ShowsView):
    """Up to four columns of ``PE`` drawn as waves over the positions.

    Each curve has its own dropdown (dimension, or none), so the chosen ones stay in view and
    changing one leaves the others alone. The encoding only exists at whole positions (the dots);
    the line through them is the sine or cosine it samples, so fast columns read as waves rather
    than zigzags.
    """

    CURVES = 4
    NONE = -1  # a picker's value when it draws no curve (None would mean "nothing selected")

    def __init__(
        self, d_model: int = 64, dimensions: tuple[int, ...] = (0, 1, 8, 30), seq_len: int = 100
    ) -> None:
        _check_sizes(seq_len, d_model)
        if not dimensions:
            raise ValueError("choose at least one dimension to draw")
        if len(dimensions) > self.CURVES:
            raise ValueError(f"draw at most {self.CURVES} dimensions at once, got {len(dimensions)}")
        bad = [d for d in dimensions if not 0 <= d < d_model]
        if bad:
            raise ValueError(f"dimensions {bad} are not columns of a d_model = {d_model} encoding")
        self.d_model = d_model
        self.seq_len = seq_len
        choices = [("none", self.NONE)] + [
            (f"{d} ({'sin' if d % 2 == 0 else 'cos'}, wavelength {wavelength(d, d_model):,.1f})", d)
            for d in range(d_model)
        ]
        chosen = list(dimensions) + [self.NONE] * (self.CURVES - len(dimensions))
        self.pickers = [
            widgets.Dropdown(options=choices, value=value, description=f"curve {i + 1}")
            for i, value in enumerate(chosen)
        ]
        self.readout = widgets.HTML()
        self.plot = widgets.HTML()
        for picker in self.pickers:
            picker.observe(self._on_change, names="value")
        controls = widgets.VBox([widgets.HBox(self.pickers[:2]), widgets.HBox(self.pickers[2:])])
        self.view = widgets.VBox([controls, self.readout, self.plot])
        self._redraw()

    def chosen(self) -> list[int]:
        """The dimensions picked, in increasing order, each once."""
        return sorted({p.value for p in self.pickers if p.value != self.NONE})

    def curves(self) -> dict[int, np.ndarray]:
        """Column index -> values at the whole positions 0 .. seq_len - 1, for the chosen columns."""
        pe = _encodings(np.arange(self.seq_len), self.d_model)
        return {d: pe[:, d] for d in self.chosen()}

    def wave(self, dimension: int, positions: np.ndarray) -> np.ndarray:
        """The sine or cosine that column ``dimension`` samples, at any (fractional) positions."""
        angle = 2 * np.pi * positions / wavelength(dimension, self.d_model)
        return np.sin(angle) if dimension % 2 == 0 else np.cos(angle)

    def _on_change(self, _change: dict | None = None) -> None:
        self._redraw()

    def _redraw(self) -> None:
        curves = self.curves()
        if not curves:
            self.readout.value = "<i>Pick a dimension for at least one curve.</i>"
            self.plot.value = ""
            return
        lines = ", ".join(
            f"{d} ({'sin' if d % 2 == 0 else 'cos'}, wavelength {wavelength(d, self.d_model):.1f})"
            for d in curves
        )
        self.readout.value = f"Dimensions: {lines}. Dots: the encoding at whole positions."
        fine = np.linspace(0, self.seq_len - 1, 20 * self.seq_len)
        positions = np.arange(self.seq_len)
        fig = new_figure(7.0, 3.2)
        ax = fig.subplots()
        for d, values in curves.items():
            (line,) = ax.plot(fine, self.wave(d, fine), linewidth=1.2, label=f"dim {d}")
            ax.plot(positions, values, ".", markersize=3, color=line.get_color())
        ax.set_xlabel("position")
        ax.set_ylabel("PE value")
        ax.set_ylim(-1.1, 1.1)
        # Outside the axes: the curves fill the whole plot, so any inside corner hides data.
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        self.plot.value = figure_to_html(
            fig, alt=f"Columns {', '.join(map(str, curves))} of the positional encoding as waves"
        )


class PositionSimilarity(ShowsView):
    """``PE[a] · PE[a + k]`` against ``k`` for two reference positions ``a``."""

    def __init__(self, d_model: int = 64, first: int = 50, second: int = 120, max_offset: int = 40) -> None:
        _check_sizes(max_offset, d_model)
        if d_model % 2:
            raise ValueError(
                f"use an even d_model (got {d_model}): the offset-only property holds for whole "
                "sine-cosine pairs"
            )
        for name, position in (("first", first), ("second", second)):
            if not max_offset <= position <= 200:
                raise ValueError(f"{name}={position} must lie in [{max_offset}, 200]")
        self.max_offset = max_offset
        self.d_model = widgets.IntSlider(value=d_model, min=2, max=256, step=2, description="d_model")
        self.first = widgets.IntSlider(value=first, min=max_offset, max=200, description="position a")
        self.second = widgets.IntSlider(value=second, min=max_offset, max=200, description="position b")
        self.readout = widgets.HTML()
        self.plot = widgets.HTML()
        for control in (self.d_model, self.first, self.second):
            control.observe(self._on_change, names="value")
        controls = widgets.HBox([self.d_model, self.first, self.second])
        self.view = widgets.VBox([controls, self.readout, self.plot])
        self._redraw()

    def offsets(self) -> np.ndarray:
        return np.arange(-self.max_offset, self.max_offset + 1)

    def similarity(self, reference: int) -> np.ndarray:
        """``PE[reference] · PE[reference + k]`` for every offset ``k`` shown."""
        pe = _encodings(np.arange(reference + self.max_offset + 1), self.d_model.value)
        return pe[reference + self.offsets()] @ pe[reference]

    def _on_change(self, _change: dict | None = None) -> None:
        self._redraw()

    def _redraw(self) -> None:
        a, b = self.first.value, self.second.value
        sim_a, sim_b = self.similarity(a), self.similarity(b)
        gap = float(np.max(np.abs(sim_a - sim_b)))
        self.readout.value = (
            f"The largest difference between the two curves is {gap:.1e}: the dot product depends "
            f"on the offset k only, not on where you stand. At k = 0 it is {sim_a[self.max_offset]:.1f} "
            f"(= d_model / 2, one per sine–cosine pair) and it falls off as |k| grows."
        )
        fig = new_figure(7.0, 3.2)
        ax = fig.subplots()
        ax.plot(self.offsets(), sim_a, label=f"a = {a}", linewidth=3, alpha=0.6)
        ax.plot(self.offsets(), sim_b, label=f"b = {b}", linestyle="--", color="black")
        ax.set_xlabel("offset k")
        ax.set_ylabel("PE[p] · PE[p + k]")
        ax.set_title(f"similarity of positions, d_model = {self.d_model.value}", fontsize=10)
        # Outside the axes: the curves reach every corner of the plot.
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        self.plot.value = figure_to_html(
            fig, alt=f"Dot product of positional encodings against their offset, from positions {a} and {b}"
        )

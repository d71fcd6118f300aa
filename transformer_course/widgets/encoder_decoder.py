"""Widgets and pictures for lesson 8: the training pieces of the full Transformer.

* :class:`ScheduleExplorer`: the paper's learning-rate schedule with ``d_model`` and ``warmup``
  controls, against the base model's curve.
* :class:`LabelSmoothingExplorer`: the smoothed target distribution for a chosen epsilon, and the
  loss as a function of the probability the model gives the right token.
* :func:`mask_figure`: the padding, causal and combined masks of a small batch, as HTML.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np

# The package has the formula only as a whole curve (lesson 9 grades the rate at a step).
from transformer_course.translation.schedule import PAPER_WARMUP, _paper_curve, peak_lr
from transformer_course.widgets.base import ShowsView
from transformer_course.widgets.figures import figure_to_html, new_figure

D_MODEL_CHOICES = (64, 128, 256, 512, 1024)


class ScheduleExplorer(ShowsView):
    """The learning rate over training steps; the paper's base curve stays as a dashed reference."""

    def __init__(self, d_model: int = 512, warmup: int = PAPER_WARMUP, steps: int = 40_000) -> None:
        if d_model not in D_MODEL_CHOICES:
            raise ValueError(f"d_model must be one of {D_MODEL_CHOICES}, got {d_model!r}")
        if not 500 <= warmup <= 16_000:
            raise ValueError(f"warmup must lie in [500, 16000], got {warmup!r}")
        if steps < 2 * 16_000:
            raise ValueError(f"show at least 32000 steps so every warmup fits, got {steps!r}")
        self.steps = steps
        self.d_model = widgets.Dropdown(options=list(D_MODEL_CHOICES), value=d_model, description="d_model")
        self.warmup = widgets.IntSlider(value=warmup, min=500, max=16_000, step=500, description="warmup")
        self.readout = widgets.HTML()
        self.plot = widgets.HTML()
        for control in (self.d_model, self.warmup):
            control.observe(self._on_change, names="value")
        self.view = widgets.VBox([widgets.HBox([self.d_model, self.warmup]), self.readout, self.plot])
        self._redraw()

    def curve(self) -> tuple[np.ndarray, np.ndarray]:
        """``(steps, rates)`` of the curve currently shown."""
        return np.arange(1, self.steps + 1), _paper_curve(self.steps, self.d_model.value, self.warmup.value)

    def _on_change(self, _change: dict | None = None) -> None:
        self._redraw()

    def _redraw(self) -> None:
        d_model, warmup = self.d_model.value, self.warmup.value
        steps, rates = self.curve()
        peak = peak_lr(d_model, warmup)
        self.readout.value = (
            f"Peak rate {peak:.2e} at step {warmup:,}; at step {self.steps:,} the rate is "
            f"{rates[-1]:.2e} ({rates[-1] / peak:.0%} of the peak). "
            f"The paper's base model (d_model = 512, warmup = 4000) peaks at "
            f"{peak_lr(512, PAPER_WARMUP):.2e}."
        )
        fig = new_figure(7.0, 3.2)
        ax = fig.subplots()
        ax.plot(
            steps,
            _paper_curve(self.steps, 512, PAPER_WARMUP),
            "--",
            color="grey",
            label="paper: d_model 512, warmup 4000",
        )
        ax.plot(steps, rates, label=f"d_model {d_model}, warmup {warmup}")
        ax.axvline(warmup, color="tab:blue", linewidth=0.8, alpha=0.5)
        ax.set_xlabel("training step")
        ax.set_ylabel("learning rate")
        ax.ticklabel_format(axis="y", style="sci", scilimits=(0, 0))
        ax.legend(fontsize=8)
        self.plot.value = figure_to_html(
            fig,
            alt=f"Learning rate against step for d_model {d_model} and warmup {warmup}: "
            f"a linear rise to {peak:.1e} then an inverse square-root decay",
        )


def _smoothed_loss(p_correct: np.ndarray, epsilon: float, vocab: int) -> np.ndarray:
    """Cross-entropy against the smoothed target when the model gives ``p_correct`` to the
    answer and spreads the rest evenly over the other ``vocab - 1`` tokens."""
    on_answer = 1.0 - epsilon + epsilon / vocab
    p_other = (1.0 - p_correct) / (vocab - 1)
    return -(on_answer * np.log(p_correct) + (1.0 - on_answer) * np.log(p_other))


class LabelSmoothingExplorer(ShowsView):
    """Left: the target distribution; right: the loss against the probability of the answer."""

    def __init__(self, epsilon: float = 0.1, vocab_size: int = 10, answer: int = 3) -> None:
        if not 0.0 <= epsilon <= 0.5:
            raise ValueError(f"epsilon must lie in [0, 0.5], got {epsilon!r}")
        if not 2 <= vocab_size <= 30:
            raise ValueError(f"vocab_size must lie in [2, 30], got {vocab_size!r}")
        self.epsilon = widgets.FloatSlider(value=epsilon, min=0.0, max=0.5, step=0.05, description="epsilon")
        self.vocab_size = widgets.IntSlider(value=vocab_size, min=2, max=30, step=1, description="vocabulary")
        self.answer = answer
        self.readout = widgets.HTML()
        self.plot = widgets.HTML()
        for control in (self.epsilon, self.vocab_size):
            control.observe(self._on_change, names="value")
        self.view = widgets.VBox([widgets.HBox([self.epsilon, self.vocab_size]), self.readout, self.plot])
        self._redraw()

    def target(self) -> np.ndarray:
        """The smoothed target distribution over the vocabulary currently shown."""
        vocab, eps = self.vocab_size.value, self.epsilon.value
        q = np.full(vocab, eps / vocab)
        q[min(self.answer, vocab - 1)] += 1.0 - eps
        return q

    def best_probability(self) -> float:
        """Where the smoothed loss is smallest: at the smoothed target's own mass."""
        return float(self.target().max())

    def _on_change(self, _change: dict | None = None) -> None:
        self._redraw()

    def _redraw(self) -> None:
        eps, vocab = self.epsilon.value, self.vocab_size.value
        q = self.target()
        best = self.best_probability()
        p = np.linspace(0.05, 0.999, 400)
        loss = _smoothed_loss(p, eps, vocab)
        self.readout.value = (
            f"The answer gets {best:.3f} and every other token {eps / vocab:.3f}. The loss is "
            f"smallest at p = {best:.3f}: the model gains nothing by being more confident than "
            f"that, and pays for it (at p = 0.999 the loss is {loss[-1]:.2f}, "
            f"{loss[-1] - loss.min():.2f} above the minimum)."
        )
        fig = new_figure(8.0, 3.0)
        left, right = fig.subplots(1, 2)
        answer = int(np.argmax(q))
        one_hot = np.zeros(vocab)
        one_hot[answer] = 1.0
        positions = np.arange(vocab)
        left.bar(positions - 0.2, one_hot, width=0.4, color="lightgrey", label="one-hot")
        left.bar(positions + 0.2, q, width=0.4, color="tab:orange", label=f"smoothed, ε={eps:.2f}")
        left.set_xlabel("token id")
        left.set_ylabel("target probability")
        left.set_ylim(0, 1.05)
        left.legend(fontsize=8)
        right.plot(p, -np.log(p), color="grey", linestyle="--", label="one-hot target")
        right.plot(p, loss, color="tab:orange", label="smoothed target")
        right.axvline(best, color="tab:orange", linewidth=0.8)
        right.set_xlabel("probability the model gives the answer")
        right.set_ylabel("cross-entropy")
        right.legend(fontsize=8)
        self.plot.value = figure_to_html(
            fig,
            alt=f"Smoothed targets with epsilon {eps:.2f} over {vocab} tokens, and the loss "
            f"against the predicted probability, smallest at {best:.3f}",
        )


def mask_figure(lengths: list[int], width: int) -> str:
    """Padding, causal and combined masks (True = may attend) for sequences of ``lengths``.

    One row per sequence of the batch: its key-padding mask (encoder self-attention and
    cross-attention), the causal mask every sequence shares, and both together (decoder
    self-attention). Returns an ``<img>`` tag.
    """
    if not lengths or any(not 1 <= n <= width for n in lengths):
        raise ValueError(f"every length must lie in 1..{width}, got {lengths!r}")
    if len(lengths) > 4:
        raise ValueError("draw at most 4 sequences; the picture gets unreadable beyond that")
    causal = np.tril(np.ones((width, width), dtype=bool))
    fig = new_figure(7.0, 2.3 * len(lengths))
    axes = np.atleast_2d(fig.subplots(len(lengths), 3))
    for row, n in zip(axes, lengths, strict=True):
        padding = np.broadcast_to(np.arange(width) < n, (width, width))
        panels = (
            (padding, f"length {n}: padding"),
            (causal, "causal"),
            (padding & causal, f"length {n}: padding & causal"),
        )
        for ax, (mask, title) in zip(row, panels, strict=True):
            ax.imshow(mask, cmap="Greens", vmin=0, vmax=1.4)
            ax.set_title(title, fontsize=9)
            ax.set_xticks(range(width))
            ax.set_yticks(range(width))
            ax.set_xlabel("key position", fontsize=8)
            ax.set_ylabel("query position", fontsize=8)
            ax.tick_params(labelsize=7)
    return figure_to_html(
        fig,
        alt="Green cells may attend. For each sequence: the padding mask hides the padded key "
        "columns, the causal mask is lower-triangular, and decoder self-attention uses both",
    )

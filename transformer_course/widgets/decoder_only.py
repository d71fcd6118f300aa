"""Widgets of lesson 10: what the sampling knobs do, text from the trained GPT, rotary scores.

* :class:`SamplingKnobs`: the model's distribution over the next character after a prompt, with
  temperature, top-k and top-p sliders; bars show which tokens each setting keeps and the readout
  says how much probability mass it drops.
* :class:`TextGenerator`: a prompt, the same knobs and a seed; **Generate** continues the prompt
  with the trained model.
* :class:`RotaryScores`: with rotary positions, a query–key score depends on the offset only. It
  rotates one fixed query and one fixed key to every position and shows
  ``score[m, n] = rot(q, m) · rot(k, n)`` as a heatmap (constant along every diagonal) and as
  curves against the offset ``n - m`` from two query positions (they coincide).

They use PyTorch (:func:`transformer_course.language_model.gpt._ranked_next_token_probabilities`,
:func:`transformer_course.language_model.gpt._rotate_pairs`); the NumPy sampler and ``apply_rope`` are what
students write in the lesson.
"""

from __future__ import annotations

from html import escape

import ipywidgets as widgets
import numpy as np
import torch

from transformer_course.language_model.gpt import (
    GPT,
    _ranked_next_token_probabilities,
    _rotary_angles,
    _rotate_pairs,
)
from transformer_course.language_model.lm_data import CharTokenizer
from transformer_course.widgets.base import ShowsView
from transformer_course.widgets.figures import figure_to_html, new_figure

# Show the whole label: ipywidgets cuts descriptions longer than about ten characters.
_WIDE = {"description_width": "initial"}
# Inline code takes the colours of the widget around it: the book's dark theme would otherwise
# paint light code text onto the light card it shows widgets on, where it cannot be read.
_INHERIT = "color:inherit;background:transparent;"
# Rotary scores with one offset agree up to float32 rounding, far below this.
SPREAD_BOUND = 1e-4


def knob_values(top_k: int, top_p: float, vocab_size: int) -> tuple[int | None, float | None]:
    """Slider values to knob values. The sliders' top ends, top-k = V and top-p = 1, keep every
    token: the lesson's exercise spells that ``None`` (and refuses ``top_k = 0``), so they become
    ``None`` here too, which also keeps a rounding error from dropping a token at top-p = 1."""
    return (None if top_k >= vocab_size else top_k), (None if top_p >= 1.0 else top_p)


def _top_k_slider(top_k: int | None, vocab_size: int) -> widgets.IntSlider:
    """Top-k from 1 (greedy) to the vocabulary size (every token kept, the exercise's ``None``)."""
    if top_k is not None and not 1 <= top_k <= vocab_size:
        raise ValueError(f"top_k must be None or between 1 and the vocabulary size {vocab_size}, got {top_k}")
    return widgets.IntSlider(
        value=vocab_size if top_k is None else top_k,
        min=1,
        max=vocab_size,
        description=f"top-k ({vocab_size}: all)",
        style=_WIDE,
    )


class SamplingKnobs(ShowsView):
    """One next-token distribution under temperature, top-k and top-p."""

    def __init__(
        self,
        logits: np.ndarray | torch.Tensor,
        labels: list[str],
        temperature: float = 1.0,
        top_k: int | None = None,
        top_p: float = 1.0,
        shown: int = 20,
        title: str = "next-token distribution",
    ) -> None:
        self.logits = torch.as_tensor(logits, dtype=torch.float64).detach().cpu()
        if self.logits.dim() != 1 or len(self.logits) < 2:
            raise ValueError(
                f"logits must be a 1-D array of at least 2 values, got shape {tuple(self.logits.shape)}"
            )
        if len(labels) != len(self.logits):
            raise ValueError(f"{len(labels)} labels for {len(self.logits)} logits")
        if not torch.isfinite(self.logits).all():
            raise ValueError("logits must be finite")
        self.labels = list(labels)
        self.shown = min(shown, len(labels))
        self.title = title
        vocab = len(labels)
        self.temperature = widgets.FloatSlider(
            value=temperature, min=0.0, max=2.0, step=0.05, description="temperature", style=_WIDE
        )
        self.top_k = _top_k_slider(top_k, vocab)
        self.top_p = widgets.FloatSlider(
            value=top_p, min=0.05, max=1.0, step=0.05, description="top-p (1: all)", style=_WIDE
        )
        self.readout = widgets.HTML()
        self.plot = widgets.HTML()
        for control in (self.temperature, self.top_k, self.top_p):
            control.observe(self._on_change, names="value")
        self.view = widgets.VBox(
            [widgets.HBox([self.temperature, self.top_k, self.top_p]), self.readout, self.plot]
        )
        self._redraw()

    def distributions(self) -> tuple[np.ndarray, np.ndarray]:
        """(after temperature only, after all three knobs), each summing to 1."""
        top_k, top_p = knob_values(self.top_k.value, self.top_p.value, len(self.labels))
        in_token_order = []
        for knobs in ((), (top_k, top_p)):
            order, ranked = _ranked_next_token_probabilities(self.logits, self.temperature.value, *knobs)
            in_token_order.append(torch.zeros_like(ranked).scatter(-1, order, ranked).numpy())
        tempered, final = in_token_order
        return tempered, final

    def dropped_mass(self) -> float:
        """Probability (after temperature) of the tokens the knobs remove."""
        tempered, final = self.distributions()
        return float(tempered[final == 0].sum())

    def _on_change(self, _change: dict | None = None) -> None:
        self._redraw()

    def _redraw(self) -> None:
        tempered, final = self.distributions()
        kept = final > 0
        dropped = float(tempered[~kept].sum())
        best = int(np.argmax(final))
        self.readout.value = (
            f"Keeps <b>{int(kept.sum())}</b> of {len(final)} tokens and drops <b>{dropped:.1%}</b> of the "
            f"probability mass; the kept tokens are renormalized to sum to 1. Most likely: "
            f"<code style='{_INHERIT}'>{escape(self.labels[best])}</code> with {final[best]:.1%}."
        )
        order = np.argsort(-self.logits.numpy(), kind="stable")[: self.shown]
        x = np.arange(len(order))
        fig = new_figure(7.5, 3.2)
        ax = fig.subplots()
        colours = ["tab:blue" if kept[i] else "lightgrey" for i in order]
        ax.bar(x, tempered[order], color=colours, label="after temperature (grey: dropped)")
        ax.plot(x, final[order], "k_", markersize=14, markeredgewidth=2, label="sampled from (renormalized)")
        ax.set_xticks(x, [self.labels[i] for i in order], fontsize=9)
        ax.set_ylabel("probability")
        ax.set_ylim(0, 1.05 * max(final.max(), tempered.max()))
        ax.set_title(f"{self.title}: the {len(order)} most likely of {len(final)} tokens", fontsize=10)
        ax.legend(fontsize=8, loc="upper right")
        self.plot.value = figure_to_html(
            fig,
            alt=f"Bar chart of the {len(order)} most likely next tokens; {int(kept.sum())} kept, "
            f"{dropped:.1%} of the mass dropped",
        )


class TextGenerator(ShowsView):
    """Continue a prompt with the trained GPT under chosen sampling knobs and seed."""

    def __init__(
        self,
        model: GPT,
        tokenizer: CharTokenizer,
        prompt: str = "The decoder ",
        length: int = 160,
        temperature: float = 0.8,
        top_k: int | None = None,
        top_p: float = 1.0,
        seed: int = 0,
    ) -> None:
        self.model, self.tokenizer = model, tokenizer
        self.max_len = model.config.max_len
        self.prompt = widgets.Text(value=prompt, description="prompt", style=_WIDE)
        self.length = widgets.IntSlider(value=length, min=1, max=400, description="characters", style=_WIDE)
        self.temperature = widgets.FloatSlider(
            value=temperature, min=0.0, max=2.0, step=0.05, description="temperature", style=_WIDE
        )
        self.top_k = _top_k_slider(top_k, tokenizer.vocab_size)
        self.top_p = widgets.FloatSlider(
            value=top_p, min=0.05, max=1.0, step=0.05, description="top-p (1: all)", style=_WIDE
        )
        self.seed = widgets.IntText(value=seed, description="seed", style=_WIDE)
        self.button = widgets.Button(description="Generate", button_style="primary")
        self.output = widgets.HTML()
        self.button.on_click(self._on_click)
        self.view = widgets.VBox(
            [
                widgets.HBox([self.prompt, self.length, self.seed]),
                widgets.HBox([self.temperature, self.top_k, self.top_p]),
                self.button,
                self.output,
            ]
        )
        self._on_click()

    def generate(self) -> str:
        """The prompt's continuation under the current settings (the same settings give the same text)."""
        prompt_ids = self.tokenizer.encode(self.prompt.value)
        if not prompt_ids:
            raise ValueError("type a prompt of at least one character")
        room = self.max_len - len(prompt_ids)
        if room < 1:
            raise ValueError(f"the prompt is longer than the model's context of {self.max_len} characters")
        top_k, top_p = knob_values(self.top_k.value, self.top_p.value, self.tokenizer.vocab_size)
        new = self.model.generate(
            prompt_ids,
            min(self.length.value, room),
            temperature=self.temperature.value,
            top_k=top_k,
            top_p=top_p,
            generator=torch.Generator().manual_seed(self.seed.value),
        )
        return self.tokenizer.decode(new)

    def _on_click(self, _button: widgets.Button | None = None) -> None:
        try:
            continuation = self.generate()
        except ValueError as error:
            self.output.value = f'<span style="color:#cf222e">{escape(str(error))}</span>'
            return
        self.output.value = (
            '<pre style="white-space:pre-wrap;font-size:90%">'
            f"<b>{escape(self.prompt.value)}</b>{escape(continuation)}</pre>"
        )


def rotary_scores(query: np.ndarray, key: np.ndarray, length: int, base: float = 10000.0) -> np.ndarray:
    """``(length, length)``: the query rotated to position m dotted with the key rotated to n."""
    query = torch.as_tensor(query, dtype=torch.float64)
    key = torch.as_tensor(key, dtype=torch.float64)
    if query.dim() != 1 or query.shape != key.shape or len(query) % 2:
        raise ValueError(
            f"query and key must be 1-D of the same even length, got {query.shape} and {key.shape}"
        )
    angles = _rotary_angles(length, len(query), base)
    rotated_q = _rotate_pairs(query.expand(length, -1).float(), angles).double()
    rotated_k = _rotate_pairs(key.expand(length, -1).float(), angles).double()
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
        # A bound, not the raw round-off, so the committed output is the same on every machine.
        agreement = (
            f"agree to within <b>{SPREAD_BOUND:.0e}</b> (rounding)"
            if spread < SPREAD_BOUND
            else f"differ by up to <b>{spread:.1e}</b>"
        )
        self.readout.value = (
            f"With d_head = {self.d_head.value} and base {self.base.value:g}, scores with the same "
            f"offset n − m {agreement}: the score depends on the offset only. The row of m = {m} is "
            "the same curve as the row of m = 0, shifted."
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

"""Widgets of lesson 9 (the translator): the live loss curve, and a translate-your-own-sentence
box that shows where the decoder looked while writing each word.

* :class:`LiveLossCurve`: training loss against step, redrawn while training runs (pass it as the
  trainer's callback); :meth:`LiveLossCurve.show_log` draws a finished run's log the same way.
* :class:`TranslateWidget`: a sentence in, its translation and cross-attention map out.

The attention picture is the decoder's *cross-attention*: row t shows how output token t spread its
attention over the source tokens. The model's attention runs in a fused kernel that never stores
the weights, so :func:`cross_attention` records the inputs of a decoder layer's cross-attention
with a forward pre-hook and recomputes the weights with
:meth:`~transformer_course.layers.MultiHeadAttention.attention_weights`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

import ipywidgets as widgets
import numpy as np
import torch

from transformer_course.translation.checkpoint import LogEntry
from transformer_course.translation.evaluation import translate
from transformer_course.translation.model import Transformer
from transformer_course.translation.tokenization import BYTE_TOKENS, SubwordTokenizer
from transformer_course.widgets.base import ShowsView
from transformer_course.widgets.figures import figure_to_html, new_figure


class LiveLossCurve(ShowsView):
    """Training loss against step, redrawn every ``redraw_every`` log entries.

    It draws into an ``ipywidgets.HTML`` like every plot of the course, so the last picture stays
    in the saved notebook.
    """

    def __init__(self, title: str = "training loss", redraw_every: int = 1) -> None:
        if redraw_every < 1:
            raise ValueError(f"redraw_every must be positive, got {redraw_every}")
        self.title = title
        self.redraw_every = redraw_every
        self.entries: list[LogEntry] = []
        self.view = widgets.HTML(value="<i>The curve appears after the first logged steps.</i>")

    def __call__(self, entry: LogEntry) -> None:
        self.entries.append(entry)
        if len(self.entries) % self.redraw_every == 0:
            self.redraw()

    def show_log(self, entries: Sequence[LogEntry]) -> None:
        """Replace the curve with a finished run's log (a loaded checkpoint's history)."""
        self.entries = list(entries)
        self.redraw()

    def redraw(self) -> None:
        if not self.entries:
            return
        fig = new_figure(width=6.0, height=3.2)
        ax = fig.add_subplot()
        ax.plot([e.step for e in self.entries], [e.loss for e in self.entries], marker=".")
        ax.set_xlabel("optimizer step")
        ax.set_ylabel("label-smoothed cross-entropy")
        last = self.entries[-1]
        ax.set_title(f"{self.title} (step {last.step}, loss {last.loss:.3f})")
        ax.grid(alpha=0.3)
        self.view.value = figure_to_html(fig, alt=f"{self.title} against optimizer step")


@dataclass(frozen=True)
class AttentionMap:
    """Cross-attention weights ``(heads, n_output, n_source)`` with the tokens on each axis."""

    weights: np.ndarray
    source_tokens: list[str]
    output_tokens: list[str]


def cross_attention(
    model: Transformer, tokenizer: SubwordTokenizer, source: str, translation: str, layer: int = -1
) -> AttentionMap:
    """The cross-attention of decoder ``layer`` while the model reads ``translation``.

    The decoder is run once with teacher forcing on ``<s> + translation``; row t of the result
    is the attention of the step that produced output token t (the last row produced EOS).
    """
    layers = model.decoder.layers
    if not -len(layers) <= layer < len(layers):
        raise ValueError(f"layer must be in {-len(layers)}..{len(layers) - 1}, got {layer}")
    device = next(model.parameters()).device
    limit = model.config.max_len
    src_ids = tokenizer.encode(source)[:limit]
    out_ids = tokenizer.encode(translation)[:limit]  # ends with EOS unless cut
    src = torch.tensor([src_ids], device=device)
    tgt_in = torch.tensor([[tokenizer.bos_id, *out_ids[:-1]]], device=device)
    captured: dict[str, torch.Tensor | None] = {}
    attention = layers[layer].cross_attn

    def record(_module, args):
        captured["query"], captured["key"] = args[0], args[1]
        captured["mask"] = args[3] if len(args) > 3 else None

    was_training = model.training
    model.eval()
    handle = attention.register_forward_pre_hook(record)
    try:
        with torch.no_grad():
            memory, src_mask = model.encode(src)
            model.decode(tgt_in, memory, src_mask)
            weights = attention.attention_weights(captured["query"], captured["key"], captured["mask"])
    finally:
        handle.remove()
        model.train(was_training)
    return AttentionMap(
        weights=weights[0].float().cpu().numpy(),
        source_tokens=[tokenizer.id_to_token(i) for i in src_ids],
        output_tokens=[tokenizer.id_to_token(i) for i in out_ids],
    )


def attention_figure_html(attention: AttentionMap, head: int | None = None) -> str:
    """A heatmap (outputs down, sources across) of one head, or the mean of all heads."""
    weights = attention.weights.mean(axis=0) if head is None else attention.weights[head]
    n_out, n_src = weights.shape
    fig = new_figure(width=max(4.0, 0.45 * n_src + 1.5), height=max(3.0, 0.32 * n_out + 1.2))
    ax = fig.add_subplot()
    image = ax.imshow(weights, cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto")
    ax.set_xticks(range(n_src), attention.source_tokens, rotation=60, ha="right", fontsize=8)
    ax.set_yticks(range(n_out), attention.output_tokens, fontsize=8)
    ax.set_xlabel("source token (English)")
    ax.set_ylabel("output token (Spanish)")
    ax.set_title("cross-attention, " + ("mean of heads" if head is None else f"head {head}"))
    fig.colorbar(image, ax=ax, shrink=0.8)
    return figure_to_html(fig, alt="cross-attention heatmap of the translation")


class TranslateWidget(ShowsView):
    """A text box, greedy/beam choice, layer and head pickers; shows translation and heatmap."""

    def __init__(
        self,
        model: Transformer,
        tokenizer: SubwordTokenizer,
        sentence: str = "The black cat did not eat the small fish.",
    ) -> None:
        self.model = model
        self.tokenizer = tokenizer
        n_layers = len(model.decoder.layers)
        self.text = widgets.Text(value=sentence, description="English:",
                                 layout=widgets.Layout(width="90%"))  # fmt: skip
        self.method = widgets.Dropdown(options=["greedy", "beam"], value="greedy",
                                       description="Search:")  # fmt: skip
        self.layer = widgets.Dropdown(
            options=[(f"decoder layer {i + 1}", i) for i in range(n_layers)],
            value=n_layers - 1,
            description="Layer:",
        )
        self.head = widgets.Dropdown(
            # Heads are numbered from 0, as in lesson 4 and in the heatmap's title.
            options=[("mean of heads", -1)] + [(f"head {h}", h) for h in range(model.config.n_heads)],
            value=-1,
            description="Head:",
        )
        self.button = widgets.Button(description="Translate", button_style="primary")
        self.output = widgets.HTML()
        self.plot = widgets.HTML()
        self.button.on_click(self.update)
        for control in (self.method, self.layer, self.head):
            control.observe(self.update, names="value")
        self.view = widgets.VBox([
            self.text, widgets.HBox([self.method, self.layer, self.head, self.button]),
            self.output, self.plot,
        ])  # fmt: skip
        self.update()

    def update(self, _change: object = None) -> None:
        """Translate the text box's sentence and redraw; widget callbacks land here."""
        sentence = self.text.value.strip()
        if not sentence:
            self.output.value = "<i>Type an English sentence first.</i>"
            self.plot.value = ""
            return
        translation = translate(self.model, self.tokenizer, [sentence], self.method.value)[0]
        spelled = [t for t in self.tokenizer.tokens(sentence) if t in BYTE_TOKENS]
        note = (
            " <i>(some characters are not in the vocabulary and were spelled as UTF-8 bytes, "
            "which the model has rarely seen)</i>"
            if spelled
            else ""
        )
        self.output.value = f"<b>Spanish:</b> {escape(translation)}{note}"
        attention = cross_attention(self.model, self.tokenizer, sentence, translation, layer=self.layer.value)
        head = None if self.head.value == -1 else self.head.value
        self.plot.value = attention_figure_html(attention, head)

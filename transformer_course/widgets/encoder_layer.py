"""Lesson 7: reorder a sentence and watch the student's encoder layer, with and without positions.

The widget never computes a layer itself: it calls the two functions it is given (the student's
``encoder_layer`` and ``encode_with_positions``, each with its parameters bound), so what it shows
is the student's own code at work. For every order of the words it draws the attention weights
and measures how far each word's output moved from its output in the original order: nothing
without positional encodings (the layer is permutation-equivariant), clearly something with them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape
from itertools import permutations

import ipywidgets as widgets
import numpy as np

from transformer_course.widgets.base import ShowsView
from transformer_course.widgets.figures import figure_to_html, new_figure

Layer = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


class WordOrderExplorer(ShowsView):
    """Choose an order of ``words`` and whether positions are added; see weights and output shifts.

    ``embeddings`` holds one row per word of ``words`` in their original order;
    ``without_positions`` and ``with_positions`` map an ``(n, d_model)`` array to ``(output,
    weights)``.
    """

    def __init__(
        self,
        words: Sequence[str],
        embeddings: np.ndarray,
        without_positions: Layer,
        with_positions: Layer,
    ) -> None:
        embeddings = np.asarray(embeddings, dtype=float)
        if embeddings.ndim != 2 or embeddings.shape[0] != len(words) or len(words) < 2:
            raise ValueError(
                f"give at least two words and one embedding row per word; got {len(words)} words "
                f"and embeddings of shape {embeddings.shape}"
            )
        if len(words) > 5:
            raise ValueError(f"up to 5 words keep the list of orders short; got {len(words)}")
        self.words = list(words)
        self.embeddings = embeddings
        self.layers = {False: without_positions, True: with_positions}
        self.reference = {flag: layer(embeddings.copy())[0] for flag, layer in self.layers.items()}
        orders = [tuple(p) for p in permutations(range(len(words)))]
        self.order = widgets.Dropdown(
            options=[(" ".join(self.words[i] for i in order), order) for order in orders],
            value=orders[-1],
            description="order",
        )
        self.positions = widgets.Checkbox(value=False, description="add positional encodings")
        self.readout = widgets.HTML()
        self.plot = widgets.HTML()
        for control in (self.order, self.positions):
            control.observe(self._on_change, names="value")
        self.view = widgets.VBox([widgets.HBox([self.order, self.positions]), self.readout, self.plot])
        self.refresh()

    def _on_change(self, _change: dict) -> None:
        self.refresh()

    def shifts(self) -> np.ndarray:
        """Per word (original order), how far its output moved from the original sentence's."""
        order = list(self.order.value)
        output, _ = self.layers[self.positions.value](self.embeddings[order].copy())
        moved = np.empty(len(self.words))
        for place, word_index in enumerate(order):
            moved[word_index] = np.abs(output[place] - self.reference[self.positions.value][word_index]).max()
        return moved

    def refresh(self) -> None:
        order = list(self.order.value)
        shown = [self.words[i] for i in order]
        _, weights = self.layers[self.positions.value](self.embeddings[order].copy())
        moved = self.shifts()
        rows = "".join(
            f"<tr><td>{escape(word)}</td><td style='text-align:right'>{shift:.1e}</td></tr>"
            for word, shift in zip(self.words, moved, strict=True)
        )
        positions = "with" if self.positions.value else "without"
        self.readout.value = (
            f"<p>Sentence: <b>{escape(' '.join(shown))}</b>, {positions} positional encodings. "
            "How far each word's output moved from its output in the original order "
            f"(largest entry of the difference):</p><table><tr><th>word</th><th>moved by</th></tr>"
            f"{rows}</table>"
        )
        self.plot.value = self._draw(np.asarray(weights), shown)

    def _draw(self, weights: np.ndarray, shown: list[str]) -> str:
        fig = new_figure(3.6, 3.0)
        ax = fig.add_subplot()
        ax.imshow(weights, cmap="Blues", vmin=0.0, vmax=1.0)
        for i in range(len(shown)):
            for j in range(len(shown)):
                color = "white" if weights[i, j] > 0.6 else "black"
                ax.text(j, i, f"{weights[i, j]:.2f}", ha="center", va="center", color=color)
        ax.set_xticks(range(len(shown)), shown)
        ax.set_yticks(range(len(shown)), shown)
        ax.set_xlabel("key")
        ax.set_ylabel("query")
        ax.set_title("attention weights", fontsize="medium")
        return figure_to_html(fig, alt=f"Attention weights of the encoder layer for '{' '.join(shown)}'")

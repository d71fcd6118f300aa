"""Widget for lesson 4: three attention heads over one sentence, each with its own job.

:class:`HeadExplorer` embeds a short sentence with hand-designed features and gives three heads
hand-designed projections ``W_q^i``, ``W_k^i``, so that one head attends to the **previous
token**, one links the **subject to its verb** (and back), and one stays **diffuse**. Switching
the head redraws the weight matrix: the same tokens, a different relation.

Why designed and not trained: a trained model's heads are a mixture of many things; building them
by hand shows *how* a projection selects a relation. Each token's embedding is the concatenation
of a one-hot position (which token slot it is in) and two role flags (subject noun, verb):

* previous token: ``W_q`` maps the position one-hot of token ``p`` onto position ``p - 1``, ``W_k``
  copies positions, so ``q_p · k_j`` is large only for ``j = p - 1`` (token 0, having no previous
  token, looks at itself);
* subject ↔ verb: ``W_q`` turns "I am the verb" into "looking for a subject" and vice versa, ``W_k``
  exposes the role flags, so the verb's query matches the subject's key; tokens with neither role
  ask for nothing, their scores are all 0 and their weights uniform;
* diffuse: small random projections, so every score is near 0 and every row near uniform.

The weights are computed with a private softmax; this is a demonstration, not the graded
``multi_head_attention`` students write in the lesson.
"""

from __future__ import annotations

from html import escape

import ipywidgets as widgets
import numpy as np
import torch

from transformer_course.widgets.base import ShowsView
from transformer_course.widgets.figures import figure_to_html, new_figure

HEADS = ("previous token", "subject → verb", "diffuse")
DEFAULT_TOKENS = ("the", "old", "dog", "slowly", "chased", "a", "cat")
DEFAULT_SUBJECT = 2
DEFAULT_VERB = 4
# Score given to the wanted key before the 1/sqrt(d_k) scaling; large enough that the softmax puts
# about 0.95 of the weight on it in a 7-token sentence.
_STRENGTH = 6.0
_ROLE_FEATURES = 2  # subject flag, verb flag


def embed_sentence(n_tokens: int, subject: int, verb: int) -> np.ndarray:
    """``(n, n + 2)`` embeddings: a one-hot position, then the subject and verb flags."""
    embeddings = np.zeros((n_tokens, n_tokens + _ROLE_FEATURES))
    embeddings[:, :n_tokens] = np.eye(n_tokens)
    embeddings[subject, n_tokens] = 1.0
    embeddings[verb, n_tokens + 1] = 1.0
    return embeddings


def designed_projections(n_tokens: int, head: str, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``(W_q, W_k)`` of one head, each ``(n + 2, d_k)``, built to select the head's relation."""
    d_model = n_tokens + _ROLE_FEATURES
    if head == "previous token":
        d_k = n_tokens
        w_q = np.zeros((d_model, d_k))
        w_k = np.zeros((d_model, d_k))
        w_k[:n_tokens, :] = np.eye(n_tokens)
        for position in range(n_tokens):
            w_q[position, max(position - 1, 0)] = _STRENGTH * np.sqrt(d_k)
        return w_q, w_k
    if head == "subject → verb":
        d_k = _ROLE_FEATURES
        w_q = np.zeros((d_model, d_k))
        w_k = np.zeros((d_model, d_k))
        subject_flag, verb_flag = n_tokens, n_tokens + 1
        # Key features: column 0 = "I am a subject", column 1 = "I am a verb".
        w_k[subject_flag, 0] = 1.0
        w_k[verb_flag, 1] = 1.0
        # A verb's query asks for a subject, a subject's query asks for a verb.
        w_q[verb_flag, 0] = _STRENGTH * np.sqrt(d_k)
        w_q[subject_flag, 1] = _STRENGTH * np.sqrt(d_k)
        return w_q, w_k
    if head == "diffuse":
        d_k = 4
        rng = np.random.default_rng(seed)
        return rng.normal(0.0, 0.1, (d_model, d_k)), rng.normal(0.0, 0.1, (d_model, d_k))
    raise ValueError(f"unknown head {head!r}; choose one of {', '.join(HEADS)}")


class HeadExplorer(ShowsView):
    """Pick a head and see its attention weights over the same sentence."""

    def __init__(
        self,
        tokens: tuple[str, ...] | list[str] = DEFAULT_TOKENS,
        subject: int = DEFAULT_SUBJECT,
        verb: int = DEFAULT_VERB,
        head: str = HEADS[0],
    ) -> None:
        tokens = list(tokens)
        if len(tokens) < 3:
            raise ValueError(f"give a sentence of at least 3 tokens, got {len(tokens)}")
        for name, index in (("subject", subject), ("verb", verb)):
            if not 0 <= index < len(tokens):
                raise ValueError(f"{name}={index} is not a token position (0..{len(tokens) - 1})")
        if subject == verb:
            raise ValueError("the subject and the verb must be different tokens")
        if head not in HEADS:
            raise ValueError(f"unknown head {head!r}; choose one of {', '.join(HEADS)}")
        self.tokens = tokens
        self.subject = subject
        self.verb = verb
        self.embeddings = embed_sentence(len(tokens), subject, verb)
        self.head = widgets.ToggleButtons(options=list(HEADS), value=head, description="head")
        self.readout = widgets.HTML()
        self.plot = widgets.HTML()
        self.head.observe(self._on_change, names="value")
        self.view = widgets.VBox([self.head, self.readout, self.plot])
        self._redraw()

    def weights(self, head: str | None = None) -> np.ndarray:
        """``(n, n)`` weights ``softmax(X W_q (X W_k)ᵀ / √d_k)`` of ``head`` (default: the shown one)."""
        w_q, w_k = designed_projections(len(self.tokens), head or self.head.value)
        queries = self.embeddings @ w_q
        keys = self.embeddings @ w_k
        scores = torch.as_tensor(queries @ keys.T / np.sqrt(w_q.shape[1]), dtype=torch.float64)
        return torch.softmax(scores, dim=-1).numpy()  # PyTorch's: lesson 3 grades a softmax

    def _on_change(self, _change: dict | None = None) -> None:
        self._redraw()

    def _describe(self, weights: np.ndarray) -> str:
        head = self.head.value
        if head == "previous token":
            i = len(self.tokens) - 1
            return (
                f"Every token looks one step back: <b>{escape(self.tokens[i])}</b> puts "
                f"{weights[i, i - 1]:.2f} of its weight on <b>{escape(self.tokens[i - 1])}</b>. "
                "Token 0 has no predecessor and looks at itself."
            )
        if head == "subject → verb":
            s, v = self.subject, self.verb
            return (
                f"The verb <b>{escape(self.tokens[v])}</b> puts {weights[v, s]:.2f} of its weight on "
                f"its subject <b>{escape(self.tokens[s])}</b>, and the subject {weights[s, v]:.2f} on "
                "the verb. Other tokens ask for neither role: their rows are uniform "
                f"({1 / len(self.tokens):.2f} each)."
            )
        spread = float(weights.max() - weights.min())
        return (
            f"Every weight lies within {spread:.3f} of every other: this head averages the whole "
            "sentence, a smooth summary that the other heads do not give."
        )

    def _redraw(self) -> None:
        weights = self.weights()
        self.readout.value = self._describe(weights)
        self.plot.value = self._draw(weights)

    def _draw(self, weights: np.ndarray) -> str:
        n = len(self.tokens)
        labels = [f"{j}:{t}" for j, t in enumerate(self.tokens)]
        fig = new_figure(5.2, 4.4)
        ax = fig.subplots()
        ax.imshow(weights, cmap="viridis", vmin=0.0, vmax=1.0)
        for r in range(n):
            for c in range(n):
                colour = "black" if weights[r, c] > 0.6 else "white"
                ax.text(c, r, f"{weights[r, c]:.2f}", ha="center", va="center", fontsize=7, color=colour)
        ax.set_xticks(range(n), labels, rotation=45, ha="right", fontsize=8)
        ax.set_yticks(range(n), labels, fontsize=8)
        ax.set_xlabel("key")
        ax.set_ylabel("query")
        ax.set_title(f"head: {self.head.value}", fontsize=10)
        return figure_to_html(
            fig, alt=f"Attention weights of the {self.head.value} head over: {' '.join(self.tokens)}"
        )

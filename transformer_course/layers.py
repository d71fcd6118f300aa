"""The layers both model families are built from: attention, feed-forward, dropout, positions.

The translator (:mod:`transformer_course.translation.model`, lessons 8-9) and the GPT
(:mod:`transformer_course.language_model.gpt`, lesson 10) stack the same multi-head attention
and position-wise feed-forward network; keeping them here lets neither family import the other.

Self-attention computes Q, K and V in one matrix product (:meth:`MultiHeadAttention.project`),
dropout draws its masks the fast way (:class:`Dropout`), and attention runs on
``torch.nn.functional.scaled_dot_product_attention``, whose fused kernels (on a CPU as on a GPU)
never materialize the attention weights. ``benchmarks/translator_throughput.py`` measures what
each bought against ``torch.nn.Transformer``'s layers.

Masks follow ``scaled_dot_product_attention``'s convention: a boolean ``attn_mask`` is **True
where a query may attend**. Padding masks passed in follow ``torch.nn``'s convention instead:
``key_padding_mask`` is **True where the token is padding**. Both conventions are converted in
one place, :func:`_attention_mask`: mixing them up is the most common Transformer bug.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn


def sinusoidal_encodings(positions: Tensor, d_model: int) -> Tensor:
    """The paper's fixed positional encodings of ``positions`` (a 1-D tensor of position indices),
    as a ``(len(positions), d_model)`` float32 tensor.

    It takes the positions, not a count: lesson 5 grades ``positional_encoding(seq_len, d_model)``,
    the table of positions ``0 .. seq_len - 1``, and the package holds no graded answer, not even
    privately (tests/test_package_audit.py). The models pass ``torch.arange(max_len)``.

    Even columns hold ``sin(pos / 10000^(2i/d_model))`` and odd columns the cosine of the same
    angle; an odd ``d_model`` ends with a sine column.
    """
    if not isinstance(positions, Tensor) or positions.ndim != 1 or len(positions) < 1:
        raise ValueError(f"positions must be a non-empty 1-D tensor of position indices, got {positions!r}")
    if d_model < 1:
        raise ValueError(f"d_model must be positive, got {d_model}")
    even_dims = torch.arange(0, d_model, 2, dtype=torch.float64)
    angles = positions.to(torch.float64).unsqueeze(1) / torch.pow(10000.0, even_dims / d_model)
    table = torch.zeros(len(positions), d_model, dtype=torch.float64)
    table[:, 0::2] = torch.sin(angles)
    table[:, 1::2] = torch.cos(angles[:, : d_model // 2])
    return table.to(torch.float32)


def _attention_mask(
    key_padding_mask: Tensor | None, causal: bool, n_queries: int, n_keys: int, device: torch.device
) -> Tensor | None:
    """Combine padding and causal masks into SDPA's boolean mask (True = may attend).

    Returns ``None`` when nothing is masked, or a mask broadcastable to ``(B, h, n_q, n_k)``.
    """
    mask = None
    if key_padding_mask is not None:
        mask = (~key_padding_mask)[:, None, None, :]
    if causal:
        allowed = torch.ones(n_queries, n_keys, dtype=torch.bool, device=device).tril()
        mask = allowed if mask is None else mask & allowed
    return mask


class Dropout(nn.Module):
    """Inverted dropout, what ``nn.Dropout`` computes: while training, zero each value with
    probability ``p`` and scale the others by ``1 / (1 - p)``, so that the expected value stays
    the same and evaluation needs no rescaling.

    Written out because on a CPU drawing the random mask is most of its cost, and ``torch.rand``
    draws it faster than the Bernoulli sampler behind ``nn.Dropout`` (the benchmark's breakdown
    measures what that bought). On a GPU ``nn.Dropout``'s fused kernel is used.
    """

    def __init__(self, p: float = 0.0) -> None:
        super().__init__()
        if not 0.0 <= p < 1.0:
            raise ValueError(f"dropout probability must be in [0, 1), got {p!r}")
        self.p = p

    def forward(self, x: Tensor) -> Tensor:
        if not self.training or self.p == 0.0:
            return x
        if x.device.type != "cpu":
            return F.dropout(x, self.p, training=True)
        keep = torch.rand_like(x).ge_(self.p).div_(1.0 - self.p)  # 0 or 1 / (1 - p)
        return x * keep

    def extra_repr(self) -> str:
        return f"p={self.p}"


def _stacked_linear(x: Tensor, layers: tuple[nn.Linear, ...]) -> tuple[Tensor, ...]:
    """``layer(x) for layer in layers`` as one matrix product with the weights stacked."""
    weight = torch.cat([layer.weight for layer in layers])
    bias = torch.cat([layer.bias for layer in layers])
    return F.linear(x, weight, bias).chunk(len(layers), dim=-1)


class MultiHeadAttention(nn.Module):
    """Multi-head attention: h scaled dot-product attentions on learned projections, concatenated.

    ``forward(query, key, value)`` takes ``(B, T, d_model)`` tensors. ``key_padding_mask`` is a
    ``(B, T_k)`` bool tensor, True where the key is padding; ``causal=True`` stops query t from
    seeing keys after t (decoder self-attention). ``dropout`` applies to the attention weights.
    The four projections are separate ``nn.Linear`` layers so that a lesson can point at W^Q, W^K,
    W^V and W^O one by one; :meth:`project` still runs them as one matrix product where it can.
    """

    def __init__(self, d_model: int, n_heads: int, dropout: float = 0.0, scale: bool = True) -> None:
        super().__init__()
        if d_model % n_heads != 0:
            raise ValueError(
                f"d_model={d_model} is not divisible by n_heads={n_heads}; "
                "each head needs d_model / n_heads dimensions"
            )
        self.d_model = d_model
        self.n_heads = n_heads
        self.d_head = d_model // n_heads
        self.dropout = dropout
        self.scale = scale
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def _split_heads(self, x: Tensor) -> Tensor:
        batch, length, _ = x.shape
        return x.view(batch, length, self.n_heads, self.d_head).transpose(1, 2)

    def project(self, query: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """``Q = query W^Q``, ``K = key W^K``, ``V = value W^V``, split into ``(B, h, T, d_k)`` heads.

        In self-attention the three inputs are one tensor, so stacking ``[W^Q; W^K; W^V]`` turns
        three matrix products into one, three times as wide: fewer, larger products keep the
        hardware busier (``nn.MultiheadAttention`` stores its weights stacked for the same
        reason). Cross-attention stacks ``[W^K; W^V]``, which both read the encoder's memory.
        """
        projections = (self.q_proj, self.k_proj, self.v_proj)
        if query is key and key is value:
            projected = _stacked_linear(query, projections)
        elif key is value:
            projected = (self.q_proj(query), *_stacked_linear(key, projections[1:]))
        else:
            projected = tuple(p(x) for p, x in zip(projections, (query, key, value), strict=True))
        return tuple(self._split_heads(x) for x in projected)

    def _check(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None):
        for name, t in (("query", query), ("key", key), ("value", value)):
            if t.dim() != 3 or t.shape[-1] != self.d_model:
                raise ValueError(
                    f"{name} must have shape (batch, length, {self.d_model}), got {tuple(t.shape)}"
                )
        if key.shape[:2] != value.shape[:2] or key.shape[0] != query.shape[0]:
            raise ValueError(
                "query, key and value must share the batch size and key/value the length; got "
                f"{tuple(query.shape)}, {tuple(key.shape)}, {tuple(value.shape)}"
            )
        if key_padding_mask is not None and (
            key_padding_mask.dtype != torch.bool or key_padding_mask.shape != key.shape[:2]
        ):
            raise ValueError(
                f"key_padding_mask must be a bool tensor of shape {tuple(key.shape[:2])} "
                f"(True = padding), got {key_padding_mask.dtype} {tuple(key_padding_mask.shape)}"
            )

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        key_padding_mask: Tensor | None = None,
        causal: bool = False,
    ) -> Tensor:
        self._check(query, key, value, key_padding_mask)
        q, k, v = self.project(query, key, value)
        n_q, n_k = q.shape[-2], k.shape[-2]
        dropout_p = self.dropout if self.training else 0.0
        scale = None if self.scale else 1.0
        if causal and key_padding_mask is None and n_q == n_k:
            # The flag lets fused kernels skip the masked half instead of reading a mask.
            heads = F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p, is_causal=True, scale=scale)
        else:
            mask = _attention_mask(key_padding_mask, causal, n_q, n_k, query.device)
            heads = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p, scale=scale)
        batch, _, length, _ = heads.shape
        return self.out_proj(heads.transpose(1, 2).reshape(batch, length, self.d_model))

    def attention_weights(
        self,
        query: Tensor,
        key: Tensor,
        key_padding_mask: Tensor | None = None,
        causal: bool = False,
    ) -> Tensor:
        """The ``(B, h, T_q, T_k)`` attention weights, computed explicitly for pictures.

        The fused kernel never materializes them, so this recomputes softmax(QK^T / sqrt(d_k))
        with the same projections and masks (no dropout).
        """
        self._check(query, key, key, key_padding_mask)
        q = self._split_heads(self.q_proj(query))
        k = self._split_heads(self.k_proj(key))
        scores = q @ k.transpose(-2, -1)
        if self.scale:
            scores = scores / math.sqrt(self.d_head)
        mask = _attention_mask(key_padding_mask, causal, q.shape[-2], k.shape[-2], query.device)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        return torch.softmax(scores, dim=-1)


class FeedForward(nn.Module):
    """Position-wise feed-forward network, FFN(x) = max(0, x W1 + b1) W2 + b2."""

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.dropout(torch.relu(self.linear1(x))))

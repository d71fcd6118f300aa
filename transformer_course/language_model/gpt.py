"""A small decoder-only Transformer (GPT) built from the course's own blocks, for lesson 10.

A GPT is the decoder of lesson 8 without cross-attention: token embeddings, then blocks of
causal self-attention and a feed-forward network, then a projection to next-token logits. It
reuses :class:`~transformer_course.layers.MultiHeadAttention` (its four projections W^Q, W^K, W^V,
W^O), :class:`~transformer_course.layers.FeedForward` and
:func:`~transformer_course.layers.sinusoidal_encodings`. What it adds:

* **pre-norm blocks** with a final layer norm, as GPT-2 does (``x + Sublayer(LayerNorm(x))``);
* a choice of **positions**: rotary (``"rope"``, the default), the paper's sinusoids added to the
  embeddings, a learned table, or none;
* a **KV cache**: during generation each layer keeps the keys and values of the tokens already
  seen, so a new token's projections and feed-forward network cost one position's work and its
  attention reads the t cached keys, O(d² + t·d) per layer, instead of recomputing the whole prefix;
* **sampling** knobs (temperature, top-k, top-p) in :func:`_ranked_next_token_probabilities`.

Everything here is PyTorch; lesson 10 asks students for NumPy versions of the sampling rule,
the rotation and the cached attention step. The PyTorch ones are private (``_`` names the lessons
do not advertise) and reached through :class:`GPT`: no public function of the package computes a
graded exercise's answer (tests/test_package_audit.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from transformer_course.layers import FeedForward, MultiHeadAttention, sinusoidal_encodings

POSITION_KINDS = ("rope", "sinusoidal", "learned", "none")
ROPE_BASE = 10000.0


@dataclass(frozen=True)
class GPTConfig:
    """Sizes of a GPT. ``max_len`` is the longest sequence it can be run on (position tables)."""

    vocab_size: int
    d_model: int = 128
    n_heads: int = 4
    d_ff: int = 512
    n_layers: int = 4
    max_len: int = 1024
    dropout: float = 0.1
    positions: str = "rope"

    def __post_init__(self) -> None:
        for name in ("vocab_size", "d_model", "n_heads", "d_ff", "n_layers", "max_len"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} is not divisible by n_heads={self.n_heads}")
        if self.positions not in POSITION_KINDS:
            raise ValueError(f"positions must be one of {POSITION_KINDS}, got {self.positions!r}")
        if self.positions == "rope" and self.d_head % 2:
            raise ValueError(
                f"rotary positions rotate pairs of dimensions: d_head={self.d_head} must be even"
            )
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout!r}")

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_heads


# --------------------------------------------------------------------------------------------
# Rotary positions
# --------------------------------------------------------------------------------------------


def _rotary_angles(max_len: int, d_head: int, base: float = ROPE_BASE) -> Tensor:
    """``(max_len, d_head / 2)`` angles ``pos · base^(-2i / d_head)``: lesson 5's frequencies."""
    positions = torch.arange(max_len, dtype=torch.float64)[:, None]
    frequencies = base ** (-torch.arange(0, d_head, 2, dtype=torch.float64) / d_head)
    return positions * frequencies


def _rotate_pairs(x: Tensor, angles: Tensor) -> Tensor:
    """Rotate each pair of dimensions ``(2i, 2i+1)`` of ``x (..., T, d)`` by ``angles (T, d/2)``.

    A pair is read as the complex number ``x_2i + i·x_2i+1`` and multiplied by ``e^{i·angle}``,
    a rotation of the plane; the result comes back in ``x``'s dtype.
    """
    pairs = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2).contiguous())
    turn = torch.polar(torch.ones_like(angles, dtype=torch.float32), angles.float())
    return torch.view_as_real(pairs * turn).flatten(-2).to(x.dtype)


# --------------------------------------------------------------------------------------------
# The KV cache
# --------------------------------------------------------------------------------------------


@dataclass
class LayerCache:
    """Keys and values ``(B, h, T_seen, d_head)`` one attention layer has computed so far."""

    keys: Tensor | None = None
    values: Tensor | None = None

    def extend(self, keys: Tensor, values: Tensor) -> tuple[Tensor, Tensor]:
        """Append the new positions' keys and values; return all of them."""
        if self.keys is not None:
            keys = torch.cat([self.keys, keys], dim=-2)
            values = torch.cat([self.values, values], dim=-2)
        self.keys, self.values = keys, values
        return keys, values


@dataclass
class KVCache:
    """One :class:`LayerCache` per block; ``length`` is the number of positions already seen."""

    layers: list[LayerCache] = field(default_factory=list)

    @property
    def length(self) -> int:
        first = self.layers[0] if self.layers else None
        return 0 if first is None or first.keys is None else first.keys.shape[-2]

    def n_values(self) -> int:
        """How many numbers the cache holds (keys and values of every layer)."""
        return sum(c.keys.numel() + c.values.numel() for c in self.layers if c.keys is not None)


# --------------------------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------------------------


class CausalSelfAttention(nn.Module):
    """The course's multi-head attention as causal self-attention, with rotary positions and a cache.

    The projections are those of :class:`MultiHeadAttention`; the forward pass is written out
    here because rotary positions act on the queries and keys *after* projection and a cache
    stores the keys and values *between* calls, two places the encoder–decoder never needed.
    """

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.heads = MultiHeadAttention(config.d_model, config.n_heads, config.dropout)
        self.n_heads, self.d_head = config.n_heads, config.d_head

    def _split(self, x: Tensor) -> Tensor:
        batch, length, _ = x.shape
        return x.view(batch, length, self.n_heads, self.d_head).transpose(1, 2)

    def forward(self, x: Tensor, angles: Tensor | None, cache: LayerCache | None) -> Tensor:
        """``x (B, T, d_model)`` at positions ``start .. start+T-1`` (``start`` = cached length).

        ``angles`` are the rotary angles of those positions, or None without rotary positions.
        """
        q = self._split(self.heads.q_proj(x))
        k = self._split(self.heads.k_proj(x))
        v = self._split(self.heads.v_proj(x))
        if angles is not None:
            q, k = _rotate_pairs(q, angles), _rotate_pairs(k, angles)
        if cache is not None:
            k, v = cache.extend(k, v)
        n_new, n_all = q.shape[-2], k.shape[-2]
        dropout = self.heads.dropout if self.training else 0.0
        if n_new == n_all:
            heads = F.scaled_dot_product_attention(q, k, v, dropout_p=dropout, is_causal=True)
        elif n_new == 1:  # the newest token may see every earlier one
            heads = F.scaled_dot_product_attention(q, k, v, dropout_p=dropout)
        else:  # new query j sits at position n_all - n_new + j
            allowed = torch.ones(n_new, n_all, dtype=torch.bool, device=x.device).tril(n_all - n_new)
            heads = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed, dropout_p=dropout)
        batch, _, length, _ = heads.shape
        return self.heads.out_proj(heads.transpose(1, 2).reshape(batch, length, -1))


class GPTBlock(nn.Module):
    """Pre-norm decoder block without cross-attention: x + Attn(LN(x)), then x + FFN(LN(x))."""

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(config.d_model)
        self.attn = CausalSelfAttention(config)
        self.norm2 = nn.LayerNorm(config.d_model)
        self.ff = FeedForward(config.d_model, config.d_ff, config.dropout)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x: Tensor, angles: Tensor | None, cache: LayerCache | None) -> Tensor:
        x = x + self.dropout(self.attn(self.norm1(x), angles, cache))
        return x + self.dropout(self.ff(self.norm2(x)))


class GPT(nn.Module):
    """Token ids ``(B, T)`` to next-token logits ``(B, T, V)``: position t predicts token t + 1.

    The output projection shares its weights with the token embedding, as GPT-2 does.
    """

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.config = config
        self.tokens = nn.Embedding(config.vocab_size, config.d_model)
        if config.positions == "learned":
            self.learned_positions = nn.Embedding(config.max_len, config.d_model)
        if config.positions == "sinusoidal":
            table = sinusoidal_encodings(torch.arange(config.max_len), config.d_model)
            self.register_buffer("sinusoids", table, persistent=False)
        if config.positions == "rope":
            self.register_buffer("angles", _rotary_angles(config.max_len, config.d_head), persistent=False)
        self.dropout = nn.Dropout(config.dropout)
        self.blocks = nn.ModuleList(GPTBlock(config) for _ in range(config.n_layers))
        self.final_norm = nn.LayerNorm(config.d_model)
        self.lm_head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        self._reset_parameters()
        self.lm_head.weight = self.tokens.weight

    def _reset_parameters(self) -> None:
        """Embeddings N(0, d^-0.5), scaled by sqrt(d) in ``forward`` as the course's Embedding does."""
        nn.init.normal_(self.tokens.weight, std=self.config.d_model**-0.5)
        if self.config.positions == "learned":
            nn.init.normal_(self.learned_positions.weight, std=0.02)

    @property
    def n_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def new_cache(self) -> KVCache:
        return KVCache([LayerCache() for _ in self.blocks])

    def _check(self, tokens: Tensor, start: int) -> None:
        if not isinstance(tokens, Tensor) or tokens.dtype not in (torch.int64, torch.int32):
            raise TypeError("tokens must be an integer torch.Tensor of token ids (torch.long)")
        if tokens.dim() != 2 or tokens.shape[1] == 0:
            raise ValueError(
                f"tokens must have shape (batch, length) with length >= 1, got {tuple(tokens.shape)}"
                " (add a batch dimension with tokens.unsqueeze(0))"
            )
        if start + tokens.shape[1] > self.config.max_len:
            raise ValueError(
                f"positions {start}..{start + tokens.shape[1] - 1} go past max_len={self.config.max_len}; "
                "build the model with a larger max_len or generate fewer tokens"
            )
        low, high = int(tokens.min()), int(tokens.max())
        if low < 0 or high >= self.config.vocab_size:
            raise ValueError(
                f"token ids lie in [{low}, {high}] but the vocabulary has {self.config.vocab_size}"
            )

    def forward(self, tokens: Tensor, cache: KVCache | None = None) -> Tensor:
        """Logits for every position of ``tokens``; with a cache, ``tokens`` continue what it holds."""
        start = 0 if cache is None else cache.length
        self._check(tokens, start)
        if cache is not None and len(cache.layers) != len(self.blocks):
            raise ValueError(f"the cache has {len(cache.layers)} layers, the model {len(self.blocks)}")
        length = tokens.shape[1]
        x = self.tokens(tokens) * math.sqrt(self.config.d_model)
        if self.config.positions == "learned":
            x = x + self.learned_positions.weight[start : start + length]
        elif self.config.positions == "sinusoidal":
            x = x + self.sinusoids[start : start + length]
        angles = self.angles[start : start + length] if self.config.positions == "rope" else None
        x = self.dropout(x)
        for i, block in enumerate(self.blocks):
            x = block(x, angles, None if cache is None else cache.layers[i])
        return self.lm_head(self.final_norm(x))

    @torch.no_grad()
    def generate(
        self,
        prompt: list[int],
        n_new: int,
        temperature: float = 1.0,
        top_k: int | None = None,
        top_p: float | None = None,
        generator: torch.Generator | None = None,
        use_cache: bool = True,
    ) -> list[int]:
        """Continue ``prompt`` (token ids) by ``n_new`` sampled tokens; returns the new ids.

        With ``use_cache`` every step feeds only the newest token and reuses the cached keys and
        values; without it every step runs the whole sequence again. Both give the same tokens.
        """
        if not prompt:
            raise ValueError("the prompt needs at least one token (the model predicts from a prefix)")
        if n_new < 0:
            raise ValueError(f"n_new must be non-negative, got {n_new}")
        was_training = self.training
        self.eval()
        device = self.tokens.weight.device
        sequence = torch.tensor([prompt], dtype=torch.long, device=device)
        cache = self.new_cache() if use_cache else None
        step_input, new = sequence, []
        try:
            for _ in range(n_new):
                logits = self(step_input, cache)[0, -1]
                order, ranked = _ranked_next_token_probabilities(logits.float(), temperature, top_k, top_p)
                probabilities = torch.zeros_like(ranked).scatter(-1, order, ranked)  # back to id order
                token = torch.multinomial(probabilities.cpu(), 1, generator=generator).to(device)
                new.append(int(token))
                sequence = torch.cat([sequence, token.view(1, 1)], dim=1)
                step_input = token.view(1, 1) if use_cache else sequence
        finally:
            self.train(was_training)
        return new


# --------------------------------------------------------------------------------------------
# Losses and sampling
# --------------------------------------------------------------------------------------------


def next_token_loss(logits: Tensor, targets: Tensor) -> Tensor:
    """Mean cross-entropy (nats per token) of ``logits (B, T, V)`` against ``targets (B, T)``."""
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), targets.reshape(-1))


def per_position_loss(logits: Tensor, targets: Tensor) -> Tensor:
    """Cross-entropy ``(T,)`` at each position, averaged over the batch."""
    losses = F.cross_entropy(logits.transpose(1, 2).float(), targets, reduction="none")
    return losses.mean(dim=0)


def _ranked_next_token_probabilities(
    logits: Tensor, temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None
) -> tuple[Tensor, Tensor]:
    """The distribution to sample from after the three knobs, in rank order: ``(order,
    probabilities)``, both ``(..., V)``, where ``probabilities[..., r]`` belongs to token
    ``order[..., r]``. Callers scatter it back to token order.

    It answers in rank order because lesson 10 grades the distribution in token order
    (``next_token_distribution``), and the package holds no graded answer, not even privately
    (tests/test_package_audit.py).

    The knobs apply in this order:

    * ``temperature``: softmax of ``logits / temperature``; 0 means greedy (all mass on the first
      highest logit).
    * ``top_k``: keep the k highest-ranked tokens. Tokens are ranked by logit, ties by lower id.
    * ``top_p``: of what is left (renormalized), keep the shortest run of top-ranked tokens whose
      mass reaches ``top_p``, the token that crosses it included.

    Dropped tokens get probability 0 and the kept ones are renormalized.
    """
    check_sampling_knobs(temperature, top_k, top_p)
    order = torch.sort(logits, dim=-1, descending=True, stable=True).indices
    if temperature == 0:  # the first-ranked token is the first highest logit
        greedy = torch.zeros(order.shape, dtype=logits.dtype, device=logits.device)
        greedy[..., 0] = 1.0
        return order, greedy
    ranked = logits.gather(-1, order) / temperature
    keep = torch.ones_like(ranked, dtype=torch.bool)
    if top_k is not None:
        keep[..., top_k:] = False
    if top_p is not None:
        probabilities = torch.softmax(ranked.masked_fill(~keep, -math.inf), dim=-1)
        mass_before = torch.cumsum(probabilities, dim=-1).roll(1, dims=-1)
        mass_before[..., 0] = 0.0  # the mass of the tokens ranked above each one
        keep &= mass_before < top_p
    return order, torch.softmax(ranked.masked_fill(~keep, -math.inf), dim=-1)


def check_sampling_knobs(temperature: float, top_k: int | None, top_p: float | None) -> None:
    """Friendly errors for knob values that have no meaning."""
    if not temperature >= 0:
        raise ValueError(f"temperature must be >= 0 (0 = greedy), got {temperature!r}")
    if top_k is not None and (isinstance(top_k, bool) or int(top_k) != top_k or top_k < 1):
        raise ValueError(f"top_k must be a positive integer or None, got {top_k!r}")
    if top_p is not None and not 0 < top_p <= 1:
        raise ValueError(f"top_p must be in (0, 1] or None, got {top_p!r}")

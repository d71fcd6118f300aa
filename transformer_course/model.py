"""The encoder-decoder Transformer of *Attention Is All You Need*, in PyTorch.

This is the model lesson 8 explains and lesson 9 trains. It follows the paper (post-norm
residual blocks, sinusoidal positions, embeddings scaled by sqrt(d_model), dropout where section 5.4
puts it, optional weight tying between the embeddings and the output projection) and keeps
ablation switches so lessons can show what each piece is for.

It is also built to be fast without hiding the formulas: self-attention computes Q, K and V in one
matrix product (:meth:`MultiHeadAttention.project`), the decoder skips a padding mask that the
causal mask makes redundant (:meth:`Transformer.decoder_padding_mask`), dropout draws its masks
the fast way (:class:`Dropout`), and attention runs on
``torch.nn.functional.scaled_dot_product_attention``, whose fused kernels (on a CPU as on a GPU)
never materialize the attention weights. ``benchmarks/translator_throughput.py`` measures what each bought
against ``torch.nn.Transformer``'s layers.

Masks follow ``scaled_dot_product_attention``'s convention: a boolean ``attn_mask`` is **True
where a query may attend**. Padding masks returned to callers follow ``torch.nn``'s convention
instead: ``key_padding_mask`` is **True where the token is padding**. Keeping both conventions
visible (and converting in one place, :func:`_attention_mask`) is deliberate: mixing them up is
the most common Transformer bug.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn


@dataclass(frozen=True)
class TransformerConfig:
    """Sizes and switches of the model; the defaults are the paper's base configuration.

    ``norm_first=False`` is the paper's post-norm block, ``LayerNorm(x + Sublayer(x))``; ``True``
    is the pre-norm variant, ``x + Sublayer(LayerNorm(x))``, which trains more easily without
    warmup. ``positional_encoding`` and ``scale_attention`` exist for ablations;
    ``learned_positions`` replaces the sinusoids by a learned table of ``max_len`` vectors (the
    paper's Table 3, row E).
    ``dropout`` is the paper's P_drop (section 5.4): on each sub-layer's output before the residual
    addition, and on the sums of embeddings and positions. ``attention_dropout`` (on the attention
    weights) and ``ffn_dropout`` (after the feed-forward network's ReLU) are off in the paper;
    ``torch.nn``'s Transformer layers use ``dropout`` in both places, which is what setting them to
    ``dropout`` reproduces.
    ``share_embeddings`` ties the source and target embeddings and the output projection, as the
    paper does; it needs one vocabulary shared by both languages.
    """

    src_vocab_size: int
    tgt_vocab_size: int
    d_model: int = 512
    n_heads: int = 8
    d_ff: int = 2048
    n_encoder_layers: int = 6
    n_decoder_layers: int = 6
    dropout: float = 0.1
    attention_dropout: float = 0.0
    ffn_dropout: float = 0.0
    max_len: int = 512
    pad_id: int = 0
    norm_first: bool = False
    positional_encoding: bool = True
    learned_positions: bool = False
    scale_attention: bool = True
    share_embeddings: bool = False

    def __post_init__(self) -> None:
        for name in ("src_vocab_size", "tgt_vocab_size", "d_model", "n_heads", "d_ff", "max_len"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        for name in ("n_encoder_layers", "n_decoder_layers"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
        if self.d_model % self.n_heads != 0:
            raise ValueError(
                f"d_model={self.d_model} is not divisible by n_heads={self.n_heads}: each head "
                "gets d_model / n_heads dimensions, so pick sizes that divide evenly "
                "(the paper uses 512 / 8 = 64)"
            )
        for name in ("dropout", "attention_dropout", "ffn_dropout"):
            value = getattr(self, name)
            if not 0.0 <= value < 1.0:
                raise ValueError(f"{name} must be in [0, 1), got {value!r}")
        smallest_vocab = min(self.src_vocab_size, self.tgt_vocab_size)
        if not isinstance(self.pad_id, int) or not 0 <= self.pad_id < smallest_vocab:
            raise ValueError(
                f"pad_id={self.pad_id!r} must be a token id of both vocabularies "
                f"(0 <= pad_id < {smallest_vocab})"
            )
        if self.share_embeddings and self.src_vocab_size != self.tgt_vocab_size:
            raise ValueError(
                "share_embeddings=True ties the source and target embeddings, so both vocabularies "
                f"must have the same size (got {self.src_vocab_size} and {self.tgt_vocab_size}); "
                "use one shared tokenizer or set share_embeddings=False"
            )

    @property
    def d_head(self) -> int:
        """Dimensions per head, d_k = d_v = d_model / h."""
        return self.d_model // self.n_heads


def _sinusoidal_encodings(positions: Tensor, d_model: int) -> Tensor:
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


class EncoderLayer(nn.Module):
    """Self-attention then feed-forward, each wrapped in dropout, a residual and a layer norm."""

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        self.norm_first = config.norm_first
        self.self_attn = MultiHeadAttention(
            config.d_model, config.n_heads, config.attention_dropout, config.scale_attention
        )
        self.ff = FeedForward(config.d_model, config.d_ff, config.ffn_dropout)
        self.norm1 = nn.LayerNorm(config.d_model)
        self.norm2 = nn.LayerNorm(config.d_model)
        self.dropout1 = Dropout(config.dropout)
        self.dropout2 = Dropout(config.dropout)

    def forward(self, x: Tensor, key_padding_mask: Tensor | None = None) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout1(self.self_attn(h, h, h, key_padding_mask))
            return x + self.dropout2(self.ff(self.norm2(x)))
        x = self.norm1(x + self.dropout1(self.self_attn(x, x, x, key_padding_mask)))
        return self.norm2(x + self.dropout2(self.ff(x)))


class DecoderLayer(nn.Module):
    """Masked self-attention, cross-attention over the encoder's memory, then feed-forward."""

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        self.norm_first = config.norm_first
        args = (config.d_model, config.n_heads, config.attention_dropout, config.scale_attention)
        self.self_attn = MultiHeadAttention(*args)
        self.cross_attn = MultiHeadAttention(*args)
        self.ff = FeedForward(config.d_model, config.d_ff, config.ffn_dropout)
        self.norm1 = nn.LayerNorm(config.d_model)
        self.norm2 = nn.LayerNorm(config.d_model)
        self.norm3 = nn.LayerNorm(config.d_model)
        self.dropout1 = Dropout(config.dropout)
        self.dropout2 = Dropout(config.dropout)
        self.dropout3 = Dropout(config.dropout)

    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
    ) -> Tensor:
        if self.norm_first:
            h = self.norm1(x)
            x = x + self.dropout1(self.self_attn(h, h, h, tgt_key_padding_mask, causal=True))
            h = self.norm2(x)
            x = x + self.dropout2(self.cross_attn(h, memory, memory, memory_key_padding_mask))
            return x + self.dropout3(self.ff(self.norm3(x)))
        x = self.norm1(x + self.dropout1(self.self_attn(x, x, x, tgt_key_padding_mask, causal=True)))
        x = self.norm2(x + self.dropout2(self.cross_attn(x, memory, memory, memory_key_padding_mask)))
        return self.norm3(x + self.dropout3(self.ff(x)))


class Embedding(nn.Module):
    """Token embedding times sqrt(d_model), plus the positions, then dropout.

    The scaling keeps the embeddings (initialized with standard deviation d_model^-0.5, so that a
    tied output projection starts with sensible logits) on the same scale as the sinusoidal
    positions, whose entries lie in [-1, 1]. With ``learned_positions`` the positions are a
    trained ``(max_len, d_model)`` table instead, started at N(0, d_model^-0.5) as in fairseq: a
    position never seen in training keeps its random start.
    """

    def __init__(self, vocab_size: int, config: TransformerConfig) -> None:
        super().__init__()
        self.d_model = config.d_model
        self.tokens = nn.Embedding(vocab_size, config.d_model, padding_idx=config.pad_id)
        self.use_positions = config.positional_encoding
        if config.learned_positions:
            start = torch.randn(config.max_len, config.d_model) * config.d_model**-0.5
            self.positions = nn.Parameter(start)
        else:
            table = _sinusoidal_encodings(torch.arange(config.max_len), config.d_model)
            self.register_buffer("positions", table, persistent=False)
        self.dropout = Dropout(config.dropout)

    def forward(self, tokens: Tensor) -> Tensor:
        x = self.tokens(tokens) * math.sqrt(self.d_model)
        if self.use_positions:
            x = x + self.positions[: tokens.shape[1]]
        return self.dropout(x)


class Encoder(nn.Module):
    """Embedding, then N encoder layers (plus a final norm in the pre-norm variant)."""

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        self.embed = Embedding(config.src_vocab_size, config)
        self.layers = nn.ModuleList(EncoderLayer(config) for _ in range(config.n_encoder_layers))
        self.final_norm = nn.LayerNorm(config.d_model) if config.norm_first else nn.Identity()

    def forward(self, src: Tensor, key_padding_mask: Tensor | None = None) -> Tensor:
        x = self.embed(src)
        for layer in self.layers:
            x = layer(x, key_padding_mask)
        return self.final_norm(x)


class Decoder(nn.Module):
    """Embedding, then N decoder layers (plus a final norm in the pre-norm variant)."""

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        self.embed = Embedding(config.tgt_vocab_size, config)
        self.layers = nn.ModuleList(DecoderLayer(config) for _ in range(config.n_decoder_layers))
        self.final_norm = nn.LayerNorm(config.d_model) if config.norm_first else nn.Identity()

    def forward(
        self,
        tgt_in: Tensor,
        memory: Tensor,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
    ) -> Tensor:
        x = self.embed(tgt_in)
        for layer in self.layers:
            x = layer(x, memory, tgt_key_padding_mask, memory_key_padding_mask)
        return self.final_norm(x)


class Transformer(nn.Module):
    """The encoder-decoder: ``forward(src, tgt_in)`` returns next-token logits ``(B, T, V_tgt)``.

    ``tgt_in`` is the target shifted right (it starts with BOS), so position t predicts target
    token t: teacher forcing. Inference calls :meth:`encode` once and :meth:`decode` per step.
    """

    def __init__(
        self, config: TransformerConfig, encoder: nn.Module | None = None, decoder: nn.Module | None = None
    ) -> None:
        """``encoder`` and ``decoder`` replace the stacks built from ``config``: lesson 9 assembles
        them from the student's classes (:mod:`transformer_course.your_pieces`). They take what
        :class:`Encoder` and :class:`Decoder` take (masks True = padding) and must be built before
        this call, in that order, so that the weights draw the random numbers this model's own
        stacks would."""
        super().__init__()
        self.config = config
        self.encoder = Encoder(config) if encoder is None else encoder
        self.decoder = Decoder(config) if decoder is None else decoder
        self.output_proj = nn.Linear(config.d_model, config.tgt_vocab_size, bias=False)
        self._reset_parameters()
        if config.share_embeddings:
            self.decoder.embed.tokens.weight = self.encoder.embed.tokens.weight
            self.output_proj.weight = self.encoder.embed.tokens.weight

    def _reset_parameters(self) -> None:
        """N(0, d_model^-0.5) embeddings with zero pad rows; every ``nn.Linear`` keeps its default.

        PyTorch's default draws a layer's weights and biases uniformly in +-1/sqrt(fan_in). The
        paper does not say how it initialized; ``nn.Transformer`` applies Xavier-uniform to every
        parameter with more than one dimension and leaves the biases as its layers drew them.
        ``benchmarks/translator_throughput.py --init`` can start from either, but one run per
        start does not separate them from seed noise: keeping the default is a choice of
        simplicity, not a measured improvement.
        """
        for module in self.modules():
            if isinstance(module, nn.Embedding):
                nn.init.normal_(module.weight, mean=0.0, std=self.config.d_model**-0.5)
                with torch.no_grad():
                    module.weight[self.config.pad_id].zero_()

    def _check_tokens(self, name: str, tokens: Tensor, vocab_size: int) -> None:
        if not isinstance(tokens, Tensor):
            raise TypeError(f"{name} must be a torch.Tensor of token ids, got {type(tokens)}")
        if tokens.dtype not in (torch.int64, torch.int32):
            raise ValueError(f"{name} must hold integer token ids (torch.long), got dtype {tokens.dtype}")
        if tokens.dim() != 2 or tokens.shape[1] == 0:
            raise ValueError(
                f"{name} must have shape (batch, length) with length >= 1, got {tuple(tokens.shape)}"
                " (add a batch dimension with tokens.unsqueeze(0))"
            )
        if tokens.shape[1] > self.config.max_len:
            raise ValueError(
                f"{name} has length {tokens.shape[1]} but the model's positional table stops at "
                f"max_len={self.config.max_len}; truncate the sequence or build a larger max_len"
            )
        if tokens.device.type != "meta" and tokens.numel() > 0:
            low, high = int(tokens.min()), int(tokens.max())
            if low < 0 or high >= vocab_size:
                raise ValueError(
                    f"{name} holds token ids in [{low}, {high}] but the vocabulary has "
                    f"{vocab_size} tokens (ids 0..{vocab_size - 1})"
                )

    def padding_mask(self, tokens: Tensor) -> Tensor:
        """``(B, T)`` bool, True where ``tokens`` is ``pad_id`` (torch.nn's key_padding_mask)."""
        return tokens == self.config.pad_id

    def decoder_padding_mask(self, tgt_in: Tensor) -> Tensor | None:
        """The padding mask of decoder self-attention, or ``None`` where the causal mask suffices.

        Batches pad each target at its end. A real token at position t sees positions <= t
        only, all of them real, so the padding mask changes nothing for real tokens; dropping it
        lets self-attention take the causal fast path (``is_causal``: no mask to build or read).
        Pad positions then attend to earlier pads, but nothing reads their outputs: no real token
        sees them and the loss skips them. (Decoding never writes the pad token, so a generated
        prefix is padded only after its end too.) Padding anywhere else keeps the mask.
        """
        padding = self.padding_mask(tgt_in)
        if padding.device.type == "meta" or bool((padding[:, :-1] <= padding[:, 1:]).all()):
            return None
        return padding

    def encode(self, src: Tensor) -> tuple[Tensor, Tensor]:
        """Run the encoder once: ``(memory (B, S, D), src_key_padding_mask (B, S), True = pad)``."""
        self._check_tokens("src", src, self.config.src_vocab_size)
        src_mask = self.padding_mask(src)
        if src.device.type != "meta" and bool(src_mask.all(dim=1).any()):
            raise ValueError("a source sequence consists only of padding; nothing to attend to")
        return self.encoder(src, src_mask), src_mask

    def decode(self, tgt_in: Tensor, memory: Tensor, src_key_padding_mask: Tensor) -> Tensor:
        """Logits ``(B, T, V_tgt)`` for every position of ``tgt_in`` given the encoder's memory."""
        self._check_tokens("tgt_in", tgt_in, self.config.tgt_vocab_size)
        batch, d_model = tgt_in.shape[0], self.config.d_model
        if memory.dim() != 3 or memory.shape[0] != batch or memory.shape[2] != d_model:
            raise ValueError(
                f"memory must have shape ({batch}, source length, {d_model}), got {tuple(memory.shape)}"
            )
        if src_key_padding_mask.dtype != torch.bool or src_key_padding_mask.shape != (memory.shape[:2]):
            raise ValueError(
                f"src_key_padding_mask must be a bool tensor of shape {tuple(memory.shape[:2])} "
                f"(True = padding), got {src_key_padding_mask.dtype} "
                f"{tuple(src_key_padding_mask.shape)}"
            )
        hidden = self.decoder(tgt_in, memory, self.decoder_padding_mask(tgt_in), src_key_padding_mask)
        return self.output_proj(hidden)

    def forward(self, src: Tensor, tgt_in: Tensor) -> Tensor:
        if isinstance(src, Tensor) and isinstance(tgt_in, Tensor) and src.dim() == tgt_in.dim() == 2:
            if src.shape[0] != tgt_in.shape[0]:
                raise ValueError(
                    f"src and tgt_in must have the same batch size, got {src.shape[0]} and {tgt_in.shape[0]}"
                )
        memory, src_mask = self.encode(src)
        return self.decode(tgt_in, memory, src_mask)


_PART_NAMES = {
    "encoder.embed": "embeddings",
    "decoder.embed": "embeddings",
    "output_proj": "output projection",
}
_SUBLAYER_NAMES = {
    "self_attn": "self-attention",
    "cross_attn": "cross-attention",
    "ff": "feed-forward",
    "norm1": "layer norms",
    "norm2": "layer norms",
    "norm3": "layer norms",
}


def parameter_breakdown(model: nn.Module) -> dict[str, int]:
    """Count the trainable parameters of a :class:`Transformer` by part, each tied tensor once.

    Keys look like ``"encoder self-attention"`` or ``"embeddings"``; values sum to the total.
    ``named_parameters`` yields a tied tensor only under its first name, which is why a shared
    embedding is counted once.
    """
    if not isinstance(model, Transformer):
        raise TypeError(f"expected a Transformer, got {type(model).__name__}")
    parts: dict[str, int] = {}
    for name, parameter in model.named_parameters():
        pieces = name.split(".")
        stack = pieces[0]
        part = _PART_NAMES.get(".".join(pieces[:2])) or _PART_NAMES.get(pieces[0])
        if part is None and pieces[1] == "layers":
            part = f"{stack} {_SUBLAYER_NAMES[pieces[3]]}"
        elif part is None:
            part = f"{stack} final layer norm"
        parts[part] = parts.get(part, 0) + parameter.numel()
    return parts


def base_model_config(vocab_size: int = 37000) -> TransformerConfig:
    """The paper's base model (Table 3): N=6, d_model=512, d_ff=2048, h=8, shared vocabulary."""
    return TransformerConfig(src_vocab_size=vocab_size, tgt_vocab_size=vocab_size, share_embeddings=True)


def count_parameters(config: TransformerConfig) -> dict[str, int]:
    """The :func:`parameter_breakdown` of a model built from ``config`` on the meta device.

    Meta tensors have shapes but no storage, so even the 63M-parameter base model is counted in
    milliseconds without allocating memory.
    """
    with torch.device("meta"):
        model = Transformer(config)
    return parameter_breakdown(model)

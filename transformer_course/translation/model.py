"""The encoder-decoder Transformer of *Attention Is All You Need*, in PyTorch.

This is the model lesson 8 explains and lesson 9 trains. It follows the paper (post-norm
residual blocks, sinusoidal positions, embeddings scaled by sqrt(d_model), dropout where section 5.4
puts it, optional weight tying between the embeddings and the output projection) and keeps
ablation switches so lessons can show what each piece is for.

Its attention, feed-forward network, dropout and positional encodings come from
:mod:`transformer_course.layers`, which lesson 10's GPT shares. What is the encoder-decoder's own
is here: the encoder and decoder layers, the embeddings, the stacks, and the masks between them.
The decoder skips a padding mask that the causal mask makes redundant
(:meth:`Transformer.decoder_padding_mask`). Padding masks returned to callers follow
``torch.nn``'s convention: ``key_padding_mask`` is **True where the token is padding**
(:mod:`transformer_course.layers` says how they meet attention's own convention).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from transformer_course.layers import Dropout, FeedForward, MultiHeadAttention, sinusoidal_encodings


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
            table = sinusoidal_encodings(torch.arange(config.max_len), config.d_model)
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
        them from the student's classes (:mod:`transformer_course.translation.your_pieces`). They take what
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

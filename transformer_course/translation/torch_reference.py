"""PyTorch's own Transformer layers beside the course's, and the one map between their weights.

Lesson 8 checks that the course's layers compute what ``torch.nn.TransformerEncoderLayer`` and
``torch.nn.TransformerDecoderLayer`` compute; lesson 9's benchmark
(``benchmarks/translator_throughput.py``) races the course model against a copy whose encoder
and decoder stacks are ``torch.nn``'s. Both need to know which course tensor plays the part of
which ``torch.nn`` tensor; :func:`parameter_pairs` is that map, written once.

The one real difference of layout: ``torch.nn.MultiheadAttention`` stores W^Q, W^K and W^V
stacked in one ``in_proj_weight`` of shape ``(3 d_model, d_model)``; the course keeps three
``nn.Linear`` layers, so each is paired with a third of the stacked matrix (a view, so copying
into it writes into ``in_proj_weight``).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from transformer_course.layers import MultiHeadAttention
from transformer_course.translation.model import DecoderLayer, EncoderLayer, Transformer, TransformerConfig

TensorPairs = list[tuple[Tensor, Tensor]]


class _TorchEncoder(nn.Module):
    def __init__(self, embed: nn.Module, config: TransformerConfig) -> None:
        super().__init__()
        self.embed = embed
        layer = nn.TransformerEncoderLayer(
            config.d_model, config.n_heads, config.d_ff, config.dropout,
            batch_first=True, norm_first=config.norm_first,
        )  # fmt: skip
        final = nn.LayerNorm(config.d_model) if config.norm_first else None
        self.stack = nn.TransformerEncoder(
            layer, config.n_encoder_layers, norm=final, enable_nested_tensor=False
        )

    def forward(self, src: Tensor, key_padding_mask: Tensor | None = None) -> Tensor:
        return self.stack(self.embed(src), src_key_padding_mask=key_padding_mask)


class _TorchDecoder(nn.Module):
    def __init__(self, embed: nn.Module, config: TransformerConfig) -> None:
        super().__init__()
        self.embed = embed
        layer = nn.TransformerDecoderLayer(
            config.d_model, config.n_heads, config.d_ff, config.dropout,
            batch_first=True, norm_first=config.norm_first,
        )  # fmt: skip
        final = nn.LayerNorm(config.d_model) if config.norm_first else None
        self.stack = nn.TransformerDecoder(layer, config.n_decoder_layers, norm=final)

    def forward(
        self,
        tgt_in: Tensor,
        memory: Tensor,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
    ) -> Tensor:
        length = tgt_in.shape[1]
        # torch.nn's boolean masks mark what may NOT be attended to.
        future = torch.ones(length, length, dtype=torch.bool, device=tgt_in.device).triu(1)
        return self.stack(
            self.embed(tgt_in), memory, tgt_mask=future, tgt_is_causal=True,
            tgt_key_padding_mask=tgt_key_padding_mask,
            memory_key_padding_mask=memory_key_padding_mask,
        )  # fmt: skip


class TorchReferenceTransformer(Transformer):
    """The course model with its encoder and decoder stacks replaced by ``torch.nn``'s own.

    Everything else is the course's: embeddings, positions, output projection, and the masks
    :meth:`Transformer.decode` passes (the decoder's padding mask is dropped where the causal
    mask makes it redundant, for both models alike). ``torch.nn``'s layers put dropout on the
    attention weights and inside the feed-forward network too, with one rate for all places.
    Freshly built, the stacks carry ``torch.nn``'s per-layer initialization;
    :func:`share_initial_weights` gives both models the same starting point.
    """

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__(config)
        self.encoder = _TorchEncoder(self.encoder.embed, config)
        self.decoder = _TorchDecoder(self.decoder.embed, config)


def _same_order(ours: nn.Module, theirs: nn.Module) -> TensorPairs:
    return [(p.data, q.data) for p, q in zip(ours.parameters(), theirs.parameters(), strict=True)]


def _attention_pairs(ours: MultiHeadAttention, theirs: nn.MultiheadAttention) -> TensorPairs:
    pairs = []
    blocks = zip(theirs.in_proj_weight.data.chunk(3), theirs.in_proj_bias.data.chunk(3), strict=True)
    for projection, (weight, bias) in zip((ours.q_proj, ours.k_proj, ours.v_proj), blocks, strict=True):
        pairs += [(projection.weight.data, weight), (projection.bias.data, bias)]
    return pairs + _same_order(ours.out_proj, theirs.out_proj)


def _layer_pairs(ours: EncoderLayer | DecoderLayer, theirs: nn.Module) -> TensorPairs:
    pairs = _attention_pairs(ours.self_attn, theirs.self_attn)
    if isinstance(ours, DecoderLayer):
        pairs += _attention_pairs(ours.cross_attn, theirs.multihead_attn)
    pairs += _same_order(ours.ff.linear1, theirs.linear1)
    pairs += _same_order(ours.ff.linear2, theirs.linear2)
    for name in ("norm1", "norm2", "norm3"):
        if hasattr(ours, name):
            pairs += _same_order(getattr(ours, name), getattr(theirs, name))
    return pairs


def _stack_pairs(ours: Transformer, theirs: TorchReferenceTransformer) -> TensorPairs:
    pairs = []
    stacks = ((ours.encoder, theirs.encoder.stack), (ours.decoder, theirs.decoder.stack))
    for our_stack, their_stack in stacks:
        for our_layer, their_layer in zip(our_stack.layers, their_stack.layers, strict=True):
            pairs += _layer_pairs(our_layer, their_layer)
        if their_stack.norm is not None:
            pairs += _same_order(our_stack.final_norm, their_stack.norm)
    return pairs


_COUNTERPARTS = (
    (MultiHeadAttention, nn.MultiheadAttention, _attention_pairs),
    (EncoderLayer, nn.TransformerEncoderLayer, _layer_pairs),
    (DecoderLayer, nn.TransformerDecoderLayer, _layer_pairs),
    (Transformer, TorchReferenceTransformer, _stack_pairs),
)


def parameter_pairs(ours: nn.Module, theirs: nn.Module) -> TensorPairs:
    """``(course tensor, torch.nn tensor)`` for every weight of ``ours``' part that ``theirs`` has.

    ``ours`` and ``theirs`` are a :class:`MultiHeadAttention` and an ``nn.MultiheadAttention``,
    an encoder (decoder) layer and ``nn.TransformerEncoderLayer`` (``DecoderLayer``), or a
    :class:`Transformer` and a :class:`TorchReferenceTransformer` (their encoder and decoder
    stacks; the rest is the same module type in both).
    """
    if not isinstance(ours, TorchReferenceTransformer):
        for our_type, their_type, pairs in _COUNTERPARTS:
            if isinstance(ours, our_type) and isinstance(theirs, their_type):
                return pairs(ours, theirs)
    raise TypeError(
        f"no weight map from {type(ours).__name__} to {type(theirs).__name__}; pair an attention, "
        "an encoder or decoder layer, or a Transformer with its torch.nn counterpart"
    )


def copy_to_torch(ours: nn.Module, theirs: nn.Module) -> None:
    """Give the ``torch.nn`` module the course module's weights (see :func:`parameter_pairs`)."""
    with torch.no_grad():
        for mine, counterpart in parameter_pairs(ours, theirs):
            counterpart.copy_(mine)


def copy_from_torch(ours: nn.Module, theirs: nn.Module) -> None:
    """Give the course module the ``torch.nn`` module's weights."""
    with torch.no_grad():
        for mine, counterpart in parameter_pairs(ours, theirs):
            mine.copy_(counterpart)


INITIALIZATIONS = ("course", "pytorch", "xavier")


def share_initial_weights(ours: Transformer, theirs: TorchReferenceTransformer, init: str) -> None:
    """Start both models from the same weights, so that only the implementation differs.

    - ``course``: the course model's initialization (every ``nn.Linear`` with PyTorch's default,
      weights and biases uniform in +-1/sqrt(fan_in)), copied into torch.nn's stacks;
    - ``pytorch``: what torch.nn's layers draw themselves, copied into the course model: the same
      for the feed-forward layers and the attention output, but Xavier-uniform for the stacked
      W^Q, W^K, W^V and zero attention biases;
    - ``xavier``: what ``nn.Transformer`` adds when it builds the whole model: Xavier-uniform for
      every parameter with more than one dimension, biases left as the layers drew them.

    The embeddings and the output projection are already the same: both models draw them from
    the same seed.
    """
    if init not in INITIALIZATIONS:
        raise ValueError(f"init must be one of {INITIALIZATIONS}, got {init!r}")
    if init == "course":
        copy_to_torch(ours, theirs)
        return
    if init == "xavier":
        with torch.no_grad():
            for stack in (theirs.encoder.stack, theirs.decoder.stack):
                for parameter in stack.parameters():
                    if parameter.dim() > 1:
                        nn.init.xavier_uniform_(parameter)
    copy_from_torch(ours, theirs)

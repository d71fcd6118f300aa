"""The package's Transformer against PyTorch's own layers, plus its shapes, masks and errors.

PyTorch's ``nn.MultiheadAttention`` / ``nn.TransformerEncoderLayer`` / ``nn.TransformerDecoderLayer``
are the oracle: with the same weights and dropout off, outputs must agree to 1e-5 in float32.
"""

import math

import pytest
import torch
from torch import nn

from transformer_course.layers import Dropout, MultiHeadAttention, sinusoidal_encodings
from transformer_course.translation.model import (
    DecoderLayer,
    EncoderLayer,
    Transformer,
    TransformerConfig,
    base_model_config,
    count_parameters,
    parameter_breakdown,
)
from transformer_course.translation.torch_reference import copy_to_torch

TOLERANCE = 1e-5
SHAPES = [  # (batch, query length, key length, d_model, heads)
    (1, 1, 1, 8, 1),
    (2, 5, 7, 16, 4),
    (3, 6, 4, 24, 3),
    (4, 9, 9, 32, 8),
]


def randomize(module: nn.Module, seed: int) -> None:
    """Non-trivial values everywhere (biases and norm gains too), so no term can hide."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for parameter in module.parameters():
            parameter.copy_(torch.randn(parameter.shape, generator=generator) * 0.3)


def padding(batch: int, length: int, seed: int) -> torch.Tensor:
    """True = pad, a random number of trailing pads per row, never a whole row."""
    generator = torch.Generator().manual_seed(seed)
    lengths = torch.randint(1, length + 1, (batch,), generator=generator)
    lengths[0] = length  # at least one unpadded row
    return torch.arange(length)[None, :] >= lengths[:, None]


def max_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    return (a - b).abs().max().item()


@pytest.mark.parametrize("batch,n_q,n_k,d_model,heads", SHAPES)
@pytest.mark.parametrize("with_padding", [False, True])
def test_attention_matches_torch_multihead_attention(batch, n_q, n_k, d_model, heads, with_padding):
    torch.manual_seed(0)
    ours = MultiHeadAttention(d_model, heads).eval()
    randomize(ours, seed=n_q + n_k)
    theirs = nn.MultiheadAttention(d_model, heads, batch_first=True).eval()
    copy_to_torch(ours, theirs)
    q, k, v = (
        torch.randn(batch, n_q, d_model),
        torch.randn(batch, n_k, d_model),
        torch.randn(batch, n_k, d_model),
    )
    mask = padding(batch, n_k, seed=batch) if with_padding else None
    expected, expected_weights = theirs(q, k, v, key_padding_mask=mask, average_attn_weights=False)
    assert max_diff(ours(q, k, v, key_padding_mask=mask), expected) <= TOLERANCE
    weights = ours.attention_weights(q, k, key_padding_mask=mask)
    assert max_diff(weights, expected_weights) <= TOLERANCE


@pytest.mark.parametrize("batch,n_q,n_k,d_model,heads", SHAPES)
def test_causal_attention_matches_torch(batch, n_q, n_k, d_model, heads):
    torch.manual_seed(1)
    ours = MultiHeadAttention(d_model, heads).eval()
    randomize(ours, seed=3)
    theirs = nn.MultiheadAttention(d_model, heads, batch_first=True).eval()
    copy_to_torch(ours, theirs)
    x = torch.randn(batch, n_q, d_model)
    blocked = torch.ones(n_q, n_q, dtype=torch.bool).triu(1)  # torch.nn: True = may NOT attend
    expected, _ = theirs(x, x, x, attn_mask=blocked)
    assert max_diff(ours(x, x, x, causal=True), expected) <= TOLERANCE
    mask = padding(batch, n_q, seed=7)
    expected, _ = theirs(x, x, x, attn_mask=blocked, key_padding_mask=mask)
    assert max_diff(ours(x, x, x, key_padding_mask=mask, causal=True), expected) <= TOLERANCE


def test_unscaled_attention_drops_the_square_root():
    torch.manual_seed(2)
    attention = MultiHeadAttention(16, 2, scale=False).eval()
    x = torch.randn(2, 5, 16)
    q = attention._split_heads(attention.q_proj(x))
    k = attention._split_heads(attention.k_proj(x))
    expected = torch.softmax(q @ k.transpose(-2, -1), dim=-1)
    assert max_diff(attention.attention_weights(x, x), expected) <= TOLERANCE
    scaled = MultiHeadAttention(16, 2).eval()
    scaled.load_state_dict(attention.state_dict())
    assert max_diff(scaled(x, x, x), attention(x, x, x)) > 1e-3


def layer_config(d_model: int, heads: int, norm_first: bool) -> TransformerConfig:
    return TransformerConfig(
        src_vocab_size=11,
        tgt_vocab_size=11,
        d_model=d_model,
        n_heads=heads,
        d_ff=3 * d_model,
        dropout=0.0,
        norm_first=norm_first,
    )


@pytest.mark.parametrize("batch,length,_,d_model,heads", SHAPES)
@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_matches_torch(batch, length, _, d_model, heads, norm_first):
    torch.manual_seed(3)
    ours = EncoderLayer(layer_config(d_model, heads, norm_first)).eval()
    randomize(ours, seed=length)
    theirs = nn.TransformerEncoderLayer(
        d_model, heads, 3 * d_model, dropout=0.0, batch_first=True, norm_first=norm_first
    ).eval()
    copy_to_torch(ours, theirs)
    x = torch.randn(batch, length, d_model)
    for mask in (None, padding(batch, length, seed=11)):
        assert max_diff(ours(x, mask), theirs(x, src_key_padding_mask=mask)) <= TOLERANCE


@pytest.mark.parametrize("batch,n_tgt,n_src,d_model,heads", SHAPES)
@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_matches_torch(batch, n_tgt, n_src, d_model, heads, norm_first):
    torch.manual_seed(4)
    ours = DecoderLayer(layer_config(d_model, heads, norm_first)).eval()
    randomize(ours, seed=n_tgt * n_src)
    theirs = nn.TransformerDecoderLayer(
        d_model, heads, 3 * d_model, dropout=0.0, batch_first=True, norm_first=norm_first
    ).eval()
    copy_to_torch(ours, theirs)
    x, memory = torch.randn(batch, n_tgt, d_model), torch.randn(batch, n_src, d_model)
    blocked = torch.ones(n_tgt, n_tgt, dtype=torch.bool).triu(1)
    tgt_pad, src_pad = padding(batch, n_tgt, seed=5), padding(batch, n_src, seed=6)
    expected = theirs(
        x, memory, tgt_mask=blocked, tgt_key_padding_mask=tgt_pad, memory_key_padding_mask=src_pad
    )
    assert max_diff(ours(x, memory, tgt_pad, src_pad), expected) <= TOLERANCE
    assert max_diff(ours(x, memory), theirs(x, memory, tgt_mask=blocked)) <= TOLERANCE


def small_model(**overrides) -> Transformer:
    settings = dict(
        src_vocab_size=13,
        tgt_vocab_size=17,
        d_model=16,
        n_heads=4,
        d_ff=32,
        n_encoder_layers=2,
        n_decoder_layers=2,
        dropout=0.0,
        max_len=20,
    )
    settings.update(overrides)
    torch.manual_seed(5)
    return Transformer(TransformerConfig(**settings)).eval()


def test_forward_shape_and_encode_decode_agree():
    model = small_model()
    src = torch.tensor([[3, 4, 5, 6], [7, 8, 0, 0]])
    tgt_in = torch.tensor([[1, 9, 10], [1, 11, 0]])
    logits = model(src, tgt_in)
    assert logits.shape == (2, 3, 17)
    memory, mask = model.encode(src)
    assert memory.shape == (2, 4, 16)
    assert mask.tolist() == [[False] * 4, [False, False, True, True]]
    assert max_diff(model.decode(tgt_in, memory, mask), logits) == 0.0


def test_padding_does_not_change_real_tokens():
    """Appending pads to the source must not change the logits: padding is masked out."""
    model = small_model()
    src, tgt_in = torch.tensor([[3, 4, 5]]), torch.tensor([[1, 9, 10, 12]])
    padded = torch.tensor([[3, 4, 5, 0, 0, 0]])
    assert max_diff(model(src, tgt_in), model(padded, tgt_in)) <= TOLERANCE


def test_decoder_is_causal():
    """Changing a later target token leaves the logits at earlier positions unchanged."""
    model = small_model()
    src = torch.tensor([[3, 4, 5]])
    a = model(src, torch.tensor([[1, 9, 10, 12]]))
    b = model(src, torch.tensor([[1, 9, 14, 2]]))
    assert max_diff(a[:, :2], b[:, :2]) <= TOLERANCE
    assert max_diff(a[:, 2:], b[:, 2:]) > 1e-4


def test_positional_encoding_switch_controls_order_sensitivity():
    """Without positions the encoder is permutation-equivariant; with them it is not."""
    src = torch.tensor([[3, 4, 5, 6]])
    permutation = torch.tensor([2, 0, 3, 1])
    for positions in (False, True):
        model = small_model(positional_encoding=positions)
        memory, _ = model.encode(src)
        permuted, _ = model.encode(src[:, permutation])
        difference = max_diff(memory[:, permutation], permuted)
        assert (difference <= TOLERANCE) == (not positions)


def test_embeddings_are_scaled_and_positioned():
    model = small_model()
    tokens = torch.tensor([[3, 4]])
    expected = model.encoder.embed.tokens(tokens) * 4.0 + sinusoidal_encodings(torch.arange(2), 16)
    assert max_diff(model.encoder.embed(tokens), expected) <= TOLERANCE


def test_sinusoidal_encodings_follow_the_paper():
    table = sinusoidal_encodings(torch.arange(6), 7)
    assert table.shape == (6, 7)
    pos, i = 4, 2
    angle = pos / 10000 ** (2 * i / 7)
    assert math.isclose(table[pos, 2 * i].item(), math.sin(angle), abs_tol=1e-6)
    assert math.isclose(table[pos, 2 * i + 1].item(), math.cos(angle), abs_tol=1e-6)
    assert math.isclose(table[pos, 6].item(), math.sin(pos / 10000 ** (6 / 7)), abs_tol=1e-6)
    assert torch.equal(table[0, 1::2], torch.ones(3))


def test_sinusoidal_encodings_of_chosen_positions_are_rows_of_the_table():
    table = sinusoidal_encodings(torch.arange(6), 7)
    assert torch.equal(sinusoidal_encodings(torch.tensor([4, 1]), 7), table[[4, 1]])
    with pytest.raises(ValueError, match="1-D tensor of position indices"):
        sinusoidal_encodings(6, 7)


def test_shared_embeddings_are_one_tensor():
    model = small_model(tgt_vocab_size=13, share_embeddings=True)
    weight = model.encoder.embed.tokens.weight
    assert model.decoder.embed.tokens.weight is weight and model.output_proj.weight is weight
    assert sum(p.numel() for p in model.parameters()) == sum(parameter_breakdown(model).values())


def test_pad_embedding_starts_at_zero():
    model = small_model(pad_id=2)
    assert torch.count_nonzero(model.encoder.embed.tokens.weight[2]) == 0


def test_dropout_is_active_only_in_training():
    model = small_model(dropout=0.5)
    src, tgt_in = torch.tensor([[3, 4, 5]]), torch.tensor([[1, 9]])
    assert max_diff(model(src, tgt_in), model(src, tgt_in)) == 0.0
    model.train()
    assert max_diff(model(src, tgt_in), model(src, tgt_in)) > 1e-3


def test_dropout_follows_the_paper_unless_asked():
    """Section 5.4: dropout on sub-layer outputs and embedding sums only; torch.nn's places on request."""
    paper = small_model(dropout=0.3)
    layer = paper.decoder.layers[0]
    assert (layer.dropout1.p, paper.encoder.embed.dropout.p) == (0.3, 0.3)
    assert (layer.self_attn.dropout, layer.cross_attn.dropout, layer.ff.dropout.p) == (0.0, 0.0, 0.0)
    like_torch = small_model(dropout=0.3, attention_dropout=0.3, ffn_dropout=0.3).decoder.layers[0]
    assert (like_torch.self_attn.dropout, like_torch.ff.dropout.p) == (0.3, 0.3)


def test_decoder_drops_only_a_redundant_padding_mask():
    """Trailing target padding needs no mask (the causal mask hides it from real tokens)."""
    model = small_model()
    trailing = torch.tensor([[1, 9, 10, 12], [1, 11, 0, 0]])
    assert model.decoder_padding_mask(trailing) is None
    inside = torch.tensor([[1, 0, 10, 12], [1, 11, 0, 0]])
    assert model.decoder_padding_mask(inside).tolist() == (inside == 0).tolist()
    src = torch.tensor([[3, 4, 5], [6, 7, 0]])
    memory, src_mask = model.encode(src)
    fast = model.decode(trailing, memory, src_mask)
    masked = model.output_proj(model.decoder(trailing, memory, trailing == 0, src_mask))
    real = trailing != 0
    assert max_diff(fast[real], masked[real]) <= TOLERANCE


def test_one_product_projection_equals_three():
    torch.manual_seed(6)
    attention = MultiHeadAttention(16, 4)
    x, memory = torch.randn(2, 5, 16), torch.randn(2, 7, 16)
    for query, key in ((x, x), (x, memory)):
        fused = attention.project(query, key, key)
        inputs = ((attention.q_proj, query), (attention.k_proj, key), (attention.v_proj, key))
        separate = [attention._split_heads(projection(t)) for projection, t in inputs]
        for a, b in zip(fused, separate, strict=True):
            assert a.shape == (2, 4, a.shape[2], 4) and max_diff(a, b) <= TOLERANCE


def test_learned_positions_are_trained_and_counted():
    model = small_model(learned_positions=True)
    table = model.encoder.embed.positions
    assert isinstance(table, nn.Parameter) and table.shape == (20, 16)
    assert table is not model.decoder.embed.positions
    tokens = torch.tensor([[3, 4]])
    expected = model.encoder.embed.tokens(tokens) * 4.0 + table[:2]
    assert max_diff(model.encoder.embed(tokens), expected) <= TOLERANCE
    sinusoidal = sum(p.numel() for p in small_model().parameters())
    assert sum(parameter_breakdown(model).values()) == sinusoidal + 2 * 20 * 16


def test_base_model_size_term_by_term():
    parts = count_parameters(base_model_config())
    d, ff, vocab, n = 512, 2048, 37000, 6
    attention = 4 * (d * d + d)
    feed_forward = d * ff + ff + ff * d + d
    norm = 2 * d
    assert parts == {
        "embeddings": vocab * d,
        "encoder self-attention": n * attention,
        "encoder feed-forward": n * feed_forward,
        "encoder layer norms": n * 2 * norm,
        "decoder self-attention": n * attention,
        "decoder cross-attention": n * attention,
        "decoder feed-forward": n * feed_forward,
        "decoder layer norms": n * 3 * norm,
    }
    total = sum(parts.values())
    assert total == 63_082_496  # the paper's Table 3 rounds its count to 65 x 10^6
    assert abs(total - 65e6) / 65e6 < 0.05


def test_untied_model_counts_output_projection_and_final_norms():
    config = TransformerConfig(
        src_vocab_size=100,
        tgt_vocab_size=120,
        d_model=16,
        n_heads=2,
        d_ff=8,
        n_encoder_layers=1,
        n_decoder_layers=1,
        norm_first=True,
    )
    parts = count_parameters(config)
    assert parts["embeddings"] == (100 + 120) * 16
    assert parts["output projection"] == 120 * 16
    assert parts["encoder final layer norm"] == parts["decoder final layer norm"] == 32
    with torch.device("meta"):
        assert sum(parts.values()) == sum(p.numel() for p in Transformer(config).parameters())


@pytest.mark.parametrize(
    "overrides,message",
    [
        (dict(d_model=10, n_heads=3), "not divisible"),
        (dict(share_embeddings=True), "same size"),
        (dict(pad_id=20), "pad_id"),
        (dict(dropout=1.0), "dropout"),
        (dict(attention_dropout=-0.1), "attention_dropout"),
        (dict(d_model=0), "positive"),
    ],
)
def test_config_errors(overrides, message):
    settings = dict(src_vocab_size=13, tgt_vocab_size=17, d_model=16, n_heads=4)
    settings.update(overrides)
    with pytest.raises(ValueError, match=message):
        TransformerConfig(**settings)


@pytest.mark.parametrize(
    "src,tgt_in,message",
    [
        (torch.tensor([[3.0, 4.0]]), torch.tensor([[1, 2]]), "integer token ids"),
        (torch.tensor([3, 4]), torch.tensor([[1, 2]]), "batch, length"),
        (torch.tensor([[3, 4]]), torch.tensor([[1, 2], [1, 2]]), "same batch size"),
        (torch.ones(1, 21, dtype=torch.long), torch.tensor([[1, 2]]), "max_len=20"),
        (torch.tensor([[3, 13]]), torch.tensor([[1, 2]]), "vocabulary has 13"),
        (torch.tensor([[0, 0]]), torch.tensor([[1, 2]]), "only of padding"),
    ],
)
def test_bad_inputs_get_clear_errors(src, tgt_in, message):
    with pytest.raises(ValueError, match=message):
        small_model()(src, tgt_in)


def test_decode_checks_memory_and_mask():
    model = small_model()
    memory, mask = model.encode(torch.tensor([[3, 4]]))
    with pytest.raises(ValueError, match="memory must have shape"):
        model.decode(torch.tensor([[1]]), memory[..., :8], mask)
    with pytest.raises(ValueError, match="src_key_padding_mask"):
        model.decode(torch.tensor([[1]]), memory, mask.long())


def test_attention_checks_shapes():
    attention = MultiHeadAttention(8, 2)
    with pytest.raises(ValueError, match="query must have shape"):
        attention(torch.randn(2, 3, 6), torch.randn(2, 3, 8), torch.randn(2, 3, 8))
    with pytest.raises(ValueError, match="key_padding_mask"):
        x = torch.randn(2, 3, 8)
        attention(x, x, x, key_padding_mask=torch.zeros(2, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match="not divisible"):
        MultiHeadAttention(10, 4)


def test_dropout_is_inverted_dropout():
    torch.manual_seed(7)
    drop = Dropout(0.25).train()
    x = torch.ones(400, 500)
    y = drop(x)
    kept = y != 0
    assert abs(kept.float().mean().item() - 0.75) < 0.01, "each value is zeroed with probability p"
    assert torch.allclose(y[kept], torch.full_like(y[kept], 1 / 0.75)), "kept values scale by 1/(1-p)"
    assert drop.eval()(x) is x and Dropout(0.0).train()(x) is x
    with pytest.raises(ValueError, match="probability"):
        Dropout(1.0)

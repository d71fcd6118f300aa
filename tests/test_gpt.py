"""Lesson 10's GPT: causal, cache-consistent, rotary positions relative, sampling knobs as documented."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from transformer_course.language_model.gpt import (
    GPT,
    POSITION_KINDS,
    GPTConfig,
    KVCache,
    _ranked_next_token_probabilities,
    _rotary_angles,
    _rotate_pairs,
    next_token_loss,
    per_position_loss,
)
from transformer_course.layers import FeedForward, MultiHeadAttention


def _model(positions: str = "rope", seed: int = 0, **sizes) -> GPT:
    torch.manual_seed(seed)
    config = dict(vocab_size=40, d_model=32, n_heads=4, d_ff=64, n_layers=2, max_len=64, dropout=0.0)
    config.update(sizes)
    return GPT(GPTConfig(positions=positions, **config)).eval()


def test_blocks_are_the_course_model_blocks_and_the_output_is_tied():
    model = _model()
    block = model.blocks[0]
    assert isinstance(block.attn.heads, MultiHeadAttention)
    assert isinstance(block.ff, FeedForward)
    assert model.lm_head.weight is model.tokens.weight
    assert not any("cross" in name for name, _ in model.named_modules())


@pytest.mark.parametrize("positions", POSITION_KINDS)
def test_a_position_never_sees_the_future(positions):
    model = _model(positions)
    tokens = torch.randint(40, (2, 20), generator=torch.Generator().manual_seed(1))
    changed = tokens.clone()
    changed[:, 12:] = (changed[:, 12:] + 7) % 40
    before, after = model(tokens), model(changed)
    assert torch.allclose(before[:, :12], after[:, :12], atol=1e-6)
    assert not torch.allclose(before[:, 12:], after[:, 12:], atol=1e-3)


@pytest.mark.parametrize("positions", POSITION_KINDS)
def test_one_pass_loss_is_the_mean_of_the_prefix_losses(positions):
    model = _model(positions)
    tokens = torch.randint(40, (1, 16), generator=torch.Generator().manual_seed(2))
    inputs, targets = tokens[:, :-1], tokens[:, 1:]
    one_pass = next_token_loss(model(inputs), targets)
    prefixes = [F.cross_entropy(model(inputs[:, : t + 1])[0, -1], targets[0, t]) for t in range(15)]
    assert one_pass.item() == pytest.approx(torch.stack(prefixes).mean().item(), abs=1e-5)
    assert per_position_loss(model(inputs), targets).shape == (15,)


@pytest.mark.parametrize("positions", POSITION_KINDS)
def test_cached_forward_equals_the_full_forward(positions):
    model = _model(positions)
    tokens = torch.randint(40, (3, 30), generator=torch.Generator().manual_seed(3))
    full = model(tokens)
    cache = model.new_cache()
    pieces = [model(tokens[:, :7], cache), model(tokens[:, 7:9], cache)]
    pieces += [model(tokens[:, t : t + 1], cache) for t in range(9, 30)]
    assert cache.length == 30
    assert cache.n_values() == 2 * 2 * 3 * 30 * 32  # (keys + values) x layers x batch x length x d_model
    assert torch.allclose(torch.cat(pieces, dim=1), full, atol=1e-5)


@pytest.mark.parametrize("positions", POSITION_KINDS)
def test_generation_with_and_without_cache_gives_the_same_tokens(positions):
    model = _model(positions)
    for knobs in ({"temperature": 0.0}, {"temperature": 1.3, "top_k": 5}, {"temperature": 0.7, "top_p": 0.9}):
        runs = [
            model.generate([3, 1, 4], 40, generator=torch.Generator().manual_seed(5), use_cache=use, **knobs)
            for use in (True, False)
        ]
        assert runs[0] == runs[1]
        assert len(runs[0]) == 40 and all(0 <= t < 40 for t in runs[0])


def test_generation_is_seeded_and_restores_training_mode():
    model = _model()
    model.train()
    first = model.generate([1, 2], 20, generator=torch.Generator().manual_seed(0))
    assert model.training
    assert first == model.generate([1, 2], 20, generator=torch.Generator().manual_seed(0))


def test_rotation_by_pairs_matches_complex_multiplication_and_is_relative():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(5, 8))
    angles = _rotary_angles(5, 8)
    rotated = _rotate_pairs(torch.tensor(x, dtype=torch.float32), angles).double().numpy()
    frequencies = 10000.0 ** (-np.arange(0, 8, 2) / 8)
    expected = (x[:, 0::2] + 1j * x[:, 1::2]) * np.exp(1j * np.arange(5)[:, None] * frequencies)
    assert np.allclose(rotated[:, 0::2], expected.real, atol=1e-5)
    assert np.allclose(rotated[:, 1::2], expected.imag, atol=1e-5)
    q, k = torch.tensor(rng.normal(size=8)), torch.tensor(rng.normal(size=8))
    table = _rotary_angles(40, 8)

    def score(m, n):
        return float(_rotate_pairs(q, table[m]) @ _rotate_pairs(k, table[n]))

    assert score(3, 10) == pytest.approx(score(23, 30), abs=1e-5)
    assert score(0, 0) == pytest.approx(float(q @ k), abs=1e-5)


def test_a_rope_model_gives_the_same_outputs_wherever_the_text_starts():
    """Rotary positions enter only through offsets: the same tokens at positions 0..9 or 20..29
    give the same attention scores, hence the same logits."""
    model = _model("rope")
    tokens = torch.randint(40, (1, 10), generator=torch.Generator().manual_seed(4))
    angles = model.angles
    shifted = model.angles.roll(-20, dims=0)
    out_0 = model(tokens)
    model.angles = shifted
    try:
        out_20 = model(tokens)
    finally:
        model.angles = angles
    assert torch.allclose(out_0, out_20, atol=1e-4)


def in_token_order(logits: torch.Tensor, *knobs, **named_knobs) -> torch.Tensor:
    """The sampling distribution scattered back from rank order to token order, as generate does."""
    order, ranked = _ranked_next_token_probabilities(logits, *knobs, **named_knobs)
    return torch.zeros_like(ranked).scatter(-1, order, ranked)


def test_the_sampling_distribution_comes_in_rank_order():
    logits = torch.tensor([1.0, 3.0, 3.0, 0.0, 2.0])
    order, ranked = _ranked_next_token_probabilities(logits, top_k=3)
    assert order.tolist() == [1, 2, 4, 0, 3]  # by logit, ties by lower id
    assert torch.allclose(ranked, torch.softmax(torch.tensor([3.0, 3.0, 2.0, -torch.inf, -torch.inf]), 0))
    order, greedy = _ranked_next_token_probabilities(logits, temperature=0.0)
    assert order.tolist() == [1, 2, 4, 0, 3] and greedy.tolist() == [1, 0, 0, 0, 0]


def test_sampling_knobs_follow_the_documented_contract():
    logits = torch.tensor([1.0, 3.0, 3.0, 0.0, 2.0])
    assert in_token_order(logits, temperature=0.0).tolist() == [0, 1, 0, 0, 0]
    assert in_token_order(logits, top_k=1).tolist() == [0, 1, 0, 0, 0]  # ties: lower id
    assert in_token_order(logits, top_k=2).tolist() == [0, 0.5, 0.5, 0, 0]
    assert torch.allclose(in_token_order(logits), torch.softmax(logits, 0))
    assert torch.allclose(in_token_order(logits, temperature=2.0), torch.softmax(logits / 2, 0))
    assert torch.allclose(in_token_order(logits, top_k=10), torch.softmax(logits, 0))
    # top-p: the smallest top-ranked set reaching p, the token that crosses p included
    third = torch.log(torch.tensor([0.5, 0.3, 0.2]))
    assert torch.allclose(in_token_order(third, top_p=0.6), torch.tensor([0.625, 0.375, 0.0]))
    assert in_token_order(third, top_p=1e-9).tolist() == [1, 0, 0]
    assert torch.allclose(in_token_order(third, top_p=1.0), torch.tensor([0.5, 0.3, 0.2]))
    equal = torch.zeros(4, dtype=torch.float64)
    for p, kept in ((0.25, 1), (0.5, 2), (0.75, 3), (1.0, 4)):
        expected = [1 / kept] * kept + [0.0] * (4 - kept)
        assert in_token_order(equal, top_p=p).tolist() == expected
    # top-p applies to the top-k distribution, renormalized: 4/7 >= 0.55 already (0.4 would not be)
    four = torch.log(torch.tensor([0.4, 0.3, 0.2, 0.1]))
    assert in_token_order(four, top_k=2, top_p=0.55).tolist() == [1, 0, 0, 0]
    assert torch.allclose(in_token_order(four, top_k=2, top_p=0.6), torch.tensor([4 / 7, 3 / 7, 0, 0]))
    batch = torch.stack([logits, logits.flip(0)])
    assert torch.allclose(in_token_order(batch, top_k=2)[1], in_token_order(logits.flip(0), top_k=2))


@pytest.mark.parametrize(
    "knobs, message",
    [
        ({"temperature": -0.1}, "temperature"),
        ({"top_k": 0}, "top_k"),
        ({"top_k": 2.5}, "top_k"),
        ({"top_p": 0.0}, "top_p"),
        ({"top_p": 1.5}, "top_p"),
    ],
)
def test_meaningless_knobs_are_refused(knobs, message):
    with pytest.raises(ValueError, match=message):
        _ranked_next_token_probabilities(torch.zeros(3), **knobs)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: GPTConfig(vocab_size=10, d_model=30, n_heads=4), "divisible"),
        (lambda: GPTConfig(vocab_size=10, d_model=12, n_heads=4, positions="rope"), "even"),
        (lambda: GPTConfig(vocab_size=10, positions="alibi"), "positions"),
        (lambda: GPTConfig(vocab_size=0), "vocab_size"),
        (lambda: _model()(torch.zeros(70, dtype=torch.long)[None]), "max_len"),
        (lambda: _model()(torch.zeros(3, dtype=torch.long)), "batch"),
        (lambda: _model()(torch.full((1, 3), 40)), "vocabulary"),
        (lambda: _model().generate([], 3), "prompt"),
    ],
)
def test_bad_input_gets_a_clear_error(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_cache_of_another_model_is_refused():
    model, other = _model(), _model(n_layers=3)
    with pytest.raises(ValueError, match="layers"):
        model(torch.zeros((1, 2), dtype=torch.long), other.new_cache())
    assert isinstance(model.new_cache(), KVCache)

"""Greedy decoding and beam search: batching, stopping, and optimality on small searches."""

import functools
import itertools

import pytest
import torch

from transformer_course.translation.decoding import (
    _length_penalty_factor,
    beam_search,
    greedy_decode,
    greedy_trace,
)
from transformer_course.translation.model import Transformer, TransformerConfig

PAD, BOS, EOS = 0, 1, 2


class CopyingModel(Transformer):
    """A scripted 'model' that copies its source then says EOS, with probability 0.7 per step.

    The memory carries the source ids, so the script survives the batching and beam expansion
    that the decoders do; it checks the decoding logic independently of any training.
    """

    def encode(self, src):
        memory = src.float()[..., None].expand(*src.shape, self.config.d_model)
        return memory, src == PAD

    def decode(self, tgt_in, memory, src_key_padding_mask):
        src = memory[..., 0].long()
        lengths = (~src_key_padding_mask).sum(dim=1)
        batch, steps = tgt_in.shape
        vocab = self.config.tgt_vocab_size
        probs = torch.full((batch, steps, vocab), 0.3 / (vocab - 1))
        for b in range(batch):
            for t in range(steps):
                target = src[b, t].item() if t < lengths[b] else EOS
                probs[b, t, target] = 0.7
        return probs.log()


def copying_model() -> CopyingModel:
    config = TransformerConfig(
        src_vocab_size=9,
        tgt_vocab_size=9,
        d_model=4,
        n_heads=1,
        d_ff=4,
        n_encoder_layers=0,
        n_decoder_layers=0,
        max_len=12,
    )
    return CopyingModel(config)


def random_model(vocab: int = 6, seed: int = 0, sharpen: float = 8.0) -> Transformer:
    torch.manual_seed(seed)
    config = TransformerConfig(
        src_vocab_size=vocab,
        tgt_vocab_size=vocab,
        d_model=16,
        n_heads=2,
        d_ff=32,
        n_encoder_layers=1,
        n_decoder_layers=1,
        dropout=0.1,
        max_len=16,
    )
    model = Transformer(config)
    with torch.no_grad():  # sharper distributions than at initialization, so choices differ
        model.output_proj.weight.mul_(sharpen)
    return model


SOURCES = torch.tensor([[3, 4, 5, 6], [7, 8, PAD, PAD], [5, PAD, PAD, PAD]])
EXPECTED = [[3, 4, 5, 6, EOS], [7, 8, EOS, PAD, PAD], [5, EOS, PAD, PAD, PAD]]


def test_greedy_decode_copies_and_pads_finished_rows():
    assert greedy_decode(copying_model(), SOURCES, BOS, EOS, max_len=10).tolist() == EXPECTED


def test_greedy_decode_stops_at_max_len():
    out = greedy_decode(copying_model(), SOURCES, BOS, EOS, max_len=3)
    assert out.tolist() == [[3, 4, 5], [7, 8, EOS], [5, EOS, PAD]]


@pytest.mark.parametrize("beam_size", [1, 2, 4])
def test_beam_search_copies(beam_size):
    out = beam_search(copying_model(), SOURCES, BOS, EOS, max_len=10, beam_size=beam_size)
    assert out.tolist() == EXPECTED


class PadLovingModel(CopyingModel):
    """The copying script, but the pad token is the most likely output at every step."""

    def decode(self, tgt_in, memory, src_key_padding_mask):
        log_probs = super().decode(tgt_in, memory, src_key_padding_mask).clone()
        log_probs[..., PAD] = 0.0
        return log_probs


@pytest.mark.parametrize("search", ["greedy", "beam"])
def test_decoders_never_write_padding(search):
    model = PadLovingModel(copying_model().config)
    if search == "greedy":
        out = greedy_decode(model, SOURCES, BOS, EOS, max_len=10)
    else:
        out = beam_search(model, SOURCES, BOS, EOS, max_len=10, beam_size=3)
    assert out.tolist() == EXPECTED, "padding is not a word: the copy must come out unchanged"


def naive_greedy(model, src, max_len):
    """One sentence at a time, the whole prefix re-decoded each step, no batching tricks."""
    rows = []
    for sentence in src:
        prefix = [BOS]
        for _ in range(max_len):
            logits = model(sentence[None], torch.tensor([prefix]))
            prefix.append(int(logits[0, -1].argmax()))
            if prefix[-1] == EOS:
                break
        rows.append(prefix[1:])
    return rows


def test_batched_greedy_matches_one_at_a_time():
    model = random_model().eval()
    src = torch.tensor([[3, 4, 5, 3], [4, 4, PAD, PAD], [5, 3, 3, PAD]])
    out = greedy_decode(model, src, BOS, EOS, max_len=8).tolist()
    for row, expected in zip(out, naive_greedy(model, src, 8), strict=True):
        assert row[: len(expected)] == expected
        assert all(token == PAD for token in row[len(expected) :])


def test_beam_of_one_without_penalty_is_greedy():
    model = random_model(seed=1)
    src = torch.tensor([[3, 4, 5], [4, 3, PAD]])
    greedy = greedy_decode(model, src, BOS, EOS, max_len=9)
    beam = beam_search(model, src, BOS, EOS, max_len=9, beam_size=1, length_penalty=0.0)
    assert torch.equal(greedy, beam)


EXHAUSTIVE_VOCAB, EXHAUSTIVE_MAX_LEN, EXHAUSTIVE_SRC = 5, 4, torch.tensor([3, 1, 3])


@functools.cache
def exhaustive_search(seed: int) -> tuple[Transformer, dict[tuple[int, ...], float]]:
    """Log-probability of every hypothesis (ends with EOS, or reaches max_len), in one batch."""
    model = random_model(vocab=EXHAUSTIVE_VOCAB, seed=seed, sharpen=2.0).eval()
    others = [t for t in range(EXHAUSTIVE_VOCAB) if t not in (EOS, PAD)]  # decoders never write PAD
    candidates = [
        tuple(body) + (EOS,)
        for length in range(1, EXHAUSTIVE_MAX_LEN + 1)
        for body in itertools.product(others, repeat=length - 1)
    ]
    candidates += list(itertools.product(others, repeat=EXHAUSTIVE_MAX_LEN))
    width = EXHAUSTIVE_MAX_LEN
    tgt_in = torch.tensor([[BOS, *c[:-1]] + [PAD] * (width - len(c)) for c in candidates])
    with torch.no_grad():
        src = EXHAUSTIVE_SRC.expand(len(candidates), -1)
        log_probs = torch.log_softmax(model(src, tgt_in), dim=-1)
    scores = {
        c: sum(log_probs[i, t, token].item() for t, token in enumerate(c)) for i, c in enumerate(candidates)
    }
    return model, scores


def exhaustive_best(seed: int, alpha: float) -> list[int]:
    _, scores = exhaustive_search(seed)
    return list(max(scores, key=lambda c: scores[c] / _length_penalty_factor(len(c), alpha)))


# Seeds where the length penalty changes the winner, so a search that ignores it fails.
@pytest.mark.parametrize("seed", [2, 33])
@pytest.mark.parametrize("alpha", [0.0, 0.6, 2.0])
def test_wide_beam_finds_the_exhaustive_optimum(seed, alpha):
    """With a beam wider than the search space, beam search must return the best hypothesis."""
    model, _ = exhaustive_search(seed)
    best = exhaustive_best(seed, alpha)
    assert best != exhaustive_best(seed, 0.0 if alpha else 0.6)
    out = beam_search(
        model,
        EXHAUSTIVE_SRC[None],
        BOS,
        EOS,
        EXHAUSTIVE_MAX_LEN,
        beam_size=EXHAUSTIVE_VOCAB**EXHAUSTIVE_MAX_LEN,
        length_penalty=alpha,
    )
    assert out[0].tolist() == best + [PAD] * (out.shape[1] - len(best))


def test_length_penalty_formula():
    assert _length_penalty_factor(1, 0.6) == 1.0
    assert abs(_length_penalty_factor(7, 0.6) - 2.0**0.6) < 1e-12
    assert _length_penalty_factor(30, 0.0) == 1.0


def test_trace_agrees_with_greedy_and_ranks_candidates():
    model = random_model(seed=3)
    src = torch.tensor([3, 5, 4])
    steps = greedy_trace(model, src, BOS, EOS, max_len=6, id_to_token=lambda i: f"t{i}")
    greedy = greedy_decode(model, src[None], BOS, EOS, max_len=6)[0].tolist()
    assert [s.chosen for s in steps] == [f"t{t}" for t in greedy[: len(steps)]]
    assert all(t == PAD for t in greedy[len(steps) :]), "greedy pads only after the trace's EOS"
    for step in steps:
        assert len(step.prefix) == step.step
        assert step.prefix[0] == f"t{BOS}"
        probabilities = [p for _, p in step.candidates]
        assert probabilities == sorted(probabilities, reverse=True)
        assert step.candidates[0][0] == step.chosen and len(step.candidates) == 3


def test_decoding_restores_training_mode_and_needs_no_grad():
    model = random_model()
    model.train()
    out = greedy_decode(model, torch.tensor([[3, 4]]), BOS, EOS, max_len=4)
    assert model.training and not out.requires_grad
    beam_search(model, torch.tensor([[3, 4]]), BOS, EOS, max_len=4)
    assert model.training


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(max_len=0), "max_len"),
        (dict(max_len=17), "max_len"),
        (dict(bos_id=6), "bos_id"),
        (dict(src=torch.tensor([3, 4])), "src.unsqueeze"),
        (dict(src=torch.tensor([[3.0, 4.0]])), "integer token ids"),
    ],
)
def test_bad_arguments(kwargs, message):
    arguments = dict(src=torch.tensor([[3, 4]]), bos_id=BOS, eos_id=EOS, max_len=4)
    arguments.update(kwargs)
    with pytest.raises(ValueError, match=message):
        greedy_decode(random_model(), **arguments)


def test_bad_beam_arguments():
    model, src = random_model(), torch.tensor([[3, 4]])
    with pytest.raises(ValueError, match="beam_size"):
        beam_search(model, src, BOS, EOS, 4, beam_size=0)
    with pytest.raises(ValueError, match="length_penalty"):
        beam_search(model, src, BOS, EOS, 4, length_penalty=-1.0)
    with pytest.raises(ValueError, match="one sentence"):
        greedy_trace(model, torch.tensor([[3, 4], [4, 3]]), BOS, EOS, 4)

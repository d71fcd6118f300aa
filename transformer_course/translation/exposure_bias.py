"""Exposure bias, measured: the same model fed gold prefixes versus its own.

Training feeds the decoder the reference's prefix (teacher forcing), so every prediction it ever
learned from follows a correct prefix. Greedy decoding feeds it its own output instead. Up to its
first wrong token the two are the same computation; after it, the decoder conditions on a prefix
no training example had. Comparing, on the same sentences, the errors teacher forcing makes from
that point on with the edits the free-running output needs shows how much the wrong prefix costs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from transformer_course.translation.batching import collate, encode_pairs
from transformer_course.translation.decoding import greedy_decode
from transformer_course.translation.model import Transformer
from transformer_course.translation.tokenization import SubwordTokenizer


@dataclass(frozen=True)
class SentenceExposure:
    """One sentence's target ids (ending with EOS): the reference, the model's argmax after each
    gold prefix, and its free-running greedy output (up to and including its EOS)."""

    reference: tuple[int, ...]
    teacher_forced: tuple[int, ...]
    free_running: tuple[int, ...]

    @property
    def first_forced_error(self) -> int | None:
        """The first position where the argmax after the gold prefix is wrong (None: none is)."""
        wrong = [
            t for t, (p, r) in enumerate(zip(self.teacher_forced, self.reference, strict=True)) if p != r
        ]
        return wrong[0] if wrong else None

    @property
    def divergence(self) -> int | None:
        """The first position where the greedy output leaves the reference (None: it never does)."""
        for t, r in enumerate(self.reference):
            if t >= len(self.free_running) or self.free_running[t] != r:
                return t
        return None  # the reference ends with EOS, where greedy output ends too

    def forced_errors_from(self, start: int) -> int:
        """Wrong argmaxes after gold prefixes at positions ``start`` onwards."""
        pairs = zip(self.teacher_forced[start:], self.reference[start:], strict=True)
        return sum(p != r for p, r in pairs)

    def free_edits_from(self, start: int) -> int:
        """Token edits (insert, delete, substitute) turning the greedy output's rest into the
        reference's rest, both from position ``start``."""
        return edit_distance(self.free_running[start:], self.reference[start:])


def edit_distance(a: Sequence[int], b: Sequence[int]) -> int:
    """Levenshtein distance between two token sequences."""
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, start=1):
        current = [i]
        for j, y in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def _until_eos(ids: Sequence[int], eos_id: int) -> tuple[int, ...]:
    out = []
    for token in ids:
        out.append(int(token))
        if token == eos_id:
            break
    return tuple(out)


def measure_exposure(
    model: Transformer,
    tokenizer: SubwordTokenizer,
    pairs: Sequence[tuple[str, str]],
    batch_size: int = 64,
) -> list[SentenceExposure]:
    """Decode each pair's source greedily and, on the same batch, run the decoder once on the
    reference (teacher forcing); greedy's length limit is :func:`evaluation.translate`'s."""
    if isinstance(pairs, str) or not pairs:
        raise ValueError("pass a non-empty list of (source, reference) pairs")
    limit = model.config.max_len
    encoded = encode_pairs(pairs, tokenizer, limit)
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    sentences: list[SentenceExposure] = []
    try:
        with torch.no_grad():
            for start in range(0, len(encoded), batch_size):
                chunk = encoded[start : start + batch_size]
                batch = collate(chunk, tokenizer.pad_id, tokenizer.bos_id)
                src, tgt_in = batch.src.to(device), batch.tgt_in.to(device)
                logits = model(src, tgt_in).float()
                logits[..., tokenizer.pad_id] = float("-inf")  # as greedy decoding does
                forced = logits.argmax(dim=-1).tolist()
                max_len = min(limit, 2 * src.shape[1] + 10)
                free = greedy_decode(model, src, tokenizer.bos_id, tokenizer.eos_id, max_len).tolist()
                for (_, target), f, g in zip(chunk, forced, free, strict=True):
                    sentences.append(
                        SentenceExposure(
                            reference=tuple(target),
                            teacher_forced=tuple(f[: len(target)]),
                            free_running=_until_eos(g, tokenizer.eos_id),
                        )
                    )
    finally:
        model.train(was_training)
    return sentences


@dataclass(frozen=True)
class ExposureSummary:
    """Teacher forcing against free running over a set of sentences."""

    n_sentences: int
    forced_accuracy: float
    n_diverged: int
    n_diverged_at_first_forced_error: int
    mean_forced_errors_after: float
    mean_free_edits_after: float
    n_free_worse: int

    def summary(self) -> str:
        return (
            f"{self.n_sentences} sentences; teacher forcing: {self.forced_accuracy:.1%} of next tokens "
            f"right\nfree-running greedy leaves the reference in {self.n_diverged} of them, "
            f"{self.n_diverged_at_first_forced_error} of those at teacher forcing's first wrong token\n"
            f"from that token on, per sentence: teacher forcing makes {self.mean_forced_errors_after:.1f} "
            f"errors, the greedy output needs {self.mean_free_edits_after:.1f} token edits "
            f"(more in {self.n_free_worse} of {self.n_diverged})"
        )


def summarize_exposure(sentences: Sequence[SentenceExposure]) -> ExposureSummary:
    """Token accuracy under teacher forcing, and for each sentence greedy decoding leaves, the
    errors teacher forcing makes from that position on against the greedy output's edits."""
    if not sentences:
        raise ValueError("no sentences to summarize")
    n_tokens = sum(len(s.reference) for s in sentences)
    n_right = sum(len(s.reference) - s.forced_errors_from(0) for s in sentences)
    diverged = [(s, s.divergence) for s in sentences if s.divergence is not None]
    forced = [s.forced_errors_from(k) for s, k in diverged]
    free = [s.free_edits_from(k) for s, k in diverged]
    return ExposureSummary(
        n_sentences=len(sentences),
        forced_accuracy=n_right / n_tokens,
        n_diverged=len(diverged),
        n_diverged_at_first_forced_error=sum(s.first_forced_error == k for s, k in diverged),
        mean_forced_errors_after=sum(forced) / max(1, len(forced)),
        mean_free_edits_after=sum(free) / max(1, len(free)),
        n_free_worse=sum(e > f for e, f in zip(free, forced, strict=True)),
    )


def by_position(
    sentences: Sequence[SentenceExposure], positions: Sequence[int]
) -> list[tuple[int, int, float, float]]:
    """For each target position t: how many references reach it, the share of them whose token t
    teacher forcing gets right, and the share whose greedy output still equals the reference
    through t."""
    rows = []
    for t in positions:
        reaching = [s for s in sentences if len(s.reference) > t]
        if not reaching:
            continue
        forced_right = sum(s.teacher_forced[t] == s.reference[t] for s in reaching)
        on_track = sum(s.divergence is None or s.divergence > t for s in reaching)
        rows.append((t, len(reaching), forced_right / len(reaching), on_track / len(reaching)))
    return rows

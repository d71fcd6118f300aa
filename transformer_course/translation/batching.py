"""From sentence pairs to padded batches of similar length (lesson 9).

The paper batches by *tokens*, not sentences: pairs of similar length go together, so that each
batch holds about the same number of tokens and little of it is padding (section 5.1: about
25,000 source and 25,000 target tokens per batch). Padding goes at the end of every row, which
is what lets the decoder skip its padding mask (``Transformer.decoder_padding_mask``).

Batches of epoch e depend only on (seed, e), so a run resumed from a checkpoint sees exactly the
batches it would have seen had it never stopped.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from transformer_course.translation.tokenization import SubwordTokenizer

EncodedPair = tuple[list[int], list[int]]


@dataclass
class Batch:
    """Padded tensors of one batch: ``tgt_in`` starts with BOS, ``tgt_out`` ends with EOS."""

    src: Tensor
    tgt_in: Tensor
    tgt_out: Tensor

    @property
    def n_target_tokens(self) -> int:
        return int((self.tgt_out != SubwordTokenizer.pad_id).sum())

    @property
    def n_tokens(self) -> int:
        """Source plus target tokens, padding excluded: what tokens/s counts."""
        return self.n_target_tokens + int((self.src != SubwordTokenizer.pad_id).sum())

    @property
    def n_padded(self) -> int:
        """Source plus target positions, padding included: what the model computes on."""
        return self.src.numel() + self.tgt_out.numel()

    def to(self, device: torch.device) -> Batch:
        return Batch(self.src.to(device), self.tgt_in.to(device), self.tgt_out.to(device))


def encode_pairs(
    pairs: Sequence[tuple[str, str]], tokenizer: SubwordTokenizer, max_len: int = 128
) -> list[EncodedPair]:
    """Token ids of each pair, both ending with EOS; pairs longer than ``max_len`` are cut.

    The target keeps ``max_len - 1`` tokens because the decoder's input adds BOS in front.
    """
    sources = tokenizer.encode_batch([p[0] for p in pairs])
    targets = tokenizer.encode_batch([p[1] for p in pairs])
    return [(s[:max_len], t[: max_len - 1]) for s, t in zip(sources, targets, strict=True)]


def collate(pairs: Sequence[EncodedPair], pad_id: int = 0, bos_id: int = 1) -> Batch:
    """Pad a list of encoded pairs, each row at its end, into a :class:`Batch`."""
    if not pairs:
        raise ValueError("cannot collate an empty batch")
    src_len = max(len(s) for s, _ in pairs)
    tgt_len = max(len(t) for _, t in pairs)
    src = torch.full((len(pairs), src_len), pad_id, dtype=torch.long)
    tgt_in = torch.full((len(pairs), tgt_len), pad_id, dtype=torch.long)
    tgt_out = torch.full((len(pairs), tgt_len), pad_id, dtype=torch.long)
    for i, (s, t) in enumerate(pairs):
        src[i, : len(s)] = torch.tensor(s)
        tgt_out[i, : len(t)] = torch.tensor(t)
        tgt_in[i, : len(t)] = torch.tensor([bos_id, *t[:-1]])
    return Batch(src, tgt_in, tgt_out)


def token_batches(lengths: Sequence[int], max_tokens: int, seed: int) -> list[list[int]]:
    """Group example indices into batches of similar length, ``rows * longest <= max_tokens``.

    The order inside a length and the order of the batches are shuffled with ``seed``; the
    same seed gives the same batches, which is what makes a resumed run identical.
    """
    rng = random.Random(seed)
    order = list(range(len(lengths)))
    rng.shuffle(order)
    order.sort(key=lambda i: lengths[i])  # stable: ties keep the shuffled order
    batches: list[list[int]] = []
    current: list[int] = []
    longest = 0
    for index in order:
        longest_if_added = max(longest, lengths[index])
        if current and longest_if_added * (len(current) + 1) > max_tokens:
            batches.append(current)
            current, longest_if_added = [], lengths[index]
        current.append(index)
        longest = longest_if_added
    if current:
        batches.append(current)
    rng.shuffle(batches)
    return batches


class BatchStream:
    """Endless batches: epoch ``e`` is ``token_batches(..., seed * 1000 + e)``, step by step."""

    def __init__(self, data: Sequence[EncodedPair], max_tokens: int, seed: int) -> None:
        if not data:
            raise ValueError("no training pairs")
        self.data = data
        self.max_tokens = max_tokens
        self.seed = seed
        self.lengths = [max(len(s), len(t)) for s, t in data]
        self._epoch = -1
        self._batches: list[list[int]] = []

    def batches_of_epoch(self, epoch: int) -> list[list[int]]:
        if epoch != self._epoch:
            self._batches = token_batches(self.lengths, self.max_tokens, self.seed * 1000 + epoch)
            self._epoch = epoch
        return self._batches

    @property
    def batches_per_epoch(self) -> int:
        """The same for every epoch: batch boundaries depend only on the sorted lengths."""
        return len(self.batches_of_epoch(max(self._epoch, 0)))

    def batch_at(self, step: int) -> Batch:
        """The batch used at optimizer step ``step`` (0-based), wherever training resumed."""
        epoch, index = divmod(step, self.batches_per_epoch)
        return collate([self.data[i] for i in self.batches_of_epoch(epoch)[index]])

"""A sanity check before real data: learn to copy or reverse a random sequence in seconds.

If a sequence-to-sequence model cannot learn to reverse ten random symbols, something in the
masks, the shifting of the target or the loss is broken, and no amount of translation data will
reveal which. Reversal is the better test of the two: a model that ignores the source cannot
guess it, and one without positional information cannot know which token comes last.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_course.runtime import is_grading
from transformer_course.step_progress import StepProgress
from transformer_course.translation.decoding import greedy_decode
from transformer_course.translation.model import Transformer, TransformerConfig
from transformer_course.translation.schedule import PAPER_ADAM_BETAS, PAPER_ADAM_EPS, transformer_scheduler

PAD, BOS, EOS = 0, 1, 2
FIRST_SYMBOL = 3
TASKS = ("copy", "reverse")
GRADING_STEPS = 60


def make_batch(
    task: str, batch_size: int, n_symbols: int, min_len: int, max_len: int, generator: torch.Generator
) -> tuple[Tensor, Tensor, Tensor]:
    """``(src, tgt_in, tgt_out)`` for random sequences; lengths vary, padding fills the rest."""
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    if not 1 <= min_len <= max_len:
        raise ValueError(f"need 1 <= min_len <= max_len, got {min_len} and {max_len}")
    lengths = torch.randint(min_len, max_len + 1, (batch_size,), generator=generator)
    symbols = torch.randint(
        FIRST_SYMBOL, FIRST_SYMBOL + n_symbols, (batch_size, max_len), generator=generator
    )
    src = torch.full((batch_size, max_len + 1), PAD)
    tgt_out = torch.full((batch_size, max_len + 1), PAD)
    for row, length in enumerate(lengths.tolist()):
        sequence = symbols[row, :length]
        answer = sequence.flip(0) if task == "reverse" else sequence
        src[row, :length] = sequence
        src[row, length] = EOS
        tgt_out[row, :length] = answer
        tgt_out[row, length] = EOS
    tgt_in = torch.cat([torch.full((batch_size, 1), BOS), tgt_out[:, :-1]], dim=1)
    tgt_in[tgt_in == EOS] = PAD
    return src, tgt_in, tgt_out


@dataclass
class SanityResult:
    model: Transformer
    losses: list[float]
    accuracy: float  # exact-match rate of greedy decoding on fresh sequences
    seconds: float


def sequence_accuracy(
    model: Transformer, task: str, n_symbols: int, min_len: int, max_len: int, seed: int = 123
) -> float:
    """Share of 200 fresh sequences whose greedy output is exactly right."""
    generator = torch.Generator().manual_seed(seed)
    src, _, tgt_out = make_batch(task, 200, n_symbols, min_len, max_len, generator)
    output = greedy_decode(model, src, BOS, EOS, max_len + 1)
    width = tgt_out.shape[1]
    padded = torch.full((output.shape[0], width), PAD)
    padded[:, : min(width, output.shape[1])] = output[:, :width]
    return float((padded == tgt_out).all(dim=1).float().mean())


def train_sanity(
    task: str = "reverse",
    steps: int = 400,
    n_symbols: int = 10,
    min_len: int = 3,
    max_len: int = 10,
    seed: int = 0,
    progress: bool = False,
    **config_overrides: object,
) -> SanityResult:
    """Train a small Transformer on ``task``; a working model gets near 100% exact matches.

    ``progress`` shows a bar with the loss (400 steps take about 20 s on one CPU core).

    While nbgrader runs the notebook (:func:`transformer_course.runtime.is_grading`) it trains at
    most ``GRADING_STEPS`` (60) steps, so lesson 9's check takes seconds of each student's grading;
    it decides no points.
    """
    if steps < 1:
        raise ValueError(f"steps must be positive, got {steps}")
    if is_grading():
        steps = min(steps, GRADING_STEPS)
    torch.manual_seed(seed)
    settings = dict(
        src_vocab_size=FIRST_SYMBOL + n_symbols, tgt_vocab_size=FIRST_SYMBOL + n_symbols,
        d_model=64, n_heads=4, d_ff=128, n_encoder_layers=2, n_decoder_layers=2, dropout=0.0,
        max_len=64, pad_id=PAD,
    )  # fmt: skip
    settings.update(config_overrides)
    model = Transformer(TransformerConfig(**settings))  # type: ignore[arg-type]
    optimizer = torch.optim.Adam(model.parameters(), lr=1.0, betas=PAPER_ADAM_BETAS,
                                 eps=PAPER_ADAM_EPS)  # fmt: skip
    scheduler = transformer_scheduler(optimizer, model.config.d_model, warmup=100, scale=0.5)
    generator = torch.Generator().manual_seed(seed)
    losses = []
    start = time.perf_counter()
    model.train()
    shown = StepProgress(f"{task} task", steps, enabled=progress)
    for step in range(1, steps + 1):
        src, tgt_in, tgt_out = make_batch(task, 64, n_symbols, min_len, max_len, generator)
        loss = F.cross_entropy(model(src, tgt_in).flatten(0, -2), tgt_out.flatten(), ignore_index=PAD)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        scheduler.step()
        losses.append(float(loss.detach()))
        shown.advance(step, f"loss {losses[-1]:.2f}")
    shown.close()
    seconds = time.perf_counter() - start
    accuracy = sequence_accuracy(model, task, n_symbols, min_len, max_len)
    return SanityResult(model, losses, accuracy, seconds)

"""How much a KV cache saves: time greedy generation with and without it, for growing lengths.

Without a cache, step t runs the model on all t tokens so far; with one it runs on the newest
token only and reads the earlier keys and values from the cache. Both produce the same tokens
(:func:`timed_generation` checks this), so the difference is pure recomputation.

Times are the CPU time of this process (``time.process_time``) on one thread: unlike wall time,
it barely changes when other programs share the machine, so the table is stable on a busy
laptop or a shared CI runner. (On a GPU, which runs asynchronously, wall time after a
synchronization would be the measure; this module is for the CPU.)

``python benchmarks/kv_cache_speedup.py`` prints the table; lesson 10 measures it live.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from transformer_course.language_model.gpt import GPT
from transformer_course.runtime import is_grading
from transformer_course.step_progress import StepProgress


@dataclass(frozen=True)
class GenerationTiming:
    """Best-of-``repeats`` CPU seconds to generate ``n_new`` tokens greedily, with and without the cache."""

    n_new: int
    recompute_s: float
    cached_s: float

    @property
    def speedup(self) -> float:
        return self.recompute_s / self.cached_s


def _best_time(
    model: GPT, prompt: list[int], n_new: int, use_cache: bool, repeats: int
) -> tuple[float, list[int]]:
    best, tokens = float("inf"), []
    for _ in range(repeats):
        start = time.process_time()
        tokens = model.generate(prompt, n_new, temperature=0.0, use_cache=use_cache)
        best = min(best, time.process_time() - start)
    return best, tokens


def timed_generation(model: GPT, prompt: list[int], n_new: int, repeats: int = 3) -> GenerationTiming:
    """Time one length both ways; raise if the two ways disagree on a single token."""
    if repeats < 1:
        raise ValueError(f"repeats must be positive, got {repeats}")
    recompute_s, recomputed = _best_time(model, prompt, n_new, False, repeats)
    cached_s, cached = _best_time(model, prompt, n_new, True, repeats)
    if recomputed != cached:
        first = next(i for i, (a, b) in enumerate(zip(recomputed, cached, strict=True)) if a != b)
        raise AssertionError(f"cached generation differs from recomputation at new token {first}")
    return GenerationTiming(n_new, recompute_s, cached_s)


def speedup_table(
    model: GPT,
    prompt: list[int],
    lengths: list[int],
    repeats: int = 3,
    threads: int | None = 1,
    progress: bool = False,
) -> list[GenerationTiming]:
    """:func:`timed_generation` for each length, on ``threads`` CPU threads (restored afterwards).

    ``progress`` shows the lengths timed so far (a wide model's table takes a minute or more).
    While nbgrader runs the notebook (a grade never depends on timings, but a student whose code
    reaches names indirectly gets every cell run), only the first two lengths are timed, once,
    so that lesson 10's table costs a second instead of a minute.
    """
    if is_grading():
        lengths, repeats = lengths[:2], 1
    previous = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    shown = StepProgress(f"timing {len(lengths)} lengths", len(lengths), enabled=progress, unit="length")
    rows: list[GenerationTiming] = []
    try:
        for n in lengths:
            rows.append(timed_generation(model, prompt, n, repeats))
            shown.advance(len(rows), f"{n} new tokens: {rows[-1].speedup:.1f}x")
        shown.close()
        return rows
    finally:
        torch.set_num_threads(previous)

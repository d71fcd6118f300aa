"""Label-smoothed cross-entropy, the training loss of the paper (epsilon_ls = 0.1).

The target distribution puts ``1 - epsilon`` on the correct token and spreads ``epsilon``
uniformly over the whole vocabulary (the correct token included), which is also what
``torch.nn.functional.cross_entropy(label_smoothing=epsilon)`` does. The model can no longer
reach zero loss by pushing one logit to infinity: the best it can do is predict the smoothed
distribution itself. This hurts perplexity but, as the paper reports, helps accuracy and BLEU.

The loss itself is PyTorch's (``F.cross_entropy(..., ignore_index=pad, label_smoothing=eps)``,
called by the training loop): lesson 9 has students write it as a graded exercise, and the
package never holds a graded answer (``tests/test_package_audit.py``). What stays here is the
smoothed target distribution, for pictures and tests.
"""

from __future__ import annotations

import torch
from torch import Tensor


def _check(logits: Tensor, target: Tensor, epsilon: float) -> None:
    if not isinstance(logits, Tensor) or not logits.is_floating_point():
        raise ValueError("logits must be a floating-point tensor of shape (..., vocab)")
    if not isinstance(target, Tensor) or target.dtype not in (torch.int64, torch.int32):
        raise ValueError("target must be a tensor of integer token ids (torch.long)")
    if logits.shape[:-1] != target.shape:
        raise ValueError(
            f"logits (..., vocab) and target (...) disagree: {tuple(logits.shape)} vs "
            f"{tuple(target.shape)}; logits need one extra last axis over the vocabulary"
        )
    if not 0.0 <= epsilon < 1.0:
        raise ValueError(f"epsilon must be in [0, 1), got {epsilon!r}")


def smoothed_targets(target: Tensor, vocab_size: int, epsilon: float = 0.1) -> Tensor:
    """The smoothed distribution ``(..., vocab)``: ``1 - eps + eps/V`` on the answer, ``eps/V``
    elsewhere. Used for pictures; the loss never builds this (it would cost B*T*V memory)."""
    if vocab_size < 1:
        raise ValueError(f"vocab_size must be positive, got {vocab_size!r}")
    _check(torch.zeros(*target.shape, vocab_size), target, epsilon)
    if target.numel() and (int(target.min()) < 0 or int(target.max()) >= vocab_size):
        raise ValueError(f"target ids must lie in 0..{vocab_size - 1}")
    dist = torch.full((*target.shape, vocab_size), epsilon / vocab_size)
    dist.scatter_add_(-1, target.long().unsqueeze(-1), torch.full_like(dist[..., :1], 1 - epsilon))
    return dist

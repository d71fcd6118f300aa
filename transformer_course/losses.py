"""Label-smoothed cross-entropy, the training loss of the paper (epsilon_ls = 0.1).

The target distribution puts ``1 - epsilon`` on the correct token and spreads ``epsilon``
uniformly over the whole vocabulary (the correct token included), which is also what
``torch.nn.functional.cross_entropy(label_smoothing=epsilon)`` does. The model can no longer
reach zero loss by pushing one logit to infinity: the best it can do is predict the smoothed
distribution itself. This hurts perplexity but, as the paper reports, helps accuracy and BLEU.
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


def label_smoothed_cross_entropy(
    logits: Tensor,
    target: Tensor,
    epsilon: float = 0.1,
    pad_id: int | None = 0,
    reduction: str = "mean",
) -> Tensor:
    """Cross-entropy against the smoothed targets, skipping positions where ``target == pad_id``.

    ``-sum_v q_v log p_v`` with ``q = (1 - eps) onehot + eps / V`` equals
    ``(1 - eps) * NLL(answer) + eps * mean_v(-log p_v)``, which needs no ``(..., V)`` target
    tensor. ``reduction`` is ``"mean"`` (over non-pad positions; 0 when there are none),
    ``"sum"``, or ``"none"`` (per position, 0 at padding).
    """
    _check(logits, target, epsilon)
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    vocab = logits.shape[-1]
    keep = torch.ones_like(target, dtype=torch.bool) if pad_id is None else target != pad_id
    safe_target = torch.where(keep, target, torch.zeros_like(target)).long()
    if target.numel() and (int(safe_target.min()) < 0 or int(safe_target.max()) >= vocab):
        raise ValueError(f"target ids must lie in 0..{vocab - 1} (the logits' last axis)")
    log_probs = torch.log_softmax(logits.float(), dim=-1)
    nll = -log_probs.gather(-1, safe_target.unsqueeze(-1)).squeeze(-1)
    uniform = -log_probs.mean(dim=-1)
    per_token = ((1.0 - epsilon) * nll + epsilon * uniform) * keep
    if reduction == "none":
        return per_token
    total = per_token.sum()
    if reduction == "sum":
        return total
    return total / keep.sum().clamp(min=1)

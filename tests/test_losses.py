"""The training loss: PyTorch's label-smoothed cross-entropy, which the package calls directly.

Lesson 9 grades a NumPy label-smoothed cross-entropy, so the package keeps no implementation of
its own (tests/test_package_audit.py). These tests pin what the trainer relies on: PyTorch's rule
is the paper's smoothing spread over the whole vocabulary with padding left out, and the trainer
trains exactly as it did with the package's former loss, ``(1 - eps) NLL + eps mean_v(-log p_v)``.
"""

import math

import pytest
import torch
import torch.nn.functional as F

from transformer_course.translation import training
from transformer_course.translation.settings import preset
from transformer_course.translation.training import Trainer, prepare_data


def smoothed_cross_entropy(logits, target, epsilon, pad_id):
    """The package's former loss, written out: the oracle of what the trainer computes."""
    log_probs = torch.log_softmax(logits, dim=-1)
    keep = target != pad_id
    safe = torch.where(keep, target, torch.zeros_like(target))
    nll = -log_probs.gather(-1, safe.unsqueeze(-1)).squeeze(-1)
    per_token = ((1 - epsilon) * nll - epsilon * log_probs.mean(dim=-1)) * keep
    return per_token.sum() / keep.sum()


@pytest.mark.parametrize("epsilon", [0.0, 0.1, 0.3])
def test_torch_smooths_over_the_whole_vocabulary_and_skips_padding(epsilon):
    torch.manual_seed(0)
    logits = torch.randn(3, 5, 11, dtype=torch.float64) * 3
    target = torch.randint(1, 11, (3, 5))
    target.view(-1)[::3] = 0
    theirs = F.cross_entropy(logits.flatten(0, -2), target.flatten(), ignore_index=0, label_smoothing=epsilon)
    assert abs(theirs.item() - smoothed_cross_entropy(logits, target, epsilon, 0).item()) < 1e-12


def test_the_trainer_trains_as_with_the_former_loss(monkeypatch):
    settings = preset("tiny")
    data = prepare_data(settings)

    def first_losses() -> list[float]:
        trainer = Trainer(settings, data.tokenizer, data.train, device="cpu")
        return [trainer.train_step(trainer.stream.batch_at(step)) for step in range(3)]

    with_torch = first_losses()

    def former_loss(logits, target, ignore_index, label_smoothing):
        return smoothed_cross_entropy(logits, target, label_smoothing, ignore_index)

    monkeypatch.setattr(training.F, "cross_entropy", former_loss)
    assert with_torch == pytest.approx(first_losses(), rel=1e-5)


def test_the_loss_is_smallest_at_the_smoothed_distribution_not_at_the_one_hot_answer():
    """PyTorch's rule puts 1 - eps + eps/V on the answer and eps/V on every other token: predicting
    that distribution beats a confident one-hot prediction, which is what smoothing is for."""
    vocab, epsilon, answer = 5, 0.1, 2
    q = torch.full((1, vocab), epsilon / vocab)
    q[0, answer] += 1 - epsilon
    assert math.isclose(q.sum().item(), 1.0, rel_tol=1e-6)
    at_q = F.cross_entropy(q.log(), torch.tensor([answer]), label_smoothing=epsilon)
    one_hot_ish = torch.tensor([[-9.0, -9.0, 9.0, -9.0, -9.0]])
    assert at_q < F.cross_entropy(one_hot_ish, torch.tensor([answer]), label_smoothing=epsilon)

"""Label-smoothed cross-entropy against torch.nn.functional.cross_entropy(label_smoothing=...)."""

import math

import pytest
import torch
import torch.nn.functional as F

from transformer_course.losses import label_smoothed_cross_entropy, smoothed_targets


@pytest.mark.parametrize("epsilon", [0.0, 0.1, 0.3])
@pytest.mark.parametrize("shape", [(7,), (3, 5), (2, 4, 6)])
def test_matches_torch_with_padding(epsilon, shape):
    torch.manual_seed(0)
    vocab, pad = 11, 0
    logits = torch.randn(*shape, vocab) * 3
    target = torch.randint(1, vocab, shape)
    target.view(-1)[::3] = pad
    ours = label_smoothed_cross_entropy(logits, target, epsilon, pad_id=pad)
    theirs = F.cross_entropy(
        logits.reshape(-1, vocab), target.reshape(-1), ignore_index=pad, label_smoothing=epsilon
    )
    assert abs(ours.item() - theirs.item()) <= 1e-5
    per_token = label_smoothed_cross_entropy(logits, target, epsilon, pad, reduction="none")
    expected = F.cross_entropy(
        logits.reshape(-1, vocab),
        target.reshape(-1),
        ignore_index=pad,
        label_smoothing=epsilon,
        reduction="none",
    ).view(shape)
    assert torch.allclose(per_token, expected, atol=1e-5)
    total = label_smoothed_cross_entropy(logits, target, epsilon, pad, reduction="sum")
    assert abs(total.item() - expected.sum().item()) <= 1e-4


def test_gradients_match_torch():
    torch.manual_seed(1)
    logits = torch.randn(4, 9, requires_grad=True)
    target = torch.tensor([3, 0, 8, 1])
    label_smoothed_cross_entropy(logits, target, 0.1, pad_id=0).backward()
    ours = logits.grad.clone()
    logits.grad = None
    F.cross_entropy(logits, target, ignore_index=0, label_smoothing=0.1).backward()
    assert torch.allclose(ours, logits.grad, atol=1e-6)
    assert torch.count_nonzero(ours[1]) == 0  # the pad position gets no gradient


def test_no_padding_when_pad_id_is_none():
    logits, target = torch.randn(3, 5), torch.tensor([0, 1, 2])
    ours = label_smoothed_cross_entropy(logits, target, 0.1, pad_id=None)
    assert abs(ours.item() - F.cross_entropy(logits, target, label_smoothing=0.1).item()) <= 1e-5


def test_all_padding_gives_zero_not_nan():
    loss = label_smoothed_cross_entropy(torch.randn(2, 5), torch.tensor([0, 0]))
    assert loss.item() == 0.0


def test_smoothed_targets_and_the_minimum_of_the_loss():
    q = smoothed_targets(torch.tensor([2, 0]), vocab_size=5, epsilon=0.1)
    assert torch.allclose(q.sum(-1), torch.ones(2))
    assert math.isclose(q[0, 2].item(), 0.9 + 0.02, rel_tol=1e-6)
    assert math.isclose(q[0, 0].item(), 0.02, rel_tol=1e-6)
    # The loss is smallest when the model predicts q itself, not the one-hot answer.
    at_q = label_smoothed_cross_entropy(q[:1].log(), torch.tensor([2]), 0.1, pad_id=None)
    one_hot_ish = torch.tensor([[-9.0, -9.0, 9.0, -9.0, -9.0]])
    assert at_q < label_smoothed_cross_entropy(one_hot_ish, torch.tensor([2]), 0.1, pad_id=None)


@pytest.mark.parametrize(
    "logits,target,kwargs,message",
    [
        (torch.randn(3, 5), torch.tensor([1.0, 2.0, 3.0]), {}, "integer token ids"),
        (torch.randint(0, 5, (3, 5)), torch.tensor([1, 2, 3]), {}, "floating-point"),
        (torch.randn(3, 5), torch.tensor([1, 2]), {}, "disagree"),
        (torch.randn(3, 5), torch.tensor([1, 2, 5]), {}, "0..4"),
        (torch.randn(3, 5), torch.tensor([1, 2, 3]), {"epsilon": 1.0}, "epsilon"),
        (torch.randn(3, 5), torch.tensor([1, 2, 3]), {"reduction": "avg"}, "reduction"),
    ],
)
def test_bad_inputs(logits, target, kwargs, message):
    with pytest.raises(ValueError, match=message):
        label_smoothed_cross_entropy(logits, target, **kwargs)

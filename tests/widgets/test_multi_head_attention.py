"""Lesson 4's head explorer: each designed head shows its relation, and switching heads redraws."""

import numpy as np
import pytest
import torch

from transformer_course.widgets.multi_head_attention import (
    DEFAULT_TOKENS,
    HEADS,
    HeadExplorer,
    designed_projections,
    embed_sentence,
)


def _torch_weights(explorer: HeadExplorer, head: str) -> np.ndarray:
    """PyTorch's scaled_dot_product_attention weights for the same designed projections."""
    w_q, w_k = designed_projections(len(explorer.tokens), head)
    x = torch.from_numpy(explorer.embeddings)
    q, k = x @ torch.from_numpy(w_q), x @ torch.from_numpy(w_k)
    return torch.softmax(q @ k.T / np.sqrt(w_q.shape[1]), dim=-1).numpy()


@pytest.mark.parametrize("head", HEADS)
def test_weights_are_attention_weights_matching_torch(head):
    explorer = HeadExplorer()
    weights = explorer.weights(head)
    assert weights.shape == (len(DEFAULT_TOKENS), len(DEFAULT_TOKENS))
    assert np.allclose(weights.sum(axis=-1), 1.0)
    assert np.allclose(weights, _torch_weights(explorer, head))


def test_previous_token_head_looks_one_step_back():
    weights = HeadExplorer().weights("previous token")
    assert weights[0].argmax() == 0
    for i in range(1, len(DEFAULT_TOKENS)):
        assert weights[i].argmax() == i - 1
        assert weights[i, i - 1] > 0.9


def test_subject_verb_head_links_the_two_and_leaves_the_rest_uniform():
    explorer = HeadExplorer(subject=2, verb=4)
    weights = explorer.weights("subject → verb")
    assert weights[4, 2] > 0.9 and weights[2, 4] > 0.9
    others = [i for i in range(len(DEFAULT_TOKENS)) if i not in (2, 4)]
    assert np.allclose(weights[others], 1 / len(DEFAULT_TOKENS))


def test_diffuse_head_is_close_to_uniform():
    weights = HeadExplorer().weights("diffuse")
    assert weights.max() - weights.min() < 0.05


def test_switching_heads_changes_what_is_shown():
    explorer = HeadExplorer()
    shown = {explorer.head.value: (explorer.readout.value, explorer.plot.value)}
    for head in HEADS[1:]:
        explorer.head.value = head
        shown[head] = (explorer.readout.value, explorer.plot.value)
        assert np.allclose(explorer.weights(), explorer.weights(head))
    assert len({readout for readout, _ in shown.values()}) == len(HEADS)
    assert len({plot for _, plot in shown.values()}) == len(HEADS)
    assert "<b>chased</b>" in shown["subject → verb"][0] and "<b>dog</b>" in shown["subject → verb"][0]
    assert f"{explorer.weights('subject → verb')[4, 2]:.2f}" in shown["subject → verb"][0]


def test_a_custom_sentence_finds_its_own_subject_and_verb():
    explorer = HeadExplorer(tokens=["birds", "sing", "loudly"], subject=0, verb=1)
    weights = explorer.weights("subject → verb")
    assert weights[1, 0] > 0.9 and weights[0, 1] > 0.9
    assert embed_sentence(3, 0, 1).shape == (3, 5)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"tokens": ["a", "b"]}, "at least 3 tokens"),
        ({"subject": 9}, "subject=9"),
        ({"verb": -1}, "verb=-1"),
        ({"subject": 3, "verb": 3}, "different tokens"),
        ({"head": "syntax"}, "unknown head"),
    ],
)
def test_bad_input_gets_a_clear_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        HeadExplorer(**kwargs)

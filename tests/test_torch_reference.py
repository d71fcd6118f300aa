"""The one map between the course's weights and torch.nn's, checked on outputs."""

import pytest
import torch
from torch import nn

from transformer_course.translation.model import Transformer, TransformerConfig
from transformer_course.translation.torch_reference import (
    INITIALIZATIONS,
    TorchReferenceTransformer,
    copy_from_torch,
    copy_to_torch,
    parameter_pairs,
    share_initial_weights,
)


def build_pair(norm_first: bool) -> tuple[Transformer, TorchReferenceTransformer]:
    config = TransformerConfig(
        src_vocab_size=30, tgt_vocab_size=30, d_model=16, n_heads=4, d_ff=32,
        n_encoder_layers=2, n_decoder_layers=2, dropout=0.0, norm_first=norm_first,
    )  # fmt: skip
    torch.manual_seed(0)
    ours = Transformer(config).eval()
    torch.manual_seed(0)
    theirs = TorchReferenceTransformer(config).eval()
    return ours, theirs


def logits(model: torch.nn.Module) -> torch.Tensor:
    src = torch.tensor([[5, 6, 7, 8, 2], [9, 10, 2, 0, 0]])
    tgt_in = torch.tensor([[1, 11, 12, 13], [1, 14, 0, 0]])
    with torch.no_grad():
        return model(src, tgt_in)


REAL = torch.tensor([[True] * 4, [True, True, False, False]])


@pytest.mark.parametrize("init", INITIALIZATIONS)
@pytest.mark.parametrize("norm_first", [False, True])
def test_shared_initial_weights_give_the_same_outputs(init, norm_first):
    ours, theirs = build_pair(norm_first)
    assert (logits(ours) - logits(theirs))[REAL].abs().max() > 1e-2, "different weights before sharing"
    before = {name: p.clone() for name, p in (ours if init != "course" else theirs).named_parameters()}
    share_initial_weights(ours, theirs, init)
    assert (logits(ours) - logits(theirs))[REAL].abs().max() < 1e-5
    changed = (ours if init != "course" else theirs).named_parameters()
    assert any(not torch.equal(before[name], p) for name, p in changed), "the copy went the wrong way"


def test_every_stack_tensor_is_paired_once():
    ours, theirs = build_pair(norm_first=True)
    pairs = parameter_pairs(ours, theirs)
    stack_params = sum(p.numel() for part in (ours.encoder, ours.decoder) for n, p in part.named_parameters()
                       if not n.startswith("embed."))  # fmt: skip
    assert sum(mine.numel() for mine, _ in pairs) == stack_params
    assert all(mine.shape == theirs_.shape for mine, theirs_ in pairs)
    assert len({id(mine) for mine, _ in pairs}) == len(pairs)


def test_layers_and_attention_map_one_to_one():
    ours, theirs = build_pair(norm_first=False)
    copy_to_torch(ours.decoder.layers[1], theirs.decoder.stack.layers[1])
    their_layer = theirs.decoder.stack.layers[1]
    assert torch.equal(
        their_layer.multihead_attn.in_proj_weight[16:32], ours.decoder.layers[1].cross_attn.k_proj.weight
    )
    attention = nn.MultiheadAttention(16, 4, batch_first=True)
    copy_from_torch(ours.encoder.layers[0].self_attn, attention)
    assert torch.equal(ours.encoder.layers[0].self_attn.v_proj.bias, attention.in_proj_bias[32:])


def test_mismatched_modules_are_refused():
    ours, theirs = build_pair(norm_first=False)
    with pytest.raises(TypeError, match="no weight map"):
        parameter_pairs(ours.encoder.layers[0], theirs.decoder.stack.layers[0])
    with pytest.raises(TypeError, match="no weight map"):
        parameter_pairs(theirs, ours)
    with pytest.raises(ValueError, match="init must be one of"):
        share_initial_weights(ours, theirs, "kaiming")


def test_xavier_is_what_nn_transformer_does():
    """Xavier-uniform on every parameter with more than one dimension; biases as the layers drew them."""
    ours, theirs = build_pair(norm_first=False)
    share_initial_weights(ours, theirs, "xavier")
    layer = ours.encoder.layers[0]
    assert torch.count_nonzero(layer.self_attn.q_proj.bias) == 0, "nn.MultiheadAttention zeroes its biases"
    assert torch.count_nonzero(layer.ff.linear1.bias) > 0, "the FFN biases keep nn.Linear's default"
    ff = layer.ff.linear2.weight  # 32 -> 16: Xavier's bound is sqrt(6 / 48)
    assert ff.abs().max() > 1 / 32**0.5, "larger than the default bound 1/sqrt(fan_in)"
    assert ff.abs().max() <= (6 / 48) ** 0.5
    assert torch.equal(theirs.encoder.stack.layers[0].linear2.weight, ff)

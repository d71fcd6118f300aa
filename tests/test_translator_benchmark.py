"""The benchmark's claim that both models start from the same weights, checked on outputs."""

import importlib.util
from pathlib import Path

import pytest
import torch

from transformer_course.model import Transformer, TransformerConfig

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "translator_throughput.py"
spec = importlib.util.spec_from_file_location("translator_throughput", SCRIPT)
benchmark = importlib.util.module_from_spec(spec)
spec.loader.exec_module(benchmark)


def build_pair(norm_first: bool) -> tuple[Transformer, torch.nn.Module]:
    config = TransformerConfig(
        src_vocab_size=30, tgt_vocab_size=30, d_model=16, n_heads=4, d_ff=32,
        n_encoder_layers=2, n_decoder_layers=2, dropout=0.0, norm_first=norm_first,
    )  # fmt: skip
    torch.manual_seed(0)
    ours = Transformer(config).eval()
    torch.manual_seed(0)
    theirs = benchmark.TorchReferenceTransformer(config).eval()
    return ours, theirs


def logits(model: torch.nn.Module) -> torch.Tensor:
    src = torch.tensor([[5, 6, 7, 8, 2], [9, 10, 2, 0, 0]])
    tgt_in = torch.tensor([[1, 11, 12, 13], [1, 14, 0, 0]])
    with torch.no_grad():
        return model(src, tgt_in)


@pytest.mark.parametrize("init", benchmark.INITIALIZATIONS)
@pytest.mark.parametrize("norm_first", [False, True])
def test_shared_initial_weights_give_the_same_outputs(init, norm_first):
    ours, theirs = build_pair(norm_first)
    real = torch.tensor([[True] * 4, [True, True, False, False]])
    assert (logits(ours) - logits(theirs))[real].abs().max() > 1e-2, "different weights before sharing"
    before = {name: p.clone() for name, p in (ours if init == "pytorch" else theirs).named_parameters()}
    benchmark.share_initial_weights(ours, theirs, init)
    assert (logits(ours) - logits(theirs))[real].abs().max() < 1e-5
    changed = (ours if init == "pytorch" else theirs).named_parameters()
    assert any(not torch.equal(before[name], p) for name, p in changed), "the copy went the wrong way"


def test_every_stack_tensor_is_paired_once():
    ours, theirs = build_pair(norm_first=True)
    pairs = benchmark.matching_parameters(ours, theirs)
    stack_params = sum(p.numel() for part in (ours.encoder, ours.decoder) for n, p in part.named_parameters()
                       if not n.startswith("embed."))  # fmt: skip
    assert sum(mine.numel() for mine, _ in pairs) == stack_params
    assert all(mine.shape == theirs_.shape for mine, theirs_ in pairs)


def test_unknown_initialization_is_refused():
    ours, theirs = build_pair(norm_first=False)
    with pytest.raises(ValueError, match="init must be one of"):
        benchmark.share_initial_weights(ours, theirs, "kaiming")


def test_xavier_initialization_resets_both_stacks():
    ours, theirs = build_pair(norm_first=False)
    benchmark.share_initial_weights(ours, theirs, "xavier")
    linears = [m for layer in ours.encoder.layers for m in layer.modules() if isinstance(m, torch.nn.Linear)]
    assert all(torch.count_nonzero(m.bias) == 0 for m in linears)
    ff = ours.encoder.layers[0].ff.linear2.weight  # 32 -> 16: Xavier's bound is sqrt(6 / 48)
    assert ff.abs().max() > 1 / 32**0.5, "larger than the default bound 1/sqrt(fan_in)"
    assert torch.equal(theirs.encoder.stack.layers[0].linear2.weight, ff)

"""The course's Transformer against ``torch.nn.Transformer`` of the same configuration.

Both models share everything but the encoder and decoder stacks: the same embeddings (scaled,
with sinusoidal positions), output projection, optimizer, schedule, loss, data and batches. The
reference swaps in ``nn.TransformerEncoder`` / ``nn.TransformerDecoder`` built with the same
sizes, dropout and norm placement, and both start from the same weights (``--init``: the course
model's initialization or torch.nn's defaults), so a difference in BLEU comes from the
implementation and the order of random dropout masks, not from a different starting point.

The two models train in alternation, a few steps each, and each is timed only on its own steps,
so a machine whose load changes during the run (a shared CPU) affects both alike. With one CPU
thread, steps are timed in CPU time of the process (``time.process_time``), which does not count
the time other jobs hold the core; otherwise, and on a GPU, in wall time. Printed:
training tokens per second (source + target tokens, padding excluded) and, after the same
training-time budget for each, greedy BLEU on the test split.

    python benchmarks/translator_throughput.py --budget 360 --threads 1 --init course
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch
from torch import Tensor, nn

from transformer_course.evaluation import evaluate
from transformer_course.model import Transformer, TransformerConfig
from transformer_course.train import hardware_description
from transformer_course.training import Trainer, choose_device, prepare_data, preset


class _TorchEncoder(nn.Module):
    def __init__(self, embed: nn.Module, config: TransformerConfig) -> None:
        super().__init__()
        self.embed = embed
        layer = nn.TransformerEncoderLayer(
            config.d_model, config.n_heads, config.d_ff, config.dropout,
            batch_first=True, norm_first=config.norm_first,
        )  # fmt: skip
        final = nn.LayerNorm(config.d_model) if config.norm_first else None
        self.stack = nn.TransformerEncoder(
            layer, config.n_encoder_layers, norm=final, enable_nested_tensor=False
        )

    def forward(self, src: Tensor, key_padding_mask: Tensor | None = None) -> Tensor:
        return self.stack(self.embed(src), src_key_padding_mask=key_padding_mask)


class _TorchDecoder(nn.Module):
    def __init__(self, embed: nn.Module, config: TransformerConfig) -> None:
        super().__init__()
        self.embed = embed
        layer = nn.TransformerDecoderLayer(
            config.d_model, config.n_heads, config.d_ff, config.dropout,
            batch_first=True, norm_first=config.norm_first,
        )  # fmt: skip
        final = nn.LayerNorm(config.d_model) if config.norm_first else None
        self.stack = nn.TransformerDecoder(layer, config.n_decoder_layers, norm=final)

    def forward(
        self,
        tgt_in: Tensor,
        memory: Tensor,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
    ) -> Tensor:
        length = tgt_in.shape[1]
        # torch.nn's boolean masks mark what may NOT be attended to.
        future = torch.ones(length, length, dtype=torch.bool, device=tgt_in.device).triu(1)
        return self.stack(
            self.embed(tgt_in), memory, tgt_mask=future, tgt_is_causal=True,
            tgt_key_padding_mask=tgt_key_padding_mask,
            memory_key_padding_mask=memory_key_padding_mask,
        )  # fmt: skip


class TorchReferenceTransformer(Transformer):
    """The course model with its encoder and decoder stacks replaced by ``torch.nn``'s own.

    Freshly built, the stacks carry PyTorch's per-layer default initialization;
    :func:`share_initial_weights` gives both models the same starting point.
    """

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__(config)
        self.encoder = _TorchEncoder(self.encoder.embed, config)
        self.decoder = _TorchDecoder(self.decoder.embed, config)


def _module_pairs(ours: nn.Module, theirs: nn.Module) -> list[tuple[Tensor, Tensor]]:
    return [(p.data, q.data) for p, q in zip(ours.parameters(), theirs.parameters(), strict=True)]


def _attention_pairs(ours: nn.Module, theirs: nn.MultiheadAttention) -> list[tuple[Tensor, Tensor]]:
    """Our separate W^Q, W^K, W^V against the row blocks of torch's packed in-projection."""
    pairs = []
    blocks = zip(theirs.in_proj_weight.data.chunk(3), theirs.in_proj_bias.data.chunk(3), strict=True)
    for projection, (weight, bias) in zip((ours.q_proj, ours.k_proj, ours.v_proj), blocks, strict=True):
        pairs += [(projection.weight.data, weight), (projection.bias.data, bias)]
    return pairs + _module_pairs(ours.out_proj, theirs.out_proj)


def matching_parameters(ours: Transformer, theirs: TorchReferenceTransformer) -> list[tuple[Tensor, Tensor]]:
    """Every tensor of the course model's stacks paired with the one torch.nn uses in its place."""
    pairs = []
    stacks = ((ours.encoder, theirs.encoder.stack), (ours.decoder, theirs.decoder.stack))
    for our_stack, their_stack in stacks:
        for our_layer, their_layer in zip(our_stack.layers, their_stack.layers, strict=True):
            pairs += _attention_pairs(our_layer.self_attn, their_layer.self_attn)
            if hasattr(our_layer, "cross_attn"):
                pairs += _attention_pairs(our_layer.cross_attn, their_layer.multihead_attn)
            pairs += _module_pairs(our_layer.ff.linear1, their_layer.linear1)
            pairs += _module_pairs(our_layer.ff.linear2, their_layer.linear2)
            for name in ("norm1", "norm2", "norm3"):
                if hasattr(our_layer, name):
                    pairs += _module_pairs(getattr(our_layer, name), getattr(their_layer, name))
        if their_stack.norm is not None:
            pairs += _module_pairs(our_stack.final_norm, their_stack.norm)
    return pairs


INITIALIZATIONS = ("course", "pytorch", "xavier")


def share_initial_weights(ours: Transformer, theirs: TorchReferenceTransformer, init: str) -> None:
    """Start both models from the same weights, so only the implementation differs.

    ``course`` copies the course model's initialization (every ``nn.Linear`` with PyTorch's
    default, uniform in +-1/sqrt(fan_in)) into torch.nn's stacks. ``pytorch`` copies torch.nn's
    per-layer defaults into the course model: the same for the feed-forward layers and the
    attention output, but a Xavier-uniform packed in-projection and zero attention biases.
    ``xavier`` gives both Xavier-uniform for every matrix of the stacks and zero biases, what
    ``torch.nn.Transformer``'s own ``_reset_parameters`` and many tutorials do. The embeddings and
    the output projection are already the same: both models draw them from the same seed.
    """
    if init not in INITIALIZATIONS:
        raise ValueError(f"init must be one of {INITIALIZATIONS}, got {init!r}")
    with torch.no_grad():
        if init == "xavier":
            for layer in [*ours.encoder.layers, *ours.decoder.layers]:
                for module in layer.modules():
                    if isinstance(module, nn.Linear):
                        nn.init.xavier_uniform_(module.weight)
                        nn.init.zeros_(module.bias)
        for our_tensor, their_tensor in matching_parameters(ours, theirs):
            if init == "pytorch":
                our_tensor.copy_(their_tensor)
            else:
                their_tensor.copy_(our_tensor)


def _interleaved_training(
    trainers: dict[str, Trainer], budget_s: float, chunk: int, clock_fn=time.perf_counter
) -> dict[str, dict[str, float]]:
    """Train all trainers ``chunk`` steps in turn until each has used ``budget_s`` seconds."""
    clock = dict.fromkeys(trainers, 0.0)
    tokens = dict.fromkeys(trainers, 0)
    steps = dict.fromkeys(trainers, 0)
    while any(clock[name] < budget_s for name in trainers):
        for name, trainer in trainers.items():
            if clock[name] >= budget_s:
                continue
            for _ in range(chunk):
                batch = trainer.stream.batch_at(trainer.state.step)
                start = clock_fn()
                trainer.train_step(batch)
                if trainer.device.type == "cuda":
                    torch.cuda.synchronize(trainer.device)
                clock[name] += clock_fn() - start
                trainer.state.step += 1
                tokens[name] += batch.n_tokens
                steps[name] += 1
    return {
        name: {"seconds": clock[name], "steps": steps[name], "tokens_per_s": tokens[name] / clock[name]}
        for name in trainers
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=360.0, help="training seconds per model")
    parser.add_argument("--chunk", type=int, default=10, help="steps per turn")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--device", default=None)
    parser.add_argument("--eval-sentences", type=int, default=500)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument(
        "--init", choices=INITIALIZATIONS, default="course",
        help="the initial weights both models share (see share_initial_weights)",
    )  # fmt: skip
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = parser.parse_args()
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    overrides = {}
    for pair in args.set:
        name, _, raw = pair.partition("=")
        overrides[name] = type(getattr(preset("quick"), name))(raw)
    settings = preset("quick", time_budget_s=None, **overrides)
    device = choose_device(args.device)
    data = prepare_data(settings)
    trainers = {
        "course Transformer": Trainer(settings, data.tokenizer, data.train, device),
        "torch.nn.Transformer": Trainer(
            settings,
            data.tokenizer,
            data.train,
            device,
            model_factory=TorchReferenceTransformer,
        ),  # fmt: skip
    }
    share_initial_weights(
        trainers["course Transformer"].model, trainers["torch.nn.Transformer"].model, args.init
    )
    cpu_clock = device.type == "cpu" and torch.get_num_threads() == 1
    clock_name = "CPU time (1 thread)" if cpu_clock else "wall time"
    timing = _interleaved_training(
        trainers, args.budget, args.chunk, time.process_time if cpu_clock else time.perf_counter
    )
    test = data.corpus.test[: args.eval_sentences]
    rows = {}
    for name, trainer in trainers.items():
        scores, _ = evaluate(trainer.model, data.tokenizer, test)
        rows[name] = {**timing[name], "parameters": trainer.n_parameters, "bleu": scores.bleu,
                      "chrf": scores.chrf, "bleu_signature": scores.bleu_signature}  # fmt: skip
    reference = rows["torch.nn.Transformer"]["tokens_per_s"]
    print(f"hardware: {hardware_description(trainers['course Transformer'].device)}; "
          f"torch {torch.__version__}; budget {args.budget:.0f} s of training per model, "
          f"timed in {clock_name}; both start from the {args.init} initialization")  # fmt: skip
    print(f"{'model':22s} {'params':>9s} {'steps':>6s} {'tokens/s':>9s} {'speed':>6s} "
          f"{'BLEU':>6s} {'chrF':>6s}")  # fmt: skip
    for name, row in rows.items():
        print(
            f"{name:22s} {row['parameters']:>9,} {row['steps']:>6d} {row['tokens_per_s']:>9.0f} "
            f"{row['tokens_per_s'] / reference:>5.2f}x {row['bleu']:>6.1f} {row['chrf']:>6.1f}"
        )
    print(f"BLEU signature: {rows['course Transformer']['bleu_signature']}")
    if args.json is not None:
        summary = {"hardware": hardware_description(trainers["course Transformer"].device),
                   "torch": torch.__version__, "budget_s": args.budget, "clock": clock_name,
                   "init": args.init,
                   "command": " ".join(["python benchmarks/translator_throughput.py", *sys.argv[1:]]),
                   "models": rows}  # fmt: skip
        args.json.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

"""The course's Transformer against ``torch.nn``'s Transformer layers, and what each speed-up bought.

**The race** (default). Both models share everything but the encoder and decoder stacks: the
same embeddings, output projection, optimizer (fused Adam), schedule, loss, data and batches,
and the same starting weights (``--init``, see ``share_initial_weights``). The reference's
stacks are ``nn.TransformerEncoder`` / ``nn.TransformerDecoder`` of the same configuration
(``transformer_course.translation.torch_reference``). The two train in alternation, ``--chunk`` steps each,
each timed only on its own steps, until each has used ``--budget`` seconds; then both translate
the test split greedily. With one CPU thread, steps are timed in CPU time of the process
(``time.process_time``), which does not count time that other jobs hold the core; otherwise, and
on a GPU (after ``synchronize``), in wall time. Printed: training tokens per second (source +
target tokens, padding excluded), the course/torch.nn ratio, and BLEU and chrF after the same
training time.

**The breakdown** (``--breakdown``). Speed only, on the same batches: the course model as it was
before each change, then with the changes one by one, interleaved with the torch.nn reference.

    python benchmarks/translator_throughput.py --budget 360 --threads 1 --init course
    python benchmarks/translator_throughput.py --breakdown --budget 90 --threads 1

Measured on the project's 2-core x86_64 CPU (no GPU), torch 2.13.0, one thread, while other jobs
shared the machine (CPU time, interleaved), ``--breakdown --with-compile --budget 90`` (rows of
90 s move by a few percent from run to run):

    | model | steps | tokens/s | vs torch.nn, plain Adam | vs torch.nn, fused Adam |
    | --- | ---: | ---: | ---: | ---: |
    | torch.nn layers, plain Adam | 190 | 7,699 | 1.00x | 1.00x |
    | course model before | 190 | 7,594 | 0.99x | 0.98x |
    | + paper's dropout placement | 220 | 8,763 | 1.14x | 1.13x |
    | + one product for Q, K, V | 220 | 8,886 | 1.15x | 1.15x |
    | + causal fast path | 220 | 8,814 | 1.14x | 1.14x |
    | + masks from torch.rand | 220 | 8,997 | 1.17x | 1.16x |
    | + fused Adam (course model) | 240 | 9,571 | 1.24x | 1.24x |
    | torch.nn layers, fused Adam | 190 | 7,737 | 1.00x | 1.00x |
    | course model, unbucketed | 260 | 6,110 | 0.79x | 0.79x |
    | + torch.compile (after warm-up) | 160 | 6,387 | 0.83x | 0.83x |

    Padding: 6.9% of the positions of the first 200 batches by length, 42.3% of random batches.

On CUDA the script runs in wall time with ``torch.cuda.synchronize`` and bfloat16 autocast (on
GPUs that have it). The race, once, on one NVIDIA H200 (torch 2.11.0+cu130), ``--budget 30
--eval-sentences 500``: course model 168,887 tokens/s, torch.nn layers 120,335, 1.40x; greedy test
BLEU 96.8 against 96.6 after the same time (``transformer_course/checkpoints/throughput_gpu_course.json``).
The breakdown has not been run on a GPU.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import types
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from transformer_course.devices import choose_device, hardware_description, synchronize
from transformer_course.layers import Dropout, MultiHeadAttention
from transformer_course.translation.batching import Batch, collate
from transformer_course.translation.evaluation import evaluate
from transformer_course.translation.model import Transformer, TransformerConfig
from transformer_course.translation.schedule import PAPER_ADAM_BETAS, PAPER_ADAM_EPS, transformer_scheduler
from transformer_course.translation.settings import TrainSettings, preset
from transformer_course.translation.torch_reference import (
    INITIALIZATIONS,
    TorchReferenceTransformer,
    copy_to_torch,
    share_initial_weights,
)
from transformer_course.translation.training import PreparedData, Trainer, prepare_data

Clock = Callable[[], float]


def interleaved_training(
    trainers: dict[str, Trainer], budget_s: float, chunk: int, clock: Clock
) -> dict[str, dict[str, Any]]:
    """Train all trainers ``chunk`` steps in turn until each has used ``budget_s`` seconds.

    When the first trainer runs out of time, the others have trained the same number of steps
    (they took turns), so their weights at that moment are kept under ``"equal_steps_weights"``:
    a comparison at an equal number of steps, besides the one at an equal time.
    """
    used = dict.fromkeys(trainers, 0.0)
    tokens = dict.fromkeys(trainers, 0)
    steps = dict.fromkeys(trainers, 0)
    snapshots: dict[str, dict[str, Any]] = {}
    while any(used[name] < budget_s for name in trainers):
        for name, trainer in trainers.items():
            if used[name] >= budget_s:
                continue
            for _ in range(chunk):
                batch = trainer.stream.batch_at(trainer.state.step)
                start = clock()
                trainer.train_step(batch)
                synchronize(trainer.device)
                used[name] += clock() - start
                trainer.state.step += 1
                tokens[name] += batch.n_tokens
                steps[name] += 1
        if not snapshots and any(used[name] >= budget_s for name in trainers):
            for name, trainer in trainers.items():
                weights = {k: v.detach().clone() for k, v in trainer.model.state_dict().items()}
                snapshots[name] = {"steps": steps[name], "weights": weights}
    return {
        name: {
            "seconds": used[name],
            "steps": steps[name],
            "tokens_per_s": tokens[name] / used[name],
            "equal_steps_weights": snapshots[name],
        }  # fmt: skip
        for name in trainers
    }


# --------------------------------------------------------------------------------------------
# The course model as it was before each change (for the breakdown only)
# --------------------------------------------------------------------------------------------


def _three_products(self: MultiHeadAttention, query: Tensor, key: Tensor, value: Tensor):
    """Before: W^Q, W^K and W^V applied one after the other, three matrix products."""
    return tuple(
        self._split_heads(p(x)) for p, x in ((self.q_proj, query), (self.k_proj, key), (self.v_proj, value))
    )


def _separate_projections(model: Transformer) -> Transformer:
    for module in model.modules():
        if isinstance(module, MultiHeadAttention):
            module.project = types.MethodType(_three_products, module)
    return model


class _AlwaysMaskedDecoder(Transformer):
    """Before: the decoder always received the target's padding mask, so no causal fast path."""

    def decoder_padding_mask(self, tgt_in: Tensor) -> Tensor:
        return self.padding_mask(tgt_in)


def _bernoulli_dropout(model: torch.nn.Module) -> torch.nn.Module:
    """Before: every course dropout drew its mask with nn.Dropout's Bernoulli sampler."""

    def forward(self: Dropout, x: Tensor) -> Tensor:
        return F.dropout(x, self.p, self.training)

    for module in model.modules():
        if isinstance(module, Dropout):
            module.forward = types.MethodType(forward, module)
    return model


def _torch_dropout(config: TransformerConfig) -> TransformerConfig:
    """Before: dropout on the attention weights and inside the FFN too, as torch.nn's layers do."""
    return replace(config, attention_dropout=config.dropout, ffn_dropout=config.dropout)


def _plain_adam(trainer: Trainer) -> Trainer:
    """Before: Adam's default implementation, about ten small operations per parameter tensor."""
    trainer.optimizer = torch.optim.Adam(
        trainer.model.parameters(), lr=1.0, betas=PAPER_ADAM_BETAS, eps=PAPER_ADAM_EPS, foreach=False
    )
    trainer.scheduler = transformer_scheduler(
        trainer.optimizer, trainer.settings.model.d_model, trainer.settings.warmup_steps
    )
    return trainer


def _unbucketed(trainer: Trainer, seed: int) -> Trainer:
    """Batches of random pairs under the same token budget: no grouping by length."""
    data, budget = trainer.stream.data, trainer.stream.max_tokens
    order = list(range(len(data)))
    random.Random(seed).shuffle(order)
    batches, current, longest = [], [], 0
    for index in order:
        length = max(len(data[index][0]), len(data[index][1]))
        if current and max(longest, length) * (len(current) + 1) > budget:
            batches.append(current)
            current, longest = [], 0
        current.append(index)
        longest = max(longest, length)
    batches.append(current)

    def batch_at(step: int) -> Batch:
        return collate([data[i] for i in batches[step % len(batches)]])

    trainer.stream.batch_at = batch_at
    return trainer


def _breakdown_trainers(
    settings: TrainSettings, data: PreparedData, device: torch.device
) -> dict[str, Trainer]:
    def trainer(factory: Callable[[TransformerConfig], torch.nn.Module]) -> Trainer:
        return Trainer(settings, data.tokenizer, data.train, device, model_factory=factory)

    def course(three_products=False, masked=False, torch_placement=False, bernoulli=False):
        """The course model with the named changes undone."""

        def factory(config: TransformerConfig) -> Transformer:
            model = (_AlwaysMaskedDecoder if masked else Transformer)(
                _torch_dropout(config) if torch_placement else config
            )
            model = _separate_projections(model) if three_products else model
            return _bernoulli_dropout(model) if bernoulli else model

        return factory

    trainers = {
        "torch.nn layers, plain Adam": _plain_adam(
            trainer(lambda c: _bernoulli_dropout(TorchReferenceTransformer(c)))
        ),
        "course model before": _plain_adam(trainer(course(True, True, True, True))),
        "+ paper's dropout placement": _plain_adam(trainer(course(True, True, False, True))),
        "+ one product for Q, K, V": _plain_adam(trainer(course(False, True, False, True))),
        "+ causal fast path": _plain_adam(trainer(course(False, False, False, True))),
        "+ masks from torch.rand": _plain_adam(trainer(course())),
        "+ fused Adam (course model)": trainer(course()),
        "torch.nn layers, fused Adam": trainer(TorchReferenceTransformer),
        "course model, unbucketed": _unbucketed(trainer(course()), settings.seed),
    }
    first = trainers["course model before"].model
    for other in trainers.values():
        if isinstance(other.model, TorchReferenceTransformer):
            copy_to_torch(first, other.model)
        else:
            other.model.load_state_dict(first.state_dict())
    return trainers


def breakdown(settings: TrainSettings, data: PreparedData, device: torch.device, args, clock: Clock) -> dict:
    trainers = _breakdown_trainers(settings, data, device)
    if args.with_compile:
        compiled = Trainer(replace(settings, compile=True), data.tokenizer, data.train, device)
        compiled.model.load_state_dict(trainers["course model before"].model.state_dict())
        warm = time.perf_counter()
        for step in range(args.compile_warmup):
            compiled.train_step(compiled.stream.batch_at(step))
        compiled.state.step = args.compile_warmup
        warm = time.perf_counter() - warm
        print(f"torch.compile: {args.compile_warmup} warm-up steps took {warm:.0f} s of wall time")
        trainers["+ torch.compile (after warm-up)"] = compiled
    timing = interleaved_training(trainers, args.budget, args.chunk, clock)
    for row in timing.values():
        del row["equal_steps_weights"]  # speed only here
    old_reference = timing["torch.nn layers, plain Adam"]["tokens_per_s"]
    reference = timing["torch.nn layers, fused Adam"]["tokens_per_s"]
    print("| model | steps | tokens/s | vs torch.nn, plain Adam | vs torch.nn, fused Adam |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, row in timing.items():
        speed = row["tokens_per_s"]
        print(f"| {name} | {row['steps']} | {speed:,.0f} | {speed / old_reference:.2f}x | "
              f"{speed / reference:.2f}x |")  # fmt: skip
    padding = {}
    for name in ("+ fused Adam (course model)", "course model, unbucketed"):
        stream = trainers[name].stream
        batches = [stream.batch_at(step) for step in range(200)]
        padding[name] = 1 - sum(b.n_tokens for b in batches) / sum(b.n_padded for b in batches)
        print(f"{name}: {padding[name]:.1%} of the positions in the first 200 batches are padding")
    return {"models": timing, "padding_share": padding}


def race(settings: TrainSettings, data: PreparedData, device: torch.device, args, clock: Clock) -> dict:
    trainers = {
        "course Transformer": Trainer(settings, data.tokenizer, data.train, device),
        "torch.nn layers": Trainer(
            settings, data.tokenizer, data.train, device, model_factory=TorchReferenceTransformer
        ),
    }
    share_initial_weights(trainers["course Transformer"].model, trainers["torch.nn layers"].model, args.init)
    timing = interleaved_training(trainers, args.budget, args.chunk, clock)
    test = data.corpus.test[: args.eval_sentences]
    rows = {}
    for name, trainer in trainers.items():
        snapshot = timing[name].pop("equal_steps_weights")
        scores, _ = evaluate(trainer.model, data.tokenizer, test)
        trainer.model.load_state_dict(snapshot["weights"])
        same_steps, _ = evaluate(trainer.model, data.tokenizer, test)
        rows[name] = {**timing[name], "parameters": trainer.n_parameters, "bleu": scores.bleu,
                      "chrf": scores.chrf, "bleu_signature": scores.bleu_signature,
                      "equal_steps": snapshot["steps"], "equal_steps_bleu": same_steps.bleu}  # fmt: skip
    reference = rows["torch.nn layers"]["tokens_per_s"]
    print(f"{'model':20s} {'params':>9s} {'steps':>6s} {'tokens/s':>9s} {'speed':>6s} "
          f"{'BLEU':>6s} {'chrF':>6s} {'BLEU at equal steps':>20s}")  # fmt: skip
    for name, row in rows.items():
        print(
            f"{name:20s} {row['parameters']:>9,} {row['steps']:>6d} {row['tokens_per_s']:>9.0f} "
            f"{row['tokens_per_s'] / reference:>5.2f}x {row['bleu']:>6.1f} {row['chrf']:>6.1f} "
            f"{row['equal_steps_bleu']:>9.1f} ({row['equal_steps']} steps)"
        )
    course, torch_nn = rows["course Transformer"], rows["torch.nn layers"]
    ratio = course["tokens_per_s"] / reference
    print(f"course/torch.nn tokens/s: {ratio:.2f}x; BLEU difference {course['bleu'] - torch_nn['bleu']:+.1f} "
          f"after the same training time, {course['equal_steps_bleu'] - torch_nn['equal_steps_bleu']:+.1f} "
          "after the same number of steps")  # fmt: skip
    print(f"BLEU signature: {course['bleu_signature']}")
    return {"init": args.init, "ratio": ratio, "models": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=360.0, help="training seconds per model")
    parser.add_argument("--chunk", type=int, default=10, help="steps per turn")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--device", default=None)
    parser.add_argument("--eval-sentences", type=int, default=500)
    parser.add_argument(
        "--init", choices=INITIALIZATIONS, default="course",
        help="the initial weights both models share (see share_initial_weights)",
    )  # fmt: skip
    parser.add_argument("--breakdown", action="store_true", help="time each change, no BLEU")
    parser.add_argument("--with-compile", action="store_true", help="add torch.compile to the breakdown")
    parser.add_argument("--compile-warmup", type=int, default=20, help="untimed compiled steps")
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = parser.parse_args()
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    settings = preset("quick", time_budget_s=None)
    device = choose_device(args.device)
    data = prepare_data(settings)
    cpu_clock = device.type == "cpu" and torch.get_num_threads() == 1
    clock_name = "CPU time (1 thread)" if cpu_clock else "wall time"
    print(f"hardware: {hardware_description(device)}; torch {torch.__version__}; budget {args.budget:.0f} s "
          f"of training per model, timed in {clock_name}")  # fmt: skip
    clock = time.process_time if cpu_clock else time.perf_counter
    if args.breakdown:
        summary = breakdown(settings, data, device, args, clock)
    else:
        summary = race(settings, data, device, args, clock)
    if args.json is not None:
        summary |= {"hardware": hardware_description(device), "torch": torch.__version__,
                    "budget_s": args.budget, "clock": clock_name,
                    "command": " ".join(["python benchmarks/translator_throughput.py",
                                         *sys.argv[1:]])}  # fmt: skip
        args.json.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

"""Command line: ``python -m transformer_course.train --preset quick --out checkpoints/quick.pt``.

It generates the corpus, trains the BPE vocabulary and the model with a preset, evaluates BLEU
and chrF on the test and length splits, prints a report (hardware, parameters, wall time,
scores with their sacreBLEU signatures) and saves an inference checkpoint plus a JSON report next
to it. ``--resume`` continues a run saved with ``--save-optimizer``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from dataclasses import asdict
from pathlib import Path

import torch

from transformer_course.evaluation import evaluate
from transformer_course.training import (
    PRESETS,
    Trainer,
    TrainSettings,
    choose_device,
    prepare_data,
    preset,
)


def hardware_description(device: torch.device) -> str:
    """A one-line description of where training ran, for honest reporting."""
    if device.type == "cuda":
        return f"GPU {torch.cuda.get_device_name(device)}"
    if device.type == "mps":
        return "Apple GPU (MPS)"
    cores = os.cpu_count() or 0
    threads = torch.get_num_threads()
    return f"CPU {platform.processor() or platform.machine()}, {cores} cores, {threads} threads"


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", choices=sorted(PRESETS), default="quick")
    parser.add_argument("--out", type=Path, required=True, help="checkpoint file to write")
    parser.add_argument("--device", default=None, help="cuda, mps or cpu (default: best)")
    parser.add_argument("--max-steps", type=int, default=None)
    parser.add_argument("--time-budget", type=float, default=None, help="seconds of training")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument(
        "--threads", type=int, default=None,
        help="CPU threads for torch; 1 is faster on a CPU that other jobs share",
    )  # fmt: skip
    parser.add_argument("--resume", type=Path, default=None, help="checkpoint to continue")
    parser.add_argument("--save-optimizer", action="store_true", help="make --out resumable")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--beam", action="store_true", help="also score beam search (slower)")
    parser.add_argument(
        "--eval-sentences", type=int, default=None, help="score only the first N of each split"
    )
    parser.add_argument(
        "--set", action="append", default=[], metavar="NAME=VALUE",
        help="override a setting, e.g. --set n_heads=1 --set norm_first=true",
    )  # fmt: skip
    return parser.parse_args(argv)


def _overrides(pairs: list[str]) -> dict[str, object]:
    fields = TrainSettings.__dataclass_fields__
    values: dict[str, object] = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        if not sep or name not in fields:
            raise SystemExit(f"--set {pair!r}: expected NAME=VALUE with NAME in {sorted(fields)}")
        kind = type(getattr(PRESETS["quick"], name))
        if kind is bool:
            values[name] = raw.lower() in ("1", "true", "yes")
        elif name == "time_budget_s":
            values[name] = None if raw.lower() == "none" else float(raw)
        else:
            values[name] = kind(raw)
    return values


def main(argv: list[str] | None = None) -> dict[str, object]:
    args = _parse(argv)
    wall_start = time.perf_counter()
    overrides = _overrides(args.set)
    if args.seed is not None:
        overrides["seed"] = args.seed
    if args.max_steps is not None:
        overrides["max_steps"] = args.max_steps
    if args.time_budget is not None:
        overrides["time_budget_s"] = args.time_budget
    settings = preset(args.preset, **overrides)
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    device = choose_device(args.device)
    data = prepare_data(settings)
    if args.resume is not None:
        trainer = Trainer.resume(args.resume, data.train, device)
        settings = trainer.settings
    else:
        trainer = Trainer(settings, data.tokenizer, data.train, device)
    print(f"device: {hardware_description(trainer.device)}; parameters: {trainer.n_parameters:,}")
    trainer.train(progress=not args.no_progress)
    results: dict[str, object] = {
        "preset": args.preset,
        "settings": asdict(settings),
        "hardware": hardware_description(trainer.device),
        "torch": torch.__version__,
        "parameters": trainer.n_parameters,
        "steps": trainer.state.step,
        "train_seconds": round(trainer.state.elapsed_s, 1),
        "final_loss": trainer.state.log[-1].loss if trainer.state.log else None,
    }
    methods = ("greedy", "beam") if args.beam else ("greedy",)
    for split in ("test", "length"):
        for method in methods:
            pairs = data.corpus.split(split)[: args.eval_sentences]
            scores, _ = evaluate(trainer.model, data.tokenizer, pairs, method)
            results[f"{split}_{method}"] = asdict(scores)
            print(f"{split:6s} {method:6s} {scores.summary()}")
    trainer.save(args.out, with_optimizer=args.save_optimizer, half=not args.save_optimizer)
    results["wall_seconds"] = round(time.perf_counter() - wall_start, 1)
    results["command"] = "python -m transformer_course.train " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    results["log"] = [asdict(entry) for entry in trainer.state.log]
    report = args.out.with_suffix(".json")
    report.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"steps {trainer.state.step}, training {trainer.state.elapsed_s:.0f} s, "
          f"whole run {results['wall_seconds']} s; wrote {args.out} and {report}")  # fmt: skip
    return results


if __name__ == "__main__":
    main()

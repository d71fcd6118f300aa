"""Command line: ``python -m transformer_course.train_gpt --preset cpu --seed 0 --out-dir runs/gpt``.

Trains lesson 10's character-level GPT on the course's prose and writes ``gpt_<preset>.pt`` (an
inference checkpoint, float16 weights) and ``gpt_<preset>.json`` (the report: command, hardware,
seed, steps, wall and CPU time, the loss log and samples before and after training) into the
output folder. The ``cpu`` preset is the shipped checkpoint's; ``gpu`` is a larger model for a
GPU (Colab), the same code with the device chosen automatically.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path

import torch

from transformer_course.devices import hardware_description
from transformer_course.language_model.lm_data import load_course_corpus
from transformer_course.language_model.lm_training import PRESETS, LMTrainer, lm_preset, run_summary

SAMPLE_PROMPT = "Attention "
SAMPLE_LENGTH = 200
SAMPLE_TEMPERATURE = 0.8


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", choices=sorted(PRESETS), default="cpu")
    parser.add_argument("--out-dir", type=Path, required=True, help="folder for the checkpoint and report")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default=None, help="cuda, mps or cpu (default: the best there is)")
    parser.add_argument("--threads", type=int, default=None, help="CPU threads for torch")
    parser.add_argument("--max-steps", type=int, default=None)
    parser.add_argument("--time-budget", type=float, default=None, help="stop after this many seconds")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    return parser.parse_args(argv)


def sample_text(trainer: LMTrainer, seed: int) -> str:
    """A seeded sample of the model in its current state, from the fixed prompt (within its context)."""
    tokenizer = trainer.corpus.tokenizer
    generator = torch.Generator().manual_seed(seed)
    length = min(SAMPLE_LENGTH, trainer.model.config.max_len - len(SAMPLE_PROMPT))
    new = trainer.model.generate(
        tokenizer.encode(SAMPLE_PROMPT), length, temperature=SAMPLE_TEMPERATURE, generator=generator
    )
    return SAMPLE_PROMPT + tokenizer.decode(new)


def main(argv: list[str] | None = None) -> dict[str, object]:
    args = _parse(argv)
    wall_start = time.perf_counter()
    overrides: dict[str, object] = {"seed": args.seed}
    if args.max_steps is not None:
        overrides["max_steps"] = args.max_steps
    if args.time_budget is not None:
        overrides["time_budget_s"] = args.time_budget
    settings = lm_preset(args.preset, **overrides)
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    corpus = load_course_corpus()
    trainer = LMTrainer(settings, corpus, args.device)
    hardware = hardware_description(trainer.device)
    print(f"device: {hardware}; parameters: {trainer.model.n_parameters:,}; "
          f"text: {corpus.n_characters:,} characters")  # fmt: skip
    before = sample_text(trainer, args.seed)
    trainer.train(progress=not args.quiet)
    after = sample_text(trainer, args.seed)
    last = trainer.state.log[-1]
    report: dict[str, object] = {
        "command": "python -m transformer_course.train_gpt "
        + " ".join(argv if argv is not None else sys.argv[1:]),
        "preset": args.preset,
        "seed": args.seed,
        "settings": asdict(settings),
        "hardware": hardware,
        "threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "parameters": trainer.model.n_parameters,
        "text_sha256": corpus.sha256,
        "text_characters": corpus.n_characters,
        **run_summary(trainer.state),
        "sample": {
            "prompt": SAMPLE_PROMPT,
            "temperature": SAMPLE_TEMPERATURE,
            "before": before,
            "after": after,
        },
        "log": [asdict(entry) for entry in trainer.state.log],
    }
    checkpoint = trainer.save(args.out_dir / f"gpt_{args.preset}.pt")
    report["wall_s"] = round(time.perf_counter() - wall_start, 1)
    path = args.out_dir / f"gpt_{args.preset}.json"
    path.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{trainer.state.step} steps; training {trainer.state.elapsed_s:.0f} s wall, "
          f"{trainer.state.cpu_s:.0f} s CPU; valid loss {last.valid_loss:.3f}")  # fmt: skip
    print(f"wrote {checkpoint} and {path}")
    return report


if __name__ == "__main__":
    main()

"""Train short, test long: how each kind of position copes with texts longer than in training.

    python -m transformer_course.language_model.position_study --seeds 0 1 2 --threads 1 --jobs 2 \\
        --out transformer_course/checkpoints/gpt_positions.json

For every kind of position (rotary, the paper's sinusoids, a learned table, and none at all) and
every seed, it trains the ``study`` preset's small GPT on windows of ``block_size`` characters of
the course's prose, then measures the loss at every position of windows four times as long from
the validation text. Lesson 10 plots the JSON it writes (mean and range over the seeds): too slow
to run live (about a minute per model on a 2-core CPU). ``--jobs N`` trains N models at once, each
in its own process on ``--threads`` threads; every model is seeded by its own settings, so the
results do not depend on how many run at once.

A learned table has rows for all the evaluated positions, but only the first ``block_size`` of
them were ever trained; the others keep their random initial values. That is what a learned
table *is* past its training length.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, replace
from itertools import pairwise
from multiprocessing import get_context
from pathlib import Path

import torch

from transformer_course.devices import hardware_description
from transformer_course.language_model.gpt import POSITION_KINDS
from transformer_course.language_model.lm_data import CharCorpus, load_course_corpus
from transformer_course.language_model.lm_training import LMSettings, LMTrainer, lm_preset, loss_by_position

EVAL_FACTOR = 4


def run_one(settings: LMSettings, corpus, eval_length: int) -> dict[str, object]:
    """Train one model and measure its loss at every position up to ``eval_length``."""
    trainer = LMTrainer(settings, corpus, device="cpu")
    trainer.train()
    per_position = loss_by_position(trainer.model, corpus.valid, eval_length)
    return {
        "steps": trainer.state.step,
        "train_wall_s": round(trainer.state.elapsed_s, 1),
        "train_cpu_s": round(trainer.state.cpu_s, 1),
        "final_train_loss": round(trainer.state.log[-1].train_loss, 4),
        "per_position": [round(float(v), 4) for v in per_position],
    }


def _run_in_worker(settings: LMSettings, eval_length: int, threads: int | None) -> dict[str, object]:
    """``run_one`` in a worker process, which loads the shipped corpus itself."""
    if threads is not None:
        torch.set_num_threads(threads)
    return run_one(settings, load_course_corpus(), eval_length)


def _train_all(
    jobs: list[tuple[str, int]],
    base: LMSettings,
    corpus: CharCorpus,
    eval_length: int,
    args: argparse.Namespace,
) -> Iterator[dict]:
    """Each (kind, seed) job's run, in order: here, or ``args.jobs`` at a time in fresh processes
    ("spawn": a forked copy of a process that has used torch's thread pool can hang)."""
    settings = [replace(base, positions=kind, seed=seed) for kind, seed in jobs]
    if args.jobs == 1:
        yield from (run_one(one, corpus, eval_length) for one in settings)
        return
    with ProcessPoolExecutor(max_workers=args.jobs, mp_context=get_context("spawn")) as pool:
        futures = [pool.submit(_run_in_worker, one, eval_length, args.threads) for one in settings]
        yield from (future.result() for future in futures)


def summarize(results: dict, bucket: int = 16) -> dict[str, dict[str, list[float]]]:
    """kind -> {"position", "mean", "low", "high"}: losses averaged over ``bucket`` positions,
    then mean, minimum and maximum over the seeds. ``position`` is each bucket's centre."""
    length = results["eval_length"]
    if length % bucket:
        raise ValueError(f"bucket={bucket} must divide the evaluated length {length}")
    summary = {}
    for kind, runs in results["runs"].items():
        curves = torch.tensor([run["per_position"] for run in runs.values()], dtype=torch.float64)
        bucketed = curves.view(len(runs), length // bucket, bucket).mean(dim=-1)
        summary[kind] = {
            "position": [bucket * i + (bucket - 1) / 2 for i in range(length // bucket)],
            "mean": bucketed.mean(dim=0).tolist(),
            "low": bucketed.min(dim=0).values.tolist(),
            "high": bucketed.max(dim=0).values.tolist(),
        }
    return summary


def range_means(results: dict) -> dict[str, dict[str, list[float]]]:
    """kind -> {"0-63": [...], "64-127": [...], "128-255": [...]}: each seed's mean loss over the
    trained positions, the next ``train_length`` positions, and the rest (for a 64-character
    training length; the labels follow the study's lengths)."""
    cut, length = results["train_length"], results["eval_length"]
    edges = [0, cut, 2 * cut, length]
    table = {}
    for kind, runs in results["runs"].items():
        losses = [run["per_position"] for run in runs.values()]
        table[kind] = {
            f"{low}-{high - 1}": [sum(v[low:high]) / (high - low) for v in losses]
            for low, high in pairwise(edges)
        }
    return table


def main(argv: list[str] | None = None) -> dict[str, object]:
    parser = argparse.ArgumentParser(description="Length extrapolation of position encodings.")
    parser.add_argument("--out", type=Path, required=True, help="JSON file to write")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--kinds", nargs="+", choices=POSITION_KINDS, default=list(POSITION_KINDS))
    parser.add_argument("--preset", default="study", help="training preset (default: study)")
    parser.add_argument("--max-steps", type=int, default=None)
    parser.add_argument("--threads", type=int, default=None, help="CPU threads for torch, per model")
    parser.add_argument("--jobs", type=int, default=1, help="models trained at once, one process each")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1, got {args.jobs}")
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    overrides = {} if args.max_steps is None else {"max_steps": args.max_steps}
    base = lm_preset(args.preset, **overrides)
    eval_length = EVAL_FACTOR * base.block_size
    base = replace(base, max_len=max(base.max_len, eval_length))
    corpus = load_course_corpus()
    started = time.perf_counter()
    jobs = [(kind, seed) for kind in args.kinds for seed in args.seeds]
    runs: dict[str, dict[str, object]] = {kind: {} for kind in args.kinds}
    for (kind, seed), run in zip(jobs, _train_all(jobs, base, corpus, eval_length, args), strict=True):
        runs[kind][str(seed)] = run
        beyond = run["per_position"][base.block_size :]
        print(f"{kind:10s} seed {seed}: {run['steps']} steps in {run['train_wall_s']} s; loss past "
              f"the training length {sum(beyond) / len(beyond):.3f}", flush=True)  # fmt: skip
    results = {
        "command": "python -m transformer_course.language_model.position_study "
        + " ".join(argv if argv is not None else sys.argv[1:]),
        "hardware": hardware_description(torch.device("cpu")),
        "threads": torch.get_num_threads(),
        "jobs": args.jobs,
        "torch": torch.__version__,
        "settings": asdict(base),
        "text_sha256": corpus.sha256,
        "train_length": base.block_size,
        "eval_length": eval_length,
        "eval_windows": (len(corpus.valid) - 1) // eval_length,
        "seeds": args.seeds,
        "wall_s": round(time.perf_counter() - started, 1),
        "runs": runs,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out} in {results['wall_s']} s")
    return results


if __name__ == "__main__":
    main()

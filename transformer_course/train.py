"""Command line: ``python -m transformer_course.train --preset quick --out checkpoints/quick.pt``.

It trains lesson 9's translator with a preset (:mod:`transformer_course.translation.settings`) on the
generated corpus, or on a real one: ``--data FILE`` reads a tab-separated parallel corpus
(Tatoeba / ManyThings exports, Multi30k conversions), ``--download NAME`` fetches a public one
first (internet needed; see :mod:`transformer_course.translation.downloads`). Either way it trains the BPE
vocabulary and the model, evaluates BLEU and chrF on the test and length splits, prints a report
(hardware, parameters, wall time, scores with their sacreBLEU signatures) and saves an inference
checkpoint plus a JSON report next to it. ``--resume`` continues a run saved with
``--save-optimizer``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

from transformer_course.devices import hardware_description
from transformer_course.translation.downloads import CORPORA, DownloadError, download_corpus
from transformer_course.translation.evaluation import evaluate, output_profile
from transformer_course.translation.parallel_data import ParallelFormatError, load_tsv, real_corpus
from transformer_course.translation.settings import MODEL_FIELDS, PRESETS, RUN_FIELDS, TrainSettings, preset
from transformer_course.translation.training import Trainer, prepare_data


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", choices=sorted(PRESETS), default="quick")
    parser.add_argument("--out", type=Path, required=True, help="checkpoint file to write")
    data = parser.add_mutually_exclusive_group()
    data.add_argument("--data", type=Path, default=None, help="a source<TAB>target corpus file")
    data.add_argument("--download", choices=sorted(CORPORA), default=None,
                      help="fetch this public corpus into the cache first (needs internet)")  # fmt: skip
    parser.add_argument("--url", default=None, help="fetch --download from this address instead")
    parser.add_argument("--cache", type=Path, default=None, help="folder for downloaded corpora")
    parser.add_argument("--swap", action="store_true", help="translate the file's second column")
    parser.add_argument("--max-pairs", type=int, default=None, help="read only the first N pairs")
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
        help="override a setting, e.g. --set n_heads=1 --set norm_first=true --set compile=true",
    )  # fmt: skip
    return parser.parse_args(argv)


def parse_overrides(pairs: list[str], base: TrainSettings) -> dict[str, Any]:
    """``["n_heads=1", "norm_first=true"]`` as typed values for :func:`preset`."""
    values: dict[str, Any] = {}
    known = MODEL_FIELDS | RUN_FIELDS | {"vocab_size"}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        if not sep or name not in known:
            raise SystemExit(f"--set {pair!r}: expected NAME=VALUE with NAME in {sorted(known)}")
        current = getattr(base.model if name in MODEL_FIELDS else base, name)
        if isinstance(current, bool):
            if raw.lower() not in ("true", "false", "1", "0", "yes", "no"):
                raise SystemExit(f"--set {pair!r}: {name} is true or false")
            values[name] = raw.lower() in ("true", "1", "yes")
        elif name == "time_budget_s":
            values[name] = None if raw.lower() == "none" else float(raw)
        else:
            try:
                values[name] = type(current)(raw)
            except ValueError:
                raise SystemExit(f"--set {pair!r}: {name} must be a {type(current).__name__}") from None
    return values


def _real_corpus(args: argparse.Namespace, seed: int):
    """The corpus named by --data or --download, split like the generated one; None otherwise."""
    path = args.data
    if args.download is not None:
        try:
            path = download_corpus(args.download, args.cache, args.url)
        except DownloadError as error:
            raise SystemExit(str(error)) from None
    if path is None:
        return None, {"source": "generated"}
    try:
        pairs = load_tsv(path, max_pairs=args.max_pairs, swap=args.swap)
    except (OSError, ParallelFormatError) as error:
        raise SystemExit(str(error)) from None
    corpus = real_corpus(pairs, seed=seed)
    description = {"source": args.download or str(path), "swap": args.swap,
                   "pairs": {name: len(corpus.split(name)) for name in ("train", "valid", "test", "length")},
                   "longest_training_source_words": corpus.max_train_words}  # fmt: skip
    if args.download is not None:
        description |= {"licence": CORPORA[args.download].licence,
                        "attribution": CORPORA[args.download].attribution}  # fmt: skip
    return corpus, description


def main(argv: list[str] | None = None) -> dict[str, object]:
    args = _parse(argv)
    wall_start = time.perf_counter()
    overrides = parse_overrides(args.set, PRESETS[args.preset])
    flags = {"seed": args.seed, "max_steps": args.max_steps, "time_budget_s": args.time_budget}
    for name, value in flags.items():
        if value is not None:
            overrides[name] = value
    settings = preset(args.preset, **overrides)
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    corpus, data_description = _real_corpus(args, settings.seed)
    data = prepare_data(settings, corpus)
    if args.resume is not None:
        trainer = Trainer.resume(args.resume, data.train, args.device)
        settings = trainer.settings
    else:
        trainer = Trainer(settings, data.tokenizer, data.train, args.device)
    print(f"device: {hardware_description(trainer.device)}; parameters: {trainer.n_parameters:,}")
    cpu_start = time.process_time()
    trainer.train(progress=not args.no_progress)
    results: dict[str, object] = {
        "preset": args.preset,
        "data": data_description,
        "settings": trainer.settings.to_dict(),
        "hardware": hardware_description(trainer.device),
        "torch": torch.__version__,
        "parameters": trainer.n_parameters,
        "steps": trainer.state.step,
        "train_seconds": round(trainer.state.elapsed_s, 1),
        # CPU time of all threads: on a machine shared with other jobs, wall time overstates it.
        "train_cpu_seconds": round(time.process_time() - cpu_start, 3),
        "final_loss": trainer.state.log[-1].loss if trainer.state.log else None,
    }
    methods = ("greedy", "beam") if args.beam else ("greedy",)
    for split in ("test", "length"):
        pairs = data.corpus.split(split)[: args.eval_sentences]
        if not pairs:
            continue
        for method in methods:
            scores, hypotheses = evaluate(trainer.model, data.tokenizer, pairs, method)
            profile = output_profile(hypotheses, [pair[1] for pair in pairs])
            results[f"{split}_{method}"] = asdict(scores) | {"profile": asdict(profile)}
            print(f"{split:6s} {method:6s} {scores.summary()}\n{'':13s} {profile.summary()}")
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

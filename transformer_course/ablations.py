"""Ablations of lesson 9: what each piece of the Transformer is worth, over several seeds.

Every variant trains the quick preset's model with one change, for the same number of steps,
then translates the test and length splits greedily. All runs read the same generated corpus
(seed 0), so they are scored on the same sentences; ``--seeds`` changes what a seed changes in
training: the initial weights, the order of the batches and the dropout masks. A difference
between variants means something only when it is larger than the spread between seeds of one
variant, which is why each variant runs several times.

    python -m transformer_course.ablations --variants baseline heads_1 --seeds 0 1 2 --out my_ablations

Each run writes ``<out>/<variant>_seed<seed>.json``. The results that lesson 9 plots ship in
the package (``checkpoints/ablations``); this command never writes there unless told to with
``--update-shipped`` (for the course's maintainers).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from transformer_course.devices import hardware_description
from transformer_course.shipped import CHECKPOINTS_DIR
from transformer_course.translation.batching import encode_pairs
from transformer_course.translation.corpus import make_corpus
from transformer_course.translation.evaluation import evaluate, score
from transformer_course.translation.settings import preset
from transformer_course.translation.training import PreparedData, Trainer, prepare_data

VARIANTS: dict[str, dict[str, Any]] = {
    "baseline": {},
    "heads_1": {"n_heads": 1},
    "heads_8": {"n_heads": 8},
    "no_positions": {"positional_encoding": False},
    "learned_positions": {"learned_positions": True},
    "no_scaling": {"scale_attention": False},
    "pre_norm": {"norm_first": True},
}
CORPUS_SEED = 0
SHIPPED = CHECKPOINTS_DIR / "ablations"


def shared_data() -> PreparedData:
    """The quick preset's corpus (seed 0), BPE vocabulary and encoded pairs, for every variant."""
    settings = preset("quick")
    return prepare_data(settings, make_corpus(n_train=settings.n_train, seed=CORPUS_SEED))


def reaches_unseen_positions(data: PreparedData, pairs: list[tuple[str, str]], max_len: int) -> list[bool]:
    """For each pair, whether its source or target is longer in tokens than every training pair's.

    Positions count tokens, so only such pairs reach positions no training pair reached; the rest
    of the length split tests longer sentences at trained positions.
    """
    longest_trained = max(max(len(src), len(tgt)) for src, tgt in data.train)
    return [
        max(len(src), len(tgt)) > longest_trained for src, tgt in encode_pairs(pairs, data.tokenizer, max_len)
    ]


def run_variant(
    variant: str, seed: int, steps: int, n_eval: int, data: PreparedData | None = None
) -> dict[str, Any]:
    """Train one variant with one seed and score it; ``data`` reuses a prepared corpus."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; choose from {sorted(VARIANTS)}")
    settings = preset("quick", max_steps=steps, time_budget_s=None, seed=seed, **VARIANTS[variant])
    data = data or shared_data()
    trainer = Trainer(settings, data.tokenizer, data.train, device="cpu")
    start = time.perf_counter()
    trainer.train(progress=False)
    result: dict[str, Any] = {
        "variant": variant,
        "changes": VARIANTS[variant],
        "seed": seed,
        "corpus_seed": CORPUS_SEED,
        "steps": trainer.state.step,
        "parameters": trainer.n_parameters,
        "train_seconds": round(time.perf_counter() - start, 1),
        "final_loss": round(trainer.state.log[-1].loss, 4),
        "loss_curve": [[e.step, round(e.loss, 4)] for e in trainer.state.log],
        "hardware": hardware_description(trainer.device),
        "torch": torch.__version__,
    }
    for split in ("test", "length"):
        pairs = data.corpus.split(split)[:n_eval]
        scores, hypotheses = evaluate(trainer.model, data.tokenizer, pairs)
        result[f"{split}_bleu"] = round(scores.bleu, 2)
        result[f"{split}_chrf"] = round(scores.chrf, 2)
        result["n_eval"] = scores.n_sentences
        result["bleu_signature"] = scores.bleu_signature
    # The length split in two parts: the pairs that reach unseen positions, and the others.
    beyond = reaches_unseen_positions(data, pairs, settings.model.max_len)
    for part, wanted in (("beyond", True), ("within", False)):
        chosen = [i for i, reaches in enumerate(beyond) if reaches == wanted]
        if chosen:
            part_scores = score([hypotheses[i] for i in chosen], [pairs[i][1] for i in chosen])
            result[f"length_{part}_bleu"] = round(part_scores.bleu, 2)
        result[f"n_length_{part}"] = len(chosen)
    return result


def load_results(folder: str | Path = SHIPPED) -> dict[str, list[dict[str, Any]]]:
    """Every ``<variant>_seed<seed>.json`` in ``folder``, grouped by variant, seeds in order."""
    folder = Path(folder)
    files = sorted(folder.glob("*_seed*.json"))
    if not files:
        raise FileNotFoundError(
            f"no ablation results in {folder}; run `python -m transformer_course.ablations --out {folder}`"
        )
    runs: dict[str, list[dict[str, Any]]] = {}
    for path in files:
        result = json.loads(path.read_text(encoding="utf-8"))
        runs.setdefault(result["variant"], []).append(result)
    ordered = {name: runs[name] for name in VARIANTS if name in runs}
    return {name: sorted(results, key=lambda r: r["seed"]) for name, results in ordered.items()}


@dataclass(frozen=True)
class Spread:
    """Mean, sample standard deviation and range of one measurement over seeds."""

    mean: float
    std: float
    low: float
    high: float
    n: int

    def __str__(self) -> str:
        return f"{self.mean:5.1f} ± {self.std:4.1f}"


def spread(values: list[float]) -> Spread:
    if not values:
        raise ValueError("no values")
    std = statistics.stdev(values) if len(values) > 1 else 0.0
    return Spread(statistics.fmean(values), std, min(values), max(values), len(values))


def summarize(runs: dict[str, list[dict[str, Any]]], key: str) -> dict[str, Spread]:
    """``key`` (e.g. ``"length_bleu"``) over the seeds of each variant."""
    return {name: spread([r[key] for r in results]) for name, results in runs.items()}


@dataclass(frozen=True)
class Comparison:
    """One variant against another on one measurement, seed by seed.

    ``separated`` is True when every seed of one lies on the same side of every seed of the
    other. Two variants that differ only by their seeds still come out separated now and then:
    ``chance`` is how often, when all ``n + m`` results are exchangeable (2 orders out of
    ``comb(n + m, n)``), which is 1 in 10 for three seeds each.
    """

    difference: float
    separated: bool
    chance: float

    def verdict(self) -> str:
        if self.separated:
            return f"{self.difference:+5.1f}, every seed {'above' if self.difference > 0 else 'below'}"
        return f"{self.difference:+5.1f}, within the seeds' spread"


def compare(values: list[float], reference: list[float]) -> Comparison:
    """``values`` (one per seed) against ``reference``: difference of the means, and separation."""
    if not values or not reference:
        raise ValueError("compare needs at least one value on each side")
    separated = min(values) > max(reference) or max(values) < min(reference)
    chance = 2 / math.comb(len(values) + len(reference), len(values))
    return Comparison(statistics.fmean(values) - statistics.fmean(reference), separated, chance)


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", nargs="+", choices=sorted(VARIANTS), default=list(VARIANTS))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--eval-sentences", type=int, default=300)
    parser.add_argument("--threads", type=int, default=None, help="CPU threads for torch")
    parser.add_argument("--out", type=Path, default=Path("ablations"), help="folder for the results")
    parser.add_argument(
        "--update-shipped", action="store_true",
        help="allow writing into the package's own results (maintainers regenerating them)",
    )  # fmt: skip
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = _parse(argv)
    if args.out.resolve() == SHIPPED and not args.update_shipped:
        raise SystemExit(
            f"{args.out} holds the results lesson 9 reads; write your own runs elsewhere "
            "(--out my_ablations), or pass --update-shipped to replace them on purpose"
        )
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    args.out.mkdir(parents=True, exist_ok=True)
    # The variants change the model only, so they all share one corpus, vocabulary and encoding.
    data = shared_data()
    print(f"{'variant':18s} {'seed':>4s} {'loss':>6s} {'BLEU test':>9s} {'BLEU long':>9s} {'seconds':>8s}")
    for variant in args.variants:
        for seed in args.seeds:
            result = run_variant(variant, seed, args.steps, args.eval_sentences, data)
            path = args.out / f"{variant}_seed{seed}.json"
            path.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
            print(f"{variant:18s} {seed:>4d} {result['final_loss']:>6.3f} {result['test_bleu']:>9.1f} "
                  f"{result['length_bleu']:>9.1f} {result['train_seconds']:>8.0f}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()

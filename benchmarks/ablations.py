"""Ablations of lesson 9: what each piece of the Transformer is worth on the generated corpus.

Every variant trains the quick preset's model with one change, for the same number of steps on
the same batches (same seed), then is scored with greedy decoding on the test split and on the
length split. Results go to ``transformer_course/checkpoints/ablations/<variant>.json``;
the lesson reads and plots them. Run all variants, or some (``--only heads_1 no_positions``),
e.g. two processes at once:

    python benchmarks/ablations.py --steps 400 --threads 1 --only baseline heads_1 heads_8
    python benchmarks/ablations.py --steps 400 --threads 1 --only no_positions no_scaling pre_norm
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from transformer_course.evaluation import evaluate
from transformer_course.train import hardware_description
from transformer_course.training import Trainer, prepare_data, preset

VARIANTS: dict[str, dict[str, object]] = {
    "baseline": {},
    "heads_1": {"n_heads": 1},
    "heads_8": {"n_heads": 8},
    "no_positions": {"positional_encoding": False},
    "no_scaling": {"scale_attention": False},
    "pre_norm": {"norm_first": True},
}
OUT = Path(__file__).resolve().parent.parent / "transformer_course" / "checkpoints" / "ablations"


def run_variant(name: str, steps: int, n_eval: int, out: Path) -> dict[str, object]:
    settings = preset("quick", max_steps=steps, time_budget_s=None, **VARIANTS[name])
    data = prepare_data(settings)
    trainer = Trainer(settings, data.tokenizer, data.train, device="cpu")
    start = time.perf_counter()
    trainer.train(progress=False)
    result: dict[str, object] = {
        "variant": name,
        "changes": VARIANTS[name],
        "steps": trainer.state.step,
        "parameters": trainer.n_parameters,
        "train_seconds": round(time.perf_counter() - start, 1),
        "final_loss": round(trainer.state.log[-1].loss, 4),
        "loss_curve": [[e.step, round(e.loss, 4)] for e in trainer.state.log],
        "hardware": hardware_description(trainer.device),
        "torch": torch.__version__,
    }
    for split in ("test", "length"):
        scores, _ = evaluate(trainer.model, data.tokenizer, data.corpus.split(split)[:n_eval])
        result[f"{split}_bleu"] = round(scores.bleu, 2)
        result[f"{split}_chrf"] = round(scores.chrf, 2)
        result["bleu_signature"] = scores.bleu_signature
        result["chrf_signature"] = scores.chrf_signature
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--eval-sentences", type=int, default=300)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--only", nargs="*", choices=sorted(VARIANTS), default=None)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    print(f"{'variant':14s} {'params':>9s} {'loss':>6s} {'BLEU test':>9s} {'BLEU long':>9s} "
          f"{'chrF test':>9s} {'seconds':>8s}")  # fmt: skip
    for name in args.only or list(VARIANTS):
        r = run_variant(name, args.steps, args.eval_sentences, args.out)
        print(f"{name:14s} {r['parameters']:>9,} {r['final_loss']:>6.3f} {r['test_bleu']:>9.1f} "
              f"{r['length_bleu']:>9.1f} {r['test_chrf']:>9.1f} {r['train_seconds']:>8.0f}",
              flush=True)  # fmt: skip


if __name__ == "__main__":
    main()

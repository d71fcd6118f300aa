"""The ``full`` preset trained from the student's code (lesson 9's last cell) and from the course's model.

Issue 25 asks for both runs on a GPU, each with a report. One process trains one of them:

    python benchmarks/full_preset_runs.py --which course --out-dir runs
    python benchmarks/full_preset_runs.py --which yours --path my_transformer.py --out-dir runs

``--which yours`` runs exactly what lesson 9's "Train your translator" cell runs
(:func:`~transformer_course.translation.your_translator.train_your_translator`) on the ``full``
preset: it checks each piece in ``--path`` (a module the lesson's export step wrote), builds the
model from the student's classes, trains it with the student's ``learning_rate`` and decodes with
the student's ``beam_step``. ``--which course`` trains the course's ``Transformer`` with the
package's scheduler and ``beam_search``. Both score beam search (beam 4, alpha 0.6) on the same
first ``--eval-sentences`` test sentences, and write a report: the hardware, the
settings, steps, training time, the final loss and BLEU / chrF with sacreBLEU's signatures
(``<preset>_<which>.json``).

``--time-budget`` stops training after that many seconds (the preset's 8,000 steps otherwise):
the report's ``steps`` says where a run stopped. ``--preset tiny`` tries the whole path in seconds.
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
from transformer_course.translation.settings import PRESETS, preset
from transformer_course.translation.training import Trainer, prepare_data
from transformer_course.translation.your_translator import beam_scores, train_your_translator


def train_course(settings, data, n_test: int) -> dict[str, object]:
    """The course's model, scheduler and beam search."""
    trainer = Trainer(settings, data.tokenizer, data.train)
    trainer.train(progress=False)
    scores = beam_scores(trainer.model, data.tokenizer, data.corpus.test[:n_test], None, "", progress=False)
    return {"trainer": trainer, "scores": asdict(scores), "pieces": None}


def train_yours(settings, data, n_test: int, path: Path) -> dict[str, object]:
    """Lesson 9's last cell on these settings."""
    run = train_your_translator(path, settings=settings, data=data, n_test=n_test, progress=False)
    return {
        "trainer": run.translator,
        "scores": asdict(run.scores),
        "pieces": run.chosen.lines,
        "shipped_quick_model_scores": asdict(run.course_scores),
        "loss_checks": [asdict(check) for check in run.loss_checks],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--which", choices=("course", "yours"), required=True)
    parser.add_argument("--path", type=Path, default=Path("my_transformer.py"), help="the student's module")
    parser.add_argument("--preset", choices=sorted(PRESETS), default="full")
    parser.add_argument("--out-dir", type=Path, required=True)
    parser.add_argument("--time-budget", type=float, default=None, help="seconds of training at most")
    parser.add_argument("--eval-sentences", type=int, default=300)
    args = parser.parse_args()
    wall_start = time.perf_counter()
    settings = preset(args.preset, time_budget_s=args.time_budget)
    data = prepare_data(settings)
    print(f"data ready after {time.perf_counter() - wall_start:.0f} s", flush=True)
    if args.which == "course":
        result = train_course(settings, data, args.eval_sentences)
    else:
        result = train_yours(settings, data, args.eval_sentences, args.path)
    trainer = result.pop("trainer")
    device = next(trainer.model.parameters()).device
    report = {
        "which": args.which,
        "hardware": hardware_description(device),
        "torch": torch.__version__,
        "settings": trainer.settings.to_dict(),
        "steps": trainer.state.step,
        "train_seconds": round(trainer.state.elapsed_s, 1),
        "final_loss": trainer.state.log[-1].loss if trainer.state.log else None,
        **result,
        "wall_seconds": round(time.perf_counter() - wall_start, 1),
        "command": " ".join(["python benchmarks/full_preset_runs.py", *sys.argv[1:]]),
    }
    args.out_dir.mkdir(parents=True, exist_ok=True)
    out = args.out_dir / f"{args.preset}_{args.which}.json"
    out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    bleu = report["scores"]["bleu"]
    print(f"{args.which}: {report['steps']} steps in {report['train_seconds']} s on {report['hardware']}; "
          f"beam BLEU {bleu:.1f} on {args.eval_sentences} test sentences; wrote {out}")  # fmt: skip


if __name__ == "__main__":
    main()

"""``benchmarks/full_preset_runs.py`` (issue 25's GPU runs of the ``full`` preset) and the reports of
it that lesson 9's appendix prints.

The script runs end to end both ways on the ``tiny`` preset (seconds on a CPU); the shipped GPU
reports are checked against what the appendix's prose says about them.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_your_translator import export_reference_solutions

from transformer_course.shipped import shipped_checkpoint
from transformer_course.translation.your_pieces import CLASSES, FUNCTIONS

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "benchmarks" / "full_preset_runs.py"


def _run(which: str, out_dir: Path, *extra: str) -> dict:
    command = [sys.executable, str(SCRIPT), "--which", which, "--preset", "tiny", "--out-dir", str(out_dir),
               "--eval-sentences", "3", *extra]  # fmt: skip
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads((out_dir / f"tiny_{which}.json").read_text(encoding="utf-8"))
    assert f"{which}: {report['steps']} steps" in done.stdout
    return report


def test_both_paths_train_and_write_their_reports(tmp_path):
    path = export_reference_solutions(tmp_path / "my_transformer.py")
    course = _run("course", tmp_path)
    yours = _run("yours", tmp_path, "--path", str(path))
    for report in (course, yours):
        assert report["steps"] == report["settings"]["max_steps"] == 20
        assert report["scores"]["n_sentences"] == 3
        assert report["scores"]["bleu_signature"].startswith("nrefs:1|")
        assert report["hardware"].startswith("CPU")
    assert course["pieces"] is None
    assert yours["pieces"] == [f"✓ {name}: yours" for name in (*CLASSES, *FUNCTIONS)]
    assert [check["when"] for check in yours["loss_checks"]] == ["before training", "after training"]
    for check in yours["loss_checks"]:
        assert check["yours"] == pytest.approx(check["pytorch"], rel=1e-5)


def _shipped(name: str) -> dict:
    return json.loads(shipped_checkpoint(name).read_text(encoding="utf-8"))


def test_the_shipped_gpu_runs_show_what_lesson_9_says():
    race = _shipped("throughput_gpu_course.json")
    course, torch_nn = race["models"]["course Transformer"], race["models"]["torch.nn layers"]
    assert race["hardware"].startswith("GPU") and race["budget_s"] == 30
    # "the course model trained more tokens per second than torch.nn's layers and, after the same
    # time, scored no lower"
    assert course["tokens_per_s"] > torch_nn["tokens_per_s"]
    assert course["bleu"] >= torch_nn["bleu"]

    shared = _shipped("full_gpu_course.json"), _shipped("full_gpu_yours.json")
    alone = _shipped("full_gpu_yours_alone.json")
    for run in (*shared, alone):
        # "each stopped by a time limit before the preset's 8,000 steps", scored on 300 sentences
        assert run["hardware"].startswith("GPU")
        assert run["settings"]["max_steps"] == 8000 and run["steps"] < 8000
        assert run["steps"] / run["train_seconds"] > 0  # the appendix prints this rate
        assert run["scores"]["n_sentences"] == 300
        # "both paths end within a fraction of a BLEU point of 100, above the quick preset's model"
        assert 99 < run["scores"]["bleu"] <= 100
        assert run["scores"]["bleu"] > alone["shipped_quick_model_scores"]["bleu"]
    assert [run["which"] for run in shared] == ["course", "yours"]
    assert all(line.startswith("✓") for line in alone["pieces"] + shared[1]["pieces"])
    # "about as many steps per second as the course's while the two shared the GPU, and it reached
    # the same loss"
    rates = [run["steps"] / run["train_seconds"] for run in shared]
    assert rates[1] == pytest.approx(rates[0], rel=0.05)
    assert round(shared[0]["final_loss"], 2) == round(shared[1]["final_loss"], 2)

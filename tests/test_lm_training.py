"""Lesson 10's training code: the loss falls, runs are seeded, checkpoints and reports round-trip."""

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from transformer_course import train_gpt
from transformer_course.language_model import position_study
from transformer_course.language_model.gpt import next_token_loss
from transformer_course.language_model.lm_data import load_course_corpus, text_sha256
from transformer_course.language_model.lm_training import (
    LMLogEntry,
    LMState,
    LMTrainer,
    evaluate_loss,
    learning_rate,
    lesson_gpt,
    lm_preset,
    load_gpt,
    loss_by_position,
    run_summary,
    shipped_gpt_file,
    untrained_gpt,
)

TEXT = ("The decoder predicts the next character. " * 40 + "\n\n") * 12


@pytest.fixture(scope="module")
def corpus():
    return load_course_corpus(TEXT)


def test_training_lowers_the_validation_loss_and_logs_time(corpus):
    trainer = LMTrainer(lm_preset("tiny", max_steps=40, eval_every=20), corpus, device="cpu")
    before = trainer.valid_loss()
    state = trainer.train()
    assert [e.step for e in state.log] == [20, 40]
    assert state.log[-1].valid_loss < before - 1.0
    assert state.elapsed_s > 0 and state.cpu_s > 0


def test_runs_are_seeded(corpus):
    settings = lm_preset("tiny", max_steps=10)
    first, second = (LMTrainer(settings, corpus, device="cpu") for _ in range(2))
    first.train()
    second.train()
    assert [e.train_loss for e in first.state.log] == [e.train_loss for e in second.state.log]
    assert torch.equal(untrained_gpt(settings, 30).tokens.weight, untrained_gpt(settings, 30).tokens.weight)


def test_learning_rate_warms_up_then_decays_to_the_minimum():
    settings = lm_preset("cpu")
    assert learning_rate(0, settings) == pytest.approx(settings.lr / settings.warmup_steps)
    assert learning_rate(settings.warmup_steps, settings) == pytest.approx(settings.lr)
    assert learning_rate(settings.max_steps, settings) == pytest.approx(settings.min_lr)
    assert learning_rate(settings.max_steps * 3, settings) == pytest.approx(settings.min_lr)


def test_checkpoint_round_trip_keeps_the_model_and_its_record(tmp_path, corpus):
    trainer = LMTrainer(lm_preset("tiny", max_steps=10), corpus, device="cpu")
    trainer.train()
    path = trainer.save(tmp_path / "gpt.pt")
    loaded = load_gpt(path)
    assert loaded.model.lm_head.weight is loaded.model.tokens.weight
    assert loaded.state.step == 10 and loaded.text_sha256 == text_sha256(TEXT)
    assert loaded.tokenizer.characters == corpus.tokenizer.characters
    x = corpus.valid[:32][None]
    trainer.model.eval()
    with torch.no_grad():
        assert torch.allclose(loaded.model(x), trainer.model(x), atol=0.05)  # float16 weights
    with pytest.raises(FileNotFoundError, match="train_gpt"):
        load_gpt(tmp_path / "missing.pt")
    torch.save({"format": "other"}, tmp_path / "other.pt")
    with pytest.raises(ValueError, match="not a GPT checkpoint"):
        load_gpt(tmp_path / "other.pt")


def test_position_losses_average_to_the_window_loss(corpus):
    model = untrained_gpt(lm_preset("tiny"), corpus.tokenizer.vocab_size).eval()
    per_position = loss_by_position(model, corpus.valid, 32)
    assert per_position.shape == (32,)
    assert per_position.mean().item() == pytest.approx(evaluate_loss(model, corpus.valid, 32), abs=1e-4)


def test_presets_reject_nonsense():
    with pytest.raises(ValueError, match="unknown preset"):
        lm_preset("huge")
    with pytest.raises(ValueError, match="unknown settings"):
        lm_preset("cpu", layers=3)
    with pytest.raises(ValueError, match="max_len"):
        lm_preset("cpu", block_size=512)


def test_command_line_writes_checkpoint_and_report(tmp_path):
    report = train_gpt.main(
        ["--preset", "tiny", "--seed", "3", "--max-steps", "12", "--out-dir", str(tmp_path), "--quiet"]
    )
    written = json.loads((tmp_path / "gpt_tiny.json").read_text(encoding="utf-8"))
    assert written["seed"] == 3 and written["steps"] == 12 == report["steps"]
    assert written["command"].startswith("python -m transformer_course.train_gpt --preset tiny")
    for key in ("hardware", "train_wall_s", "train_cpu_s", "final_valid_loss", "log", "parameters"):
        assert key in written
    assert written["sample"]["before"].startswith(train_gpt.SAMPLE_PROMPT)
    assert load_gpt(tmp_path / "gpt_tiny.pt").state.step == 12


def test_position_study_writes_one_curve_per_kind_and_seed(tmp_path):
    out = tmp_path / "study.json"
    results = position_study.main(
        [
            "--out",
            str(out),
            "--preset",
            "tiny",
            "--seeds",
            "0",
            "1",
            "--kinds",
            "rope",
            "learned",
            "--max-steps",
            "3",
        ]
    )
    assert json.loads(out.read_text(encoding="utf-8"))["runs"].keys() == {"rope", "learned"}
    assert results["eval_length"] == 4 * results["train_length"]
    assert len(results["runs"]["rope"]["1"]["per_position"]) == results["eval_length"]
    summary = position_study.summarize(results, bucket=8)
    assert len(summary["rope"]["mean"]) == results["eval_length"] // 8
    rope = summary["rope"]
    assert all(lo <= m <= hi for lo, m, hi in zip(rope["low"], rope["mean"], rope["high"], strict=True))
    means = position_study.range_means(results)
    assert list(means["learned"]) == ["0-31", "32-63", "64-127"]
    assert len(means["learned"]["32-63"]) == 2
    first = results["runs"]["rope"]["0"]["per_position"]
    assert means["rope"]["0-31"][0] == pytest.approx(sum(first[:32]) / 32)
    with pytest.raises(ValueError, match="divide"):
        position_study.summarize(results, bucket=7)


def test_position_study_gives_the_same_curves_whether_models_train_one_or_two_at_a_time(tmp_path):
    """``--jobs 2`` (what scripts/regenerate_gpt.sh runs) must not change a single loss."""
    common = [
        "--preset",
        "tiny",
        "--seeds",
        "0",
        "1",
        "--kinds",
        "rope",
        "--max-steps",
        "3",
        "--threads",
        "1",
    ]
    alone = position_study.main(["--out", str(tmp_path / "one.json"), *common])
    parallel = position_study.main(["--out", str(tmp_path / "two.json"), "--jobs", "2", *common])
    assert parallel["jobs"] == 2
    for seed in ("0", "1"):
        assert parallel["runs"]["rope"][seed]["per_position"] == alone["runs"]["rope"][seed]["per_position"]
    with pytest.raises(SystemExit):
        position_study.main(["--out", str(tmp_path / "x.json"), "--jobs", "0", *common])


def test_the_shipped_checkpoint_was_trained_on_the_shipped_text():
    trained = load_gpt(shipped_gpt_file("gpt_cpu.pt"))
    report = json.loads(shipped_gpt_file("gpt_cpu.json").read_text(encoding="utf-8"))
    corpus = load_course_corpus()
    assert trained.text_sha256 == corpus.sha256 == report["text_sha256"]
    assert trained.state.step == report["steps"]
    with torch.no_grad():
        x = corpus.valid[:257]
        loss = next_token_loss(trained.model(x[None, :-1]), x[None, 1:]).item()
    assert loss < report["final_valid_loss"] + 0.5
    study = json.loads(shipped_gpt_file("gpt_positions.json").read_text(encoding="utf-8"))
    assert study["text_sha256"] == corpus.sha256 and len(study["seeds"]) >= 3


def test_lesson_10_loads_the_shipped_checkpoint_unless_the_student_asks_to_train(monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    shipped = lesson_gpt(load_course_corpus(), train=False)
    report = json.loads(shipped_gpt_file("gpt_cpu.json").read_text(encoding="utf-8"))
    assert not shipped.trained_here and shipped.run == report and shipped.log[-1].step == report["steps"]
    with pytest.raises(ValueError, match="different text"):
        lesson_gpt(load_course_corpus(TEXT), train=False)


def test_lesson_10_trains_the_students_own_run_but_never_while_grading(monkeypatch, corpus):
    tiny = lm_preset("tiny", max_steps=4, eval_every=2)
    monkeypatch.setattr("transformer_course.language_model.lm_training.lm_preset", lambda name: tiny)
    monkeypatch.setattr(
        "transformer_course.language_model.lm_training.shipped_gpt_file", lambda name: pytest.fail("loaded")
    )
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    own = lesson_gpt(corpus, train=True)
    assert own.trained_here and own.settings == tiny and own.run["steps"] == 4 and not own.model.training
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    with pytest.raises(pytest.fail.Exception, match="loaded"):
        lesson_gpt(corpus, train=True)  # grading loads the checkpoint instead of training


def test_lesson_10s_committed_outputs_come_from_the_shipped_checkpoint_and_study():
    """Retraining without regenerating lesson 10 would leave the book printing the old run's numbers
    (`python -m course_build --check` compares cells, not outputs)."""
    solution = Path(__file__).resolve().parents[1] / "solutions" / "10_decoder_only.ipynb"
    outputs = "".join(
        "".join(item.get("text", ""))  # a stream's text: a string or a list of lines
        for cell in json.loads(solution.read_text(encoding="utf-8"))["cells"]
        for item in cell.get("outputs", [])
    )
    report = json.loads(shipped_gpt_file("gpt_cpu.json").read_text(encoding="utf-8"))
    study = json.loads(shipped_gpt_file("gpt_positions.json").read_text(encoding="utf-8"))
    for printed in (
        f"command:    {report['command']}",
        f"validation {report['final_valid_loss']:.3f} nats per character",
        f"command:  {study['command']}",
        f"{study['wall_s'] / 60:.0f} min in all",
    ):
        assert printed in outputs, (
            f"lesson 10 does not print {printed!r} from the shipped reports: "
            "run `python -m course_build --lesson 10_decoder_only`"
        )


def test_the_shipped_position_study_shows_what_lesson_10_says_it_shows():
    """Lesson 10's prose reads the study (which kind is lowest where); a retrain on a new snapshot
    that changes an ordering must change the prose too."""
    study = json.loads(shipped_gpt_file("gpt_positions.json").read_text(encoding="utf-8"))
    means = position_study.range_means(study)
    mean = {
        kind: {span: float(np.mean(losses)) for span, losses in row.items()} for kind, row in means.items()
    }
    inside, next_64, far = list(next(iter(mean.values())))
    assert sorted(mean, key=lambda kind: mean[kind][inside]) == ["rope", "sinusoidal", "learned", "none"]
    for kind in ("sinusoidal", "learned"):  # they break down at once, above the model without positions
        assert mean[kind][next_64] > mean["none"][next_64] > mean["rope"][next_64]
    # over the far positions the rotary model's mean is the highest and the model without positions
    # is the best; the rotary model's band there is the widest and overlaps the sinusoidal model's,
    # and both are above every seed of the learned model
    assert sorted(mean, key=lambda kind: mean[kind][far]) == ["none", "learned", "sinusoidal", "rope"]
    widths = {(kind, span): max(v) - min(v) for kind, row in means.items() for span, v in row.items()}
    assert max(widths, key=widths.get) == ("rope", far)
    assert min(means["rope"][far]) < max(means["sinusoidal"][far])
    assert min(min(means["rope"][far]), min(means["sinusoidal"][far])) > max(
        means["learned"][far] + means["none"][far]
    )


def test_run_summary_reports_a_run_under_the_training_reports_keys():
    state = LMState(step=800, elapsed_s=95.04, cpu_s=90.16)
    state.log.append(
        LMLogEntry(step=800, train_loss=1.23456, valid_loss=1.5, lr=3e-4, elapsed_s=95, cpu_s=90)
    )
    assert run_summary(state) == {
        "steps": 800,
        "train_wall_s": 95.0,
        "train_cpu_s": 90.2,
        "final_train_loss": 1.2346,
        "final_valid_loss": 1.5,
    }
    with pytest.raises(ValueError, match="no logged step yet"):
        run_summary(LMState())

"""Training: settings, token batching, collation, resumable checkpoints, the sanity task."""

import pytest
import torch

from transformer_course.devices import choose_device
from transformer_course.shipped import shipped_checkpoint
from transformer_course.translation.batching import BatchStream, collate, token_batches
from transformer_course.translation.checkpoint import FORMAT
from transformer_course.translation.corpus import make_corpus
from transformer_course.translation.model import TransformerConfig
from transformer_course.translation.sanity_task import GRADING_STEPS, make_batch, train_sanity
from transformer_course.translation.settings import TrainSettings, preset
from transformer_course.translation.training import Trainer, prepare_data
from transformer_course.translation.translator import lesson_translator, load_translator


@pytest.fixture(scope="module")
def tiny_data():
    settings = preset("tiny")
    corpus = make_corpus(n_train=400, n_valid=10, n_test=10, n_length=10, seed=2)
    return settings, prepare_data(settings, corpus)


def test_token_batches_cover_every_example_once_within_the_budget():
    lengths = [3, 9, 4, 12, 7, 7, 2, 15, 5, 8] * 20
    batches = token_batches(lengths, max_tokens=40, seed=0)
    flat = sorted(i for batch in batches for i in batch)
    assert flat == list(range(len(lengths)))
    for batch in batches:
        assert len(batch) * max(lengths[i] for i in batch) <= 40
    assert batches == token_batches(lengths, max_tokens=40, seed=0)
    other_seed = token_batches(lengths, max_tokens=40, seed=1)
    assert batches != other_seed
    assert len(batches) == len(other_seed), "every epoch must have the same number of batches"


def test_collate_shifts_the_target_right():
    batch = collate([([5, 6, 2], [7, 8, 9, 2]), ([5, 2], [7, 2])])
    assert batch.src.tolist() == [[5, 6, 2], [5, 2, 0]]
    assert batch.tgt_out.tolist() == [[7, 8, 9, 2], [7, 2, 0, 0]]
    assert batch.tgt_in.tolist() == [[1, 7, 8, 9], [1, 7, 0, 0]]
    assert batch.n_tokens == 3 + 2 + 4 + 2
    with pytest.raises(ValueError, match="empty"):
        collate([])


def test_batch_stream_continues_into_the_next_epoch():
    data = [([4] * n + [2], [5] * n + [2]) for n in range(1, 30)]
    stream = BatchStream(data, max_tokens=64, seed=0)
    per_epoch = len(stream.batches_of_epoch(0))
    assert len(stream.batches_of_epoch(3)) == per_epoch == stream.batches_per_epoch
    first_of_epoch_1 = stream.batch_at(per_epoch)
    assert torch.equal(first_of_epoch_1.src, collate([data[i] for i in stream.batches_of_epoch(1)[0]]).src)


def test_a_few_steps_reduce_the_loss(tiny_data):
    settings, data = tiny_data
    trainer = Trainer(settings, data.tokenizer, data.train, device="cpu")
    batch = trainer.stream.batch_at(0)
    first = trainer.train_step(batch)
    for _ in range(15):
        last = trainer.train_step(batch)
    assert last < first - 0.5, "training on one batch must lower its loss"


def test_resume_continues_exactly(tiny_data, tmp_path):
    settings, data = tiny_data
    straight = Trainer(settings, data.tokenizer, data.train, device="cpu")
    straight.train(max_steps=6, progress=False)

    first_half = Trainer(settings, data.tokenizer, data.train, device="cpu")
    first_half.train(max_steps=3, progress=False)
    path = first_half.save(tmp_path / "half.pt")
    resumed = Trainer.resume(path, data.train, device="cpu")
    assert resumed.state.step == 3
    resumed.train(max_steps=6, progress=False)
    for (name, a), (_, b) in zip(
        straight.model.state_dict().items(), resumed.model.state_dict().items(), strict=True
    ):
        assert torch.equal(a, b), f"{name} differs after resuming"


def test_inference_checkpoint_loads_and_cannot_resume(tiny_data, tmp_path):
    settings, data = tiny_data
    trainer = Trainer(settings, data.tokenizer, data.train, device="cpu")
    trainer.train(max_steps=2, progress=False)
    path = trainer.save(tmp_path / "small.pt", with_optimizer=False, half=True)
    translator = load_translator(path, device="cpu")
    assert translator.n_parameters == trainer.n_parameters
    assert translator.state.step == 2
    with pytest.raises(ValueError, match="without optimizer"):
        Trainer.resume(path, data.train)
    with pytest.raises(FileNotFoundError, match="transformer_course.train"):
        load_translator(tmp_path / "missing.pt")


def test_presets_route_overrides_to_the_model_or_the_run():
    assert choose_device().type in ("cuda", "mps", "cpu")
    settings = preset("quick", n_heads=1, seed=3, vocab_size=500)
    assert settings.model.n_heads == 1 and settings.seed == 3
    assert settings.model.src_vocab_size == settings.model.tgt_vocab_size == settings.vocab_size == 500
    assert preset("quick").model.n_heads == 4, "a preset is not changed by an override"
    with pytest.raises(ValueError, match="unknown preset"):
        preset("huge")
    with pytest.raises(ValueError, match="unknown settings"):
        preset("quick", heads=3)
    with pytest.raises(ValueError, match="divisible"):
        preset("quick", n_heads=5)


def test_settings_round_trip_and_refuse_two_vocabularies():
    settings = preset("tiny", norm_first=True, max_steps=7)
    assert TrainSettings.from_dict(settings.to_dict()) == settings
    with pytest.raises(ValueError, match="shared by both languages"):
        TrainSettings(model=TransformerConfig(src_vocab_size=10, tgt_vocab_size=12))
    with pytest.raises(TypeError, match="TransformerConfig"):
        TrainSettings(model={"d_model": 8})


def test_trainer_takes_the_tokenizers_vocabulary(tiny_data):
    settings, data = tiny_data
    trainer = Trainer(preset("tiny", vocab_size=5000), data.tokenizer, data.train, device="cpu")
    assert trainer.settings.vocab_size == data.tokenizer.vocab_size < 5000
    assert trainer.model.config == trainer.settings.model


def test_checkpoint_of_another_format_is_refused(tmp_path):
    path = tmp_path / "old.pt"
    torch.save({"format": "transformer_course.translator/1"}, path)
    with pytest.raises(ValueError, match=FORMAT.replace(".", r"\.")):
        load_translator(path)


def test_sanity_batches_reverse_the_source():
    src, tgt_in, tgt_out = make_batch("reverse", 4, 5, 2, 6, torch.Generator().manual_seed(0))
    for row in range(4):
        length = int((src[row] > 2).sum())
        assert tgt_out[row, :length].tolist() == src[row, :length].flip(0).tolist()
        assert tgt_in[row, 0] == 1 and tgt_in[row, 1 : length + 1].tolist() == tgt_out[row, :length].tolist()


def test_sanity_task_learns_to_reverse():
    result = train_sanity("reverse", steps=250, n_symbols=5, min_len=2, max_len=5, seed=0)
    assert result.losses[-1] < result.losses[0] / 4
    # Guessing gets well under 5% of these reversals exactly right.
    assert result.accuracy > 0.7, f"only {result.accuracy:.0%} of reversals exactly right"


def test_sanity_task_trains_at_most_60_steps_while_grading(monkeypatch):
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    small = {"d_model": 16, "n_heads": 2, "d_ff": 32, "n_encoder_layers": 1, "n_decoder_layers": 1}
    result = train_sanity("reverse", steps=400, n_symbols=5, min_len=2, max_len=5, **small)
    assert GRADING_STEPS == 60 and len(result.losses) == GRADING_STEPS
    assert len(train_sanity("reverse", steps=5, n_symbols=5, min_len=2, max_len=5, **small).losses) == 5


def test_train_command_writes_checkpoint_and_report(tmp_path, capsys):
    import json

    from transformer_course.train import main

    out = tmp_path / "tiny.pt"
    results = main(["--preset", "tiny", "--out", str(out), "--max-steps", "3", "--no-progress",
                    "--eval-sentences", "5", "--set", "n_train=300", "--set", "norm_first=true"])  # fmt: skip
    assert out.is_file() and results["steps"] == 3
    report = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    assert "version:" in report["test_greedy"]["bleu_signature"]
    assert 0 <= report["length_greedy"]["profile"]["looping"] <= 1 and report["train_cpu_seconds"] > 0
    assert report["parameters"] == load_translator(out).n_parameters
    assert report["settings"]["model"]["norm_first"] is True and report["data"] == {"source": "generated"}
    assert "BLEU" in capsys.readouterr().out


def test_train_command_reads_a_tsv_corpus(tmp_path):
    from transformer_course.train import main

    pairs = make_corpus(n_train=400, n_valid=0, n_test=0, n_length=0, seed=8).train
    data = tmp_path / "pairs.tsv"
    data.write_text("".join(f"{es}\t{en}\tattribution\n" for en, es in pairs), encoding="utf-8")
    out = tmp_path / "tsv.pt"
    results = main(["--preset", "tiny", "--data", str(data), "--swap", "--out", str(out), "--max-steps", "2",
                    "--no-progress", "--eval-sentences", "4"])  # fmt: skip
    assert results["data"]["source"] == str(data) and results["data"]["swap"] is True
    assert sum(results["data"]["pairs"].values()) == 400
    assert results["test_greedy"]["n_sentences"] == 4 and results["length_greedy"]["n_sentences"] == 4
    assert load_translator(out).n_parameters == results["parameters"]
    with pytest.raises(SystemExit, match="no parallel corpus"):
        main(["--preset", "tiny", "--data", str(tmp_path / "none.tsv"), "--out", str(out)])


def test_lesson_9_loads_the_shipped_translator_unless_the_student_asks_to_train(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    shipped, trained_here = lesson_translator(train=False)
    assert not trained_here and shipped.state.step > 0 and not shipped.model.training
    calls = []

    def pretend_to_train(settings, out, callback):
        calls.append((settings.max_steps, out, callback))
        path = tmp_path / out
        path.write_bytes(shipped_checkpoint("translator_quick.pt").read_bytes())

    monkeypatch.setattr("transformer_course.translation.translator.run_training", pretend_to_train)
    curve = object()
    _, trained_here = lesson_translator(train=True, callback=curve)
    assert trained_here and calls == [(preset("quick").max_steps, "my_translator.pt", curve)]
    lesson_translator(train=True, callback=curve, settings=preset("quick", max_steps=5))
    assert calls[-1] == (5, "my_translator.pt", curve)
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    _, trained_here = lesson_translator(train=True, callback=curve)
    assert not trained_here and len(calls) == 2  # grading loads the checkpoint instead of training

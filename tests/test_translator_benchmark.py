"""The throughput benchmark: its 'before' models compute what the course model computes."""

import importlib.util
import time
from pathlib import Path

import torch

from transformer_course.translation.corpus import make_corpus
from transformer_course.translation.model import Transformer
from transformer_course.translation.settings import preset
from transformer_course.translation.training import Trainer, prepare_data

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "translator_throughput.py"
spec = importlib.util.spec_from_file_location("translator_throughput", SCRIPT)
benchmark = importlib.util.module_from_spec(spec)
spec.loader.exec_module(benchmark)


def tiny():
    settings = preset("tiny", max_steps=4, dropout=0.0)
    corpus = make_corpus(n_train=200, n_valid=5, n_test=5, n_length=5, seed=1)
    return settings, prepare_data(settings, corpus)


def test_breakdown_models_differ_in_speed_only():
    """With dropout off, every 'before' variant gives the course model's logits on real tokens."""
    settings, data = tiny()
    trainers = benchmark._breakdown_trainers(settings, data, torch.device("cpu"))
    batch = trainers["+ causal fast path"].stream.batch_at(0)
    real = batch.tgt_out != 0
    outputs = {}
    for name, trainer in trainers.items():
        trainer.model.eval()
        with torch.no_grad():
            outputs[name] = trainer.model(batch.src, batch.tgt_in)[real]
    course = outputs["+ fused Adam (course model)"]
    for name, logits in outputs.items():
        assert (logits - course).abs().max() < 1e-4, f"{name} computes something else"
    assert isinstance(trainers["course model before"].model, Transformer)
    assert trainers["+ fused Adam (course model)"].optimizer.defaults["fused"] is True
    assert not trainers["+ masks from torch.rand"].optimizer.defaults["fused"]


def test_interleaved_training_gives_each_model_its_budget():
    settings, data = tiny()
    trainers = {name: Trainer(settings, data.tokenizer, data.train, "cpu") for name in ("a", "b")}
    timing = benchmark.interleaved_training(trainers, budget_s=0.05, chunk=2, clock=time.process_time)
    for name, trainer in trainers.items():
        assert timing[name]["seconds"] >= 0.05 and timing[name]["steps"] == trainer.state.step >= 2
        assert timing[name]["steps"] % 2 == 0, "models take turns of --chunk steps"
        assert timing[name]["tokens_per_s"] > 0
    snapshots = [timing[name]["equal_steps_weights"] for name in trainers]
    assert snapshots[0]["steps"] == snapshots[1]["steps"], "kept when the first ran out: equal steps"
    assert min(timing[name]["steps"] for name in trainers) == snapshots[0]["steps"]

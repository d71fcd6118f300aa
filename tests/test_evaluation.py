"""BLEU / chrF scoring and batched translation."""

import pytest
import torch

from transformer_course.translation.corpus import make_corpus
from transformer_course.translation.evaluation import evaluate, first_pairs, score, translate
from transformer_course.translation.model import Transformer
from transformer_course.translation.settings import preset
from transformer_course.translation.tokenization import train_tokenizer


@pytest.fixture(scope="module")
def random_model():
    corpus = make_corpus(n_train=300, n_valid=10, n_test=12, n_length=5, seed=4)
    tokenizer = train_tokenizer([t for p in corpus.train for t in p], vocab_size=300)
    torch.manual_seed(0)
    model = Transformer(preset("tiny", max_len=64).with_vocabulary(tokenizer.vocab_size).model)
    return corpus, tokenizer, model.eval()


def test_perfect_and_wrong_translations():
    refs = ["El gato negro come pescado.", "Nosotros no cantaremos mañana."]
    perfect = score(refs, refs)
    assert perfect.bleu == pytest.approx(100.0) and perfect.chrf == pytest.approx(100.0)
    assert "version:" in perfect.bleu_signature and "nc:6" in perfect.chrf_signature
    partial = score(["El gato negro come carne.", "Nosotros cantaremos mañana."], refs)
    assert 0 < partial.bleu < 100 and partial.chrf > partial.bleu
    assert "BLEU" in partial.summary()


def test_score_rejects_mismatched_input():
    with pytest.raises(ValueError, match="exactly one reference"):
        score(["a"], ["a", "b"])
    with pytest.raises(TypeError):
        score("a", "a")
    with pytest.raises(ValueError, match="empty"):
        score([], [])


def test_batched_translation_matches_one_by_one(random_model):
    corpus, tokenizer, model = random_model
    sentences = [p[0] for p in corpus.test]
    batched = translate(model, tokenizer, sentences, batch_size=5, max_output_len=12)
    single = [translate(model, tokenizer, [s], max_output_len=12)[0] for s in sentences]
    assert batched == single


def test_evaluate_and_beam(random_model):
    corpus, tokenizer, model = random_model
    scores, hyps = evaluate(model, tokenizer, corpus.test[:4], method="beam", beam_size=2)
    assert len(hyps) == 4 and scores.n_sentences == 4
    with pytest.raises(ValueError, match="method"):
        translate(model, tokenizer, ["Hi."], method="sampling")
    with pytest.raises(TypeError, match="list"):
        translate(model, tokenizer, "Hi.")


def test_repetition_loops_and_short_outputs_are_counted():
    from transformer_course.translation.evaluation import excess_repeats, output_profile

    assert excess_repeats("el perro come el perro come", "el perro come") == 2
    assert excess_repeats("a b a b", "a b a b") == 0, "repeating what the reference repeats is fine"
    profile = output_profile(["el perro come el perro come", "el gato", "una casa roja"],
                             ["el perro come", "el gato duerme en la casa", "una casa roja"])  # fmt: skip
    assert (profile.looping, profile.much_shorter) == (pytest.approx(1 / 3), pytest.approx(1 / 3))
    assert profile.length_ratio == pytest.approx((2 + 2 / 6 + 1) / 3)
    assert "repeat" in profile.summary()
    with pytest.raises(ValueError):
        output_profile(["a"], [])


@pytest.mark.parametrize("method", ["greedy", "beam"])
def test_progress_shows_decoding_step_by_step_and_changes_no_output(random_model, method, capsys):
    corpus, tokenizer, model = random_model
    sources = [p[0] for p in corpus.test]
    quiet = translate(model, tokenizer, sources, method=method, max_output_len=12)
    shown = translate(model, tokenizer, sources, method=method, max_output_len=12, progress=True)
    assert shown == quiet
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"{method} decoding of 12 sentences: token 1 of 12")
    assert "sentences ended" in lines[0]
    assert lines[-1].startswith(f"{method} decoding of 12 sentences: ")
    assert "finished all 12 tokens" in lines[-1] or "because every sentence ended" in lines[-1]


def test_first_pairs_keeps_n_pairs_and_half_of_them_while_grading(monkeypatch):
    pairs = [(f"source {i}", f"target {i}") for i in range(10)]
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    assert first_pairs(pairs, 4) == pairs[:4]
    assert first_pairs(pairs, 40) == pairs
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert first_pairs(pairs, 4) == pairs[:2]
    assert first_pairs(pairs, 1) == pairs[:1]
    with pytest.raises(ValueError, match="n must be positive"):
        first_pairs(pairs, 0)

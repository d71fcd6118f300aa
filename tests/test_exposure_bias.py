"""Exposure bias measured: teacher forcing against free-running greedy decoding."""

import pytest
import torch

from transformer_course.translation.corpus import make_corpus
from transformer_course.translation.evaluation import translate
from transformer_course.translation.exposure_bias import (
    SentenceExposure,
    by_position,
    edit_distance,
    measure_exposure,
    summarize_exposure,
)
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


def test_edit_distance_counts_insertions_deletions_and_substitutions():
    assert edit_distance([1, 2, 3], [1, 2, 3]) == 0
    assert edit_distance([1, 9, 3], [1, 2, 3]) == 1
    assert edit_distance([1, 2, 2, 2, 3], [1, 2, 3]) == 2
    assert edit_distance([], [4, 5]) == 2


def test_a_drifting_output_is_charged_more_than_its_teacher_forced_errors():
    # gold prefixes: one wrong token (position 2); own prefixes: a loop after that token, which
    # takes three substitutions and two deletions to undo
    drifting = SentenceExposure(
        reference=(5, 6, 7, 8, 9, 2), teacher_forced=(5, 6, 4, 8, 9, 2), free_running=(5, 6, 4, 6, 4, 6, 4, 2)
    )
    exact = SentenceExposure(reference=(5, 6, 2), teacher_forced=(5, 6, 2), free_running=(5, 6, 2))
    assert drifting.first_forced_error == drifting.divergence == 2
    assert exact.divergence is None and exact.first_forced_error is None
    assert drifting.forced_errors_from(2) == 1 and drifting.free_edits_from(2) == 5
    summary = summarize_exposure([drifting, exact])
    assert summary.n_diverged == 1 and summary.n_diverged_at_first_forced_error == 1
    assert summary.forced_accuracy == pytest.approx(8 / 9)
    assert (summary.mean_forced_errors_after, summary.mean_free_edits_after, summary.n_free_worse) == (
        1,
        5,
        1,
    )
    assert "1 of them" in summary.summary()
    rows = by_position([drifting, exact], [0, 2, 4])
    assert rows == [(0, 2, 1.0, 1.0), (2, 2, 0.5, 0.5), (4, 1, 1.0, 0.0)]


def test_an_output_cut_before_its_end_leaves_the_reference_where_it_stops():
    cut = SentenceExposure(reference=(5, 6, 7, 2), teacher_forced=(5, 6, 7, 2), free_running=(5, 6))
    assert cut.divergence == 2 and cut.free_edits_from(2) == 2


def test_measured_greedy_outputs_are_the_lessons_translations(random_model):
    corpus, tokenizer, model = random_model
    pairs = corpus.test[:6]
    model.train()
    sentences = measure_exposure(model, tokenizer, pairs, batch_size=4)
    assert model.training, "measuring must leave the model's mode as it found it"
    model.eval()
    assert [tokenizer.decode(list(s.free_running)) for s in sentences] == translate(
        model, tokenizer, [p[0] for p in pairs]
    )
    for s, (_, target) in zip(sentences, pairs, strict=True):
        assert s.reference == tuple(tokenizer.encode(target)[: model.config.max_len - 1]) and len(
            s.teacher_forced
        ) == len(s.reference)
        # until the first wrong token, greedy decoding and teacher forcing are the same computation
        assert s.divergence == s.first_forced_error


def test_bad_input_is_refused(random_model):
    _, tokenizer, model = random_model
    with pytest.raises(ValueError, match="non-empty list"):
        measure_exposure(model, tokenizer, [])
    with pytest.raises(ValueError, match="no sentences"):
        summarize_exposure([])

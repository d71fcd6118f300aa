"""The translate-your-own-sentence widget, its attention map and the live loss curve."""

import numpy as np
import pytest
import torch

from transformer_course.translation.checkpoint import LogEntry
from transformer_course.translation.corpus import make_corpus
from transformer_course.translation.model import Transformer
from transformer_course.translation.settings import preset
from transformer_course.translation.tokenization import train_tokenizer
from transformer_course.widgets.translator import LiveLossCurve, TranslateWidget, cross_attention


@pytest.fixture(scope="module")
def model_and_tokenizer():
    corpus = make_corpus(n_train=300, n_valid=5, n_test=5, n_length=5, seed=4)
    tokenizer = train_tokenizer([t for p in corpus.train for t in p], vocab_size=300)
    torch.manual_seed(0)
    settings = preset("tiny", n_encoder_layers=2, n_decoder_layers=2, max_len=64)
    config = settings.with_vocabulary(tokenizer.vocab_size).model
    return Transformer(config), tokenizer


def test_cross_attention_rows_are_distributions(model_and_tokenizer):
    model, tokenizer = model_and_tokenizer
    attention = cross_attention(model, tokenizer, "The cat eats.", "El gato come.", layer=0)
    heads = model.config.n_heads
    assert attention.weights.shape == (heads, len(attention.output_tokens),
                                       len(attention.source_tokens))  # fmt: skip
    np.testing.assert_allclose(attention.weights.sum(axis=-1), 1.0, atol=1e-5)
    assert attention.output_tokens[-1] == "</s>"
    with pytest.raises(ValueError, match="layer"):
        cross_attention(model, tokenizer, "a", "b", layer=5)


def test_widget_redraws_when_the_inputs_change(model_and_tokenizer):
    model, tokenizer = model_and_tokenizer
    widget = TranslateWidget(model, tokenizer, sentence="The dog runs.")
    first_plot = widget.plot.value
    assert "Spanish:" in widget.output.value and first_plot.startswith("<img")
    widget.head.value = 0
    assert widget.plot.value != first_plot
    widget.text.value = "My three old horses did not swim in the river yesterday."
    widget.update()
    assert widget.plot.value != first_plot
    widget.text.value = "   "
    widget.update()
    assert "Type an English sentence" in widget.output.value


def test_widget_numbers_heads_from_zero_and_flags_spelled_out_characters(model_and_tokenizer):
    model, tokenizer = model_and_tokenizer
    widget = TranslateWidget(model, tokenizer, sentence="The dog runs.")
    labels = [label for label, value in widget.head.options if value >= 0]
    assert labels == [f"head {h}" for h in range(model.config.n_heads)], "heads count from 0 (lesson 4)"
    assert "bytes" not in widget.output.value
    widget.text.value = "The dog eats 寿司."
    widget.update()
    assert "spelled as UTF-8 bytes" in widget.output.value


def test_live_loss_curve_draws_each_entry():
    curve = LiveLossCurve(redraw_every=1)
    curve(LogEntry(step=10, loss=5.0, lr=1e-3, tokens_per_s=100.0, elapsed_s=1.0))
    first = curve.view.value
    curve(LogEntry(step=20, loss=4.0, lr=1e-3, tokens_per_s=100.0, elapsed_s=2.0))
    assert first.startswith("<img") and curve.view.value != first
    with pytest.raises(ValueError):
        LiveLossCurve(redraw_every=0)

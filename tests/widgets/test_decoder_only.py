"""Lesson 10's widgets: the sampling knobs, the text generator, the rotary scores; and the KV timing."""

import numpy as np
import pytest
import torch

from transformer_course.language_model.generation_timing import speedup_table, timed_generation
from transformer_course.language_model.gpt import GPT, GPTConfig, _ranked_next_token_probabilities
from transformer_course.language_model.lm_data import CharTokenizer
from transformer_course.widgets.decoder_only import (
    RotaryScores,
    SamplingKnobs,
    TextGenerator,
    knob_values,
    rotary_scores,
)


def _tiny_model(vocab_size: int, max_len: int = 64) -> GPT:
    torch.manual_seed(0)
    config = GPTConfig(
        vocab_size=vocab_size, d_model=16, n_heads=2, d_ff=32, n_layers=1, max_len=max_len, dropout=0.0
    )
    return GPT(config).eval()


def test_the_sliders_top_ends_keep_every_token_as_the_exercises_none_does():
    assert knob_values(10, 1.0, vocab_size=10) == (None, None)
    assert knob_values(3, 0.5, vocab_size=10) == (3, 0.5)
    knobs = SamplingKnobs(np.log([0.5, 0.3, 0.15, 0.05]), ["a", "b", "c", "d"], top_p=0.5)
    assert (knobs.top_k.min, knobs.top_k.value, knobs.top_k.max) == (1, 4, 4), "None: the slider at V"
    assert "4: all" in knobs.top_k.description and "1: all" in knobs.top_p.description
    with pytest.raises(ValueError, match="top_k must be None or between 1"):
        SamplingKnobs(np.zeros(4), ["a", "b", "c", "d"], top_k=0)


def test_sampling_knobs_report_what_they_keep_and_drop():
    logits = np.log([0.5, 0.3, 0.15, 0.05])
    knobs = SamplingKnobs(logits, ["a", "b", "c", "d"])
    tempered, final = knobs.distributions()
    assert np.allclose(tempered, [0.5, 0.3, 0.15, 0.05]) and np.allclose(final, tempered)
    assert "drops <b>0.0%" in knobs.readout.value
    assert (
        "Most likely: <code style='color:inherit;background:transparent;'>a</code>" in knobs.readout.value
    ), "the readout's code must take the widget's colours, or the dark theme hides it on the light card"
    before = knobs.plot.value
    knobs.top_p.value = 0.7  # keeps 0.5 + 0.3
    assert knobs.dropped_mass() == pytest.approx(0.2)
    assert "Keeps <b>2</b> of 4" in knobs.readout.value and "20.0%" in knobs.readout.value
    assert knobs.plot.value != before
    knobs.top_p.value = 1.0
    knobs.top_k.value = 1
    assert np.allclose(knobs.distributions()[1], [1, 0, 0, 0])
    knobs.top_k.value = 4
    knobs.temperature.value = 2.0
    order, ranked = _ranked_next_token_probabilities(torch.tensor(logits), 2.0)
    assert np.allclose(knobs.distributions()[0][order.numpy()], ranked.numpy())


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: SamplingKnobs(np.zeros((2, 2)), ["a", "b"]), "1-D"),
        (lambda: SamplingKnobs(np.zeros(3), ["a", "b"]), "labels"),
        (lambda: SamplingKnobs(np.array([0.0, np.inf]), ["a", "b"]), "finite"),
    ],
)
def test_sampling_knobs_refuse_bad_input(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_text_generator_continues_the_prompt_reproducibly():
    tokenizer = CharTokenizer.from_text("abcdefgh ")
    model = _tiny_model(tokenizer.vocab_size)
    widget = TextGenerator(model, tokenizer, prompt="abc", length=20, temperature=1.0, seed=3)
    first = widget.output.value
    assert first.startswith("<pre") and "<b>abc</b>" in first
    assert len(widget.generate()) == 20
    widget.button.click()
    assert widget.output.value == first, "same settings, same seed: same text"
    widget.seed.value = 4
    widget.button.click()
    assert widget.output.value != first
    widget.prompt.value = ""
    widget.button.click()
    assert "at least one character" in widget.output.value
    widget.prompt.value = "a" * 70
    widget.button.click()
    assert "longer than the model" in widget.output.value


def test_rotary_scores_depend_on_the_offset_only():
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=8), rng.normal(size=8)
    scores = rotary_scores(q, k, 20)
    assert scores[0, 0] == pytest.approx(q @ k, abs=1e-5)
    assert np.allclose(np.diagonal(scores, 3), scores[0, 3], atol=1e-5)
    widget = RotaryScores(d_head=8, length=24)
    assert widget.diagonal_spread() < 1e-4
    assert "d_head = 8 and base 10000, scores with the same offset n − m agree to within <b>1e-04" in (
        widget.readout.value
    ), "the readout states a bound, so the committed notebook is the same on every machine"
    before_text, before_plot = widget.readout.value, widget.plot.value
    widget.d_head.value = 32
    assert widget.query.shape == (32,)
    widget.base.value = 100.0
    assert widget.plot.value != before_plot and widget.readout.value != before_text
    with pytest.raises(ValueError, match="even"):
        RotaryScores(d_head=7)
    with pytest.raises(ValueError, match="same even length"):
        rotary_scores(np.ones(3), np.ones(3), 4)


def test_kv_cache_timing_checks_the_tokens_and_restores_threads():
    model = _tiny_model(12)
    threads = torch.get_num_threads()
    table = speedup_table(model, [1, 2, 3], [4, 8], repeats=1, threads=1)
    assert torch.get_num_threads() == threads
    assert [row.n_new for row in table] == [4, 8]
    assert all(row.recompute_s > 0 and row.cached_s > 0 and row.speedup > 0 for row in table)
    with pytest.raises(ValueError, match="repeats"):
        timed_generation(model, [1], 2, repeats=0)


def test_kv_cache_timing_under_grading_times_two_lengths_only(monkeypatch):
    """Lesson 10's timing cell costs a second, not a minute, for a notebook graded cell by cell."""
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    table = speedup_table(_tiny_model(12), [1, 2, 3], [2, 4, 8, 10], repeats=3)
    assert [row.n_new for row in table] == [2, 4]

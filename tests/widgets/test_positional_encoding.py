"""Lesson 5's positional-encoding widgets: the table matches the formula and controls redraw."""

import numpy as np
import pytest
import torch

from transformer_course.widgets.positional_encoding import (
    EncodingHeatmap,
    EncodingWaves,
    PositionSimilarity,
    wavelength,
)


def _torch_table(seq_len: int, d_model: int) -> np.ndarray:
    position = torch.arange(seq_len, dtype=torch.float64).unsqueeze(1)
    exponent = torch.arange(0, d_model, 2, dtype=torch.float64) / d_model
    angle = position / torch.pow(torch.tensor(10000.0, dtype=torch.float64), exponent)
    table = torch.zeros(seq_len, d_model, dtype=torch.float64)
    table[:, 0::2] = torch.sin(angle)
    table[:, 1::2] = torch.cos(angle[:, : d_model // 2])
    return table.numpy()


def test_heatmap_table_follows_the_sliders_and_the_formula():
    heatmap = EncodingHeatmap(seq_len=20, d_model=8)
    assert np.allclose(heatmap.table(), _torch_table(20, 8))
    assert heatmap.table()[0].tolist() == [0.0, 1.0] * 4
    before_text, before_plot = heatmap.readout.value, heatmap.plot.value
    heatmap.d_model.value = 7  # odd: the last column is a sine
    heatmap.seq_len.value = 33
    assert np.allclose(heatmap.table(), _torch_table(33, 7))
    assert heatmap.readout.value != before_text and heatmap.plot.value != before_plot
    assert "(33, 7)" in heatmap.readout.value
    assert f"{wavelength(6, 7):,.0f}" in heatmap.readout.value


def test_wavelength_is_two_pi_times_the_frequency_base():
    assert wavelength(0, 64) == pytest.approx(2 * np.pi)
    assert wavelength(1, 64) == wavelength(0, 64)
    assert wavelength(63, 64) == pytest.approx(2 * np.pi * 10000 ** (62 / 64))
    table = _torch_table(400, 16)
    period = wavelength(4, 16)  # column 4 repeats after one wavelength
    shift = int(round(period))
    assert np.allclose(table[shift:, 4], np.sin(np.arange(shift, 400) * 2 * np.pi / period))


def test_waves_show_the_picked_columns_and_keep_the_others_when_one_changes():
    waves = EncodingWaves(d_model=16, dimensions=(0, 5), seq_len=50)
    table = _torch_table(50, 16)
    assert sorted(waves.curves()) == [0, 5]
    assert np.allclose(waves.curves()[5], table[:, 5])
    assert [p.label for p in waves.pickers[1:]] == ["5 (cos, wavelength 62.8)", "none", "none"], (
        "defaults in view"
    )
    before_plot = waves.plot.value
    waves.pickers[2].value = 14
    waves.pickers[0].value = 3
    assert waves.chosen() == [3, 5, 14], "changing one curve leaves the others alone"
    assert waves.plot.value != before_plot
    assert "14 (sin" in waves.readout.value and "3 (cos" in waves.readout.value
    for picker in waves.pickers:
        picker.value = EncodingWaves.NONE
    assert "at least one curve" in waves.readout.value and waves.plot.value == ""


def test_waves_draw_the_continuous_curve_through_the_whole_positions():
    """Between whole positions the line follows the sine, not a straight zigzag segment."""
    waves = EncodingWaves(d_model=16, dimensions=(0, 1), seq_len=20)
    table = _torch_table(20, 16)
    whole = np.arange(20.0)
    assert np.allclose(waves.wave(0, whole), table[:, 0]) and np.allclose(waves.wave(1, whole), table[:, 1])
    halfway = waves.wave(0, np.array([1.5]))[0]
    assert halfway == pytest.approx(np.sin(1.5))
    assert abs(halfway - (table[1, 0] + table[2, 0]) / 2) > 0.1, "a straight segment would be far off"


@pytest.mark.parametrize(
    "seq_len, d_model, expected",
    [
        (256, 1, "Its only column, a sine, repeats every 6.28 positions."),
        (100, 2, "the last column (dimension 1) every 6.3 positions, so it repeats 15.9 times"),
        (64, 64, "positions, longer than the 64 positions shown, so it never repeats here"),
    ],
)
def test_heatmap_caption_is_true_for_every_size(seq_len, d_model, expected):
    heatmap = EncodingHeatmap(seq_len=seq_len, d_model=d_model)
    assert expected in heatmap.readout.value, heatmap.readout.value


def test_similarity_depends_on_the_offset_only():
    similarity = PositionSimilarity(d_model=32, first=45, second=150, max_offset=40)
    table = _torch_table(200, 32)
    offsets = similarity.offsets()
    assert np.allclose(similarity.similarity(45), table[45 + offsets] @ table[45])
    assert np.allclose(similarity.similarity(45), similarity.similarity(150))
    assert similarity.similarity(45)[40] == pytest.approx(16.0)  # k = 0: d_model / 2
    before_text = similarity.readout.value
    similarity.d_model.value = 64
    assert similarity.similarity(45)[40] == pytest.approx(32.0)
    assert similarity.readout.value != before_text and "32.0" in similarity.readout.value


@pytest.mark.parametrize(
    "factory, message",
    [
        (lambda: EncodingHeatmap(seq_len=0), "positive"),
        (lambda: EncodingHeatmap(d_model=300), "up to 256"),
        (lambda: EncodingWaves(d_model=8, dimensions=(9,)), "not columns"),
        (lambda: EncodingWaves(dimensions=()), "at least one"),
        (lambda: EncodingWaves(dimensions=(0, 1, 2, 3, 4)), "at most 4"),
        (lambda: PositionSimilarity(d_model=7), "even d_model"),
        (lambda: PositionSimilarity(first=5), "must lie in"),
    ],
)
def test_bad_input_gets_a_clear_error(factory, message):
    with pytest.raises(ValueError, match=message):
        factory()

"""Lesson 2's widgets: changing a control changes what they show, and the numbers are right."""

import re

import numpy as np
import pytest
import torch

from transformer_course.widgets.dot_products import (
    SimilarityHeatmap,
    VarianceSimulation,
    VectorPairExplorer,
)

WORDS = ["cat", "dog", "car"]
VECTORS = np.array([[1.0, 0.5], [0.9, 0.6], [-0.3, 0.8]])


def _bold_numbers(html: str) -> list[float]:
    return [float(x) for x in re.findall(r"<b>(-?[0-9.]+)</b>", html)]


def test_vector_pair_shows_the_dot_product_and_cosine_of_its_vectors():
    explorer = VectorPairExplorer(length_a=2.0, angle_a=0.0, length_b=1.5, angle_b=60.0)
    a, b = explorer.vectors()
    assert np.allclose(a, [2.0, 0.0]) and np.allclose(b, [0.75, 1.5 * np.sqrt(3) / 2])
    assert explorer.dot_product() == pytest.approx(1.5)
    assert f"<b>{float(a @ b):.3f}</b>" in explorer.readout.value
    assert f"<b>{np.cos(np.pi / 3):.3f}</b>" in explorer.readout.value

    before_plot = explorer.plot.value
    explorer.angle_b.value = 90.0  # orthogonal: dot product 0
    assert explorer.plot.value != before_plot
    assert explorer.dot_product() == pytest.approx(0.0, abs=1e-12)
    assert _bold_numbers(explorer.readout.value)[0] == pytest.approx(0.0, abs=1e-3)

    explorer.length_a.value = 3.0
    explorer.angle_b.value = 180.0  # opposite: dot product -|a||b|, cosine -1
    a, b = explorer.vectors()
    assert explorer.dot_product() == pytest.approx(float(np.dot(a, b))) == pytest.approx(-4.5)
    assert explorer.cosine() == pytest.approx(-1.0)
    assert _bold_numbers(explorer.readout.value) == pytest.approx([-4.5, -1.0], abs=1e-3)


def test_vector_pair_cosine_ignores_length_and_is_undefined_at_zero():
    explorer = VectorPairExplorer(length_a=1.0, angle_a=10.0, length_b=1.0, angle_b=55.0)
    cosine, dot = explorer.cosine(), explorer.dot_product()
    explorer.length_a.value = 2.5
    assert explorer.cosine() == pytest.approx(cosine)
    assert explorer.dot_product() == pytest.approx(2.5 * dot)
    explorer.length_b.value = 0.0
    assert explorer.cosine() is None and "undefined" in explorer.readout.value


def test_similarity_heatmap_is_x_xt_and_follows_the_controls():
    heatmap = SimilarityHeatmap(WORDS, VECTORS)
    assert np.allclose(heatmap.matrix(), VECTORS @ VECTORS.T)
    assert np.allclose(heatmap.matrix()[0], [1.25, 1.20, 0.10])
    assert [w for w, _ in heatmap.ranking()] == ["dog", "car"]
    assert "dog (1.20), car (0.10)" in heatmap.readout.value

    before = heatmap.plot.value
    heatmap.measure.value = "cosine similarity"
    expected = torch.nn.functional.cosine_similarity(
        torch.from_numpy(VECTORS)[:, None, :], torch.from_numpy(VECTORS)[None, :, :], dim=-1
    ).numpy()
    assert np.allclose(heatmap.matrix(), expected)
    assert heatmap.plot.value != before and "cosine similarity" in heatmap.readout.value

    heatmap.word.value = 2  # car
    assert heatmap.ranking()[0][0] == "dog"
    assert "Most similar to <b>car</b>" in heatmap.readout.value


@pytest.mark.parametrize(
    ("words", "vectors", "message"),
    [
        (["a", "b"], np.ones(2), "2-D"),
        (["a"], np.ones((2, 2)), "1 words but 2"),
        (["a"], np.ones((1, 2)), "at least two"),
        (["a", "b"], np.array([[1.0, 0.0], [0.0, 0.0]]), "nonzero length"),
    ],
)
def test_similarity_heatmap_rejects_bad_input(words, vectors, message):
    with pytest.raises(ValueError, match=message):
        SimilarityHeatmap(words, vectors)


def test_variance_simulation_variance_tracks_d_k_and_scaling_removes_it():
    simulation = VarianceSimulation(n_samples=4000, seed=1)
    simulation.d_k.value = 256
    samples = simulation.samples()
    assert samples.shape == (4000,)
    assert abs(np.var(samples) - 256) < 0.1 * 256
    assert f"<b>{np.var(samples):.2f}</b>" in simulation.readout.value
    unscaled_top = simulation.largest_weight(samples)

    simulation.scaled.value = True
    scaled = simulation.samples()
    assert np.allclose(scaled, samples / 16.0)
    assert abs(np.var(scaled) - 1.0) < 0.1
    assert "theory: 1" in simulation.readout.value
    assert simulation.largest_weight(scaled) < unscaled_top  # scaling undoes the saturation


def test_variance_simulation_resample_draws_new_samples():
    simulation = VarianceSimulation(n_samples=500, seed=3)
    before_samples, before_plot = simulation.samples(), simulation.plot.value
    simulation.resample.click()
    assert simulation.seed == 4
    assert not np.allclose(simulation.samples(), before_samples)
    assert simulation.plot.value != before_plot


def test_largest_weight_matches_torch_softmax():
    simulation = VarianceSimulation(n_samples=64, seed=0)
    scores = np.random.default_rng(5).normal(scale=5.0, size=64)
    expected = torch.softmax(torch.from_numpy(scores.reshape(-1, 8)), dim=-1).max(dim=-1).values
    assert simulation.largest_weight(scores) == pytest.approx(float(expected.mean()))
    with pytest.raises(ValueError, match="n_samples"):
        VarianceSimulation(n_samples=4)

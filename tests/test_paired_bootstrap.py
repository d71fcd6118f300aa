"""The paired bootstrap of two systems' BLEU, on sacreBLEU's own resamples."""

import numpy as np
import pytest
from sacrebleu.metrics import BLEU
from sacrebleu.significance import PairedTest

from transformer_course.translation.paired_bootstrap import _resampled_bleu, paired_bootstrap

REFERENCES = [f"el gato {i} come pescado con el perro negro" for i in range(30)]
SHORT = [" ".join(r.split()[:5]) for r in REFERENCES]
MOSTLY_RIGHT = [r if i % 3 else " ".join(r.split()[:6]) for i, r in enumerate(REFERENCES)]


def test_the_resamples_are_sacrebleus():
    test = PairedTest(
        [("a", SHORT), ("b", MOSTLY_RIGHT)], {"BLEU": BLEU()}, [REFERENCES], test_type="bs", n_samples=200
    )
    _, results = test()
    indices = np.random.default_rng(test._seed).choice(
        len(REFERENCES), size=(200, len(REFERENCES)), replace=True
    )
    metric = test.metrics["BLEU"]
    assert _resampled_bleu(metric, SHORT, REFERENCES, indices).mean() == pytest.approx(
        results["BLEU"][0].mean
    )
    assert _resampled_bleu(metric, MOSTLY_RIGHT, REFERENCES, indices).mean() == pytest.approx(
        results["BLEU"][1].mean
    )


def test_a_clearly_better_system_is_separated_and_a_near_copy_is_not():
    better = paired_bootstrap(("short", SHORT), ("mostly right", MOSTLY_RIGHT), REFERENCES, n_resamples=200)
    assert better.system_bleu > better.baseline_bleu
    low, high = better.interval
    assert 0 < low <= better.mean_difference <= high and better.p_value < 0.05
    assert "bs:200" in better.signature and "seed:12345" in better.signature
    assert "95% interval" in better.summary()
    near_copy = paired_bootstrap(
        ("a", SHORT), ("b", [REFERENCES[0], *SHORT[1:]]), REFERENCES, n_resamples=200
    )
    low, high = near_copy.interval
    assert low <= 0 <= high and near_copy.p_value > 0.05


def test_the_same_call_gives_the_same_numbers():
    first = paired_bootstrap(("a", SHORT), ("b", MOSTLY_RIGHT), REFERENCES, n_resamples=100)
    assert first == paired_bootstrap(("a", SHORT), ("b", MOSTLY_RIGHT), REFERENCES, n_resamples=100)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="as many hypotheses"):
        paired_bootstrap(("a", SHORT), ("b", MOSTLY_RIGHT[:3]), REFERENCES)
    with pytest.raises(TypeError, match="lists of sentences"):
        paired_bootstrap(("a", "one"), ("b", "two"), ["one"])
    with pytest.raises(ValueError, match="40 resamples"):
        paired_bootstrap(("a", SHORT), ("b", MOSTLY_RIGHT), REFERENCES, n_resamples=10)

"""Is one system's BLEU really higher than another's on this test set? A paired bootstrap.

Paired bootstrap resampling (Koehn, 2004) draws, many times, a test set of the same size from the
sentences with replacement, and scores both systems on each draw: the same sentences for both, so
the spread of the difference comes from which sentences happen to be in a test set, not from the
two systems' unrelated luck. sacreBLEU implements it (``sacrebleu.significance.PairedTest`` with
``test_type="bs"``): the p-value and each system's resampled mean come from there. It does not
return the resampled differences themselves, so :func:`paired_bootstrap` recomputes them from the
same resamples (the same seed and the same draw of indices) to give the difference's interval; a
unit test checks that the recomputed scores reproduce sacreBLEU's means.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sacrebleu.metrics import BLEU
from sacrebleu.significance import PairedTest


@dataclass(frozen=True)
class BootstrapComparison:
    """BLEU of a system against a baseline on the same sentences, with a paired bootstrap."""

    baseline: str
    system: str
    baseline_bleu: float
    system_bleu: float
    mean_difference: float
    interval: tuple[float, float]
    p_value: float
    n_sentences: int
    signature: str

    def summary(self) -> str:
        low, high = self.interval
        return (
            f"BLEU {self.baseline} {self.baseline_bleu:.1f}, {self.system} {self.system_bleu:.1f} "
            f"on {self.n_sentences} sentences: {self.system} - {self.baseline} = "
            f"{self.system_bleu - self.baseline_bleu:+.1f}\nover the resamples: mean difference "
            f"{self.mean_difference:+.1f} BLEU, 95% interval [{low:+.1f}, {high:+.1f}], "
            f"p = {self.p_value:.3f}\n({self.signature})"
        )


def _resampled_bleu(
    metric: BLEU, hypotheses: Sequence[str], references: Sequence[str], indices: np.ndarray
) -> np.ndarray:
    # sacreBLEU's own steps in _paired_bs_test: sentence statistics, summed over each resample.
    stats = np.array(metric._extract_corpus_statistics(list(hypotheses), [list(references)]), dtype="float32")
    return np.array([metric._compute_score_from_stats(stats[row].sum(0)).score for row in indices])


def paired_bootstrap(
    baseline: tuple[str, Sequence[str]],
    system: tuple[str, Sequence[str]],
    references: Sequence[str],
    n_resamples: int = 1000,
) -> BootstrapComparison:
    """Compare two systems' corpus BLEU on the same ``references`` by paired bootstrap.

    ``baseline`` and ``system`` are ``(name, hypotheses)``. The seed is sacreBLEU's
    (``SACREBLEU_SEED``, 12345 unless set), printed in the signature. The 95% interval of the
    difference uses the same order statistics as sacreBLEU's intervals (the 25th of every 1,000
    resamples from each end).
    """
    names = (baseline[0], system[0])
    hypotheses = (list(baseline[1]), list(system[1]))
    if isinstance(references, str) or any(isinstance(h, str) for h in (baseline[1], system[1])):
        raise TypeError("pass lists of sentences, not single strings")
    if not references or any(len(h) != len(references) for h in hypotheses):
        raise ValueError(
            f"need as many hypotheses per system as references: got {len(hypotheses[0])}, "
            f"{len(hypotheses[1])} and {len(references)}"
        )
    if n_resamples < 40:
        raise ValueError(f"a 95% interval needs at least 40 resamples, got {n_resamples}")
    test = PairedTest(
        list(zip(names, hypotheses, strict=True)),
        {"BLEU": BLEU()},
        [list(references)],
        test_type="bs",
        n_samples=n_resamples,
    )
    signatures, results = test()
    seed = test._seed
    if seed is None:
        raise ValueError("SACREBLEU_SEED is 'none': the bootstrap needs a fixed seed to be repeatable")
    base_result, system_result = results["BLEU"]
    indices = np.random.default_rng(seed).choice(
        len(references), size=(n_resamples, len(references)), replace=True
    )
    metric = test.metrics["BLEU"]
    differences = np.sort(
        _resampled_bleu(metric, hypotheses[1], references, indices)
        - _resampled_bleu(metric, hypotheses[0], references, indices)
    )
    cut = n_resamples // 40
    return BootstrapComparison(
        baseline=names[0],
        system=names[1],
        baseline_bleu=float(base_result.score),
        system_bleu=float(system_result.score),
        mean_difference=float(differences.mean()),
        interval=(float(differences[cut]), float(differences[n_resamples - cut - 1])),
        p_value=float(system_result.p_value),
        n_sentences=len(references),
        signature=str(signatures["BLEU"]),
    )

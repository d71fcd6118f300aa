"""The ablation runner: one variant per change, several seeds, results never over the shipped ones."""

import json

import pytest

from transformer_course import ablations


def test_every_variant_changes_exactly_one_thing():
    from transformer_course.translation.settings import preset

    base = preset("quick")
    for name, changes in ablations.VARIANTS.items():
        settings = preset("quick", **changes)
        assert settings.model != base.model or name == "baseline", f"{name} changes nothing"
        assert settings.vocab_size == base.vocab_size, "variants must share the corpus's vocabulary"


def test_a_short_run_writes_its_result(tmp_path, monkeypatch):
    monkeypatch.setattr(ablations, "shared_data", _tiny_data)
    ablations.main(["--variants", "learned_positions", "--seeds", "4", "--steps", "2",
                    "--eval-sentences", "1", "--out", str(tmp_path)])  # fmt: skip
    result = json.loads((tmp_path / "learned_positions_seed4.json").read_text())
    run = (result["variant"], result["seed"], result["steps"], result["n_eval"])
    assert run == ("learned_positions", 4, 2, 1)
    assert result["changes"] == {"learned_positions": True} and 0 <= result["length_bleu"] <= 100
    assert result["n_length_beyond"] + result["n_length_within"] == 1
    assert ablations.load_results(tmp_path) == {"learned_positions": [result]}


def _tiny_data():
    from transformer_course.translation.corpus import make_corpus
    from transformer_course.translation.settings import preset
    from transformer_course.translation.training import prepare_data

    return prepare_data(preset("quick"), make_corpus(n_train=300, n_valid=5, n_test=5, n_length=5, seed=0))


def test_only_pairs_longer_in_tokens_than_every_training_pair_reach_unseen_positions():
    data = _tiny_data()
    training_pairs = list(data.corpus.train[:20])
    assert ablations.reaches_unseen_positions(data, training_pairs, 128) == [False] * 20
    source, target = max(data.corpus.train, key=lambda pair: len(pair[0]))
    assert ablations.reaches_unseen_positions(data, [(f"{source} {source}", target)], 128) == [True]


def test_the_shipped_results_are_protected(tmp_path):
    with pytest.raises(SystemExit, match="update-shipped"):
        ablations.main(["--out", str(ablations.SHIPPED)])
    with pytest.raises(FileNotFoundError, match="no ablation results"):
        ablations.load_results(tmp_path)


def test_summary_is_mean_and_sample_spread(tmp_path):
    for seed, bleu in enumerate([10.0, 12.0, 14.0]):
        run = {"variant": "heads_1", "seed": seed, "test_bleu": bleu}
        (tmp_path / f"heads_1_seed{seed}.json").write_text(json.dumps(run))
    summary = ablations.summarize(ablations.load_results(tmp_path), "test_bleu")["heads_1"]
    assert (summary.mean, summary.std, summary.low, summary.high, summary.n) == (12.0, 2.0, 10.0, 14.0, 3)
    assert str(summary) == " 12.0 ±  2.0"


def test_shipped_results_cover_every_variant_with_three_seeds():
    runs = ablations.load_results()
    assert list(runs) == list(ablations.VARIANTS)
    for name, results in runs.items():
        assert len({r["seed"] for r in results}) >= 3, f"{name} needs at least three seeds"
        assert len({r["steps"] for r in results}) == 1 and results[0]["corpus_seed"] == ablations.CORPUS_SEED


def test_comparison_says_separated_only_when_every_seed_is_on_one_side():
    below = ablations.compare([75.5, 76.8, 78.5], [80.3, 86.6, 83.7])
    assert below.separated and below.difference < 0 and "every seed below" in below.verdict()
    assert below.chance == 2 / 20, "three seeds each: 2 of the 20 orders are separated by chance"
    mixed = ablations.compare([43.2, 35.2, 46.2], [44.5, 42.0, 47.1])
    assert not mixed.separated and "within the seeds' spread" in mixed.verdict()
    with pytest.raises(ValueError):
        ablations.compare([], [1.0])

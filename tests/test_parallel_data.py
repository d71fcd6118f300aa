"""Loading tab-separated parallel corpora (Tatoeba / Multi30k export layout)."""

from pathlib import Path

import pytest

from transformer_course.translation.parallel_data import ParallelFormatError, load_tsv, split_pairs

TINY = Path(__file__).parent / "data" / "tiny_en_es.tsv"


def test_loads_pairs_ignoring_attribution_and_blank_lines():
    pairs = load_tsv(TINY)
    assert len(pairs) == 10
    assert pairs[0] == ("Go.", "Ve.")
    assert pairs[1] == ("Hello!", "¡Hola!")
    assert ("Do you like coffee?", "¿Te gusta el café?") in pairs


def test_swap_and_max_pairs():
    assert load_tsv(TINY, max_pairs=2, swap=True) == [("Ve.", "Go."), ("¡Hola!", "Hello!")]
    with pytest.raises(ValueError, match="max_pairs"):
        load_tsv(TINY, max_pairs=0)


def test_text_is_normalized_to_nfc(tmp_path):
    path = tmp_path / "nfd.tsv"
    path.write_text("Coffee.\tCafe\u0301.\n", encoding="utf-8")
    assert load_tsv(path) == [("Coffee.", "Café.")]


def test_malformed_line_names_the_line(tmp_path):
    path = tmp_path / "bad.tsv"
    path.write_text("Go.\tVe.\nno tab here\n", encoding="utf-8")
    with pytest.raises(ParallelFormatError, match="line 2 has no tab"):
        load_tsv(path)
    assert load_tsv(path, skip_bad_lines=True) == [("Go.", "Ve.")]


def test_friendly_errors_for_missing_empty_and_non_utf8_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="tab-separated"):
        load_tsv(tmp_path / "missing.tsv")
    with pytest.raises(IsADirectoryError):
        load_tsv(tmp_path)
    empty = tmp_path / "empty.tsv"
    empty.write_text("\n\n", encoding="utf-8")
    with pytest.raises(ParallelFormatError, match="no sentence pairs"):
        load_tsv(empty)
    latin = tmp_path / "latin1.tsv"
    latin.write_bytes("Coffee.\tCaf\u00e9.\n".encode("latin-1"))
    with pytest.raises(ParallelFormatError, match="UTF-8"):
        load_tsv(latin)


def test_split_keeps_duplicate_sources_together_and_is_deterministic():
    pairs = load_tsv(TINY)
    train, valid, test = split_pairs(pairs, valid_fraction=0.2, test_fraction=0.2, seed=1)
    assert sorted(train + valid + test) == sorted(pairs)
    sources = [{p[0] for p in part} for part in (train, valid, test)]
    assert not (sources[0] & sources[1] or sources[0] & sources[2] or sources[1] & sources[2])
    assert (train, valid, test) == split_pairs(pairs, 0.2, 0.2, seed=1)
    with pytest.raises(ValueError, match="leave something"):
        split_pairs(pairs, 0.5, 0.5)


def test_real_corpus_has_the_generated_corpus_splits():
    from transformer_course.translation.parallel_data import real_corpus, source_words

    pairs = [(" ".join(["w"] * (i % 20 + 1)) + f" {i // 3}.", f"s{i}") for i in range(600)]
    pairs += [(pairs[0][0], "otra traducción")]  # a source with two translations
    corpus = real_corpus(pairs, seed=1)
    splits = {name: corpus.split(name) for name in ("train", "valid", "test", "length")}
    assert sum(len(s) for s in splits.values()) == len(pairs)
    assert all(source_words(p) > corpus.max_train_words for p in splits["length"])
    assert max(source_words(p) for p in splits["train"]) == corpus.max_train_words
    assert 0 < len(splits["length"]) <= 0.05 * len(pairs)
    sides = {name: {p[0] for p in split} for name, split in splits.items()}
    assert not sides["train"] & (sides["valid"] | sides["test"]), "no test sentence is seen in training"
    with pytest.raises(ValueError, match="too few"):
        real_corpus(pairs[:1], valid_fraction=0.9)

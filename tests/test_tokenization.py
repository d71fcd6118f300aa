"""The BPE tokenizer: special ids, byte fallback, exact round trips, save and load."""

import pytest

from transformer_course.translation.corpus import make_corpus
from transformer_course.translation.tokenization import (
    BYTE_TOKENS,
    SubwordTokenizer,
    bpe_race,
    train_tokenizer,
)


@pytest.fixture(scope="module")
def setup():
    corpus = make_corpus(n_train=2000, n_valid=50, n_test=50, n_length=20, seed=5)
    tokenizer = train_tokenizer([t for p in corpus.train for t in p], vocab_size=600)
    return corpus, tokenizer


def test_special_token_ids(setup):
    _, tok = setup
    assert (tok.pad_id, tok.bos_id, tok.eos_id, tok.unk_id) == (0, 1, 2, 3)
    assert [tok.id_to_token(i) for i in range(4)] == ["<pad>", "<s>", "</s>", "<unk>"]
    assert tok.vocab_size == 600
    assert [tok.id_to_token(i) for i in range(600 - 256, 600)] == list(BYTE_TOKENS)


def test_round_trip_is_exact_on_unseen_sentences(setup):
    corpus, tok = setup
    for pair in corpus.test + corpus.length:
        for text in pair:
            ids = tok.encode(text)
            assert ids[-1] == tok.eos_id
            assert tok.decode(ids) == text


def test_decode_stops_at_eos_and_skips_padding(setup):
    _, tok = setup
    ids = tok.encode("El gato.", add_bos=True)
    assert ids[0] == tok.bos_id
    assert tok.decode(ids + [tok.pad_id, *tok.encode("Otro.")]) == "El gato."


def test_subwords_split_rare_words(setup):
    _, tok = setup
    assert len(tok.tokens("Comeremos")) > 1


@pytest.mark.parametrize("text", ["日本語 🍎", "Zürich, naïve Œuvre!", "tab\there", "x\u00a0y", "Ω≈ç√∫"])
def test_unseen_characters_fall_back_to_bytes(setup, text):
    _, tok = setup
    ids = tok.encode(text, add_eos=False)
    assert tok.unk_id not in ids, "byte fallback: nothing is out of vocabulary"
    assert tok.decode(ids) == text
    assert "<0xF0>" in tok.tokens("🍎"), "an emoji is written as its four UTF-8 bytes"


def test_what_decoding_does_not_give_back(setup):
    _, tok = setup
    assert tok.decode(tok.encode("Cafe\u0301.")) == "Café.", "text is normalized to NFC"
    assert tok.decode(tok.encode("  two  spaces")) == " two  spaces", "a leading space is dropped"


def test_save_and_load_give_the_same_ids(setup, tmp_path):
    corpus, tok = setup
    path = tmp_path / "tok.json"
    tok.save(path)
    loaded = SubwordTokenizer.load(path)
    text = corpus.test[0][1]
    assert loaded.encode(text) == tok.encode(text)
    assert SubwordTokenizer.from_json(tok.to_json()).encode(text) == tok.encode(text)


def test_friendly_errors(tmp_path):
    with pytest.raises(ValueError, match="vocab_size"):
        train_tokenizer(["a b"], vocab_size=3)
    with pytest.raises(ValueError, match="non-empty"):
        train_tokenizer(["  "])
    with pytest.raises(FileNotFoundError):
        SubwordTokenizer.load(tmp_path / "none.json")
    tok = train_tokenizer(["hola mundo"], vocab_size=300)
    with pytest.raises(TypeError):
        tok.encode(3)
    with pytest.raises(TypeError):
        tok.encode_batch("hola")


def test_bpe_race_takes_the_whole_text_unless_grading(monkeypatch, setup):
    corpus, _ = setup
    texts = [text for pair in corpus.train for text in pair]
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    assert bpe_race(corpus.train) == (texts, 2000)
    monkeypatch.setenv("NBGRADER_EXECUTION", "validate")
    assert bpe_race(corpus.train) == (texts[:200], 400)
    assert bpe_race(corpus.train, vocab_size=300) == (texts[:200], 300)

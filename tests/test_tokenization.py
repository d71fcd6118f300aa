"""The BPE tokenizer: special ids, exact round trips, save and load."""

import pytest

from transformer_course.corpus import make_corpus
from transformer_course.tokenization import SubwordTokenizer, train_tokenizer


@pytest.fixture(scope="module")
def setup():
    corpus = make_corpus(n_train=2000, n_valid=50, n_test=50, n_length=20, seed=5)
    tokenizer = train_tokenizer([t for p in corpus.train for t in p], vocab_size=600)
    return corpus, tokenizer


def test_special_token_ids(setup):
    _, tok = setup
    assert (tok.pad_id, tok.bos_id, tok.eos_id, tok.unk_id) == (0, 1, 2, 3)
    assert [tok.id_to_token(i) for i in range(4)] == ["<pad>", "<s>", "</s>", "<unk>"]
    assert tok.vocab_size <= 600


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
    assert tok.encode("日本", add_eos=False)[-1] == tok.unk_id


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
    tok = train_tokenizer(["hola mundo"], vocab_size=50)
    with pytest.raises(TypeError):
        tok.encode(3)
    with pytest.raises(TypeError):
        tok.encode_batch("hola")

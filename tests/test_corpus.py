"""The generated English -> Spanish corpus: determinism, splits and Spanish grammar."""

import pytest

from transformer_course.translation.corpus import (
    ADJECTIVES,
    NOUNS,
    conjugate,
    english_length,
    english_third_person,
    generate_pairs,
    make_corpus,
)


@pytest.fixture(scope="module")
def corpus():
    return make_corpus(n_train=3000, n_valid=200, n_test=200, n_length=100, seed=3)


def test_same_seed_same_corpus_and_other_seed_differs():
    a = make_corpus(n_train=300, n_valid=20, n_test=20, n_length=20, seed=1)
    b = make_corpus(n_train=300, n_valid=20, n_test=20, n_length=20, seed=1)
    c = make_corpus(n_train=300, n_valid=20, n_test=20, n_length=20, seed=2)
    assert a == b
    assert a.train != c.train


def test_splits_have_requested_sizes_and_share_no_sentence(corpus):
    assert (len(corpus.train), len(corpus.valid), len(corpus.test), len(corpus.length)) == (
        3000,
        200,
        200,
        100,
    )
    seen = [p[0] for split in ("train", "valid", "test", "length") for p in corpus.split(split)]
    assert len(seen) == len(set(seen)), "a source sentence appears in two splits"


def test_length_split_is_longer_than_every_training_sentence(corpus):
    longest_train = max(english_length(p) for p in corpus.train)
    assert longest_train <= corpus.max_train_words
    assert min(english_length(p) for p in corpus.length) > longest_train


def test_vocabulary_has_hundreds_of_words(corpus):
    words = {w.strip(",.?¿").lower() for p in corpus.train for w in p[0].split()}
    assert len(words) > 300
    assert len(NOUNS) > 100 and len(ADJECTIVES) > 40


@pytest.mark.parametrize(
    "infinitive, tense, person, expected",
    [
        ("comer", "present", "3s", "come"),
        ("comer", "past", "3s", "comió"),
        ("hablar", "future", "1p", "hablaremos"),
        ("vivir", "present", "1p", "vivimos"),
        ("buscar", "past", "1s", "busqué"),
        ("llegar", "past", "1s", "llegué"),
        ("escribir", "past", "3p", "escribieron"),
        ("leer", "past", "3s", "leyó"),
        ("ser", "present", "3p", "son"),
        ("estar", "past", "1s", "estuve"),
        ("decir", "future", "2s", "dirás"),
    ],
)
def test_conjugation(infinitive, tense, person, expected):
    assert conjugate(infinitive, tense, person) == expected


def test_conjugation_rejects_bad_arguments():
    with pytest.raises(ValueError, match="tense"):
        conjugate("comer", "pluperfect", "3s")
    with pytest.raises(ValueError, match="person"):
        conjugate("comer", "past", "4s")
    with pytest.raises(ValueError, match="infinitive"):
        conjugate("gato", "past", "3s")


def test_agreement_and_plural_spelling():
    adjective = {a.english: a for a in ADJECTIVES}
    assert adjective["red"].agree("f", True) == "rojas"
    assert adjective["blue"].agree("f", True) == "azules"
    assert adjective["happy"].agree("m", True) == "felices"
    assert adjective["weak"].agree("m", True) == "débiles"
    assert adjective["brown"].agree("m", True) == "marrones"
    assert adjective["young"].agree("f", True) == "jóvenes"
    noun = {n.english: n for n in NOUNS}
    assert noun["song"].spanish_plural == "canciones"
    assert noun["pencil"].spanish_plural == "lápices"
    assert noun["tree"].spanish_plural == "árboles"
    assert noun["mouse"].english_plural == "mice"
    assert english_third_person("watch") == "watches"
    assert english_third_person("look for") == "looks for"


def test_articles_agree_with_the_noun_they_introduce(corpus):
    gender = {}
    for n in NOUNS:
        gender[n.spanish] = (n.gender, False)
        gender[n.spanish_plural] = (n.gender, True)
    article = {
        "el": ("m", False),
        "la": ("f", False),
        "los": ("m", True),
        "las": ("f", True),
        "un": ("m", False),
        "una": ("f", False),
        "del": ("m", False),
        "al": ("m", False),
    }
    checked = 0
    for _, spanish in corpus.train:
        words = [w.strip(",.?¿").lower() for w in spanish.split()]
        for left, right in zip(words[:-1], words[1:], strict=True):
            if left in article and right in gender:
                assert article[left] == gender[right], f"{left} {right} in {spanish!r}"
                checked += 1
    assert checked > 1000


def test_questions_negation_and_contractions(corpus):
    for english, spanish in corpus.train:
        assert english.endswith("?") == spanish.startswith("¿") == spanish.endswith("?")
        words = spanish.lower().replace("¿", " ").split()
        assert (" not " in english) == ("no" in words)
        assert " de el " not in spanish and " a el " not in spanish
        assert spanish[0].isupper() or spanish[1].isupper()


def test_generate_pairs_is_deterministic_and_checks_arguments():
    assert generate_pairs(5, seed=9) == generate_pairs(5, seed=9)
    with pytest.raises(ValueError, match="count"):
        generate_pairs(-1)
    with pytest.raises(ValueError, match="max_length_words"):
        make_corpus(n_train=10, max_train_words=12, max_length_words=12)

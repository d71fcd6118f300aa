"""Lesson 8's byte-pair-encoding exercise: its reference solution is the course's tokenizer, exactly.

The lesson states the rules of ``transformer_course.translation.tokenization`` (the ``tokenizers`` library's
BPE trainer: words cut SentencePiece-style, pairs weighted by word counts, ties to the smallest ids,
merges by rank, byte fallback, special tokens whole) and has students write ``train_bpe`` and
``encode_bpe`` to them. The hidden tests compare a submission with the library, so the reference
solution must agree with it: here it is run, as the lesson's solution cells hold it, on the
translator's corpus, and its vocabulary, merges and ids are compared with the library's.
"""

import json
from collections.abc import Callable

import pytest

from course_build.authoring.source import build_source_notebook
from course_build.cell_roles import grade_id, is_code_answer
from transformer_course.translation.corpus import make_corpus
from transformer_course.translation.tokenization import train_tokenizer

LESSON = "08_encoder_decoder"
SOLUTION_CELLS = ("merge_pair", "train_bpe", "encode_bpe")
# Texts away from the corpus's own: spaces at the ends and doubled, punctuation, characters the
# vocabulary lacks (byte fallback), special tokens written in the text.
EDGE_TEXTS = [
    "",
    " ",
    "  two  spaces ",
    "¿Qué?¡No!",
    "Zoë ate 寿司 at the café 🙂.",
    "hello</s>world",
    "<s> the cat <pad><unk>",
    "e\u0301 is é after NFC",
]


@pytest.fixture(scope="module")
def reference() -> dict[str, Callable]:
    """The lesson's solution cells for the exercise, run in a fresh namespace."""
    cells = {
        grade_id(cell): cell
        for cell in build_source_notebook(LESSON).cells
        if cell.cell_type == "code" and "nbgrader" in cell.metadata and is_code_answer(cell)
    }
    missing = [name for name in SOLUTION_CELLS if name not in cells]
    assert not missing, f"lesson {LESSON} has no solution cell {missing}"
    namespace: dict = {}
    for name in SOLUTION_CELLS:
        exec(compile(cells[name].source, name, "exec"), namespace)
    return namespace


@pytest.fixture(scope="module")
def corpus_texts() -> tuple[list[str], list[str]]:
    corpus = make_corpus(seed=0)
    return [t for pair in corpus.train for t in pair], [t for pair in corpus.valid for t in pair]


def _course_model(texts: list[str], vocab_size: int) -> tuple[object, list[str], list[tuple[str, str]]]:
    """The course's tokenizer trained on ``texts``, with its vocabulary (by id) and merges."""
    tokenizer = train_tokenizer(texts, vocab_size=vocab_size)
    model = json.loads(tokenizer.to_json())["model"]
    vocab = sorted(model["vocab"], key=model["vocab"].get)
    return tokenizer, vocab, [tuple(pair) for pair in model["merges"]]


def _assert_same_tokenizer(
    reference: dict, texts: list[str], vocab_size: int, check_texts: list[str]
) -> None:
    """The reference learns the course tokenizer's merges and vocabulary, and encodes as it does."""
    tokenizer, vocab, merges = _course_model(texts, vocab_size)
    got_vocab, got_merges = reference["train_bpe"](texts, len(merges))
    assert [tuple(pair) for pair in got_merges] == merges
    assert got_vocab == vocab
    for text in check_texts + EDGE_TEXTS:
        expected = tokenizer.encode(text, add_eos=False)
        assert reference["encode_bpe"](text, got_vocab, got_merges) == expected, text


def test_reference_is_the_course_tokenizer_on_part_of_the_corpus(reference, corpus_texts) -> None:
    train, valid = corpus_texts
    _assert_same_tokenizer(reference, train[:6000], 700, valid[:300])


def test_reference_is_the_course_tokenizer_on_small_odd_texts(reference) -> None:
    """Ties everywhere, repeated letters (overlapping pairs), punctuation and accents."""
    texts = ["aaaa aaa aa a", "banana bandana ananas", "¡Hola! ¿Qué tal? Muy bien.", "abab baba abba"]
    _assert_same_tokenizer(reference, texts, 300, texts)


def test_tie_break_is_by_id_not_by_string(reference) -> None:
    """The lesson's example: ('b', 'an') beats ('an', 'a') at equal counts, though 'an' < 'b'."""
    _, merges = reference["train_bpe"](["a banana, a bandana", "an ant"], 2)
    assert [tuple(pair) for pair in merges] == [("a", "n"), ("b", "an")]
    _, _, course_merges = _course_model(["a banana, a bandana", "an ant"], 300)
    assert course_merges[:2] == [("a", "n"), ("b", "an")]


@pytest.mark.slow
def test_reference_is_lesson_9s_tokenizer(reference, corpus_texts) -> None:
    """The whole training split at lesson 9's vocabulary size (about a minute)."""
    train, valid = corpus_texts
    _assert_same_tokenizer(reference, train, 2000, valid)

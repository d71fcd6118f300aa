"""Subword tokenization: a byte-pair-encoding vocabulary trained locally with ``tokenizers``.

BPE starts from characters and repeatedly merges the most frequent adjacent pair, so frequent
words become one token while rare ones split into pieces (``comeremos`` may become ``com`` +
``eremos``). The paper uses a shared source-target BPE vocabulary of about 37,000 tokens; the
course's corpus is tiny, so a few thousand suffice. One vocabulary serves both languages, which
lets the model tie its embeddings.

Words are split on spaces in the SentencePiece style (a ``▁`` marks the start of a word) and
punctuation is kept apart. The vocabulary also holds the 256 possible bytes (``<0xC3>``): a
character the vocabulary lacks is written as the bytes of its UTF-8 encoding (*byte fallback*),
so no text is ever out of vocabulary and decoding gives the text back. Two things do not come
back: text is normalized to Unicode NFC first (``e`` + combining accent becomes ``é``), and
one space at the very start of a text is dropped.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

from transformer_course.runtime import is_grading

PAD, BOS, EOS, UNK = "<pad>", "<s>", "</s>", "<unk>"
SPECIAL_TOKENS = (PAD, BOS, EOS, UNK)  # ids 0, 1, 2, 3 in this order
BYTE_TOKENS = tuple(f"<0x{byte:02X}>" for byte in range(256))  # the last 256 ids


class SubwordTokenizer:
    """A trained BPE vocabulary with the ids the model needs: pad=0, bos=1, eos=2, unk=3."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        for expected_id, token in enumerate(SPECIAL_TOKENS):
            if tokenizer.token_to_id(token) != expected_id:
                raise ValueError(
                    f"the tokenizer must map {token!r} to id {expected_id}; build it with "
                    "train_tokenizer() so the special tokens come first"
                )
        self._tokenizer = tokenizer

    pad_id = 0
    bos_id = 1
    eos_id = 2
    unk_id = 3

    @property
    def vocab_size(self) -> int:
        return self._tokenizer.get_vocab_size()

    def encode(self, text: str, add_bos: bool = False, add_eos: bool = True) -> list[int]:
        """Token ids of ``text``, followed by EOS (and preceded by BOS when asked)."""
        if not isinstance(text, str):
            raise TypeError(f"encode expects a string, got {type(text).__name__}")
        ids = self._tokenizer.encode(text).ids
        return ([self.bos_id] if add_bos else []) + ids + ([self.eos_id] if add_eos else [])

    def encode_batch(self, texts: Sequence[str], add_eos: bool = True) -> list[list[int]]:
        """Many sentences at once (the Rust side runs them in parallel)."""
        if isinstance(texts, str):
            raise TypeError("encode_batch expects a list of strings; use encode for one string")
        suffix = [self.eos_id] if add_eos else []
        return [e.ids + suffix for e in self._tokenizer.encode_batch(list(texts))]

    def decode(self, ids: Iterable[int]) -> str:
        """Text of ``ids``, stopping at the first EOS and skipping pad, BOS and EOS."""
        kept: list[int] = []
        for token in ids:
            token = int(token)
            if token == self.eos_id:
                break
            if token not in (self.pad_id, self.bos_id):
                kept.append(token)
        return self._tokenizer.decode(kept, skip_special_tokens=False)

    def tokens(self, text: str) -> list[str]:
        """The subword strings of ``text``, to show how BPE cut it."""
        return self._tokenizer.encode(text).tokens

    def id_to_token(self, token_id: int) -> str:
        token = self._tokenizer.id_to_token(int(token_id))
        if token is None:
            raise ValueError(f"id {token_id} is outside the vocabulary (size {self.vocab_size})")
        return token

    def save(self, path: str | Path) -> None:
        """Write the tokenizer as one JSON file."""
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._tokenizer.save(str(path))

    def to_json(self) -> str:
        return self._tokenizer.to_str()

    @classmethod
    def from_json(cls, text: str) -> SubwordTokenizer:
        return cls(Tokenizer.from_str(text))

    @classmethod
    def load(cls, path: str | Path) -> SubwordTokenizer:
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"no tokenizer file at {path}; train one with train_tokenizer()")
        return cls(Tokenizer.from_file(str(path)))


def _blank_tokenizer() -> Tokenizer:
    tokenizer = Tokenizer(models.BPE(unk_token=UNK))
    tokenizer.normalizer = normalizers.NFC()
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Metaspace(), pre_tokenizers.Punctuation()]
    )
    tokenizer.decoder = decoders.Metaspace()
    return tokenizer


def _with_byte_fallback(tokenizer: Tokenizer) -> Tokenizer:
    """The trained tokenizer with the 256 byte tokens appended, used for characters it lacks.

    ``tokenizers`` has the mechanism (``byte_fallback`` in the model, a ``ByteFallback``
    decoder that turns byte tokens back into characters) but its trainer does not add the byte
    tokens, so they are added here to the trained vocabulary.
    """
    spec = json.loads(tokenizer.to_str())
    vocab = spec["model"]["vocab"]
    first = len(vocab)
    vocab.update({token: first + i for i, token in enumerate(BYTE_TOKENS)})
    spec["model"]["byte_fallback"] = True
    spec["decoder"] = {"type": "Sequence", "decoders": [{"type": "ByteFallback"}, spec["decoder"]]}
    return Tokenizer.from_str(json.dumps(spec))


def train_tokenizer(texts: Iterable[str], vocab_size: int = 2000) -> SubwordTokenizer:
    """Learn a vocabulary of at most ``vocab_size`` tokens from ``texts`` (both languages).

    It holds the 4 special tokens, the 256 byte tokens and ``vocab_size - 260`` learned ones:
    the most frequent characters, then BPE merges.
    """
    smallest = len(SPECIAL_TOKENS) + len(BYTE_TOKENS) + 1
    if not isinstance(vocab_size, int) or vocab_size < smallest:
        raise ValueError(
            f"vocab_size must be an integer of at least {smallest} (4 special tokens, 256 bytes "
            f"and at least one learned token), got {vocab_size!r}"
        )
    texts = list(texts)
    if not texts or not any(text.strip() for text in texts):
        raise ValueError("train_tokenizer needs at least one non-empty sentence")
    tokenizer = _blank_tokenizer()
    learned = vocab_size - len(BYTE_TOKENS)
    trainer = trainers.BpeTrainer(
        vocab_size=learned,
        special_tokens=list(SPECIAL_TOKENS),
        limit_alphabet=learned - len(SPECIAL_TOKENS),
        show_progress=False,
    )
    tokenizer.train_from_iterator(texts, trainer=trainer)
    return SubwordTokenizer(_with_byte_fallback(tokenizer))


GRADING_RACE = (200, 400)  # sentences, vocabulary size


def bpe_race(pairs: Sequence[tuple[str, str]], vocab_size: int = 2000) -> tuple[list[str], int]:
    """The sentences and vocabulary size of lesson 8's race between the student's BPE trainer and
    :func:`train_tokenizer`: both sides of every pair, at ``vocab_size`` (lesson 9's, 2,000).

    While nbgrader runs the notebook (:func:`transformer_course.runtime.is_grading`) the race
    shrinks to the first ``GRADING_RACE`` sentences and vocabulary size (200 and 400): a trainer
    written like the lesson's reference solution recounts every pair after each merge, about a
    minute of CPU on the whole text, and the race decides no points.
    """
    texts = [text for pair in pairs for text in pair]
    if is_grading():
        sentences, grading_vocab_size = GRADING_RACE
        return texts[:sentences], min(vocab_size, grading_vocab_size)
    return texts, vocab_size

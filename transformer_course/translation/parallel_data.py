"""Loading real parallel corpora from tab-separated files.

Tatoeba's sentence-pair exports (and ManyThings' ``spa.txt``) and many Multi30k conversions put
one pair per line: ``source<TAB>target``, optionally followed by more tab-separated columns such
as the attribution. :func:`real_corpus` cuts such pairs into the same four splits as lesson 9's
generated corpus, so ``python -m transformer_course.train --data FILE`` trains and reports on a
real corpus exactly as on the generated one (``transformer_course.translation.downloads`` fetches one).
"""

from __future__ import annotations

import random
import unicodedata
from pathlib import Path

from transformer_course.translation.corpus import ParallelCorpus

Pair = tuple[str, str]


class ParallelFormatError(ValueError):
    """A line of a parallel corpus file does not have the expected ``source<TAB>target`` shape."""


def load_tsv(
    path: str | Path,
    max_pairs: int | None = None,
    skip_bad_lines: bool = False,
    swap: bool = False,
) -> list[Pair]:
    """Read ``(source, target)`` pairs from a ``source<TAB>target[<TAB>...]`` UTF-8 file.

    Extra columns are ignored and blank lines skipped. A malformed line raises
    :class:`ParallelFormatError` naming the line, unless ``skip_bad_lines`` is set.
    ``swap=True`` reads the second column as the source (to translate the other way).
    Text is normalized to Unicode NFC so that ``é`` has one spelling.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(
            f"no parallel corpus at {path}; download a tab-separated export (for example "
            "Tatoeba's sentence pairs) and pass its path"
        )
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a folder; pass the .tsv/.txt file inside it")
    if max_pairs is not None and (not isinstance(max_pairs, int) or max_pairs < 1):
        raise ValueError(f"max_pairs must be a positive integer or None, got {max_pairs!r}")
    pairs: list[Pair] = []
    try:
        handle = path.open(encoding="utf-8-sig")
        with handle:
            for number, line in enumerate(handle, start=1):
                line = line.rstrip("\r\n")
                if not line.strip():
                    continue
                pair = _parse_line(line, number, path, skip_bad_lines)
                if pair is None:
                    continue
                pairs.append((pair[1], pair[0]) if swap else pair)
                if max_pairs is not None and len(pairs) >= max_pairs:
                    break
    except UnicodeDecodeError as error:
        raise ParallelFormatError(
            f"{path} is not UTF-8 text ({error.reason} at byte {error.start}); re-save it as UTF-8"
        ) from None
    if not pairs:
        raise ParallelFormatError(f"{path} holds no sentence pairs")
    return pairs


def _parse_line(line: str, number: int, path: Path, skip_bad_lines: bool) -> Pair | None:
    columns = line.split("\t")
    problem = None
    if len(columns) < 2:
        problem = "has no tab: expected 'source<TAB>target'"
    elif not columns[0].strip() or not columns[1].strip():
        problem = "has an empty source or target"
    if problem is not None:
        if skip_bad_lines:
            return None
        shown = line if len(line) <= 60 else line[:57] + "..."
        raise ParallelFormatError(
            f"{path}, line {number} {problem}: {shown!r} (pass skip_bad_lines=True to skip such lines)"
        )
    source, target = (unicodedata.normalize("NFC", c.strip()) for c in columns[:2])
    return source, target


def split_pairs(
    pairs: list[Pair], valid_fraction: float = 0.05, test_fraction: float = 0.05, seed: int = 0
) -> tuple[list[Pair], list[Pair], list[Pair]]:
    """Shuffle (deterministically) and cut into train / valid / test.

    Duplicate source sentences (Tatoeba has many) are kept together on one side of the cut so
    that no test sentence was seen in training.
    """
    for name, value in (("valid_fraction", valid_fraction), ("test_fraction", test_fraction)):
        if not 0.0 <= value < 1.0:
            raise ValueError(f"{name} must be in [0, 1), got {value!r}")
    if valid_fraction + test_fraction >= 1.0:
        raise ValueError("valid_fraction + test_fraction must leave something to train on")
    groups: dict[str, list[Pair]] = {}
    for pair in pairs:
        groups.setdefault(pair[0], []).append(pair)
    sources = list(groups)
    random.Random(seed).shuffle(sources)
    n_valid = round(len(sources) * valid_fraction)
    n_test = round(len(sources) * test_fraction)

    def gather(keys: list[str]) -> list[Pair]:
        return [pair for key in keys for pair in groups[key]]

    return (
        gather(sources[n_valid + n_test :]),
        gather(sources[:n_valid]),
        gather(sources[n_valid : n_valid + n_test]),
    )


def source_words(pair: Pair) -> int:
    """The length used for a real corpus's length split: words of the source sentence."""
    return len(pair[0].split())


def real_corpus(
    pairs: list[Pair],
    seed: int = 0,
    valid_fraction: float = 0.05,
    test_fraction: float = 0.05,
    length_fraction: float = 0.02,
) -> ParallelCorpus:
    """Train, valid, test and length splits of real pairs, like the generated corpus's.

    The longest sources (about ``length_fraction`` of the pairs, by words, and at least the
    longest ones) become the *length* split, so that every sentence there is longer than any
    training sentence; the rest is cut by :func:`split_pairs`, with every copy of a source
    sentence on one side.
    """
    if not 0.0 <= length_fraction < 1.0:
        raise ValueError(f"length_fraction must be in [0, 1), got {length_fraction!r}")
    if not pairs:
        raise ValueError("no sentence pairs to split")
    lengths = sorted(source_words(pair) for pair in pairs)
    cut = lengths[min(len(lengths) - 1, int(len(lengths) * (1.0 - length_fraction)))]
    shorter = [n for n in lengths if n < lengths[-1]]
    if length_fraction == 0.0:
        cut = lengths[-1]
    elif cut == lengths[-1] and shorter:  # many pairs share the longest length: keep them out
        cut = shorter[-1]
    short = [pair for pair in pairs if source_words(pair) <= cut]
    long = [pair for pair in pairs if source_words(pair) > cut]
    train, valid, test = split_pairs(short, valid_fraction, test_fraction, seed)
    if not train:
        raise ValueError(f"only {len(pairs)} pairs: too few to leave any for training")
    return ParallelCorpus(train=train, valid=valid, test=test, length=long, max_train_words=cut)

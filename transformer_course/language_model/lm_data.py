"""The course's own prose as a character-level language-modelling corpus (lesson 10).

Lesson 10 trains a small GPT on text the course owns and ships: the Markdown prose of the lessons
before it. The text is a snapshot, ``transformer_course/data/course_prose.txt``, generated
deterministically from the lesson sources by

    python -m transformer_course.language_model.lm_data --lessons lessons --out transformer_course/data

It keeps the explanations only: no code cells, no quiz, and no model answers of written
exercises (those are for instructors). A snapshot, rather than reading ``lessons/`` at run time,
because the package must work without a checkout (Colab) and the shipped checkpoint must stay
trained on exactly the text it ships with; ``course_prose.json`` beside it records, for each
lesson, the hash of the prose taken from it, and the text's own hash.

The snapshot goes stale whenever a lesson's prose changes:
``python -m transformer_course.language_model.lm_data --check`` (and a fast test) says which
lessons changed, and ``bash scripts/regenerate_gpt.sh`` rebuilds the snapshot, retrains the GPT
and the position study on it and regenerates lesson 10.
Only the prose counts: editing a lesson's code, tests or model answers leaves the snapshot valid,
so those edits cost no retraining.

Characters are the tokens: the vocabulary is every character of the snapshot, sorted, plus id 0
for any character outside it. Paragraphs (blocks between blank lines) are split into training
and validation text, every tenth paragraph to validation, so both cover every lesson.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor

from transformer_course.shipped import DATA_DIR

PROSE_FILE = "course_prose.txt"
PROVENANCE_FILE = "course_prose.json"
VALIDATION_EVERY = 10
UNKNOWN_CHARACTER = "\ufffd"
# Rebuilds the snapshot and everything trained on it (the GPT, the position study, lesson 10).
REGENERATE_COMMAND = "bash scripts/regenerate_gpt.sh"


# --------------------------------------------------------------------------------------------
# The snapshot: lesson sources -> prose
# --------------------------------------------------------------------------------------------


def lesson_prose(source: Path) -> list[str]:
    """The Markdown cells of one lesson source (Jupytext MyST), without written model answers.

    Cells tagged ``manual`` hold the model answers of written exercises; they stay out because
    the snapshot ships to students.
    """
    import jupytext  # authoring dependency: needed only to regenerate the snapshot

    notebook = jupytext.read(source)
    cells = []
    for cell in notebook.cells:
        if cell.cell_type != "markdown" or "manual" in cell.metadata.get("tags", []):
            continue
        text = cell.source.strip()
        if text:
            cells.append(text)
    return cells


def prose_sources(lessons_dir: Path, before: int = 10) -> list[Path]:
    """Lesson sources ``NN_slug.md`` with ``NN < before``, in course order."""
    sources = sorted(p for p in Path(lessons_dir).glob("[0-9][0-9]_*.md") if int(p.name[:2]) < before)
    if not sources:
        raise FileNotFoundError(f"no lesson sources NN_slug.md in {lessons_dir}")
    return sources


def prose_hashes(lessons_dir: Path, before: int = 10) -> dict[str, str]:
    """Lesson file name -> sha256 of the prose the snapshot takes from it, in course order."""
    return {
        source.name: text_sha256("\n\n".join(lesson_prose(source)))
        for source in prose_sources(lessons_dir, before)
    }


def write_snapshot(lessons_dir: Path, out_dir: Path, before: int = 10) -> Path:
    """Write ``course_prose.txt`` and its provenance ``course_prose.json`` into ``out_dir``."""
    sources = prose_sources(lessons_dir, before)
    text = "\n\n".join(cell for source in sources for cell in lesson_prose(source)) + "\n"
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / PROSE_FILE
    target.write_text(text, encoding="utf-8")
    provenance = {
        "generated_by": REGENERATE_COMMAND,
        "prose_sha256": prose_hashes(lessons_dir, before),
        "characters": len(text),
        "sha256": text_sha256(text),
    }
    (out_dir / PROVENANCE_FILE).write_text(json.dumps(provenance, indent=2) + "\n", encoding="utf-8")
    return target


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def stale_lessons(lessons_dir: Path, data_dir: Path = DATA_DIR, before: int = 10) -> list[str]:
    """The lessons whose prose differs from what the snapshot in ``data_dir`` was built from.

    A lesson added since the snapshot, or dropped from ``lessons_dir``, counts as changed.
    Empty when the snapshot is current.
    """
    recorded = json.loads((Path(data_dir) / PROVENANCE_FILE).read_text(encoding="utf-8")).get(
        "prose_sha256", {}
    )
    current = prose_hashes(lessons_dir, before)
    return sorted(name for name in set(recorded) | set(current) if recorded.get(name) != current.get(name))


def course_text() -> str:
    """The shipped prose snapshot (package data)."""
    path = DATA_DIR / PROSE_FILE
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} is missing: reinstall the course package (it ships as package data) or "
            "regenerate it with `python -m transformer_course.language_model.lm_data --lessons lessons "
            "--out transformer_course/data`"
        )
    return path.read_text(encoding="utf-8")


def split_paragraphs(text: str, every: int = VALIDATION_EVERY) -> tuple[str, str]:
    """(training text, validation text): every ``every``-th paragraph goes to validation."""
    if every < 2:
        raise ValueError(f"every must be at least 2, got {every}")
    paragraphs = [p for p in text.split("\n\n") if p.strip()]
    valid = [p for i, p in enumerate(paragraphs) if i % every == every - 1]
    train = [p for i, p in enumerate(paragraphs) if i % every != every - 1]
    if not valid:
        raise ValueError(f"the text has {len(paragraphs)} paragraphs: too few for a validation split")
    return "\n\n".join(train), "\n\n".join(valid)


# --------------------------------------------------------------------------------------------
# Characters as tokens
# --------------------------------------------------------------------------------------------


class CharTokenizer:
    """Characters to ids and back. Id 0 stands for any character outside the vocabulary."""

    unknown_id = 0

    def __init__(self, characters: str) -> None:
        if len(set(characters)) != len(characters):
            raise ValueError("the vocabulary lists a character twice")
        if UNKNOWN_CHARACTER in characters:
            raise ValueError(f"{UNKNOWN_CHARACTER!r} is reserved for unknown characters")
        self.characters = characters
        self._ids = {c: i + 1 for i, c in enumerate(characters)}

    @classmethod
    def from_text(cls, text: str) -> CharTokenizer:
        return cls("".join(sorted(set(text) - {UNKNOWN_CHARACTER})))

    @property
    def vocab_size(self) -> int:
        return len(self.characters) + 1

    def encode(self, text: str) -> list[int]:
        return [self._ids.get(c, self.unknown_id) for c in text]

    def decode(self, ids: list[int] | Tensor) -> str:
        if isinstance(ids, Tensor):
            ids = ids.tolist()
        out = []
        for i in ids:
            if not 0 <= i < self.vocab_size:
                raise ValueError(f"token id {i} is outside the vocabulary (0..{self.vocab_size - 1})")
            out.append(UNKNOWN_CHARACTER if i == self.unknown_id else self.characters[i - 1])
        return "".join(out)

    def token(self, i: int) -> str:
        """How id ``i`` reads on screen: newlines and spaces made visible."""
        character = self.decode([i])
        return {"\n": "↵", " ": "␣", "\t": "⇥"}.get(character, character)


@dataclass(frozen=True)
class CharCorpus:
    """Token ids of the training and validation text, with their tokenizer."""

    tokenizer: CharTokenizer
    train: Tensor
    valid: Tensor
    sha256: str

    @property
    def n_characters(self) -> int:
        return len(self.train) + len(self.valid)


def load_course_corpus(text: str | None = None) -> CharCorpus:
    """The shipped prose (or ``text``), split into paragraphs for training and validation."""
    text = course_text() if text is None else text
    tokenizer = CharTokenizer.from_text(text)
    train, valid = split_paragraphs(text)
    return CharCorpus(
        tokenizer=tokenizer,
        train=torch.tensor(tokenizer.encode(train), dtype=torch.long),
        valid=torch.tensor(tokenizer.encode(valid), dtype=torch.long),
        sha256=text_sha256(text),
    )


# --------------------------------------------------------------------------------------------
# Batches
# --------------------------------------------------------------------------------------------


def random_blocks(
    ids: Tensor, block_size: int, batch_size: int, generator: torch.Generator
) -> tuple[Tensor, Tensor]:
    """``batch_size`` random windows: inputs ``(B, block_size)`` and the same shifted by one."""
    if len(ids) < block_size + 1:
        raise ValueError(f"the text has {len(ids)} tokens, fewer than block_size + 1 = {block_size + 1}")
    starts = torch.randint(len(ids) - block_size, (batch_size,), generator=generator)
    offsets = starts[:, None] + torch.arange(block_size + 1)
    windows = ids[offsets]
    return windows[:, :-1], windows[:, 1:]


def all_windows(ids: Tensor, length: int) -> tuple[Tensor, Tensor]:
    """Every non-overlapping window of ``length`` inputs (and targets) in ``ids``, in order."""
    n = (len(ids) - 1) // length
    if n < 1:
        raise ValueError(f"the text has {len(ids)} tokens, fewer than length + 1 = {length + 1}")
    windows = ids[: n * length + 1]
    return windows[:-1].view(n, length), windows[1:].view(n, length)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Write the course-prose snapshot lesson 10 trains on.")
    parser.add_argument("--lessons", type=Path, default=Path("lessons"), help="folder of NN_slug.md")
    parser.add_argument("--out", type=Path, default=DATA_DIR, help="folder to write into")
    parser.add_argument(
        "--check", action="store_true", help="only say whether the snapshot in --out is current"
    )
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_lessons(args.lessons, args.out)
        if stale:
            raise SystemExit(
                f"the course-prose snapshot is stale: the prose of {', '.join(stale)} changed; "
                f"run `{REGENERATE_COMMAND}` (snapshot, GPT, position study, lesson 10)"
            )
        print(f"the course-prose snapshot in {args.out} matches the prose of {args.lessons}")
        return
    path = write_snapshot(args.lessons, args.out)
    print(f"wrote {path} ({len(path.read_text(encoding='utf-8')):,} characters)")


if __name__ == "__main__":
    main()

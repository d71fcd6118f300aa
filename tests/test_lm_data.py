"""Lesson 10's corpus: the course's prose, snapshotted without code or model answers, as characters."""

import json
from pathlib import Path

import pytest
import torch
from lesson_header import MYST_HEADER

from transformer_course.language_model.lm_data import (
    DATA_DIR,
    PROVENANCE_FILE,
    REGENERATE_COMMAND,
    CharTokenizer,
    all_windows,
    course_text,
    lesson_prose,
    load_course_corpus,
    main,
    random_blocks,
    split_paragraphs,
    stale_lessons,
    text_sha256,
    write_snapshot,
)

REPO = Path(__file__).resolve().parents[1]
LESSON = (
    MYST_HEADER
    + """
# 3. A lesson

Prose the model should read.

```{code-cell} ipython3
secret_code = 42
```

**Recall 1.** A question students keep.

+++ {"tags": ["manual"], "grade_id": "recall_1", "points": 2}

*Model answer.* The answer only instructors see.

+++

Closing prose.
"""
)


def test_the_snapshot_keeps_prose_and_drops_code_and_model_answers(tmp_path):
    lessons = tmp_path / "lessons"
    lessons.mkdir()
    (lessons / "03_a_lesson.md").write_text(LESSON, encoding="utf-8")
    (lessons / "10_later.md").write_text(LESSON.replace("A lesson", "Later"), encoding="utf-8")
    (lessons / "README.md").write_text("not a lesson", encoding="utf-8")
    cells = lesson_prose(lessons / "03_a_lesson.md")
    assert cells == [
        "# 3. A lesson\n\nProse the model should read.",
        "**Recall 1.** A question students keep.",
        "Closing prose.",
    ]
    out = write_snapshot(lessons, tmp_path / "data")
    text = out.read_text(encoding="utf-8")
    assert "secret_code" not in text and "Model answer" not in text and "Later" not in text
    assert "Prose the model should read." in text
    provenance = json.loads((tmp_path / "data" / PROVENANCE_FILE).read_text(encoding="utf-8"))
    assert list(provenance["prose_sha256"]) == ["03_a_lesson.md"]
    assert provenance["sha256"] == text_sha256(text) and provenance["characters"] == len(text)
    again = write_snapshot(lessons, tmp_path / "again")
    assert again.read_bytes() == out.read_bytes(), "the snapshot must be deterministic"


def test_the_shipped_snapshot_matches_its_provenance_and_leaks_no_model_answer():
    text = course_text()
    provenance = json.loads((DATA_DIR / PROVENANCE_FILE).read_text(encoding="utf-8"))
    assert provenance["sha256"] == text_sha256(text)
    assert provenance["characters"] == len(text)
    assert "*Model answer.*" not in text and "BEGIN SOLUTION" not in text and "```{code-cell}" not in text
    assert all(name[:2] < "10" for name in provenance["prose_sha256"])


def test_the_shipped_snapshot_is_built_from_the_prose_of_the_lessons_as_they_are():
    """Lesson 10's GPT reads the prose of lessons 1-9: edit that prose and the snapshot, the GPT
    and the position study trained on it are stale until regenerated (the checkpoints' own hashes
    of the snapshot are checked in test_lm_training)."""
    stale = stale_lessons(REPO / "lessons")
    assert not stale, (
        f"the prose of {', '.join(stale)} changed since lesson 10's corpus was built: "
        f"run `{REGENERATE_COMMAND}` and commit what it writes"
    )


def test_a_prose_edit_makes_the_snapshot_stale_and_a_code_edit_does_not(tmp_path, capsys):
    lessons = tmp_path / "lessons"
    lessons.mkdir()
    source = lessons / "03_a_lesson.md"
    source.write_text(LESSON, encoding="utf-8")
    write_snapshot(lessons, tmp_path / "data")
    assert stale_lessons(lessons, tmp_path / "data") == []
    main(["--check", "--lessons", str(lessons), "--out", str(tmp_path / "data")])
    assert "matches the prose" in capsys.readouterr().out

    source.write_text(LESSON.replace("secret_code = 42", "secret_code = 43"), encoding="utf-8")
    source.write_text(source.read_text().replace("The answer only", "An answer only"), encoding="utf-8")
    assert stale_lessons(lessons, tmp_path / "data") == [], "code and model answers are not in the snapshot"

    source.write_text(LESSON.replace("Closing prose.", "Closing prose, edited."), encoding="utf-8")
    assert stale_lessons(lessons, tmp_path / "data") == ["03_a_lesson.md"]
    (lessons / "04_new.md").write_text(LESSON, encoding="utf-8")
    assert stale_lessons(lessons, tmp_path / "data") == ["03_a_lesson.md", "04_new.md"]
    with pytest.raises(SystemExit) as stop:
        main(["--check", "--lessons", str(lessons), "--out", str(tmp_path / "data")])
    message = str(stop.value)
    assert "03_a_lesson.md, 04_new.md" in message and REGENERATE_COMMAND in message and "\n" not in message


def test_the_shipped_snapshot_holds_no_model_answer_of_the_current_lessons():
    """Every manual cell of lessons 1-9 (the model answers) stays out of the shipped text."""
    import jupytext

    text = course_text()
    lessons = sorted(REPO.glob("lessons/0[1-9]_*.md"))
    assert lessons
    for path in lessons:
        for cell in jupytext.read(path).cells:
            if "manual" in cell.metadata.get("tags", []):
                answer = cell.source.strip()
                assert answer[30:110] not in text, f"a model answer of {path.name} is in the snapshot"


def test_tokenizer_round_trips_and_marks_unknown_characters():
    tokenizer = CharTokenizer.from_text("hello world")
    assert tokenizer.vocab_size == len(set("hello world")) + 1
    assert tokenizer.decode(tokenizer.encode("hello")) == "hello"
    assert tokenizer.encode("hz") == [tokenizer.encode("h")[0], 0]
    assert tokenizer.decode([0]) == "\ufffd"
    assert tokenizer.token(tokenizer.encode(" ")[0]) == "␣"
    with pytest.raises(ValueError, match="outside"):
        tokenizer.decode([99])
    with pytest.raises(ValueError, match="twice"):
        CharTokenizer("aa")


def test_every_tenth_paragraph_is_validation():
    text = "\n\n".join(f"p{i}" for i in range(25))
    train, valid = split_paragraphs(text)
    assert valid.split("\n\n") == ["p9", "p19"]
    assert len(train.split("\n\n")) == 23
    with pytest.raises(ValueError, match="too few"):
        split_paragraphs("one\n\ntwo")


def test_course_corpus_covers_both_splits_with_one_vocabulary():
    corpus = load_course_corpus()
    assert len(corpus.train) > 5 * len(corpus.valid) > 0
    assert int(corpus.train.min()) >= 1 and int(corpus.valid.min()) >= 1  # no unknown characters
    assert corpus.sha256 == text_sha256(course_text())


def test_batches_are_shifted_windows_of_the_text():
    ids = torch.arange(100)
    x, y = random_blocks(ids, 8, 4, torch.Generator().manual_seed(0))
    assert x.shape == y.shape == (4, 8)
    assert torch.equal(y[:, :-1], x[:, 1:]) and torch.equal(y[:, -1], x[:, -1] + 1)
    again, _ = random_blocks(ids, 8, 4, torch.Generator().manual_seed(0))
    assert torch.equal(x, again)
    inputs, targets = all_windows(ids, 10)
    assert inputs.shape == (9, 10) and torch.equal(inputs[1], torch.arange(10, 20))
    assert torch.equal(targets[1], torch.arange(11, 21))
    with pytest.raises(ValueError, match="fewer"):
        random_blocks(torch.arange(5), 8, 2, torch.Generator())

"""Lesson 8's plain-Python BPE trainer against the ``tokenizers`` library, on the translator's corpus.

    python benchmarks/bpe_training.py              # 100, 500 and 1,681 merges, all 80,000 sentences
    python benchmarks/bpe_training.py --merges 200 --sentences 20000

Lesson 8 prints one such figure live (its own trainer against the library at lesson 9's vocabulary
size); this prints how the gap grows with the number of merges. The trainer is the lesson's
reference solution (``train_bpe`` with the ``merge_pair`` and ``split_words`` of its cells), which
recounts every pair after each merge, so its time grows with the merges; the library updates only
the counts a merge changed, so its time is mostly the fixed cost of cutting and counting the words.
Both are checked to learn the same merges. Times are CPU seconds of this process
(``time.process_time``, the library's threads included), so other programs on the machine disturb
them little. Prints a table, asserts nothing beyond that agreement.
"""

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # the grading harness

from grading_harness import solution_answers  # noqa: E402

from transformer_course.translation.corpus import make_corpus  # noqa: E402
from transformer_course.translation.tokenization import train_tokenizer  # noqa: E402

LESSON = "08_encoder_decoder"


def reference_trainer():
    """Lesson 8's reference ``train_bpe``, run from its solution cells."""
    answers = solution_answers(LESSON)
    namespace: dict = {}
    for grade in ("merge_pair", "train_bpe"):
        exec(compile(answers[grade], grade, "exec"), namespace)  # noqa: S102 - the lesson's own cells
    return namespace["train_bpe"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--merges", type=int, nargs="+", default=[100, 500, 1681])
    parser.add_argument("--sentences", type=int, default=None, help="the first N (default: all)")
    args = parser.parse_args(argv)
    texts = [text for pair in make_corpus(seed=0).train for text in pair][: args.sentences]
    train_bpe = reference_trainer()
    print(f"{len(texts):,} sentences of the translator's training split")
    print(f"{'merges':>7} {'library s':>10} {'lesson s':>9} {'ratio':>6}")
    for n_merges in args.merges:
        start = time.process_time()
        vocab, merges = train_bpe(texts, n_merges)
        lesson_seconds = time.process_time() - start
        start = time.process_time()
        course = train_tokenizer(texts, vocab_size=len(vocab))
        library_seconds = time.process_time() - start
        library_merges = [tuple(pair) for pair in json.loads(course.to_json())["model"]["merges"]]
        if [tuple(pair) for pair in merges] != library_merges:
            raise SystemExit(f"at {n_merges} merges the lesson's trainer and the library disagree")
        ratio = lesson_seconds / library_seconds
        print(f"{len(merges):>7,} {library_seconds:>10.2f} {lesson_seconds:>9.2f} {ratio:>6.0f}")


if __name__ == "__main__":
    main()

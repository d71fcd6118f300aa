"""Lesson 9's last run: a translator trained from the student's own code, scored beside the course's.

What each student piece does in the run (the lesson says the same):

* ``MultiHeadAttention``, ``EncoderLayer``, ``DecoderLayer`` and ``Embedding`` (lesson 8) *are* the
  trained model: :func:`~transformer_course.translation.your_pieces.assemble` puts them into the course's
  encoder-decoder, and the trainer updates their weights;
* ``learning_rate`` (lesson 9) sets the optimizer's rate at every step;
* ``beam_step`` (lesson 9) runs every step of the beam search whose translations are scored;
* ``label_smoothed_cross_entropy`` (lesson 9) is NumPy and has no gradient, so PyTorch's
  ``F.cross_entropy`` trains the model; the student's loss is compared with it on a real batch of
  the training data before and after training (a loss that failed its check is only reported).

Each piece is checked first (:func:`~transformer_course.translation.your_pieces.choose_pieces`); where one
fails, the package's own code does its part: its layers, its scheduler, its ``beam_search`` (a
wrong loss is only reported). While nbgrader grades the notebook nothing
is loaded or trained: no graded answer depends on this run, and grading must take seconds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from transformer_course.runtime import is_grading
from transformer_course.shipped import shipped_checkpoint
from transformer_course.step_progress import StepProgress
from transformer_course.translation.batching import Batch
from transformer_course.translation.decoding import beam_search
from transformer_course.translation.evaluation import Scores, score
from transformer_course.translation.model import Transformer
from transformer_course.translation.settings import TrainSettings, preset
from transformer_course.translation.tokenization import SubwordTokenizer
from transformer_course.translation.training import PreparedData, StepCallback, Trainer, prepare_data
from transformer_course.translation.translator import Translator, load_translator
from transformer_course.translation.your_pieces import ChosenPieces, assemble, choose_pieces, export_path

BeamStep = Callable[..., tuple]


@dataclass(frozen=True)
class LossCheck:
    """The student's loss and PyTorch's on the same logits of one training batch."""

    when: str
    yours: float
    pytorch: float


@dataclass
class YourRun:
    """The trained translator, the pieces it used, and the scores beside the course's run."""

    translator: Translator
    chosen: ChosenPieces
    scores: Scores
    course_scores: Scores
    loss_checks: list[LossCheck]


def search_with_step(
    model: Transformer,
    src: torch.Tensor,
    bos_id: int,
    eos_id: int,
    max_len: int,
    step: BeamStep,
    beam_size: int = 4,
    alpha: float = 0.6,
) -> list[int]:
    """Beam search of one ``(1, S)`` sentence, ``step`` (lesson 9's ``beam_step``) choosing each
    step's beams; stops as lesson 9's loop and the course's ``beam_search`` do. Ids without BOS."""
    if not isinstance(model, Transformer) or not callable(step):
        raise TypeError("search_with_step takes a Transformer and a beam step function")
    best_possible_lp = ((5 + max_len) / 6) ** alpha
    was_training = model.training
    model.eval()
    with torch.no_grad():
        memory, src_mask = model.encode(src)
        prefixes, scores, finished = [[bos_id]], np.zeros(1), []
        for length in range(1, max_len + 1):
            n = len(prefixes)
            tgt_in = torch.tensor(prefixes, device=src.device)
            logits = model.decode(tgt_in, memory.expand(n, -1, -1), src_mask.expand(n, -1))[:, -1].float()
            logits[:, model.config.pad_id] = -float("inf")  # padding is never a word
            log_probs = torch.log_softmax(logits, dim=-1).cpu().numpy()
            parents, tokens, scores, done = step(scores, log_probs, eos_id, beam_size, length, alpha)
            finished += [(prefixes[p][1:] + [eos_id], s) for p, s in done]
            finished = sorted(finished, key=lambda h: -h[1])[:beam_size]
            prefixes = [prefixes[p] + [int(t)] for p, t in zip(parents, tokens, strict=True)]
            scores = np.asarray(scores, dtype=float)
            if len(finished) == beam_size and scores[0] / best_possible_lp <= finished[-1][1]:
                break
        else:  # the length limit: the live beams finish as they are
            finished += [(p[1:], s / best_possible_lp) for p, s in zip(prefixes, scores, strict=True)]
    model.train(was_training)
    return max(finished, key=lambda h: h[1])[0]


def beam_scores(
    model: Transformer,
    tokenizer: SubwordTokenizer,
    pairs: Sequence[tuple[str, str]],
    step: BeamStep | None,
    label: str,
    progress: bool = True,
) -> Scores:
    """BLEU and chrF of beam search (beam 4, alpha 0.6) on ``pairs``, sentence by sentence: the
    course's search loop with ``step``, or the package's ``beam_search`` where ``step`` is None."""
    if not isinstance(model, Transformer) or not isinstance(tokenizer, SubwordTokenizer):
        raise TypeError("beam_scores takes a Transformer and its SubwordTokenizer")
    device = next(model.parameters()).device
    shown = StepProgress(label, len(pairs), enabled=progress, unit="sentence")
    hypotheses = []
    for done, (source, _) in enumerate(pairs, start=1):
        src = torch.tensor([tokenizer.encode(source)[: model.config.max_len]], device=device)
        max_len = min(model.config.max_len, 2 * src.shape[1] + 10)
        if step is None:
            ids = beam_search(model, src, tokenizer.bos_id, tokenizer.eos_id, max_len)[0].tolist()
        else:
            ids = search_with_step(model, src, tokenizer.bos_id, tokenizer.eos_id, max_len, step)
        hypotheses.append(tokenizer.decode(ids))
        shown.advance(done)
    shown.close()
    return score(hypotheses, [target for _, target in pairs])


def check_loss(model: Transformer, batch: Batch, loss: Callable, epsilon: float, when: str) -> LossCheck:
    """``loss`` (the student's NumPy loss) and PyTorch's on the model's logits for ``batch``,
    in evaluation mode so that both see the same numbers."""
    if not isinstance(model, Transformer) or not isinstance(batch, Batch):
        raise TypeError("check_loss takes a Transformer and a Batch of the training data")
    device = next(model.parameters()).device
    batch = batch.to(device)
    was_training = model.training
    model.eval()
    with torch.no_grad():
        logits = model(batch.src, batch.tgt_in).float()
    model.train(was_training)
    pad = SubwordTokenizer.pad_id
    pytorch = F.cross_entropy(
        logits.flatten(0, -2), batch.tgt_out.flatten(), ignore_index=pad, label_smoothing=epsilon
    ).item()
    yours = float(loss(logits.cpu().double().numpy(), batch.tgt_out.cpu().numpy(), epsilon, pad))
    return LossCheck(when, yours, pytorch)


def train_your_translator(
    path: str | Path = "my_transformer.py",
    train: bool = True,
    callback: StepCallback | None = None,
    settings: TrainSettings | None = None,
    n_test: int = 100,
    data: PreparedData | None = None,
    progress: bool = True,
) -> YourRun | None:
    """Check the pieces in ``path`` and, when ``train``, train a translator from them with
    ``settings`` (the quick preset unless given), then score it and the course's shipped run on the
    first ``n_test`` test sentences with the same beam search. Prints what it does as it goes.

    Returns None when it does not train (``train`` false, or while grading, when it does nothing).
    """
    if is_grading():
        return None
    export_path(path)
    if not isinstance(train, bool) or not (settings is None or isinstance(settings, TrainSettings)):
        raise TypeError(
            "train must be True or False, and settings a TrainSettings (or None for the quick preset)"
        )
    chosen = choose_pieces(path)
    for line in chosen.lines:
        print(line)
    if not train:
        return None
    settings = settings or preset("quick")
    data = data or prepare_data(settings)
    trainer = Trainer(
        settings,
        data.tokenizer,
        data.train,
        model_factory=lambda config: assemble(chosen.pieces, config),
        rate=chosen.pieces.get("learning_rate"),  # None: the package's scheduler
    )
    loss = chosen.pieces.get("label_smoothed_cross_entropy")  # None: it failed its check
    first_batch = trainer.stream.batch_at(0)
    epsilon = settings.label_smoothing
    checks = (
        [] if loss is None else [check_loss(trainer.model, first_batch, loss, epsilon, "before training")]
    )
    trainer.train(callback=callback, progress=progress)
    if loss is not None:
        checks.append(check_loss(trainer.model, first_batch, loss, epsilon, "after training"))
    for check in checks:
        print(
            f"loss on the first training batch {check.when}: yours {check.yours:.6f}, "
            f"PyTorch's {check.pytorch:.6f}"
        )
    translator = Translator(trainer.model.eval(), data.tokenizer, trainer.settings, trainer.state)
    pairs = data.corpus.test[:n_test]
    step = chosen.pieces.get("beam_step")  # None: the package's beam_search
    scores = beam_scores(translator.model, translator.tokenizer, pairs, step, "your translator", progress)
    course = load_translator(shipped_checkpoint("translator_quick.pt"), device="cpu")
    course_scores = beam_scores(course.model, course.tokenizer, pairs, step, "the course's run", progress)
    return YourRun(translator, chosen, scores, course_scores, checks)

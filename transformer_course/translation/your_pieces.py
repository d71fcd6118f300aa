"""The student's pieces from ``my_transformer.py``: loaded, checked, and assembled into a translator.

Lesson 9's "Train your translator" run uses seven pieces the student wrote: lesson 8's
``MultiHeadAttention``, ``EncoderLayer``, ``DecoderLayer`` and ``Embedding``, and lesson 9's
``learning_rate``, ``label_smoothed_cross_entropy`` and ``beam_step``. Before training, each is
checked quickly on small inputs, in the student's kernel: this is feedback, not grading (the graded
tests are in lessons 8 and 9). A piece that is missing, raises or computes something else is named
with the reason, in one line, and the run goes on without it, so that it always reaches its end.

The package never holds the answer to a graded exercise, not even a private one (a student may
import anything; ``tests/test_package_audit.py``). So no check compares with a course piece behind
the lesson's interface, and no fallback is one:

* a class runs through lesson 8's locked adapter and is compared with the package's own layer
  (masks True at padding, the causal mask a flag) on the same weights and the converted masks;
  where it fails, :func:`assemble` puts the package's layer in its place;
* ``learning_rate`` is compared with the rates the package's scheduler sets on a throwaway
  optimizer; where it fails, training uses that scheduler;
* ``label_smoothed_cross_entropy`` is compared with PyTorch's ``cross_entropy``; it never trains
  anything (it has no gradient), so a wrong one is only reported;
* ``beam_step`` runs whole beam searches with the shipped translator, compared with the package's
  ``beam_search``; where it fails, the package's ``beam_search`` translates.

A failing ``MultiHeadAttention`` cannot be swapped inside the student's layers (that would take an
attention with the lesson's interface): layers that build it fail their own check and are replaced
by the package's layers.

:func:`assemble` builds the course's encoder-decoder
(:class:`~transformer_course.translation.model.Transformer`, so that training, decoding and
checkpoints work unchanged) from the chosen classes, in the package model's order: with lesson 8's
reference solutions, or with no student class at all, it starts from exactly the package model's
weights.
"""

from __future__ import annotations

import functools
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from transformer_course.adapters import ADAPTERS
from transformer_course.layers import MultiHeadAttention
from transformer_course.shipped import shipped_checkpoint
from transformer_course.translation import model as course
from transformer_course.translation.decoding import beam_search
from transformer_course.translation.schedule import transformer_scheduler
from transformer_course.translation.solution_export import HEADER, read_blocks
from transformer_course.translation.translator import Translator, load_translator

CLASSES = ("MultiHeadAttention", "EncoderLayer", "DecoderLayer", "Embedding")
FUNCTIONS = ("learning_rate", "label_smoothed_cross_entropy", "beam_step")
PIECES = CLASSES + FUNCTIONS
TOLERANCE = 1e-4  # float32 layers on inputs of order 1: a correct piece differs by about 1e-6

FALLBACKS = {
    "MultiHeadAttention": "the course's layers are used in place of those that build it",
    "EncoderLayer": "the course's EncoderLayer is used instead",
    "DecoderLayer": "the course's DecoderLayer is used instead",
    "Embedding": "the course's Embedding is used instead",
    "learning_rate": "the course's scheduler sets the rate instead",
    "label_smoothed_cross_entropy": "it is only reported (PyTorch's loss trains the model either way)",
    "beam_step": "the course's beam_search translates instead",
}

# The end-to-end beam-step check's sentences, for the shipped translator: one short one, as each
# search takes seconds on a busy CPU (the step-by-step checks before it are the thorough part).
BEAM_CHECK_SENTENCES = ("the dogs eat the bread .",)


# --- loading ------------------------------------------------------------------------------------


def export_path(path: object) -> Path:
    """``path`` as a Path, after checking that it names a Python file (the export file)."""
    if not isinstance(path, (str, Path)) or not str(path).endswith(".py"):
        raise ValueError(
            f"expected the path of the export file, such as 'my_transformer.py'; got {path!r:.60}"
        )
    return Path(path)


def load_pieces(path: str | Path) -> tuple[dict[str, Any], dict[str, str]]:
    """The names ``path`` defines, and a one-line problem for each piece it cannot provide.

    Each lesson's block runs on its own, after the file's imports, so that an error in lesson 9's
    functions does not lose lesson 8's classes. The namespace is a plain dict: the classes look up
    each other (``MultiHeadAttention`` inside the layers) in it.
    """
    path = export_path(path)
    if not path.is_file():
        reason = f"{path.name} does not exist yet: run the export cells of lessons 8 and 9"
        return {}, dict.fromkeys(PIECES, reason)
    text = path.read_text(encoding="utf-8")
    namespace: dict[str, Any] = {"__name__": "my_transformer"}
    exec(compile(HEADER, str(path), "exec"), namespace)
    problems: dict[str, str] = {}
    blocks = read_blocks(text)
    for lesson, names in ((8, CLASSES), (9, FUNCTIONS)):
        if lesson not in blocks:
            problems.update(dict.fromkeys(names, f"lesson {lesson}'s export cell has not written it"))
            continue
        # Blank lines in front keep the line numbers of the file, which error messages quote.
        lines_before = text[: max(text.find(blocks[lesson]), 0)].count("\n")
        try:
            exec(compile("\n" * lines_before + blocks[lesson], str(path), "exec"), namespace)
        except Exception as error:  # any error in the student's code is reported, not raised
            problems.update(dict.fromkeys(names, f"lesson {lesson}'s block fails to run: {_one_line(error)}"))
    for name in PIECES:
        if name not in problems and name not in namespace:
            problems[name] = "the file does not define it (its exercise cell had not run when you exported)"
    return namespace, problems


def _one_line(error: BaseException) -> str:
    message = str(error).strip().splitlines()
    text = f"{type(error).__name__}: {message[0]}" if message else type(error).__name__
    if isinstance(error, NotImplementedError):
        return "not written yet (it raises NotImplementedError)"
    return text


# --- checks: each returns None when the piece computes what it should, else the reason --------


def _gap(yours: np.ndarray, expected: np.ndarray) -> str | None:
    gap = float(np.max(np.abs(np.asarray(yours, dtype=float) - expected)))
    return None if gap <= TOLERANCE else f"its output differs from the course's by up to {gap:.2g}"


def _floats(x: np.ndarray) -> Tensor:
    return torch.as_tensor(np.asarray(x, dtype=np.float32))


def _check_class(name: str, student: Any) -> str | None:
    """The student's class through lesson 8's adapter, in evaluation mode with dropout set (so it
    must be off), on a padded batch, beside the package's layer with the same weights.

    The package's layers name their weights as lesson 8's contract does, so their state dict is
    the adapter's weights; their masks are True at padding (the lesson's: True at a real token),
    and the causal mask is a flag (lesson 8's decoder layer adds it itself).
    """
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    d_model, n_heads, d_ff, dropout = 16, 2, 32, 0.1
    config = course.TransformerConfig(
        src_vocab_size=11, tgt_vocab_size=11, d_model=d_model, n_heads=n_heads, d_ff=d_ff,
        dropout=dropout, max_len=20,
    )  # fmt: skip
    real_src = np.array([[True] * 5, [True] * 3 + [False] * 2])
    real_tgt = np.array([[True] * 4, [True] * 2 + [False] * 2])
    x_src, x_tgt = rng.normal(size=(2, 5, d_model)), rng.normal(size=(2, 4, d_model))
    src, tgt = _floats(x_src), _floats(x_tgt)
    src_padding, tgt_padding = torch.as_tensor(~real_src), torch.as_tensor(~real_tgt)
    options = {"n_heads": n_heads, "dropout": dropout}
    if name == "MultiHeadAttention":
        package: nn.Module = MultiHeadAttention(d_model, n_heads)
        causal = np.tril(np.ones((4, 4), dtype=bool)) & real_tgt[:, None, None, :]
        cases = [
            ((x_tgt, x_src, x_src, real_src[:, None, None, :]), lambda: package(tgt, src, src, src_padding)),
            ((x_tgt, x_tgt, x_tgt, causal), lambda: package(tgt, tgt, tgt, tgt_padding, causal=True)),
        ]
        adapter = ADAPTERS["attention"]
    elif name == "EncoderLayer":
        package = course.EncoderLayer(config)
        cases = [((x_src, real_src), lambda: package(src, src_padding))]
        adapter = ADAPTERS["encoder_layer"]
    elif name == "DecoderLayer":
        package = course.DecoderLayer(config)
        cases = [((x_tgt, x_src, real_tgt, real_src), lambda: package(tgt, src, tgt_padding, src_padding))]
        adapter = ADAPTERS["decoder_layer"]
    else:
        package = course.Embedding(11, config)
        ids = np.array([[3, 7, 1, 9], [5, 2, 0, 0]])
        cases = [((ids,), lambda: package(torch.as_tensor(ids)))]
        options = {"max_len": 20, "dropout": dropout}
        adapter = ADAPTERS["embedding"]
    weights = {name: tensor.detach().numpy() for name, tensor in package.state_dict().items()}
    package.eval()
    for lesson_inputs, run_package in cases:
        with torch.no_grad():
            expected = run_package().double().numpy()
        problem = _gap(adapter(student, weights, *lesson_inputs, **options), expected)
        if problem:
            return problem + " (evaluation mode, on a small padded batch)"
    return None


def _scheduled_rates(d_model: int, warmup: int, steps: tuple[int, ...]) -> dict[int, float]:
    """The rates the package's scheduler sets at ``steps`` (from 1), read from a throwaway optimizer.

    The scheduler jumps to each step (``last_epoch`` is the count of its past steps): stepping an
    optimizer thousands of times would cost seconds for the same numbers."""
    optimizer = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
    scheduler = transformer_scheduler(optimizer, d_model, warmup)
    optimizer.step()  # no gradient, nothing moves; the scheduler then steps without a warning
    rates = {}
    for step in steps:
        scheduler.last_epoch = step - 2  # the scheduler's step() below is its (step - 1)-th
        scheduler.step()
        rates[step] = optimizer.param_groups[0]["lr"]
    return rates


def _check_learning_rate(student: Callable) -> str | None:
    for d_model, warmup in ((512, 4000), (128, 200)):
        steps = (1, 10, warmup, warmup + 1, 4 * warmup)
        for step, expected in _scheduled_rates(d_model, warmup, steps).items():
            yours = float(student(step, d_model, warmup))
            if not np.isclose(yours, expected, rtol=1e-9, atol=0.0):
                return (
                    f"learning_rate({step}, {d_model}, {warmup}) is {yours:.4g}, "
                    f"the course's scheduler sets {expected:.4g}"
                )
    return None


def _check_loss(student: Callable) -> str | None:
    rng = np.random.default_rng(0)
    logits = rng.normal(scale=2.0, size=(2, 6, 12))
    target = rng.integers(1, 12, size=(2, 6))
    target[0, 4:] = 0
    yours = float(student(logits, target, 0.1, 0))
    expected = F.cross_entropy(
        torch.as_tensor(logits).reshape(-1, 12), torch.as_tensor(target).reshape(-1),
        ignore_index=0, label_smoothing=0.1,
    ).item()  # fmt: skip
    if not np.isclose(yours, expected, rtol=1e-6, atol=1e-9):
        return f"it gives {yours:.6f} on a padded batch where PyTorch's cross_entropy gives {expected:.6f}"
    return None


def _step_problem(student: Callable, scores: np.ndarray, log_probs: np.ndarray, length: int) -> str | None:
    """What the student's step breaks of lesson 9's rule on one input, checked property by
    property (beam 4, EOS id 2, alpha 0.6): the live beams are the best non-EOS extensions with
    their summed scores, best first; the finished ones are exactly the EOS extensions among the
    best ``beam_size`` of all, each scored divided by the length penalty."""
    eos_id, beam_size, alpha = 2, 4, 0.6
    candidates = scores[:, None] + log_probs
    parents, tokens, new_scores, finished = student(
        scores.copy(), log_probs.copy(), eos_id, beam_size, length, alpha
    )
    parents, tokens = np.asarray(parents, dtype=int), np.asarray(tokens, dtype=int)
    new_scores = np.asarray(new_scores, dtype=float)
    live = np.delete(candidates, eos_id, axis=1)
    if not (len(parents) == len(tokens) == len(new_scores) == min(beam_size, live.size)):
        return (
            f"at step {length} it keeps {len(parents)} live beams, not the best {min(beam_size, live.size)}"
        )
    if np.any(tokens == eos_id) or not np.allclose(new_scores, candidates[parents, tokens]):
        return (
            f"at step {length} its live beams are not extensions by a non-EOS token with their summed scores"
        )
    if not np.allclose(np.sort(new_scores)[::-1], np.sort(live.ravel())[::-1][:beam_size]):
        return f"at step {length} its live beams are not the best {beam_size} non-EOS extensions"
    if np.any(np.diff(new_scores) > 0):
        return f"at step {length} its live beams are not ordered best first"
    threshold = np.sort(candidates.ravel())[::-1][beam_size - 1]
    expected = {int(p) for p in np.flatnonzero(candidates[:, eos_id] >= threshold)}
    if sorted(int(p) for p, _ in finished) != sorted(expected):
        return (
            f"at step {length} it finishes beams {sorted(int(p) for p, _ in finished)}; EOS is among "
            f"the best {beam_size} extensions of beams {sorted(expected)}"
        )
    penalty = ((5 + length) / 6) ** alpha
    if not all(np.isclose(score, candidates[p, eos_id] / penalty) for p, score in finished):
        return (
            f"at step {length} a finished beam's score is not its summed score divided by the length penalty"
        )
    return None


def _check_beam_step(student: Callable) -> str | None:
    """Two steps checked against lesson 9's rule, then a whole search with the shipped translator:
    the student's step inside the course's loop must give what the package's ``beam_search``
    gives (beam 4, alpha 0.6). No step-level reference: the package holds no ``beam_step``."""
    from transformer_course.translation.your_translator import search_with_step  # it imports this module

    rng = np.random.default_rng(0)
    log_probs = np.log(rng.dirichlet(np.ones(9), size=4))
    log_probs[1, 2] = np.log(0.9)  # the second beam's best token is EOS (id 2)
    for scores, probs, length in (
        (np.zeros(1), log_probs[:1], 1),
        (np.array([-0.5, -0.7, -1.2, -2.0]), log_probs, 3),
    ):
        problem = _step_problem(student, scores, probs, length)
        if problem:
            return problem
    translator, searched = _searched_by_the_course()
    model, tokenizer = translator.model, translator.tokenizer
    for sentence, src, max_len, ids in searched:
        yours = search_with_step(model, src, tokenizer.bos_id, tokenizer.eos_id, max_len, student)
        if yours != ids:
            return (
                f"inside the course's search loop it translates {sentence!r} as "
                f"{tokenizer.decode(yours)!r}, the course's beam_search as {tokenizer.decode(ids)!r}"
            )
    return None


@functools.cache
def _searched_by_the_course() -> tuple[Translator, list[tuple[str, Tensor, int, list[int]]]]:
    """The shipped translator, and its ``beam_search`` output (ids, no padding) for each check
    sentence: loaded and searched once per process (seconds on a busy CPU)."""
    translator = load_translator(shipped_checkpoint("translator_quick.pt"), device="cpu")
    model, tokenizer = translator.model, translator.tokenizer
    searched = []
    for sentence in BEAM_CHECK_SENTENCES:
        src = torch.tensor([tokenizer.encode(sentence)])
        max_len = 2 * src.shape[1] + 10
        ids = beam_search(model, src, tokenizer.bos_id, tokenizer.eos_id, max_len)[0].tolist()
        searched.append((sentence, src, max_len, [t for t in ids if t != tokenizer.pad_id]))
    return translator, searched


def check_piece(name: str, student: Any) -> str | None:
    """None when ``student`` computes what piece ``name`` should; else why not, in one line."""
    if name not in PIECES:
        raise ValueError(f"no piece named {name!r:.60}; the pieces are {', '.join(PIECES)}")
    try:
        if name in CLASSES:
            return _check_class(name, student)
        return {
            "learning_rate": _check_learning_rate,
            "label_smoothed_cross_entropy": _check_loss,
            "beam_step": _check_beam_step,
        }[name](student)
    except Exception as error:  # the student's code may raise anything: that is the feedback
        frames = traceback.extract_tb(error.__traceback__)
        where = next((f" (line {f.lineno} of {Path(f.filename).name})" for f in reversed(frames)
                      if f.filename.endswith("my_transformer.py")), "")  # fmt: skip
        return _one_line(error) + where


# --- choosing and assembling -------------------------------------------------------------------


@dataclass
class ChosenPieces:
    """The student's pieces that passed their checks (a failed one is absent: the course's
    own code takes its part), whether each piece is the student's, and one line per piece."""

    pieces: dict[str, Any]
    yours: dict[str, bool]
    lines: list[str] = field(default_factory=list)


def choose_pieces(path: str | Path) -> ChosenPieces:
    """Load ``path``, check each piece, and keep the student's where it passes its check."""
    namespace, problems = load_pieces(path)
    chosen = ChosenPieces({}, {})
    for name in PIECES:
        problem = problems.get(name) or check_piece(name, namespace[name])
        if problem and name in ("EncoderLayer", "DecoderLayer") and not chosen.yours["MultiHeadAttention"]:
            problem += " (it builds your MultiHeadAttention, which failed its check)"
        chosen.yours[name] = problem is None
        if problem is None:
            chosen.pieces[name] = namespace[name]
            chosen.lines.append(f"✓ {name}: yours")
        else:
            chosen.lines.append(f"✗ {name}: {problem}; {FALLBACKS[name]}")
    return chosen


class _Encoder(nn.Module):
    """An embedding and N encoder layers, called as the package's encoder (mask True = padding).

    ``lesson_masks``: the layers are lesson 8's, which take the mask True at a real token."""

    def __init__(self, embed: nn.Module, layers: list[nn.Module], lesson_masks: bool) -> None:
        super().__init__()
        self.embed, self.layers, self.lesson_masks = embed, nn.ModuleList(layers), lesson_masks

    def forward(self, src: Tensor, key_padding_mask: Tensor | None = None) -> Tensor:
        x = self.embed(src)
        mask = _real(key_padding_mask) if self.lesson_masks else key_padding_mask
        for layer in self.layers:
            x = layer(x, mask)
        return x


class _Decoder(nn.Module):
    """An embedding and N decoder layers, called as the package's decoder (masks True = padding).

    ``lesson_masks``: the layers are lesson 8's, which take masks True at a real token."""

    def __init__(self, embed: nn.Module, layers: list[nn.Module], lesson_masks: bool) -> None:
        super().__init__()
        self.embed, self.layers, self.lesson_masks = embed, nn.ModuleList(layers), lesson_masks

    def forward(
        self,
        tgt_in: Tensor,
        memory: Tensor,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
    ) -> Tensor:
        x = self.embed(tgt_in)
        masks = (tgt_key_padding_mask, memory_key_padding_mask)
        tgt_mask, src_mask = (_real(m) for m in masks) if self.lesson_masks else masks
        for layer in self.layers:
            x = layer(x, memory, tgt_mask, src_mask)
        return x


def _real(key_padding_mask: Tensor | None) -> Tensor | None:
    """The package's padding mask (True = padding) as lesson 8's (True = a real token)."""
    return None if key_padding_mask is None else ~key_padding_mask


_PAPER_OPTIONS = (
    "norm_first",
    "learned_positions",
    "attention_dropout",
    "ffn_dropout",
    "positional_encoding",
    "scale_attention",
)


def assemble(classes: dict[str, Any], config: course.TransformerConfig) -> course.Transformer:
    """The course's encoder-decoder for ``config``, with the student's classes in ``classes``
    (as :attr:`ChosenPieces.pieces`) where given and the package's layers elsewhere.

    Built in the package model's order (source embedding, encoder layers, target embedding,
    decoder layers, then the output projection), so that the same seed draws the same weights.
    Lesson 8's classes are the paper's model: post-norm, sinusoidal positions, dropout only where
    section 5.4 puts it.
    """
    if not isinstance(config, course.TransformerConfig) or not isinstance(classes, dict):
        raise TypeError(
            "assemble takes the pieces by name (a dict, as ChosenPieces.pieces) and a TransformerConfig"
        )
    paper = course.TransformerConfig(config.src_vocab_size, config.tgt_vocab_size)
    changed = [option for option in _PAPER_OPTIONS if getattr(config, option) != getattr(paper, option)]
    if changed:
        raise ValueError(
            f"lesson 8's classes build the paper's model; this configuration changes {', '.join(changed)}"
        )
    sizes = (config.d_model, config.n_heads, config.d_ff, config.dropout)
    embedding, encoder_layer, decoder_layer = (
        classes.get(n) for n in ("Embedding", "EncoderLayer", "DecoderLayer")
    )

    def embed(vocab_size: int) -> nn.Module:
        if embedding is None:
            return course.Embedding(vocab_size, config)
        return embedding(vocab_size, config.d_model, config.max_len, config.dropout)

    encoder = _Encoder(
        embed(config.src_vocab_size),
        [course.EncoderLayer(config) if encoder_layer is None else encoder_layer(*sizes)
         for _ in range(config.n_encoder_layers)],
        lesson_masks=encoder_layer is not None,
    )  # fmt: skip
    decoder = _Decoder(
        embed(config.tgt_vocab_size),
        [course.DecoderLayer(config) if decoder_layer is None else decoder_layer(*sizes)
         for _ in range(config.n_decoder_layers)],
        lesson_masks=decoder_layer is not None,
    )  # fmt: skip
    return course.Transformer(config, encoder, decoder)

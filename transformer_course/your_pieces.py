"""The student's pieces from ``my_transformer.py``: loaded, checked, and assembled into a translator.

Lesson 9's "Train your translator" run uses seven pieces the student wrote: lesson 8's
``MultiHeadAttention``, ``EncoderLayer``, ``DecoderLayer`` and ``Embedding``, and lesson 9's
``learning_rate``, ``label_smoothed_cross_entropy`` and ``beam_step``. Before training, each is
checked quickly against the course's own piece on small inputs, in the student's kernel: this is
feedback, not grading (the graded tests are in lessons 8 and 9). A piece that is missing, raises
or computes something else is named with the reason, in one line, and the course's piece is used
in its place, so that the run always reaches its end.

The course's pieces are the package model's layers behind the lesson's interface (masks True at a
real token) and the paper's schedule; they are private here where they answer a graded exercise,
as the package's design rule requires (``tests/test_package_audit.py``).

:func:`assemble` builds the course's encoder-decoder (:class:`~transformer_course.model.Transformer`,
so that training, decoding and checkpoints work unchanged) with the chosen classes as its layers.
With the course's pieces, or with lesson 8's reference solutions, it draws its initial weights in
the package model's order and starts from exactly the package model's weights.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from transformer_course import model as course
from transformer_course.adapters import ADAPTERS
from transformer_course.schedule import _paper_rate
from transformer_course.solution_export import HEADER, read_blocks

CLASSES = ("MultiHeadAttention", "EncoderLayer", "DecoderLayer", "Embedding")
FUNCTIONS = ("learning_rate", "label_smoothed_cross_entropy", "beam_step")
PIECES = CLASSES + FUNCTIONS
TOLERANCE = 1e-4  # float32 layers on inputs of order 1: a correct piece differs by about 1e-6


# --- the course's pieces, behind the lesson's interface ---------------------------------------


def _layer_config(d_model: int, n_heads: int, d_ff: int, dropout: float, vocab: int = 1, max_len: int = 1):
    return course.TransformerConfig(
        src_vocab_size=vocab, tgt_vocab_size=vocab, d_model=d_model, n_heads=n_heads, d_ff=d_ff,
        dropout=dropout, max_len=max_len,
    )  # fmt: skip


def _padding(real: Tensor | None) -> Tensor | None:
    """The lesson's mask (True = a real token) as the package's (True = padding)."""
    return None if real is None else ~real


class CourseAttention(course.MultiHeadAttention):
    """The package's attention with lesson 8's ``forward(query, key, value, mask=None)``, where
    ``mask`` broadcasts to ``(B, h, T_q, T_k)`` and is True where the query may attend."""

    def __init__(self, d_model: int, n_heads: int, dropout: float = 0.0) -> None:
        super().__init__(d_model, n_heads, dropout)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None) -> Tensor:
        q, k, v = self.project(query, key, value)
        dropout_p = self.dropout if self.training else 0.0
        heads = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p)
        batch, _, length, _ = heads.shape
        return self.out_proj(heads.transpose(1, 2).reshape(batch, length, self.d_model))


class CourseEncoderLayer(course.EncoderLayer):
    """The package's encoder layer, built and called as lesson 8's ``EncoderLayer``."""

    def __init__(self, d_model: int, n_heads: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__(_layer_config(d_model, n_heads, d_ff, dropout))

    def forward(self, x: Tensor, src_mask: Tensor | None = None) -> Tensor:
        return super().forward(x, _padding(src_mask))


class CourseDecoderLayer(course.DecoderLayer):
    """The package's decoder layer, built and called as lesson 8's ``DecoderLayer``."""

    def __init__(self, d_model: int, n_heads: int, d_ff: int, dropout: float = 0.0) -> None:
        super().__init__(_layer_config(d_model, n_heads, d_ff, dropout))

    def forward(
        self, x: Tensor, memory: Tensor, tgt_mask: Tensor | None = None, src_mask: Tensor | None = None
    ) -> Tensor:
        return super().forward(x, memory, _padding(tgt_mask), _padding(src_mask))


class CourseEmbedding(course.Embedding):
    """The package's embedding, built as lesson 8's ``Embedding(vocab_size, d_model, max_len, dropout)``."""

    def __init__(self, vocab_size: int, d_model: int, max_len: int, dropout: float = 0.0) -> None:
        super().__init__(vocab_size, _layer_config(d_model, 1, 1, dropout, vocab_size, max_len))


def _course_loss(logits: np.ndarray, target: np.ndarray, epsilon: float = 0.1, pad_id: int = 0) -> float:
    vocab = np.shape(logits)[-1]
    return F.cross_entropy(
        torch.as_tensor(np.asarray(logits, dtype=np.float64)).reshape(-1, vocab),
        torch.as_tensor(np.asarray(target, dtype=np.int64)).reshape(-1),
        ignore_index=pad_id,
        label_smoothing=epsilon,
    ).item()


def _course_beam_step(
    scores: np.ndarray, log_probs: np.ndarray, eos_id: int, beam_size: int, length: int, alpha: float = 0.6
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[tuple[int, float]]]:
    """Lesson 9's beam step: rank all extensions, finish EOS among the first ``beam_size``, keep
    the best ``beam_size`` others live."""
    log_probs = np.asarray(log_probs, dtype=float)
    vocab = log_probs.shape[1]
    candidates = (np.asarray(scores, dtype=float)[:, None] + log_probs).ravel()
    order = np.argsort(-candidates, kind="stable")
    penalty = ((5 + length) / 6) ** alpha
    finished = [
        (int(i // vocab), float(candidates[i] / penalty)) for i in order[:beam_size] if i % vocab == eos_id
    ]
    live = np.array([i for i in order if i % vocab != eos_id][:beam_size])
    return live // vocab, live % vocab, candidates[live], finished


COURSE_PIECES: dict[str, Any] = {
    "MultiHeadAttention": CourseAttention,
    "EncoderLayer": CourseEncoderLayer,
    "DecoderLayer": CourseDecoderLayer,
    "Embedding": CourseEmbedding,
    "learning_rate": _paper_rate,
    "label_smoothed_cross_entropy": _course_loss,
    "beam_step": _course_beam_step,
}


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
    each other (``MultiHeadAttention`` inside the layers) in it, which is how a course piece takes
    the place of a student's one.
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


# --- checks: each returns None when the piece agrees with the course's, else the reason -------


def _gap(yours: np.ndarray, course_output: np.ndarray) -> str | None:
    gap = float(np.max(np.abs(np.asarray(yours, dtype=float) - course_output)))
    return None if gap <= TOLERANCE else f"its output differs from the course's by up to {gap:.2g}"


def _weights(module: nn.Module) -> dict[str, np.ndarray]:
    return {name: tensor.detach().numpy() for name, tensor in module.state_dict().items()}


def _check_class(name: str, student: Any) -> str | None:
    """Student and course class through lesson 8's adapter, on the same weights, in evaluation
    mode with dropout set (so it must be off), on a padded batch."""
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    d_model, n_heads, d_ff, dropout = 16, 2, 32, 0.1
    real_src = np.array([[True] * 5, [True] * 3 + [False] * 2])
    real_tgt = np.array([[True] * 4, [True] * 2 + [False] * 2])
    x_src = rng.normal(size=(2, 5, d_model))
    x_tgt = rng.normal(size=(2, 4, d_model))
    if name == "MultiHeadAttention":
        reference = CourseAttention(d_model, n_heads)
        causal = np.tril(np.ones((4, 4), dtype=bool)) & real_tgt[:, None, None, :]
        cases = [
            ((x_tgt, x_src, x_src, real_src[:, None, None, :]), {"n_heads": n_heads, "dropout": dropout}),
            ((x_tgt, x_tgt, x_tgt, causal), {"n_heads": n_heads, "dropout": dropout}),
        ]
        adapter = ADAPTERS["attention"]
    elif name == "EncoderLayer":
        reference = CourseEncoderLayer(d_model, n_heads, d_ff)
        cases = [((x_src, real_src), {"n_heads": n_heads, "dropout": dropout})]
        adapter = ADAPTERS["encoder_layer"]
    elif name == "DecoderLayer":
        reference = CourseDecoderLayer(d_model, n_heads, d_ff)
        cases = [((x_tgt, x_src, real_tgt, real_src), {"n_heads": n_heads, "dropout": dropout})]
        adapter = ADAPTERS["decoder_layer"]
    else:
        reference = CourseEmbedding(11, d_model, 20)
        ids = np.array([[3, 7, 1, 9], [5, 2, 0, 0]])
        cases = [((ids,), {"max_len": 20, "dropout": dropout})]
        adapter = ADAPTERS["embedding"]
    weights = _weights(reference)
    for inputs, options in cases:
        expected = adapter(type(reference), weights, *inputs, **options)
        problem = _gap(adapter(student, weights, *inputs, **options), expected)
        if problem:
            return problem + " (evaluation mode, on a small padded batch)"
    return None


def _check_learning_rate(student: Callable) -> str | None:
    for d_model, warmup in ((512, 4000), (128, 200)):
        for step in (1, 10, warmup, warmup + 1, 4 * warmup):
            yours, expected = float(student(step, d_model, warmup)), _paper_rate(step, d_model, warmup)
            if not np.isclose(yours, expected, rtol=1e-9, atol=0.0):
                return (
                    f"learning_rate({step}, {d_model}, {warmup}) is {yours:.4g}, "
                    f"the paper's rate is {expected:.4g}"
                )
    return None


def _check_loss(student: Callable) -> str | None:
    rng = np.random.default_rng(0)
    logits = rng.normal(scale=2.0, size=(2, 6, 12))
    target = rng.integers(1, 12, size=(2, 6))
    target[0, 4:] = 0
    yours, expected = float(student(logits, target, 0.1, 0)), _course_loss(logits, target, 0.1, 0)
    if not np.isclose(yours, expected, rtol=1e-6, atol=1e-9):
        return f"it gives {yours:.6f} on a padded batch where PyTorch's cross_entropy gives {expected:.6f}"
    return None


def _check_beam_step(student: Callable) -> str | None:
    rng = np.random.default_rng(0)
    log_probs = np.log(rng.dirichlet(np.ones(9), size=4))
    log_probs[1, 2] = np.log(0.9)  # the second beam's best token is EOS (id 2)
    cases = [(np.zeros(1), log_probs[:1], 1), (np.array([-0.5, -0.7, -1.2, -2.0]), log_probs, 3)]
    for scores, probs, length in cases:
        yours = student(scores.copy(), probs.copy(), 2, 4, length, 0.6)
        expected = _course_beam_step(scores, probs, 2, 4, length, 0.6)
        same = (
            np.array_equal(np.asarray(yours[0]), expected[0])
            and np.array_equal(np.asarray(yours[1]), expected[1])
            and np.allclose(np.asarray(yours[2], dtype=float), expected[2])
            and len(yours[3]) == len(expected[3])
            and all(p == q and np.isclose(s, t) for (p, s), (q, t) in zip(yours[3], expected[3], strict=True))
        )
        if not same:
            return f"at step {length} it keeps or finishes other beams than lesson 9's rule"
    return None


def check_piece(name: str, student: Any) -> str | None:
    """None when ``student`` agrees with the course's piece ``name``; else why not, in one line."""
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
    """The piece used for each name, whether it is the student's, and one line per piece."""

    pieces: dict[str, Any]
    yours: dict[str, bool]
    lines: list[str] = field(default_factory=list)


def choose_pieces(path: str | Path) -> ChosenPieces:
    """Load ``path``, check each piece, and keep the student's where it agrees with the course's.

    Attention is checked first: where it fails, the course's attention takes its name in the
    student's namespace, so that the student's layers (which build ``MultiHeadAttention``) are
    checked and trained with it.
    """
    namespace, problems = load_pieces(path)
    chosen = ChosenPieces({}, {})
    for name in PIECES:
        problem = problems.get(name) or check_piece(name, namespace[name])
        chosen.yours[name] = problem is None
        chosen.pieces[name] = namespace[name] if problem is None else COURSE_PIECES[name]
        namespace[name] = chosen.pieces[name]
        if problem is None:
            chosen.lines.append(f"✓ {name}: yours")
        else:
            chosen.lines.append(f"✗ {name}: {problem}; the course's {name} is used instead")
    return chosen


class _Encoder(nn.Module):
    """An embedding and N encoder layers of lesson 8's interface, called as the package's encoder."""

    def __init__(self, embed: nn.Module, layers: list[nn.Module]) -> None:
        super().__init__()
        self.embed, self.layers = embed, nn.ModuleList(layers)

    def forward(self, src: Tensor, key_padding_mask: Tensor | None = None) -> Tensor:
        x, real = self.embed(src), _padding(key_padding_mask)
        for layer in self.layers:
            x = layer(x, real)
        return x


class _Decoder(nn.Module):
    """An embedding and N decoder layers of lesson 8's interface, called as the package's decoder."""

    def __init__(self, embed: nn.Module, layers: list[nn.Module]) -> None:
        super().__init__()
        self.embed, self.layers = embed, nn.ModuleList(layers)

    def forward(
        self,
        tgt_in: Tensor,
        memory: Tensor,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
    ) -> Tensor:
        x = self.embed(tgt_in)
        tgt_real, src_real = _padding(tgt_key_padding_mask), _padding(memory_key_padding_mask)
        for layer in self.layers:
            x = layer(x, memory, tgt_real, src_real)
        return x


_PAPER_OPTIONS = (
    "norm_first",
    "learned_positions",
    "attention_dropout",
    "ffn_dropout",
    "positional_encoding",
    "scale_attention",
)


def assemble(classes: dict[str, Any], config: course.TransformerConfig) -> course.Transformer:
    """The course's encoder-decoder with ``classes``' embedding and layers, for ``config``.

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
    embedding = classes["Embedding"]
    encoder_layer, decoder_layer = classes["EncoderLayer"], classes["DecoderLayer"]
    encoder = _Encoder(
        embedding(config.src_vocab_size, config.d_model, config.max_len, config.dropout),
        [encoder_layer(*sizes) for _ in range(config.n_encoder_layers)],
    )
    decoder = _Decoder(
        embedding(config.tgt_vocab_size, config.d_model, config.max_len, config.dropout),
        [decoder_layer(*sizes) for _ in range(config.n_decoder_layers)],
    )
    return course.Transformer(config, encoder, decoder)

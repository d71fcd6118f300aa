"""The locked adapters between lesson 8's tests and the PyTorch modules a student writes.

A test cell cannot hand an ``nn.Module`` to the trusted grader, and the student's class design is
free. So, as in Stanford CS336's ``tests/adapters.py``, each graded piece is reached through a
small adapter that the student's code never changes: it builds the student's class with plain
numbers, loads plain-data weights by the contract's fixed names, sets train or eval mode and the
random seed, runs the module on plain inputs and returns a plain numpy array. The test compares
that array with a reference computed from the same weights, on the grader's side.

A test cell asks for one with ``adapted(piece, StudentClass)``. In the student's kernel that is the
adapter applied to the class itself. While grading, the test runs in the trusted checker, where
``StudentClass`` stands for the kernel's class; ``through_adapter`` then sends each call to the
kernel, which runs this module's adapter on the class there (``course_build.checking.wire``).

The weights' names (the contract, stated in lesson 8):

* attention: ``q_proj``, ``k_proj``, ``v_proj``, ``out_proj`` (``nn.Linear`` with biases), or one
  fused ``qkv_proj`` of ``3 d_model`` outputs, rows ``[W_Q; W_K; W_V]``, and ``out_proj``;
* layers: ``self_attn``, ``cross_attn`` (the decoder's), ``ff.linear1``, ``ff.linear2`` (or ``ff`` an
  ``nn.Sequential`` whose two ``nn.Linear`` are those), ``norm1`` ... ``norm3`` (``nn.LayerNorm``);
* embedding: ``tokens`` (``nn.Embedding``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
import torch
from torch import nn

_FUSED_ROWS = {"q_proj": 0, "k_proj": 1, "v_proj": 2}
_FFN_LINEARS = {"linear1": 0, "linear2": 1}


def _child(
    module: nn.Module, part: str, owner: str, path: str
) -> tuple[nn.Module | torch.Tensor, int | None]:
    """``module.part`` by the contract's name, and which third of a fused Q/K/V projection it is."""
    child = getattr(module, part, None)
    if child is not None:
        return child, None
    fused = getattr(module, "qkv_proj", None)
    if part in _FUSED_ROWS and isinstance(fused, nn.Linear):
        return fused, _FUSED_ROWS[part]
    if part in _FFN_LINEARS and isinstance(module, nn.Sequential):
        linears = [m for m in module if isinstance(m, nn.Linear)]
        if len(linears) == 2:
            return linears[_FFN_LINEARS[part]], None
    raise AttributeError(
        f"{owner} has no {path or part}: lesson 8's contract names the weights (q_proj, k_proj, "
        "v_proj, out_proj or qkv_proj; self_attn, cross_attn, ff.linear1, ff.linear2, norm1-norm3; "
        "tokens), so that the grader can load its weights"
    )


def load_weights(module: nn.Module, weights: dict[str, np.ndarray], owner: str) -> None:
    """Copy plain arrays into ``module``'s parameters by the contract's names.

    A fused ``qkv_proj`` receives W_Q, W_K and W_V as its three blocks of rows. Fails with one
    line naming the problem where a name is missing, a shape differs, or the module has a
    parameter the contract does not name (it would keep a random value the test cannot know).
    """
    loaded: set[int] = set()
    for name, value in weights.items():
        parts = name.split(".")
        target: nn.Module | torch.Tensor = module
        block = None
        for depth, part in enumerate(parts):
            target, fused_block = _child(target, part, owner, ".".join(parts[: depth + 1]))
            block = fused_block if fused_block is not None else block
        if not isinstance(target, torch.Tensor):
            raise TypeError(f"{owner}'s {name} should be a parameter, found a {type(target).__name__}")
        array = torch.as_tensor(np.asarray(value), dtype=target.dtype)
        expected = tuple(array.shape) if block is None else (3 * array.shape[0], *array.shape[1:])
        if tuple(target.shape) != expected:
            fused = f" (qkv_proj holds W_Q, W_K and W_V: {expected[0]} rows)" if block is not None else ""
            raise ValueError(
                f"{owner}'s {name} has shape {tuple(target.shape)}, the contract expects {expected}{fused}"
            )
        destination = target if block is None else target.narrow(0, block * array.shape[0], array.shape[0])
        with torch.no_grad():
            destination.copy_(array)
        loaded.add(id(target))
    unnamed = [
        name
        for name, parameter in module.named_parameters()
        if id(parameter) not in loaded and parameter.requires_grad  # a frozen one is a constant
    ]
    if unnamed:
        raise ValueError(
            f"{owner} has parameters the contract does not name ({', '.join(unnamed[:3])}): give "
            "every weight its contract name (see the lesson's table), or the grader cannot set it"
        )


def _build(student_class: Callable, owner: str, *args: object) -> nn.Module:
    module = student_class(*args)
    if not isinstance(module, nn.Module):
        raise TypeError(f"{owner}{args} gave a {type(module).__name__}, not an nn.Module")
    return module


def _run(
    module: nn.Module, owner: str, inputs: tuple, shape: tuple[int, ...], train: bool, seed: int
) -> np.ndarray:
    """The module's output in the given mode, its random numbers drawn from ``seed``."""
    module.train(train)
    torch.manual_seed(seed)
    with torch.no_grad():
        output = module(*inputs)
    if not isinstance(output, torch.Tensor):
        raise TypeError(
            f"{owner}.forward returned a {type(output).__name__}; return one tensor of shape {shape}"
        )
    if tuple(output.shape) != shape:
        raise ValueError(f"{owner}.forward returned shape {tuple(output.shape)}; expected {shape}")
    return output.detach().double().numpy()


def _floats(x: object) -> torch.Tensor:
    return torch.as_tensor(np.asarray(x, dtype=np.float32))


def _flags(mask: object) -> torch.Tensor | None:
    return None if mask is None else torch.as_tensor(np.asarray(mask, dtype=bool))


def run_attention(
    student_class: Callable,
    weights: dict[str, np.ndarray],
    query: np.ndarray,
    key: np.ndarray,
    value: np.ndarray,
    mask: np.ndarray | None = None,
    *,
    n_heads: int,
    dropout: float = 0.0,
    train: bool = False,
    seed: int = 0,
) -> np.ndarray:
    """``MultiHeadAttention(d_model, n_heads, dropout)`` with ``weights``, run on the inputs."""
    d_model = np.shape(weights["out_proj.weight"])[0]
    module = _build(student_class, "MultiHeadAttention", d_model, n_heads, dropout)
    load_weights(module, weights, "MultiHeadAttention")
    inputs = (_floats(query), _floats(key), _floats(value), _flags(mask))
    return _run(module, "MultiHeadAttention", inputs, np.shape(query), train, seed)


def run_encoder_layer(
    student_class: Callable,
    weights: dict[str, np.ndarray],
    x: np.ndarray,
    src_mask: np.ndarray | None = None,
    *,
    n_heads: int,
    dropout: float = 0.0,
    train: bool = False,
    seed: int = 0,
) -> np.ndarray:
    """``EncoderLayer(d_model, n_heads, d_ff, dropout)`` with ``weights``, run on ``x``."""
    d_ff, d_model = np.shape(weights["ff.linear1.weight"])
    module = _build(student_class, "EncoderLayer", d_model, n_heads, d_ff, dropout)
    load_weights(module, weights, "EncoderLayer")
    return _run(module, "EncoderLayer", (_floats(x), _flags(src_mask)), np.shape(x), train, seed)


def run_decoder_layer(
    student_class: Callable,
    weights: dict[str, np.ndarray],
    x: np.ndarray,
    memory: np.ndarray,
    tgt_mask: np.ndarray | None = None,
    src_mask: np.ndarray | None = None,
    *,
    n_heads: int,
    dropout: float = 0.0,
    train: bool = False,
    seed: int = 0,
) -> np.ndarray:
    """``DecoderLayer(d_model, n_heads, d_ff, dropout)`` with ``weights``, run on ``x`` and ``memory``."""
    d_ff, d_model = np.shape(weights["ff.linear1.weight"])
    module = _build(student_class, "DecoderLayer", d_model, n_heads, d_ff, dropout)
    load_weights(module, weights, "DecoderLayer")
    inputs = (_floats(x), _floats(memory), _flags(tgt_mask), _flags(src_mask))
    return _run(module, "DecoderLayer", inputs, np.shape(x), train, seed)


def run_embedding(
    student_class: Callable,
    weights: dict[str, np.ndarray],
    ids: np.ndarray,
    *,
    max_len: int,
    dropout: float = 0.0,
    train: bool = False,
    seed: int = 0,
) -> np.ndarray:
    """``Embedding(vocab_size, d_model, max_len, dropout)`` with ``weights``, run on token ids."""
    vocab_size, d_model = np.shape(weights["tokens.weight"])
    module = _build(student_class, "Embedding", vocab_size, d_model, max_len, dropout)
    load_weights(module, weights, "Embedding")
    tokens = torch.as_tensor(np.asarray(ids, dtype=np.int64))
    return _run(module, "Embedding", (tokens,), (*np.shape(ids), d_model), train, seed)


ADAPTERS: dict[str, Callable[..., np.ndarray]] = {
    "attention": run_attention,
    "encoder_layer": run_encoder_layer,
    "decoder_layer": run_decoder_layer,
    "embedding": run_embedding,
}


def adapted(piece: str, student_class: object) -> Callable[..., np.ndarray]:
    """The adapter for ``piece`` bound to the student's class: plain data in, a numpy array out.

    While grading, ``student_class`` is the trusted checker's stand-in for the kernel's class; its
    ``through_adapter`` runs the same adapter in the kernel, so the class never leaves it.
    """
    if piece not in ADAPTERS:
        raise ValueError(f"no adapter for {piece!r}; there are {', '.join(ADAPTERS)}")
    through_adapter = getattr(student_class, "through_adapter", None)
    if through_adapter is not None:
        return through_adapter(piece)
    if not callable(student_class):
        raise TypeError(
            f"the {piece} exercise needs a class (an nn.Module), found a {type(student_class).__name__}"
        )
    return functools.partial(ADAPTERS[piece], student_class)

"""The course's own drawing of the encoder-decoder Transformer, as SVG, and an explorer around it.

* :func:`architecture_svg` draws the model: the encoder and decoder layers with their sub-layers,
  residual paths, embeddings, positional encoding and output projection, each block tagged with
  the lesson that builds it. It is plain text built from fixed coordinates, so the same call
  always gives the same bytes; its colours follow the reader's light or dark scheme.
* ``python -m transformer_course.widgets.architecture PATH`` writes the course map (the drawing
  with its legend) that the book's introduction shows.
* :func:`gpt_block_svg` draws lesson 10's decoder-only model the same way.
* :class:`ArchitectureExplorer` (lesson 8): pick a part of the model to see it highlighted, the
  shapes it takes and gives (measured with forward hooks on a real model), its lesson and its code.
"""

from __future__ import annotations

import argparse
import base64
import inspect
import textwrap
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from html import escape
from pathlib import Path

import ipywidgets as widgets
import torch
from torch import Tensor, nn

from transformer_course import layers
from transformer_course.translation import decoding, model
from transformer_course.widgets.base import ShowsView

LESSON_TITLES = {
    1: "The sequence problem",
    2: "Dot products as similarity",
    3: "Scaled dot-product attention",
    4: "Multi-head attention",
    5: "Positional encoding",
    6: "Feed-forward network, residual connections and layer normalization",
    7: "Project: an encoder layer in numpy",
    8: "The encoder–decoder Transformer in PyTorch",
    9: "A mini-translator",
}

# Fill and outline of each kind of block, light scheme then dark scheme.
_KINDS = {
    "attention": (("#fde7c9", "#b35f00"), ("#4a3216", "#f0a35a")),
    "norm": (("#fff4b8", "#8f7500"), ("#3f3812", "#d9c24a")),
    "ffn": (("#d6e9fb", "#2f6fb3"), ("#16314d", "#6cb6ff")),
    "embed": (("#f9d9e6", "#a8325f"), ("#4a1f33", "#f07fab")),
    "position": (("#e6dcf7", "#6a4bb3"), ("#2f2550", "#b39ddb")),
    "output": (("#d8f0dc", "#2e7d3a"), ("#173d22", "#6fcf7f")),
}


@dataclass(frozen=True)
class Block:
    """One box of the drawing; ``lessons`` are the lessons that build it."""

    label: str
    kind: str
    lessons: tuple[int, ...]
    x: float
    y: float
    width: float = 190.0
    height: float = 32.0

    @property
    def center_x(self) -> float:
        return self.x + self.width / 2

    @property
    def center_y(self) -> float:
        return self.y + self.height / 2

    @property
    def bottom(self) -> float:
        return self.y + self.height


WIDTH, HEIGHT, MAP_HEIGHT = 760, 730, 800
_ENC_X, _DEC_X, _COL_W = 60.0, 470.0, 230.0  # the two layer frames
_ENC_BOX, _DEC_BOX = _ENC_X + 20, _DEC_X + 20  # boxes sit 20 inside their frame
_FRAME_BOTTOM, _ENC_TOP, _DEC_TOP = 590.0, 300.0, 150.0

BLOCKS: dict[str, Block] = {
    "src_embedding": Block("Embedding × √d_model", "embed", (8,), _ENC_BOX, 650),
    "tgt_embedding": Block("Embedding × √d_model", "embed", (8,), _DEC_BOX, 650),
    "positional_encoding": Block("Positional encoding", "position", (5,), 300, 600, 160, 30),
    "enc_self_attention": Block("Multi-head self-attention", "attention", (3, 4), _ENC_BOX, 540),
    "enc_norm1": Block("Add & norm", "norm", (6,), _ENC_BOX, 480),
    "enc_ffn": Block("Feed-forward", "ffn", (6,), _ENC_BOX, 410),
    "enc_norm2": Block("Add & norm", "norm", (6,), _ENC_BOX, 350),
    "dec_self_attention": Block("Masked self-attention", "attention", (3, 4), _DEC_BOX, 540),
    "dec_norm1": Block("Add & norm", "norm", (6,), _DEC_BOX, 480),
    "cross_attention": Block("Encoder–decoder attention", "attention", (8,), _DEC_BOX, 410),
    "dec_norm2": Block("Add & norm", "norm", (6,), _DEC_BOX, 350),
    "dec_ffn": Block("Feed-forward", "ffn", (6,), _DEC_BOX, 280),
    "dec_norm3": Block("Add & norm", "norm", (6,), _DEC_BOX, 220),
    "output_linear": Block("Linear (tied weights)", "output", (8,), _DEC_BOX, 95),
    "softmax": Block("Softmax", "output", (3,), _DEC_BOX, 45),
}

_STYLE = """
.bg{fill:#ffffff;stroke:#d0d7de}
.txt{fill:#1f2328;font:13px system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif}
.small{fill:#57606a;font:12px system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif}
.title{fill:#1f2328;font:600 14px system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif}
.badge-txt{fill:#ffffff;font:600 11px system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif}
.frame{fill:#f6f8fa;stroke:#8c959f;stroke-dasharray:5 4}
.wire{fill:none;stroke:#57606a;stroke-width:1.6}
.head{fill:#57606a}
.hl{stroke:#cf222e!important;stroke-width:3.5!important}
%(kinds_light)s
"""

# Only for a drawing that stands on the page itself: cell outputs and widgets sit on a light card
# in the book's dark mode, like every plot, so the drawings inside them keep the light colours.
_DARK_STYLE = """
@media (prefers-color-scheme: dark){
.bg{fill:#161b22;stroke:#30363d}
.txt,.title{fill:#e6edf3}
.small{fill:#9da7b3}
.badge-txt{fill:#0d1117}
.frame{fill:#1c2128;stroke:#6e7681}
.wire{stroke:#9da7b3}
.head{fill:#9da7b3}
.hl{stroke:#ff7b72!important}
%(kinds_dark)s
}
"""


def _kind_css(scheme: int) -> str:
    rules = []
    for kind, schemes in _KINDS.items():
        fill, stroke = schemes[scheme]
        rules.append(f".k-{kind}{{fill:{fill};stroke:{stroke};stroke-width:1.5}}")
        rules.append(f".b-{kind}{{fill:{stroke}}}")
    frame_badge = ("#57606a", "#9da7b3")[scheme]
    rules.append(f".b-frame{{fill:{frame_badge}}}")
    return "\n".join(rules)


def _fmt(value: float) -> str:
    return f"{value:g}"


def _arrow(points: Iterable[tuple[float, float]]) -> str:
    path = " ".join(f"{_fmt(x)},{_fmt(y)}" for x, y in points)
    return f'<polyline class="wire" points="{path}" marker-end="url(#arrow)"/>'


def _badge(lessons: tuple[int, ...], kind: str, right: float, top: float) -> str:
    """A pill naming the lessons, e.g. ``L3·4``, whose right end is at ``right``."""
    text = "L" + "·".join(str(n) for n in lessons)
    width = 12 + 7 * len(text)
    x, y = right - width, top - 9
    return (
        f'<rect class="b-{kind}" x="{_fmt(x)}" y="{_fmt(y)}" width="{width}" height="17" rx="8.5"/>'
        f'<text class="badge-txt" x="{_fmt(x + width / 2)}" y="{_fmt(y + 12.5)}" '
        f'text-anchor="middle">{text}</text>'
    )


def _caption(x: float, y: float, text: str, anchor: str = "start") -> str:
    return f'<text class="small" x="{_fmt(x)}" y="{_fmt(y)}" text-anchor="{anchor}">{escape(text)}</text>'


def _block(key: str, block: Block, highlighted: bool, faded: bool) -> str:
    classes = f"k-{block.kind}" + (" hl" if highlighted else "")
    opacity = ' opacity="0.35"' if faded else ""
    return (
        f'<g id="{key}"{opacity}><rect class="{classes}" x="{_fmt(block.x)}" y="{_fmt(block.y)}" '
        f'width="{_fmt(block.width)}" height="{_fmt(block.height)}" rx="6"/>'
        f'<text class="txt" x="{_fmt(block.center_x)}" y="{_fmt(block.center_y + 4.5)}" '
        f'text-anchor="middle">{escape(block.label)}</text>'
        f"{_badge(block.lessons, block.kind, block.x + block.width + 8, block.y)}</g>"
    )


def _residual(side_x: float, branch_y: float, from_x: float, into: Block, left: bool) -> str:
    """A skip connection: leaves the main wire at ``branch_y``, runs beside the sub-layer, joins the norm."""
    edge = into.x if left else into.x + into.width
    return _arrow([(from_x, branch_y), (side_x, branch_y), (side_x, into.center_y), (edge, into.center_y)])


_PLUS_Y = 615.0  # centre of the two "+" where the positions join the embeddings
_MEMORY_X = (_ENC_X + _COL_W + _DEC_X) / 2 + 10  # where the encoder's output runs up and over


def _wires() -> list[str]:
    b = BLOCKS
    enc_x, dec_x = b["enc_self_attention"].center_x, b["dec_self_attention"].center_x
    enc_side, dec_side = _ENC_X + 10, _DEC_X + _COL_W - 10
    pe = b["positional_encoding"]
    wires = [
        # inputs up through the embeddings and the positional-encoding sums into the stacks
        _arrow([(enc_x, 690), (enc_x, b["src_embedding"].bottom)]),
        _arrow([(dec_x, 690), (dec_x, b["tgt_embedding"].bottom)]),
        _arrow([(enc_x, b["src_embedding"].y), (enc_x, _PLUS_Y + 10)]),
        _arrow([(dec_x, b["tgt_embedding"].y), (dec_x, _PLUS_Y + 10)]),
        _arrow([(pe.x, _PLUS_Y), (enc_x + 10, _PLUS_Y)]),
        _arrow([(pe.x + pe.width, _PLUS_Y), (dec_x - 10, _PLUS_Y)]),
        _arrow([(enc_x, _PLUS_Y - 10), (enc_x, b["enc_self_attention"].bottom)]),
        _arrow([(dec_x, _PLUS_Y - 10), (dec_x, b["dec_self_attention"].bottom)]),
    ]
    for lower, upper, x in (
        ("enc_self_attention", "enc_norm1", enc_x),
        ("enc_norm1", "enc_ffn", enc_x),
        ("enc_ffn", "enc_norm2", enc_x),
        ("dec_self_attention", "dec_norm1", dec_x),
        ("dec_norm1", "cross_attention", dec_x),
        ("cross_attention", "dec_norm2", dec_x),
        ("dec_norm2", "dec_ffn", dec_x),
        ("dec_ffn", "dec_norm3", dec_x),
        ("dec_norm3", "output_linear", dec_x),
        ("output_linear", "softmax", dec_x),
    ):
        wires.append(_arrow([(x, b[lower].y), (x, b[upper].bottom)]))
    wires.append(_arrow([(dec_x, b["softmax"].y), (dec_x, 24)]))
    # Residual connections leave the main wire below each sub-layer (between it and whatever feeds
    # it) and join its add & norm: the encoder's on the left, the decoder's on the right.
    for sublayer, below, norm, side, left, x in (
        ("enc_self_attention", _FRAME_BOTTOM, "enc_norm1", enc_side, True, enc_x),
        ("enc_ffn", b["enc_norm1"].y, "enc_norm2", enc_side, True, enc_x),
        ("dec_self_attention", _FRAME_BOTTOM, "dec_norm1", dec_side, False, dec_x),
        ("cross_attention", b["dec_norm1"].y, "dec_norm2", dec_side, False, dec_x),
        ("dec_ffn", b["dec_norm2"].y, "dec_norm3", dec_side, False, dec_x),
    ):
        wires.append(_residual(side, (b[sublayer].bottom + below) / 2, x, b[norm], left))
    # the encoder's output (the memory) feeds the keys and values of every cross-attention
    cross = b["cross_attention"]
    wires.append(
        _arrow(
            [
                (enc_x, b["enc_norm2"].y),
                (enc_x, 268),
                (_MEMORY_X, 268),
                (_MEMORY_X, cross.center_y),
                (cross.x, cross.center_y),
            ]
        )
    )
    return wires


def _svg_start(width: int, height: int, heading: str, adaptive: bool) -> list[str]:
    """The opening of a drawing: root element, title, style sheet, arrow head, card and heading."""
    style = _STYLE % {"kinds_light": _kind_css(0)}
    if adaptive:
        style += _DARK_STYLE % {"kinds_dark": _kind_css(1)}
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img" aria-labelledby="arch-title">',
        f'<title id="arch-title">{escape(heading)}</title>',
        f"<style>{style}</style>",
        '<defs><marker id="arrow" viewBox="0 0 8 8" refX="7.5" refY="4" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse">'
        '<path class="head" d="M0,0 L8,4 L0,8 z"/></marker></defs>',
        f'<rect class="bg" x="0.5" y="0.5" width="{width - 1}" height="{height - 1}" rx="10"/>',
        f'<text class="title" x="20" y="28">{escape(heading)}</text>',
    ]


def _plus(x: float, y: float) -> str:
    """The circled "+" where two wires are summed."""
    return (
        f'<circle class="frame" style="stroke-dasharray:none" cx="{_fmt(x)}" cy="{_fmt(y)}" r="10"/>'
        f'<text class="txt" x="{_fmt(x)}" y="{_fmt(y + 5)}" text-anchor="middle">+</text>'
    )


def architecture_svg(
    highlight: Iterable[str] = (), legend: bool = False, title: str | None = None, adaptive: bool = True
) -> str:
    """The drawing as an SVG document; ``highlight`` names blocks of :data:`BLOCKS` to outline,
    fading the rest; ``legend`` adds the footer that maps lessons without a block of their own;
    ``adaptive`` switches to dark colours when the reader's scheme is dark (for a drawing that
    stands on the page, not one inside a cell output, which the book shows on a light card)."""
    chosen = set(highlight)
    unknown = chosen - set(BLOCKS)
    if unknown:
        raise ValueError(f"unknown blocks {sorted(unknown)}; choose from {sorted(BLOCKS)}")
    height = MAP_HEIGHT if legend else HEIGHT
    heading = title or "The Transformer: encoder (left) and decoder (right)"
    parts = _svg_start(WIDTH, height, heading, adaptive)
    for x, top, label, lesson, side_x, anchor in (
        (_ENC_X, _ENC_TOP, "Encoder layer", 7, _ENC_X - 8, "end"),
        (_DEC_X, _DEC_TOP, "Decoder layer", 8, _DEC_X + _COL_W + 8, "start"),
    ):
        parts.append(
            f'<rect class="frame" x="{_fmt(x)}" y="{_fmt(top)}" width="{_fmt(_COL_W)}" '
            f'height="{_fmt(_FRAME_BOTTOM - top)}" rx="12"/>'
            f'<text class="small" x="{_fmt(x + 12)}" y="{_fmt(top + 20)}">{label}</text>'
            f"{_badge((lesson,), 'frame', x + _COL_W - 10, top + 14)}"
            f'<text class="title" x="{_fmt(side_x)}" y="{_fmt((top + _FRAME_BOTTOM) / 2)}" '
            f'text-anchor="{anchor}">×N</text>'
        )
    parts.extend(_wires())
    enc_x, dec_x = BLOCKS["enc_self_attention"].center_x, BLOCKS["dec_self_attention"].center_x
    parts += [_plus(x, _PLUS_Y) for x in (enc_x, dec_x)]
    for key, block in BLOCKS.items():
        parts.append(_block(key, block, key in chosen, bool(chosen) and key not in chosen))
    memory_x = _MEMORY_X
    parts += [
        _caption(enc_x, 706, "source tokens", "middle"),
        _caption(dec_x, 706, "target tokens, shifted right", "middle"),
        _caption(memory_x + 6, 300, "memory:"),
        _caption(memory_x + 6, 316, "keys and"),
        _caption(memory_x + 6, 332, "values"),
        _caption(dec_x + 10, 20, "next-token probabilities"),
    ]
    if legend:
        lines = (
            "Badges: the lesson that builds each block. Lesson 1 shows why recurrence is replaced; "
            "lesson 2 builds the dot",
            "products inside every attention block; lesson 7 assembles one encoder layer in NumPy; "
            "lesson 8 the whole model",
            "in PyTorch; lesson 9 trains it to translate; lesson 10 keeps the decoder alone.",
        )
        parts += [_caption(20, 736 + 17 * i, line) for i, line in enumerate(lines)]
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def svg_image(svg: str, alt: str, max_width: int = WIDTH) -> str:
    """An ``<img>`` tag carrying ``svg`` as a data URI: rendered alike in JupyterLab, Colab and the book."""
    encoded = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    return (
        f'<img src="data:image/svg+xml;base64,{encoded}" alt="{escape(alt, quote=True)}" '
        f'style="width:100%;max-width:{max_width}px;height:auto"/>'
    )


COURSE_MAP_ALT = (
    "The encoder-decoder Transformer drawn as the course map: source and target embeddings with "
    "positional encoding, an encoder layer of self-attention and feed-forward sub-layers, a decoder "
    "layer with masked self-attention, encoder-decoder attention and feed-forward sub-layers, each "
    "followed by add and norm, then a linear layer and a softmax; each block names its lesson"
)


def write_course_map(path: Path) -> None:
    """Write the introduction's course map (the drawing with its legend) to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        architecture_svg(legend=True, title="The Transformer, and the lesson that builds each part"), "utf-8"
    )


# Lesson 10's decoder-only block, as the course's GPT builds it (pre-norm, as GPT-2): one column.
GPT_WIDTH, GPT_HEIGHT = 560, 808
_GPT_X, _GPT_BOX_W = 280.0, 210.0  # the column's centre and the boxes' width
_GPT_FRAME_X, _GPT_FRAME_W, _GPT_FRAME_TOP, _GPT_FRAME_BOTTOM = 140.0, 280.0, 245.0, 605.0
_GPT_SIDE_X = _GPT_FRAME_X + _GPT_FRAME_W - 12  # where the residual wires run
_GPT_PLUS_Y = (440.0, 275.0)  # the two residual sums


def _gpt_block(label: str, kind: str, lessons: tuple[int, ...], y: float) -> Block:
    return Block(label, kind, lessons, _GPT_X - _GPT_BOX_W / 2, y, _GPT_BOX_W)


GPT_BLOCKS: dict[str, Block] = {
    "embedding": _gpt_block("Token embedding × √d_model", "embed", (8,), 625),
    "norm1": _gpt_block("Layer norm", "norm", (6,), 535),
    "self_attention": _gpt_block("Masked self-attention", "attention", (3, 4, 10), 470),
    "norm2": _gpt_block("Layer norm", "norm", (6,), 370),
    "ffn": _gpt_block("Feed-forward", "ffn", (6,), 305),
    "final_norm": _gpt_block("Final layer norm", "norm", (10,), 180),
    "output_linear": _gpt_block("Linear (tied weights)", "output", (8,), 125),
    "softmax": _gpt_block("Softmax", "output", (3,), 70),
}

GPT_BLOCK_ALT = (
    "The decoder-only GPT drawn in the course map's style: token embeddings, then N blocks of "
    "layer norm, masked self-attention with rotary positions on queries and keys, a residual sum, "
    "layer norm, feed-forward and a second residual sum, then a final layer norm, a linear layer "
    "tied to the embedding and a softmax giving next-token probabilities; each block names its lesson"
)


def gpt_block_svg(adaptive: bool = False) -> str:
    """Lesson 10's drawing of the decoder-only model (the course's GPT) as an SVG document.

    Drawn like the course map, so the two read side by side: the decoder layer of the map without
    its cross-attention, with layer norm moved before each sub-layer (pre-norm, the residual wire
    carries ``x`` itself past it) and one final layer norm. ``adaptive`` as in :func:`architecture_svg`.
    """
    b = GPT_BLOCKS
    x, side = _GPT_X, _GPT_SIDE_X
    plus_attention, plus_ffn = _GPT_PLUS_Y
    parts = _svg_start(GPT_WIDTH, GPT_HEIGHT, "A GPT: the decoder-only Transformer, pre-norm", adaptive)
    parts.append(
        f'<rect class="frame" x="{_fmt(_GPT_FRAME_X)}" y="{_fmt(_GPT_FRAME_TOP)}" '
        f'width="{_fmt(_GPT_FRAME_W)}" '
        f'height="{_fmt(_GPT_FRAME_BOTTOM - _GPT_FRAME_TOP)}" rx="12"/>'
        f'<text class="small" x="{_fmt(_GPT_FRAME_X + 12)}" y="{_fmt(_GPT_FRAME_TOP + 20)}">GPT block</text>'
        f"{_badge((10,), 'frame', _GPT_FRAME_X + _GPT_FRAME_W - 10, _GPT_FRAME_TOP + 14)}"
        f'<text class="title" x="{_fmt(_GPT_FRAME_X + _GPT_FRAME_W + 8)}" '
        f'y="{_fmt((_GPT_FRAME_TOP + _GPT_FRAME_BOTTOM) / 2)}">×N</text>'
    )
    parts += [
        _arrow([(x, 725), (x, b["embedding"].bottom)]),
        _arrow([(x, b["embedding"].y), (x, b["norm1"].bottom)]),
        _arrow([(x, b["norm1"].y), (x, b["self_attention"].bottom)]),
        _arrow([(x, b["self_attention"].y), (x, plus_attention + 10)]),
        _arrow([(x, plus_attention - 10), (x, b["norm2"].bottom)]),
        _arrow([(x, b["norm2"].y), (x, b["ffn"].bottom)]),
        _arrow([(x, b["ffn"].y), (x, plus_ffn + 10)]),
        _arrow([(x, plus_ffn - 10), (x, b["final_norm"].bottom)]),
        _arrow([(x, b["final_norm"].y), (x, b["output_linear"].bottom)]),
        _arrow([(x, b["output_linear"].y), (x, b["softmax"].bottom)]),
        _arrow([(x, b["softmax"].y), (x, 46)]),
    ]
    # Pre-norm residuals: each leaves the main wire below its layer norm and joins the sum above
    # its sub-layer, so the un-normalized x runs the whole height of the stack.
    for branch_y, plus_y in (
        ((_GPT_FRAME_BOTTOM + b["norm1"].bottom) / 2, plus_attention),
        ((plus_attention - 10 + b["norm2"].bottom) / 2, plus_ffn),
    ):
        parts.append(_arrow([(x, branch_y), (side, branch_y), (side, plus_y), (x + 10, plus_y)]))
    parts += [_plus(x, y) for y in _GPT_PLUS_Y]
    parts += [_block(key, block, False, False) for key, block in b.items()]
    attention = b["self_attention"]
    parts += [
        _caption(_GPT_FRAME_X - 8, attention.center_y - 4, "rotary positions:", "end"),
        _caption(_GPT_FRAME_X - 8, attention.center_y + 12, "q and k turned", "end"),
        _caption(_GPT_FRAME_X - 8, attention.center_y + 28, "by position", "end"),
        _caption(x, 742, "any text, as token ids", "middle"),
        _caption(x + 10, 58, "next-token probabilities at every position"),
        _caption(20, 766, "Pre-norm: each sub-layer reads a normalized copy of x and adds its output to x;"),
        _caption(20, 782, "the residual wire carries x itself past the norms. Lesson 8's decoder layer"),
        _caption(
            20,
            798,
            "without cross-attention, its norms moved before the sub-layers, plus one at the end.",
        ),
    ]
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


@dataclass(frozen=True)
class Part:
    """A choice of the explorer: the blocks it highlights, what it does, and where its code lives."""

    title: str
    blocks: tuple[str, ...]
    lessons: tuple[int, ...]
    summary: str
    code: Callable


PARTS: dict[str, Part] = {
    "source embedding": Part(
        "Source embedding",
        ("src_embedding",),
        (8,),
        "Looks up one learned vector per source token id and multiplies it by √d_model, so that it "
        "is on the scale of the positional encoding; then adds the positions and applies dropout.",
        model.Embedding.forward,
    ),
    "positional encoding": Part(
        "Positional encoding",
        ("positional_encoding",),
        (5,),
        "A fixed table of sines and cosines, one row per position, added to the embeddings of both "
        "stacks; it is the only place where word order enters the model.",
        layers.sinusoidal_encodings,
    ),
    "encoder self-attention": Part(
        "Encoder self-attention",
        ("enc_self_attention",),
        (3, 4),
        "Every source position builds a query, a key and a value, and gathers from all source "
        "positions; only padding is masked.",
        layers.MultiHeadAttention.forward,
    ),
    "add & norm": Part(
        "Add & norm (residual + layer norm)",
        ("enc_norm1", "enc_norm2", "dec_norm1", "dec_norm2", "dec_norm3"),
        (6,),
        "Adds each sub-layer's input to its output (after dropout) and normalizes every token: "
        "LayerNorm(x + Sublayer(x)), the paper's post-norm.",
        model.EncoderLayer.forward,
    ),
    "feed-forward": Part(
        "Position-wise feed-forward network",
        ("enc_ffn", "dec_ffn"),
        (6,),
        "The same two-layer network with a ReLU, applied to every position separately: widen to "
        "d_ff, cut the negatives, project back to d_model.",
        layers.FeedForward.forward,
    ),
    "target embedding": Part(
        "Target embedding",
        ("tgt_embedding",),
        (8,),
        "The same lookup for the target prefix, which starts with BOS (teacher forcing); the "
        "paper shares this matrix with the source embedding and the output projection.",
        model.Embedding.forward,
    ),
    "masked self-attention": Part(
        "Masked (causal) self-attention",
        ("dec_self_attention",),
        (3, 4),
        "Each target position attends to itself and the positions before it only, so training "
        "on a whole sentence at once never lets a position see the token it must predict.",
        layers._attention_mask,
    ),
    "cross-attention": Part(
        "Encoder–decoder (cross-) attention",
        ("cross_attention",),
        (8,),
        "Queries come from the decoder, keys and values from the encoder's output (the memory): "
        "each target position looks up the source words it needs.",
        model.DecoderLayer.forward,
    ),
    "output projection": Part(
        "Output projection",
        ("output_linear",),
        (8,),
        "A linear map from d_model to one score (logit) per target-vocabulary token, at every "
        "position; with shared embeddings its weight is the embedding matrix.",
        model.Transformer.decode,
    ),
    "softmax": Part(
        "Softmax over the vocabulary",
        ("softmax",),
        (3, 8),
        "Turns the logits into next-token probabilities: the loss takes their logarithm during "
        "training, decoding picks from them at inference.",
        decoding.greedy_decode,
    ),
}

# Which module of a Transformer each part's shapes are measured on: (module path, what it shows).
_PROBES: dict[str, tuple[str, ...]] = {
    "source embedding": ("encoder.embed",),
    "positional encoding": ("encoder.embed",),
    "encoder self-attention": ("encoder.layers.0.self_attn",),
    "add & norm": ("encoder.layers.0.norm1", "decoder.layers.0.norm3"),
    "feed-forward": ("encoder.layers.0.ff.linear1", "encoder.layers.0.ff"),
    "target embedding": ("decoder.embed",),
    "masked self-attention": ("decoder.layers.0.self_attn",),
    "cross-attention": ("decoder.layers.0.cross_attn",),
    "output projection": ("output_proj",),
    "softmax": ("output_proj",),
}


def _shape(value: object) -> str:
    return str(tuple(value.shape)) if isinstance(value, Tensor) else type(value).__name__


def _describe_call(module: nn.Module, args: tuple, kwargs: dict, output: Tensor) -> list[str]:
    """What one module received and returned, plus what the picture needs that it computes inside."""
    tensors = [a for a in args if isinstance(a, Tensor) and a.dtype != torch.bool]
    if isinstance(module, layers.MultiHeadAttention):
        lines = [f"{name} {_shape(a)}" for name, a in zip(("query", "key", "value"), tensors, strict=False)]
        padding = args[3] if len(args) > 3 else kwargs.get("key_padding_mask")
        weights = module.attention_weights(args[0], args[1], padding, causal=kwargs.get("causal", False))
        lines += [f"output {_shape(output)}", f"attention weights {_shape(weights)}"]
        return lines
    lines = [f"input {_shape(a)}" for a in tensors] + [f"output {_shape(output)}"]
    if isinstance(module, model.Embedding):
        lines.append(f"positional-encoding rows added {_shape(module.positions[: args[0].shape[1]])}")
    return lines


def measure_shapes(transformer: model.Transformer, src: Tensor, tgt_in: Tensor) -> dict[str, list[str]]:
    """Run ``transformer(src, tgt_in)`` once (evaluation mode, no gradients) with forward hooks;
    per module path of :data:`_PROBES`, lines such as ``"query (2, 5, 32)"`` naming the tensors it
    received and returned, and for attention the weights it computed."""
    modules = dict(transformer.named_modules())
    seen: dict[str, list[str]] = {}

    def recorder(path: str):
        def hook(module: nn.Module, args: tuple, kwargs: dict, output: Tensor) -> None:
            if path not in seen:  # the first layer of a stack is enough
                seen[path] = _describe_call(module, args, kwargs, output)
                if path == "output_proj":
                    seen[path].append(f"softmax over the vocabulary {_shape(torch.softmax(output, dim=-1))}")

        return hook

    paths = sorted({path for probe in _PROBES.values() for path in probe})
    handles = [modules[path].register_forward_hook(recorder(path), with_kwargs=True) for path in paths]
    was_training = transformer.training
    try:
        transformer.eval()
        with torch.no_grad():
            transformer(src, tgt_in)
    finally:
        transformer.train(was_training)
        for handle in handles:
            handle.remove()
    return seen


# Code in the panel takes the colours of the widget around it: the book's dark theme would
# otherwise paint light code text onto the light card it shows widgets on.
_INHERIT = "color:inherit;background:transparent;"


def _code(text: str) -> str:
    return f"<code style='{_INHERIT}'>{escape(text)}</code>"


class ArchitectureExplorer(ShowsView):
    """Pick a part of the Transformer: the drawing highlights it, and the panel beside it gives
    the shapes measured on ``transformer`` for the batch ``src``, ``tgt_in``, its lessons and its code."""

    def __init__(
        self, transformer: model.Transformer, src: Tensor, tgt_in: Tensor, part: str = "cross-attention"
    ) -> None:
        if part not in PARTS:
            raise ValueError(f"unknown part {part!r}; choose from {list(PARTS)}")
        self.config = transformer.config
        self.batch = (tuple(src.shape), tuple(tgt_in.shape))
        self.shapes = measure_shapes(transformer, src, tgt_in)
        self.choice = widgets.Dropdown(
            options=[(p.title, key) for key, p in PARTS.items()],
            value=part,
            description="part",
            layout=widgets.Layout(width="420px", max_width="100%"),
        )
        self.figure = widgets.HTML()
        self.details = widgets.HTML()
        self.choice.observe(self._on_change, names="value")
        self.view = widgets.VBox([self.choice, self.figure, self.details])
        self.refresh()

    def _on_change(self, _change: dict) -> None:
        self.refresh()

    def refresh(self) -> None:
        part = PARTS[self.choice.value]
        self.figure.value = svg_image(
            architecture_svg(highlight=part.blocks, adaptive=False),
            alt=f"The Transformer with {part.title.lower()} highlighted",
        )
        self.details.value = self.describe(self.choice.value)

    def describe(self, key: str) -> str:
        """The panel's HTML for one part: what it does, shapes, lessons, code."""
        part = PARTS[key]
        (batch, src_len), (_, tgt_len) = self.batch
        cfg = self.config
        heads = f"{cfg.n_heads} heads of width d_k = {cfg.d_head}, " if "attention" in key else ""
        lines = []
        for path in _PROBES[key]:
            measured = ", ".join(self.shapes.get(path, ["not run"]))
            lines.append(f"<li>{_code(path)}: {escape(measured)}</li>")
        lessons = ", ".join(f"lesson {n} ({escape(LESSON_TITLES[n])})" for n in part.lessons)
        code = escape(textwrap.dedent(inspect.getsource(part.code)))
        where = f"{part.code.__module__}.{part.code.__qualname__}"
        return (
            f"<p><b style='font-size:1.1em'>{escape(part.title)}</b><br>{escape(part.summary)}</p>"
            f"<p><b>Shapes</b> for a batch of {batch} sentences, source length {src_len}, target "
            f"length {tgt_len}, {heads}d_model {cfg.d_model}, d_ff {cfg.d_ff}, vocabulary "
            f"{cfg.tgt_vocab_size} (the first layer of each stack):</p><ul>{''.join(lines)}</ul>"
            f"<p><b>Built in</b> {lessons}.</p><details><summary><b>Code</b>: {_code(where)}</summary>"
            f"<pre style='{_INHERIT}font-size:0.8em;overflow-x:auto'>{code}</pre></details>"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Write the course map (the Transformer drawing) as SVG.")
    parser.add_argument("path", type=Path, help="where to write it, e.g. book/images/transformer_map.svg")
    write_course_map(parser.parse_args(argv).path)


if __name__ == "__main__":
    main()

"""The course's drawing of the Transformer: the committed course map, the SVG and the explorer."""

import base64
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import torch

from transformer_course.translation.model import Transformer, TransformerConfig
from transformer_course.widgets.architecture import (
    BLOCKS,
    GPT_BLOCKS,
    PARTS,
    ArchitectureExplorer,
    architecture_svg,
    gpt_block_svg,
    measure_shapes,
    write_course_map,
)

COURSE_MAP = Path(__file__).resolve().parents[2] / "book" / "images" / "transformer_map.svg"
SVG = "{http://www.w3.org/2000/svg}"


def test_committed_course_map_is_what_the_command_writes(tmp_path):
    fresh = tmp_path / "map.svg"
    write_course_map(fresh)
    assert COURSE_MAP.read_text("utf-8") == fresh.read_text("utf-8"), (
        "book/images/transformer_map.svg is stale: run "
        "python -m transformer_course.widgets.architecture book/images/transformer_map.svg"
    )


def test_svg_is_valid_xml_with_every_block_and_its_lesson_badge():
    root = ET.fromstring(architecture_svg(legend=True))
    groups = {g.get("id"): g for g in root.iter(f"{SVG}g")}
    assert set(BLOCKS) <= set(groups)
    for key, block in BLOCKS.items():
        texts = [t.text for t in groups[key].iter(f"{SVG}text")]
        assert block.label in texts
        assert "L" + "·".join(str(n) for n in block.lessons) in texts
    assert "lesson 10" in "".join(t.text or "" for t in root.iter(f"{SVG}text"))


def test_svg_follows_the_dark_colour_scheme_unless_it_sits_on_a_light_card():
    assert "@media (prefers-color-scheme: dark)" in architecture_svg()
    assert "prefers-color-scheme" not in architecture_svg(adaptive=False)


def test_highlight_fades_every_other_block_and_unknown_blocks_are_refused():
    svg = architecture_svg(highlight=["cross_attention"])
    assert re.search(r'<g id="cross_attention"><rect class="k-attention hl"', svg)
    assert svg.count('opacity="0.35"') == len(BLOCKS) - 1
    assert 'opacity="0.35"' not in architecture_svg()
    with pytest.raises(ValueError, match="unknown blocks"):
        architecture_svg(highlight=["attention"])


def test_every_part_highlights_known_blocks():
    for part in PARTS.values():
        assert set(part.blocks) <= set(BLOCKS)


@pytest.fixture(scope="module")
def small_model():
    torch.manual_seed(0)
    config = TransformerConfig(
        src_vocab_size=20,
        tgt_vocab_size=23,
        d_model=16,
        n_heads=2,
        d_ff=40,
        n_encoder_layers=2,
        n_decoder_layers=1,
    )
    src = torch.tensor([[5, 6, 7, 8, 9], [5, 6, 7, 0, 0]])
    tgt_in = torch.tensor([[1, 9, 10], [1, 12, 0]])
    return Transformer(config).train(), src, tgt_in


def test_shapes_are_measured_on_the_model(small_model):
    transformer, src, tgt_in = small_model
    shapes = measure_shapes(transformer, src, tgt_in)
    assert shapes["decoder.layers.0.cross_attn"] == [
        "query (2, 3, 16)",
        "key (2, 5, 16)",
        "value (2, 5, 16)",
        "output (2, 3, 16)",
        "attention weights (2, 2, 3, 5)",
    ]
    assert "attention weights (2, 2, 3, 3)" in shapes["decoder.layers.0.self_attn"]
    assert "output (2, 5, 40)" in shapes["encoder.layers.0.ff.linear1"]
    assert "softmax over the vocabulary (2, 3, 23)" in shapes["output_proj"]
    assert transformer.training, "measuring must put the model back in training mode"
    assert not any(m._forward_hooks for m in transformer.modules()), "hooks must be removed"


def test_choosing_a_part_changes_picture_and_panel(small_model):
    explorer = ArchitectureExplorer(*small_model, part="cross-attention")
    figure, details = explorer.figure.value, explorer.details.value
    assert figure.startswith('<img src="data:image/svg+xml;base64,')
    assert "DecoderLayer.forward" in details and "attention weights (2, 2, 3, 5)" in details
    explorer.choice.value = "feed-forward"
    assert explorer.figure.value != figure and "FeedForward.forward" in explorer.details.value
    shown = base64.b64decode(re.search(r"base64,([^\"]+)", explorer.figure.value).group(1)).decode()
    assert 'class="k-ffn hl"' in shown and 'class="k-attention hl"' not in shown
    with pytest.raises(ValueError, match="unknown part"):
        ArchitectureExplorer(*small_model, part="nothing")


def test_gpt_drawing_is_the_decoder_without_cross_attention_with_every_block_and_its_lesson():
    svg = gpt_block_svg()
    assert svg == gpt_block_svg(), (
        "the same call must give the same bytes (lesson 10's outputs are committed)"
    )
    root = ET.fromstring(svg)
    groups = {g.get("id"): g for g in root.iter(f"{SVG}g")}
    assert set(GPT_BLOCKS) <= set(groups)
    for key, block in GPT_BLOCKS.items():
        texts = [t.text for t in groups[key].iter(f"{SVG}text")]
        assert block.label in texts and "L" + "·".join(str(n) for n in block.lessons) in texts
    labels = [block.label for block in GPT_BLOCKS.values()]
    assert not any("Encoder" in label or "cross" in label.lower() for label in labels)
    assert labels.count("Layer norm") == 2 and "Final layer norm" in labels, (
        "pre-norm: two norms per block, one at the end"
    )
    assert svg.count("<circle") == 2, "one residual sum after each sub-layer"
    assert "prefers-color-scheme" not in svg and "prefers-color-scheme" in gpt_block_svg(adaptive=True)

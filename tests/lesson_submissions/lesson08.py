"""Realistic submissions for lesson 8: the PyTorch pieces (multi-head attention as an ``nn.Module``)
and the Apply exercises (teacher forcing and the parameter count).

``CORRECT`` maps a name to answers (grade_id -> cell source) that must earn full marks; ``WRONG``
maps a name to answers holding one typical mistake, ``CAUGHT_BY`` names exactly the test cells
that must score zero for it (every other test cell must give full marks), and ``FEEDBACK`` a
phrase its feedback must contain. Answers not given are the reference solution's.
"""

LESSON = "08_encoder_decoder"

# The reference MultiHeadAttention, as a template: the mistakes below change one line of it.
_IMPORTS = """import math

import torch
import torch.nn.functional as F
from torch import nn


"""

_ATTENTION = (
    _IMPORTS
    + """class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, dropout=0.0):
        super().__init__()
        self.n_heads, self.d_head, self.dropout = n_heads, d_model // n_heads, dropout
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def split(self, x):
        return x.view(x.shape[0], x.shape[1], self.n_heads, self.d_head).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        q, k, v = self.split(self.q_proj(query)), self.split(self.k_proj(key)), self.split(self.v_proj(value))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = F.dropout(torch.softmax(scores, dim=-1), self.dropout, training=self.training)
        heads = weights @ v
        return self.out_proj(heads.transpose(1, 2).reshape(query.shape[0], query.shape[1], -1))
"""
)


def _attention_with(old: str, new: str) -> str:
    """The template attention with one line changed (the line must be there)."""
    assert old in _ATTENTION, old
    return _ATTENTION.replace(old, new)


# The reference layers and embedding, as templates for the mistakes below (one change each).
_FEED_FORWARD = """class FeedForward(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.linear1, self.linear2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.linear2(torch.relu(self.linear1(x)))


"""

_ENCODER = (
    _FEED_FORWARD
    + """class EncoderLayer(nn.Module):
    def __init__(self, d_model, n_heads, d_ff, dropout=0.0):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, n_heads)
        self.ff = FeedForward(d_model, d_ff)
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, src_mask=None):
        mask = None if src_mask is None else src_mask[:, None, None, :]
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask)))
        return self.norm2(x + self.dropout(self.ff(x)))
"""
)

_DECODER = """class DecoderLayer(nn.Module):
    def __init__(self, d_model, n_heads, d_ff, dropout=0.0):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, n_heads)
        self.cross_attn = MultiHeadAttention(d_model, n_heads)
        self.ff = FeedForward(d_model, d_ff)
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(d_model) for _ in range(3))
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, memory, tgt_mask=None, src_mask=None):
        causal = torch.ones(x.shape[1], x.shape[1], dtype=torch.bool).tril()
        self_mask = causal if tgt_mask is None else causal & tgt_mask[:, None, None, :]
        memory_mask = None if src_mask is None else src_mask[:, None, None, :]
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, self_mask)))
        x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory, memory_mask)))
        return self.norm3(x + self.dropout(self.ff(x)))
"""

_EMBEDDING = """class Embedding(nn.Module):
    def __init__(self, vocab_size, d_model, max_len, dropout=0.0):
        super().__init__()
        self.tokens = nn.Embedding(vocab_size, d_model)
        position = torch.arange(max_len).unsqueeze(1)
        div = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        table = torch.zeros(max_len, d_model)
        table[:, 0::2] = torch.sin(position * div)
        table[:, 1::2] = torch.cos(position * div)
        self.register_buffer("positions", table)
        self.d_model = d_model
        self.dropout = nn.Dropout(dropout)

    def forward(self, ids):
        x = self.tokens(ids) * math.sqrt(self.d_model)
        return self.dropout(x + self.positions[: ids.shape[1]])
"""


def _changed(template: str, old: str, new: str) -> str:
    """``template`` with one piece of code changed (the piece must be there)."""
    assert old in template, old
    return template.replace(old, new)


CORRECT: dict[str, dict[str, str]] = {
    # The layers with an nn.Sequential FFN, two dropout modules and masks built with unsqueeze;
    # the embedding with a numpy table kept as a frozen parameter and F.dropout.
    "layers_sequential_and_frozen_table": {
        "encoder_layer_module": (
            "class EncoderLayer(nn.Module):\n"
            "    def __init__(self, d_model, n_heads, d_ff, dropout=0.0):\n"
            "        super().__init__()\n"
            "        self.self_attn = MultiHeadAttention(d_model, n_heads)\n"
            "        self.ff = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))\n"
            "        self.norm1 = nn.LayerNorm(d_model)\n"
            "        self.norm2 = nn.LayerNorm(d_model)\n"
            "        self.drop1, self.drop2 = nn.Dropout(dropout), nn.Dropout(dropout)\n\n"
            "    def forward(self, x, src_mask=None):\n"
            "        mask = src_mask.unsqueeze(1).unsqueeze(2) if src_mask is not None else None\n"
            "        attended = self.self_attn(x, x, x, mask=mask)\n"
            "        x = self.norm1(x + self.drop1(attended))\n"
            "        x = self.norm2(x + self.drop2(self.ff(x)))\n"
            "        return x\n"
        ),
        "decoder_layer_module": (
            "class DecoderLayer(nn.Module):\n"
            "    def __init__(self, d_model, n_heads, d_ff, dropout=0.0):\n"
            "        super().__init__()\n"
            "        self.self_attn = MultiHeadAttention(d_model, n_heads)\n"
            "        self.cross_attn = MultiHeadAttention(d_model, n_heads)\n"
            "        self.ff = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))\n"
            "        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(d_model) for _ in range(3))\n"
            "        self.p = dropout\n\n"
            "    def forward(self, x, memory, tgt_mask=None, src_mask=None):\n"
            "        T = x.size(1)\n"
            "        mask = torch.tril(torch.ones(T, T)).bool().expand(x.size(0), 1, T, T)\n"
            "        if tgt_mask is not None:\n"
            "            mask = mask.logical_and(tgt_mask.view(x.size(0), 1, 1, T))\n"
            "        mem_mask = None if src_mask is None else src_mask.view(x.size(0), 1, 1, -1)\n"
            "        drop = lambda t: F.dropout(t, self.p, training=self.training)\n"
            "        x = self.norm1(x + drop(self.self_attn(x, x, x, mask)))\n"
            "        x = self.norm2(x + drop(self.cross_attn(x, memory, memory, mem_mask)))\n"
            "        return self.norm3(x + drop(self.ff(x)))\n"
        ),
        "embedding_module": (
            "import numpy as np\n\n\n"
            "class Embedding(nn.Module):\n"
            "    def __init__(self, vocab_size, d_model, max_len, dropout=0.0):\n"
            "        super().__init__()\n"
            "        self.tokens = nn.Embedding(vocab_size, d_model, padding_idx=0)\n"
            "        pe = np.zeros((max_len, d_model))\n"
            "        for pos in range(max_len):\n"
            "            for i in range(0, d_model, 2):\n"
            "                pe[pos, i] = np.sin(pos / 10000 ** (i / d_model))\n"
            "                pe[pos, i + 1] = np.cos(pos / 10000 ** (i / d_model))\n"
            "        self.pe = nn.Parameter(torch.tensor(pe, dtype=torch.float32), requires_grad=False)\n"
            "        self.scale, self.p = d_model**0.5, dropout\n\n"
            "    def forward(self, ids):\n"
            "        x = self.tokens.weight[ids] * self.scale + self.pe[: ids.size(1)]\n"
            "        return F.dropout(x, p=self.p, training=self.training)\n"
        ),
    },
    # The templates below: a single nn.Dropout reused, masks by indexing, a div_term table.
    "layers_templates": {
        "encoder_layer_module": _ENCODER,
        "decoder_layer_module": _DECODER,
        "embedding_module": _EMBEDDING,
    },
    # Written out with @ and masked_fill, F.dropout following the mode.
    "attention_matmul_masked_fill": {"multi_head_attention": _ATTENTION},
    # One fused qkv_proj, einsum, torch.where for the mask and an nn.Dropout module.
    "attention_fused_einsum_where": {
        "multi_head_attention": _IMPORTS
        + (
            "class MultiHeadAttention(nn.Module):\n"
            "    def __init__(self, d_model, n_heads, dropout=0.0):\n"
            "        super().__init__()\n"
            "        self.h = n_heads\n"
            "        self.qkv_proj = nn.Linear(d_model, 3 * d_model)\n"
            "        self.out_proj = nn.Linear(d_model, d_model)\n"
            "        self.drop = nn.Dropout(dropout)\n\n"
            "    def forward(self, query, key, value, mask=None):\n"
            "        d = query.shape[-1]\n"
            "        w, b = self.qkv_proj.weight, self.qkv_proj.bias\n"
            "        q = F.linear(query, w[:d], b[:d])\n"
            "        k = F.linear(key, w[d:2 * d], b[d:2 * d])\n"
            "        v = F.linear(value, w[2 * d:], b[2 * d:])\n"
            "        q, k, v = (t.unflatten(-1, (self.h, d // self.h)) for t in (q, k, v))\n"
            "        scores = torch.einsum('bqhd,bkhd->bhqk', q, k) / (d // self.h) ** 0.5\n"
            "        if mask is not None:\n"
            "            scores = torch.where(mask, scores, torch.tensor(float('-inf')))\n"
            "        weights = self.drop(scores.softmax(-1))\n"
            "        out = torch.einsum('bhqk,bkhd->bqhd', weights, v)\n"
            "        return self.out_proj(out.flatten(2))\n"
        ),
    },
    # Lists built from the target, and the count written out as arithmetic.
    "built_lists_and_arithmetic": {
        "teacher_forcing_answer": (
            "target = [5, 8, 3]\ntf_decoder_input = [1] + target\ntf_labels = target + [2]\n"
        ),
        "parameter_count_answer": (
            "encoder_layer_params = 4 * (256 * 256 + 256) + (256 * 1024 + 1024 + 1024 * 256 + 256)"
            " + 4 * 256\n"
            "decoder_layer_params = 8 * (256 * 256 + 256) + (256 * 1024 + 1024 + 1024 * 256 + 256)"
            " + 6 * 256\n"
            "total_params = 3 * (encoder_layer_params + decoder_layer_params) + 256 * (8000 + 2 * 6000)\n"
        ),
    },
    # A numpy array and a tuple, and counts as numpy integers from a small helper function.
    "numpy_types_and_a_helper": {
        "teacher_forcing_answer": (
            "import numpy as np\n\n"
            "BOS, EOS = 1, 2\n"
            "target = np.array([5, 8, 3])\n"
            "tf_decoder_input = np.concatenate([[BOS], target])\n"
            "tf_labels = tuple(int(t) for t in np.append(target, EOS))\n"
        ),
        "parameter_count_answer": (
            "import numpy as np\n\n\n"
            "def linear(n_in, n_out, bias=True):\n"
            "    return np.int64(n_in * n_out + (n_out if bias else 0))\n\n\n"
            "d, d_ff = 256, 1024\n"
            "attention = 4 * linear(d, d)\n"
            "ffn = linear(d, d_ff) + linear(d_ff, d)\n"
            "norm = np.int64(2 * d)\n"
            "encoder_layer_params = attention + ffn + 2 * norm\n"
            "decoder_layer_params = 2 * attention + ffn + 3 * norm\n"
            "total_params = 3 * encoder_layer_params + 3 * decoder_layer_params + (8000 + 6000) * d"
            " + linear(d, 6000, bias=False)\n"
        ),
    },
}

# Lesson 8 grades values, not functions: each value's test cell and the mistake that shows it.
#   tf_decoder_input: BOS then the target; tf_labels: the target then EOS
#                                        ... teacher_forcing_test (labels_not_shifted)
#   encoder_layer_params, decoder_layer_params: biases, gains and shifts counted
#                                        ... parameter_count_layers (count_without_biases)
#   total_params: layers, both embeddings, the output projection without bias
#                                        ... parameter_count_total (count_output_bias)
WRONG: dict[str, dict[str, str]] = {
    # Masks the padded queries instead of the padded keys.
    "encoder_padding_on_queries": {
        "encoder_layer_module": _changed(
            _ENCODER, "src_mask[:, None, None, :]", "src_mask[:, None, :, None]"
        ),
    },
    # Pre-norm: normalizes the sub-layer's input, not the sum (not the paper's post-norm).
    "encoder_pre_norm": {
        "encoder_layer_module": _changed(
            _ENCODER,
            "        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask)))\n"
            "        return self.norm2(x + self.dropout(self.ff(x)))\n",
            "        h = self.norm1(x)\n"
            "        x = x + self.dropout(self.self_attn(h, h, h, mask))\n"
            "        return x + self.dropout(self.ff(self.norm2(x)))\n",
        ),
    },
    # Normalizes the sub-layer's output before adding the residual.
    "encoder_norm_before_residual": {
        "encoder_layer_module": _changed(
            _ENCODER,
            "        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, mask)))\n"
            "        return self.norm2(x + self.dropout(self.ff(x)))\n",
            "        x = x + self.norm1(self.dropout(self.self_attn(x, x, x, mask)))\n"
            "        return x + self.norm2(self.dropout(self.ff(x)))\n",
        ),
    },
    # F.dropout without training=...: the residual dropout stays on in evaluation.
    "encoder_dropout_in_eval": {
        "encoder_layer_module": _changed(
            _ENCODER, "self.dropout = nn.Dropout(dropout)", "self.dropout = lambda t: F.dropout(t, dropout)"
        ),
    },
    # torch.nn's placement: the attention block also drops attention weights.
    "encoder_attention_dropout": {
        "encoder_layer_module": _changed(
            _ENCODER, "MultiHeadAttention(d_model, n_heads)", "MultiHeadAttention(d_model, n_heads, dropout)"
        ),
    },
    # No causal mask: each target position sees the whole target.
    "decoder_no_causal_mask": {
        "decoder_layer_module": _changed(
            _DECODER,
            "causal = torch.ones(x.shape[1], x.shape[1], dtype=torch.bool).tril()",
            "causal = torch.ones(x.shape[1], x.shape[1], dtype=torch.bool)",
        ),
    },
    # Cross-attention takes its keys and values from the decoder, not from the memory.
    "decoder_cross_attention_on_itself": {
        "decoder_layer_module": _changed(
            _DECODER, "self.cross_attn(x, memory, memory, memory_mask)", "self.cross_attn(x, x, x)"
        ),
    },
    # The source's padding is never applied in cross-attention.
    "decoder_memory_mask_ignored": {
        "decoder_layer_module": _changed(
            _DECODER, "self.cross_attn(x, memory, memory, memory_mask)", "self.cross_attn(x, memory, memory)"
        ),
    },
    # Takes dropout and never applies it.
    "decoder_dropout_missing": {
        "decoder_layer_module": _changed(
            _DECODER, "self.dropout = nn.Dropout(dropout)", "self.dropout = nn.Identity()"
        ),
    },
    # Forgets the sqrt(d_model) scaling.
    "embedding_no_scaling": {
        "embedding_module": _changed(
            _EMBEDDING, "self.tokens(ids) * math.sqrt(self.d_model)", "self.tokens(ids)"
        ),
    },
    # Builds the positional table and never adds it.
    "embedding_positions_not_added": {
        "embedding_module": _changed(
            _EMBEDDING, "self.dropout(x + self.positions[: ids.shape[1]])", "self.dropout(x)"
        ),
    },
    # Sines on the first half of the columns, cosines on the second (not interleaved).
    "embedding_positions_in_halves": {
        "embedding_module": _changed(
            _EMBEDDING,
            "        table[:, 0::2] = torch.sin(position * div)\n"
            "        table[:, 1::2] = torch.cos(position * div)\n",
            "        table[:, : d_model // 2] = torch.sin(position * div)\n"
            "        table[:, d_model // 2 :] = torch.cos(position * div)\n",
        ),
    },
    # F.dropout without training=...: drops in evaluation too.
    "embedding_dropout_in_eval": {
        "embedding_module": _changed(
            _EMBEDDING, "self.dropout = nn.Dropout(dropout)", "self.dropout = lambda t: F.dropout(t, dropout)"
        ),
    },
    # The package's classes under the exercises' names: their constructors take a config.
    "layers_alias_of_the_package": {
        "encoder_layer_module": (
            "from transformer_course.layers import FeedForward\n"
            "from transformer_course.translation.model import EncoderLayer\n"
        ),
        "decoder_layer_module": "from transformer_course.translation.model import DecoderLayer\n",
        "embedding_module": "from transformer_course.translation.model import Embedding\n",
    },
    # Fills the positions the mask ALLOWS with -inf: torch.nn's polarity (True = blocked).
    "attention_mask_flipped": {
        "multi_head_attention": _attention_with("masked_fill(~mask,", "masked_fill(mask,"),
    },
    # Divides the scores by sqrt(d_model), the width of all the heads, not of one.
    "attention_scaled_by_d_model": {
        "multi_head_attention": _attention_with(
            "/ math.sqrt(self.d_head)", "/ math.sqrt(self.n_heads * self.d_head)"
        ),
    },
    # F.dropout without training=...: it drops in evaluation mode too.
    "attention_dropout_in_eval": {
        "multi_head_attention": _attention_with(", self.dropout, training=self.training)", ", self.dropout)"),
    },
    # Takes the dropout argument and never uses it.
    "attention_dropout_missing": {
        "multi_head_attention": _attention_with(
            "F.dropout(torch.softmax(scores, dim=-1), self.dropout, training=self.training)",
            "torch.softmax(scores, dim=-1)",
        ),
    },
    # The package's class under the exercise's name: its forward takes a key-padding mask
    # (True = padding), not the contract's mask, so the adapter's calls fail.
    "attention_alias_of_the_package": {
        "multi_head_attention": _IMPORTS + "from transformer_course.layers import MultiHeadAttention\n",
    },
    # Labels not shifted: the model would be asked to copy its input.
    "labels_not_shifted": {
        "teacher_forcing_answer": "tf_decoder_input = [1, 5, 8, 3]\ntf_labels = [1, 5, 8, 3]\n",
    },
    # Counts the weight matrices but forgets every bias.
    "count_without_biases": {
        "parameter_count_answer": (
            "d, d_ff = 256, 1024\n"
            "encoder_layer_params = 4 * d * d + 2 * d * d_ff + 2 * 2 * d\n"
            "decoder_layer_params = 8 * d * d + 2 * d * d_ff + 3 * 2 * d\n"
            "total_params = 3 * (encoder_layer_params + decoder_layer_params) + (8000 + 2 * 6000) * d\n"
        ),
    },
    # Gives the output projection a bias of 6000 the exercise said it does not have.
    "count_output_bias": {
        "parameter_count_answer": (
            "d, d_ff = 256, 1024\n"
            "attention = 4 * (d * d + d)\n"
            "ffn = 2 * d * d_ff + d_ff + d\n"
            "encoder_layer_params = attention + ffn + 4 * d\n"
            "decoder_layer_params = 2 * attention + ffn + 6 * d\n"
            "total_params = (3 * (encoder_layer_params + decoder_layer_params)\n"
            "                + (8000 + 6000) * d + 6000 * d + 6000)\n"
        ),
    },
}

_ATTENTION_CELLS = frozenset({"attention_module_values", "attention_module_dropout"})
_ENCODER_CELLS = frozenset({"encoder_layer_values", "encoder_layer_dropout"})
_DECODER_CELLS = frozenset({"decoder_layer_values", "decoder_layer_dropout"})
_EMBEDDING_CELLS = frozenset({"embedding_values", "embedding_dropout"})
# The layers are built on the student's MultiHeadAttention: wrong attention values fail them too.
_ATTENTION_AND_LAYER_CELLS = _ATTENTION_CELLS | _ENCODER_CELLS | _DECODER_CELLS
_PYTORCH_MISTAKES: dict[str, frozenset[str]] = {
    "attention_mask_flipped": _ATTENTION_AND_LAYER_CELLS,
    "attention_scaled_by_d_model": _ATTENTION_AND_LAYER_CELLS,
    "attention_dropout_in_eval": frozenset({"attention_module_dropout"}),
    "attention_dropout_missing": frozenset({"attention_module_dropout"}),
    "attention_alias_of_the_package": _ATTENTION_AND_LAYER_CELLS,
    "encoder_padding_on_queries": _ENCODER_CELLS,
    "encoder_pre_norm": _ENCODER_CELLS,
    "encoder_norm_before_residual": _ENCODER_CELLS,
    "encoder_dropout_in_eval": frozenset({"encoder_layer_dropout"}),
    "encoder_attention_dropout": frozenset({"encoder_layer_dropout"}),
    "decoder_no_causal_mask": _DECODER_CELLS,
    "decoder_cross_attention_on_itself": _DECODER_CELLS,
    "decoder_memory_mask_ignored": _DECODER_CELLS,
    "decoder_dropout_missing": frozenset({"decoder_layer_dropout"}),
    "embedding_no_scaling": _EMBEDDING_CELLS,
    "embedding_positions_not_added": _EMBEDDING_CELLS,
    "embedding_positions_in_halves": _EMBEDDING_CELLS,
    "embedding_dropout_in_eval": frozenset({"embedding_dropout"}),
    "layers_alias_of_the_package": _ENCODER_CELLS | _DECODER_CELLS | _EMBEDDING_CELLS,
}

# Wrong values fail the dropout cells too: they compare a training run with PyTorch's.
CAUGHT_BY: dict[str, frozenset[str]] = {
    **_PYTORCH_MISTAKES,
    "labels_not_shifted": frozenset({"teacher_forcing_test"}),
    "count_without_biases": frozenset({"parameter_count_layers", "parameter_count_total"}),
    "count_output_bias": frozenset({"parameter_count_total"}),
}

FEEDBACK: dict[str, str] = {
    "attention_mask_flipped": "True in the mask means the query may attend",
    "attention_scaled_by_d_model": "is the width of one head (not d_model)",
    "attention_dropout_in_eval": "F.dropout drops even in evaluation",
    "attention_dropout_missing": "gave the evaluation output",
    "attention_alias_of_the_package": "key_padding_mask must be a bool tensor",
    "encoder_padding_on_queries": "varying along the key axis",
    "encoder_pre_norm": "post-norm, as in the paper",
    "encoder_norm_before_residual": "normalizes the sum",
    "encoder_dropout_in_eval": "F.dropout drops even in evaluation",
    "encoder_attention_dropout": "build the attention blocks without attention dropout",
    "decoder_no_causal_mask": "must not see later positions",
    "decoder_cross_attention_on_itself": "does not depend on memory",
    "decoder_memory_mask_ignored": "cross-attention the padded memory keys",
    "decoder_dropout_missing": "gave the evaluation output",
    "embedding_no_scaling": "multiply the token embeddings by sqrt(d_model)",
    "embedding_positions_not_added": "add the sinusoidal positional encodings",
    "embedding_positions_in_halves": "on the even columns",
    "embedding_dropout_in_eval": "F.dropout drops even in evaluation",
    "layers_alias_of_the_package": "positional argument",
    "labels_not_shifted": "the labels are the target followed by EOS",
    "count_without_biases": "four projections with their biases",
    "count_output_bias": "output projection, no bias",
}

# The mistakes with the test cells whose VISIBLE part fails for them: the student sees each before
# submitting (tests/test_visible_tests.py).
CAUGHT_BY_VISIBLE: dict[str, frozenset[str]] = dict(_PYTORCH_MISTAKES)

# Mistakes in a value answer (an Apply number): its visible test checks the answer's form, since a
# visible check of the value would give the answer away; grading checks the value.
VALUE_MISTAKES: frozenset[str] = frozenset(
    {"count_output_bias", "count_without_biases", "labels_not_shifted"}
)


# ---------------------------------------------------------------------------------------------
# Byte-pair encoding (the "Build it" of the tokens section): merge_pair, train_bpe, encode_bpe.
# The merge_pair cell starts with the split_words it gives students; a variant of it keeps that.


def _given_split_words() -> str:
    """The start of lesson 8's merge_pair cell: the imports and ``split_words`` students are given."""
    from pathlib import Path

    source = (Path(__file__).parents[2] / "lessons" / f"{LESSON}.md").read_text(encoding="utf-8")
    cell = source.split(":grade_id: merge_pair\n\n", 1)[1]
    return cell[: cell.index("def merge_pair")]


MERGE_PAIR_WITH_A_FLAG = """
def merge_pair(pieces, pair):
    left, right = pair
    merged, skip = [], False
    for i, piece in enumerate(pieces):
        if skip:
            skip = False
            continue
        if piece == left and i + 1 < len(pieces) and pieces[i + 1] == right:
            merged.append(left + right)
            skip = True
        else:
            merged.append(piece)
    return merged
"""

# Merges every position where the pair starts, overlaps included: 'a a a' becomes 'aaa'.
MERGE_PAIR_OVERLAPPING = """
def merge_pair(pieces, pair):
    starts = [i for i in range(len(pieces) - 1) if (pieces[i], pieces[i + 1]) == tuple(pair)]
    merged = list(pieces)
    for i in reversed(starts):
        merged[i : i + 2] = [merged[i] + merged[i + 1]]
    return merged
"""

# Merges the first occurrence only (list.index finds one).
MERGE_PAIR_FIRST_ONLY = """
def merge_pair(pieces, pair):
    pairs = list(zip(pieces, pieces[1:]))
    if tuple(pair) not in pairs:
        return list(pieces)
    i = pairs.index(tuple(pair))
    return [*pieces[:i], pieces[i] + pieces[i + 1], *pieces[i + 2 :]]
"""

# Joins the pieces with spaces and replaces text: the pair also matches inside longer pieces.
MERGE_PAIR_BY_TEXT_REPLACE = """
def merge_pair(pieces, pair):
    left, right = pair
    return " ".join(pieces).replace(f"{left} {right}", left + right).split(" ")
"""

TRAIN_WITH_PLAIN_DICTS = """
def train_bpe(texts, n_merges):
    counts = {}
    for text in texts:
        for word in split_words(text):
            counts[word] = counts.get(word, 0) + 1
    characters = sorted(set("".join(counts)))
    vocab = [*SPECIAL_TOKENS, *characters]
    words = [[list(word), count] for word, count in counts.items()]
    merges = []
    while len(merges) < n_merges:
        pair_counts = {}
        for pieces, count in words:
            for i in range(len(pieces) - 1):
                pair = (pieces[i], pieces[i + 1])
                pair_counts[pair] = pair_counts.get(pair, 0) + count
        if not pair_counts:
            break
        ranked = sorted(pair_counts.items(), key=lambda item: (-item[1], vocab.index(item[0][0]),
                                                             vocab.index(item[0][1])))
        best = ranked[0][0]
        merges.append(list(best))
        if best[0] + best[1] not in vocab:
            vocab.append(best[0] + best[1])
        words = [[merge_pair(pieces, best), count] for pieces, count in words]
    return vocab + [f"<0x{byte:02X}>" for byte in range(256)], merges
"""


def _train_variant(counting: str, choosing: str, vocabulary: str = "list(SPECIAL_TOKENS) + alphabet") -> str:
    """A train_bpe that differs from the reference in how it counts words, picks the best pair or
    lays out the vocabulary (each wrong variant changes one of these)."""
    return f"""
from collections import Counter


def train_bpe(texts, n_merges):
    word_counts = {counting}
    alphabet = sorted({{char for word in word_counts for char in word}})
    vocab = {vocabulary}
    ids = {{token: i for i, token in enumerate(vocab)}}
    pieces = {{word: list(word) for word in word_counts}}
    merges = []
    for _ in range(n_merges):
        pair_counts = Counter()
        for word, word_pieces in pieces.items():
            for pair in zip(word_pieces, word_pieces[1:]):
                pair_counts[pair] += word_counts[word]
        if not pair_counts:
            break
        best = {choosing}
        merges.append(best)
        if best[0] + best[1] not in ids:
            ids[best[0] + best[1]] = len(vocab)
            vocab.append(best[0] + best[1])
        pieces = {{word: merge_pair(word_pieces, best) for word, word_pieces in pieces.items()}}
    return vocab + list(BYTE_TOKENS), merges
"""


_WORDS = "Counter(word for text in texts for word in split_words(text))"
_BY_IDS = "max(pair_counts, key=lambda pair: (pair_counts[pair], -ids[pair[0]], -ids[pair[1]]))"
TRAIN_ACROSS_WORDS = _train_variant('Counter("".join(split_words(text)) for text in texts)', _BY_IDS)
TRAIN_UNWEIGHTED = _train_variant(f"dict.fromkeys({_WORDS}, 1)", _BY_IDS)
TRAIN_FIRST_SEEN_TIE = _train_variant(_WORDS, "max(pair_counts, key=pair_counts.get)")
TRAIN_ALPHABETICAL_TIE = _train_variant(
    _WORDS, "min(pair_counts, key=lambda pair: (-pair_counts[pair], pair))"
)
TRAIN_SPECIALS_LAST = _train_variant(_WORDS, _BY_IDS, "alphabet + list(SPECIAL_TOKENS)")

ENCODE_IN_LEARNED_ORDER = """
def encode_bpe(text, vocab, merges):
    result = []
    rest = text
    while rest:
        found = [(rest.find(token), token) for token in SPECIAL_TOKENS if token in rest]
        start, token = min(found) if found else (len(rest), None)
        for word in split_words(rest[:start]):
            pieces = list(word)
            for pair in merges:
                pieces = merge_pair(pieces, pair)
            for piece in pieces:
                if piece in vocab:
                    result.append(vocab.index(piece))
                else:
                    result.extend(vocab.index("<0x%02X>" % byte) for byte in piece.encode("utf-8"))
        if token is None:
            break
        result.append(vocab.index(token))
        rest = rest[start + len(token):]
    return result
"""

ENCODE_WITH_MERGES_INDEX = """
def encode_bpe(text, vocab, merges):
    ids = {token: i for i, token in enumerate(vocab)}
    merges = [tuple(pair) for pair in merges]
    result = []
    for part in re.split("(<pad>|<s>|</s>|<unk>)", text):
        if part in ids and part in SPECIAL_TOKENS:
            result.append(ids[part])
            continue
        for word in split_words(part):
            pieces = list(word)
            while len(pieces) > 1:
                pairs = [pair for pair in zip(pieces, pieces[1:]) if pair in merges]
                if not pairs:
                    break
                pieces = merge_pair(pieces, min(pairs, key=merges.index))
            for piece in pieces:
                result += [ids[piece]] if piece in ids else [ids[f"<0x{b:02X}>"] for b in piece.encode()]
    return result
"""


def _encode_variant(specials: str, word_ids: str, unknown: str) -> str:
    """An encode_bpe that handles the special tokens, a word's merges or unknown characters its own
    way (each wrong variant changes one of these)."""
    return f"""
def encode_bpe(text, vocab, merges):
    ids = {{token: i for i, token in enumerate(vocab)}}
    rank = {{tuple(pair): r for r, pair in enumerate(merges)}}
    result = []
    for part in {specials}:
        if part in SPECIAL_TOKENS:
            result.append(ids[part])
            continue
        for word in split_words(part):
            for piece in {word_ids}:
                if piece in ids:
                    result.append(ids[piece])
                else:
                    result += {unknown}
    return result


def merged_by_rank(word, rank):
    pieces = list(word)
    while True:
        learned = [pair for pair in zip(pieces, pieces[1:]) if pair in rank]
        if not learned:
            return pieces
        pieces = merge_pair(pieces, min(learned, key=rank.get))


def longest_first(word, ids):
    pieces, start = [], 0
    while start < len(word):
        end = next((end for end in range(len(word), start, -1) if word[start:end] in ids), start + 1)
        pieces.append(word[start:end])
        start = end
    return pieces
"""


_SPECIALS = 're.split("(" + "|".join(re.escape(token) for token in SPECIAL_TOKENS) + ")", text)'
_BYTES = '[ids[f"<0x{byte:02X}>"] for byte in piece.encode("utf-8")]'
ENCODE_LONGEST_MATCH = _encode_variant(_SPECIALS, "longest_first(word, ids)", _BYTES)
ENCODE_UNKNOWN_AS_UNK = _encode_variant(_SPECIALS, "merged_by_rank(word, rank)", "[ids['<unk>']]")
ENCODE_SPECIALS_AS_TEXT = _encode_variant("[text]", "merged_by_rank(word, rank)", _BYTES)

CORRECT |= {
    # A skip flag, plain dicts sorted for the best pair, merges applied in learned order, and the
    # special tokens found with str.find.
    "bpe_dicts_and_learned_order": {
        "merge_pair": _given_split_words() + MERGE_PAIR_WITH_A_FLAG,
        "train_bpe": TRAIN_WITH_PLAIN_DICTS,
        "encode_bpe": ENCODE_IN_LEARNED_ORDER,
    },
    # The learned pair found with merges.index instead of a rank dict.
    "bpe_merges_index": {"encode_bpe": ENCODE_WITH_MERGES_INDEX},
}

WRONG |= {
    "bpe_overlapping_merges": {"merge_pair": _given_split_words() + MERGE_PAIR_OVERLAPPING},
    "bpe_first_occurrence_only": {"merge_pair": _given_split_words() + MERGE_PAIR_FIRST_ONLY},
    "bpe_merge_by_text_replace": {"merge_pair": _given_split_words() + MERGE_PAIR_BY_TEXT_REPLACE},
    "bpe_pairs_across_words": {"train_bpe": TRAIN_ACROSS_WORDS},
    "bpe_words_not_weighted": {"train_bpe": TRAIN_UNWEIGHTED},
    "bpe_first_seen_tie": {"train_bpe": TRAIN_FIRST_SEEN_TIE},
    "bpe_alphabetical_tie": {"train_bpe": TRAIN_ALPHABETICAL_TIE},
    "bpe_special_tokens_last": {"train_bpe": TRAIN_SPECIALS_LAST},
    "bpe_longest_match": {"encode_bpe": ENCODE_LONGEST_MATCH},
    "bpe_unknown_as_unk": {"encode_bpe": ENCODE_UNKNOWN_AS_UNK},
    "bpe_special_tokens_split": {"encode_bpe": ENCODE_SPECIALS_AS_TEXT},
}

CAUGHT_BY |= {
    # merge_pair's slips also break the train_bpe that calls it.
    "bpe_overlapping_merges": frozenset({"merge_pair_test", "train_bpe_merges"}),
    "bpe_first_occurrence_only": frozenset({"merge_pair_test", "train_bpe_vocabulary", "train_bpe_merges"}),
    "bpe_merge_by_text_replace": frozenset(
        {"merge_pair_test", "train_bpe_vocabulary", "train_bpe_merges", "encode_bpe_merges"}
    ),
    "bpe_pairs_across_words": frozenset({"train_bpe_merges"}),
    "bpe_words_not_weighted": frozenset({"train_bpe_merges"}),
    "bpe_first_seen_tie": frozenset({"train_bpe_merges"}),
    "bpe_alphabetical_tie": frozenset({"train_bpe_merges"}),
    "bpe_special_tokens_last": frozenset({"train_bpe_vocabulary"}),
    "bpe_longest_match": frozenset({"encode_bpe_merges"}),
    "bpe_unknown_as_unk": frozenset({"encode_bpe_fallback"}),
    "bpe_special_tokens_split": frozenset({"encode_bpe_fallback"}),
}

FEEDBACK |= {
    "bpe_overlapping_merges": "after a merge, go on after the merged pair",
    "bpe_first_occurrence_only": "merge every occurrence of the pair",
    "bpe_merge_by_text_replace": "compare pieces, not joined text",
    "bpe_pairs_across_words": "count pairs inside each word of split_words only",
    "bpe_words_not_weighted": "weight each pair by how often its word occurs",
    "bpe_first_seen_tie": "ties go to the smallest ids",
    "bpe_alphabetical_tie": "the smallest id of their left tokens",
    "bpe_special_tokens_last": "ids 0-3 are the special tokens",
    "bpe_longest_match": "not the longest token ana first",
    "bpe_unknown_as_unk": "write it as the ids of its UTF-8 bytes",
    "bpe_special_tokens_split": "a special token in the text is one token with its id",
}

# Every BPE mistake fails a visible test (the lesson's rules are stated in full).
CAUGHT_BY_VISIBLE |= {
    "bpe_overlapping_merges": frozenset({"merge_pair_test"}),
    "bpe_first_occurrence_only": frozenset({"merge_pair_test", "train_bpe_vocabulary", "train_bpe_merges"}),
    "bpe_merge_by_text_replace": frozenset(
        {"merge_pair_test", "train_bpe_vocabulary", "train_bpe_merges", "encode_bpe_merges"}
    ),
    "bpe_pairs_across_words": frozenset({"train_bpe_merges"}),
    "bpe_words_not_weighted": frozenset({"train_bpe_merges"}),
    "bpe_first_seen_tie": frozenset({"train_bpe_merges"}),
    "bpe_alphabetical_tie": frozenset({"train_bpe_merges"}),
    "bpe_special_tokens_last": frozenset({"train_bpe_vocabulary"}),
    "bpe_longest_match": frozenset({"encode_bpe_merges"}),
    "bpe_unknown_as_unk": frozenset({"encode_bpe_fallback"}),
    "bpe_special_tokens_split": frozenset({"encode_bpe_fallback"}),
}

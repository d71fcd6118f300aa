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


CORRECT: dict[str, dict[str, str]] = {
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
        "multi_head_attention": (
            "from transformer_course.model import MultiHeadAttention as _Package\n\n"
            "MultiHeadAttention = _Package\n"
        ),
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

CAUGHT_BY: dict[str, frozenset[str]] = {
    # Wrong values fail the dropout cell too: it compares a training run with PyTorch's.
    "attention_mask_flipped": _ATTENTION_CELLS,
    "attention_scaled_by_d_model": _ATTENTION_CELLS,
    "attention_dropout_in_eval": frozenset({"attention_module_dropout"}),
    "attention_dropout_missing": frozenset({"attention_module_dropout"}),
    "attention_alias_of_the_package": _ATTENTION_CELLS,
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
    "labels_not_shifted": "the labels are the target followed by EOS",
    "count_without_biases": "four projections with their biases",
    "count_output_bias": "output projection, no bias",
}

# The mistakes with the test cells whose VISIBLE part fails for them: the student sees each before
# submitting (tests/test_visible_tests.py).
CAUGHT_BY_VISIBLE: dict[str, frozenset[str]] = {
    "attention_mask_flipped": _ATTENTION_CELLS,
    "attention_scaled_by_d_model": _ATTENTION_CELLS,
    "attention_dropout_in_eval": frozenset({"attention_module_dropout"}),
    "attention_dropout_missing": frozenset({"attention_module_dropout"}),
    "attention_alias_of_the_package": _ATTENTION_CELLS,
}

# Mistakes in a value answer (an Apply number): its visible test checks the answer's form, since a
# visible check of the value would give the answer away; grading checks the value.
VALUE_MISTAKES: frozenset[str] = frozenset(
    {"count_output_bias", "count_without_biases", "labels_not_shifted"}
)

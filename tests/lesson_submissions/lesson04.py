"""Realistic submissions for lesson 4 (multi-head attention), for the grading tests.

``CORRECT`` maps a name to answers (grade_id -> cell source) that must earn full marks; ``WRONG``
maps a name to answers holding one typical mistake, and ``CAUGHT_BY`` names exactly the test cells
that must score zero for it (every other test cell must give full marks). Answers not given are the
reference solutions, in particular the lesson-3 attention pasted into ``attention_from_lesson3``.
"""

LESSON = "04_multi_head_attention"

_SPLIT_OK = (
    "def split_heads(x, n_heads):\n"
    "    d_model = x.shape[-1]\n"
    "    if n_heads < 1 or d_model % n_heads:\n"
    "        raise ValueError(f'cannot split {d_model} features into {n_heads} heads')\n"
    "    d_k = d_model // n_heads\n"
    "    return np.swapaxes(x.reshape(*x.shape[:-1], n_heads, d_k), -2, -3)\n"
    "\n"
    "def combine_heads(x):\n"
    "    h, n, d_k = x.shape[-3:]\n"
    "    return np.swapaxes(x, -2, -3).reshape(*x.shape[:-3], n, h * d_k)\n"
)

CORRECT: dict[str, dict[str, str]] = {
    # einsum everywhere, -1e9 instead of -inf, heads split by slicing and stacking.
    "einsum_stack_concat": {
        "attention_from_lesson3": (
            "def softmax(x, axis=-1):\n"
            "    e = np.exp(x - np.max(x, axis=axis, keepdims=True))\n"
            "    return e / e.sum(axis=axis, keepdims=True)\n"
            "\n"
            "def scaled_dot_product_attention(Q, K, V, mask=None):\n"
            "    scores = np.einsum('...qd,...kd->...qk', Q, K) / np.sqrt(Q.shape[-1])\n"
            "    if mask is not None:\n"
            "        scores = np.where(mask, scores, -1e9)\n"
            "    w = softmax(scores)\n"
            "    return np.einsum('...qk,...kv->...qv', w, V), w\n"
        ),
        "split_combine_heads": (
            "def split_heads(x, n_heads):\n"
            "    d_model = x.shape[-1]\n"
            "    if n_heads <= 0 or d_model % n_heads != 0:\n"
            "        raise ValueError(f'd_model={d_model} is not divisible by n_heads={n_heads}')\n"
            "    d_k = d_model // n_heads\n"
            "    return np.stack([x[..., i * d_k:(i + 1) * d_k] for i in range(n_heads)], axis=-3)\n"
            "\n"
            "def combine_heads(x):\n"
            "    return np.concatenate([x[..., i, :, :] for i in range(x.shape[-3])], axis=-1)\n"
        ),
        "multi_head_attention": (
            "def multi_head_attention(X_q, X_kv, W_q, W_k, W_v, W_o, n_heads, mask=None):\n"
            "    q = split_heads(np.einsum('...nd,de->...ne', X_q, W_q), n_heads)\n"
            "    k = split_heads(np.einsum('...nd,de->...ne', X_kv, W_k), n_heads)\n"
            "    v = split_heads(np.einsum('...nd,de->...ne', X_kv, W_v), n_heads)\n"
            "    if mask is not None:\n"
            "        mask = np.expand_dims(mask, -3)\n"
            "    heads, weights = scaled_dot_product_attention(q, k, v, mask)\n"
            "    return np.einsum('...nd,de->...ne', combine_heads(heads), W_o), weights\n"
        ),
        "parameter_counts": (
            "d_k_base = 512 / 8\nparams_per_head = int(3 * 512 * d_k_base)\nparams_mha = 4 * 512 ** 2\n"
        ),
    },
    # One head at a time, slicing the weight matrices; moveaxis/transpose for the reshapes.
    "loop_over_heads": {
        "attention_from_lesson3": (
            "def softmax(x, axis=-1):\n"
            "    shifted = x - np.amax(x, axis=axis, keepdims=True)\n"
            "    return np.exp(shifted) / np.sum(np.exp(shifted), axis=axis, keepdims=True)\n"
            "\n"
            "def scaled_dot_product_attention(Q, K, V, mask=None):\n"
            "    scores = np.matmul(Q, K.swapaxes(-1, -2)) / np.sqrt(K.shape[-1])\n"
            "    if mask is not None:\n"
            "        scores = np.where(np.asarray(mask, dtype=bool), scores, -np.inf)\n"
            "    weights = softmax(scores, axis=-1)\n"
            "    return np.matmul(weights, V), weights\n"
        ),
        "split_combine_heads": (
            "def split_heads(x, n_heads):\n"
            "    d_model = x.shape[-1]\n"
            "    if not (isinstance(n_heads, int) and n_heads > 0 and d_model % n_heads == 0):\n"
            "        raise ValueError('n_heads must divide d_model')\n"
            "    parts = x.reshape(x.shape[:-1] + (n_heads, d_model // n_heads))\n"
            "    return np.moveaxis(parts, -2, -3)\n"
            "\n"
            "def combine_heads(x):\n"
            "    axes = list(range(x.ndim))\n"
            "    axes[-3], axes[-2] = axes[-2], axes[-3]\n"
            "    y = np.transpose(x, axes)\n"
            "    return y.reshape(y.shape[:-2] + (y.shape[-2] * y.shape[-1],))\n"
        ),
        "multi_head_attention": (
            "def multi_head_attention(X_q, X_kv, W_q, W_k, W_v, W_o, n_heads, mask=None):\n"
            "    d_k = W_q.shape[1] // n_heads\n"
            "    outputs, weights = [], []\n"
            "    for i in range(n_heads):\n"
            "        cols = slice(i * d_k, (i + 1) * d_k)\n"
            "        out, w = scaled_dot_product_attention(\n"
            "            X_q @ W_q[:, cols], X_kv @ W_k[:, cols], X_kv @ W_v[:, cols], mask\n"
            "        )\n"
            "        outputs.append(out)\n"
            "        weights.append(w)\n"
            "    return np.concatenate(outputs, axis=-1) @ W_o, np.stack(weights, axis=-3)\n"
        ),
        "parameter_counts": (
            "d_model, h = 512, 8\n"
            "d_k_base = d_model // h\n"
            "params_per_head = d_model * d_k_base * 3\n"
            "params_mha = h * params_per_head + d_model * d_model\n"
        ),
    },
    # Reshapes inline instead of calling split_heads, transposes with explicit axes.
    "inline_reshape": {
        "split_combine_heads": _SPLIT_OK,
        "multi_head_attention": (
            "def multi_head_attention(X_q, X_kv, W_q, W_k, W_v, W_o, n_heads, mask=None):\n"
            "    def heads(x):\n"
            "        *batch, n, d = x.shape\n"
            "        return np.swapaxes(x.reshape(*batch, n, n_heads, d // n_heads), -3, -2)\n"
            "    q, k, v = heads(X_q @ W_q), heads(X_kv @ W_k), heads(X_kv @ W_v)\n"
            "    m = None if mask is None else np.asarray(mask)[..., np.newaxis, :, :]\n"
            "    out, w = scaled_dot_product_attention(q, k, v, mask=m)\n"
            "    out = np.swapaxes(out, -3, -2)\n"
            "    out = out.reshape(*out.shape[:-2], -1)\n"
            "    return out @ W_o, w\n"
        ),
    },
}

_MHA_REFERENCE_BODY = (
    "    Q = split_heads(X_q @ W_q, n_heads)\n"
    "    K = split_heads(X_kv @ W_k, n_heads)\n"
    "    V = split_heads(X_kv @ W_v, n_heads)\n"
)

WRONG: dict[str, dict[str, str]] = {
    # Reshapes straight to (..., h, n, d_k): right shape, tokens and heads mixed up.
    "split_reshape_without_transpose": {
        "split_combine_heads": (
            "def split_heads(x, n_heads):\n"
            "    *batch, n, d_model = x.shape\n"
            "    if n_heads < 1 or d_model % n_heads:\n"
            "        raise ValueError('n_heads must divide d_model')\n"
            "    return x.reshape(*batch, n_heads, n, d_model // n_heads)\n"
            "\n"
            "def combine_heads(x):\n"
            "    h, n, d_k = x.shape[-3:]\n"
            "    return np.swapaxes(x, -2, -3).reshape(*x.shape[:-3], n, h * d_k)\n"
        ),
    },
    # Splits the last axis as (d_k, h): head i gets the interleaved columns i, i+h, i+2h, ...
    "split_interleaved_columns": {
        "split_combine_heads": (
            "def split_heads(x, n_heads):\n"
            "    *batch, n, d_model = x.shape\n"
            "    if n_heads < 1 or d_model % n_heads:\n"
            "        raise ValueError('n_heads must divide d_model')\n"
            "    parts = x.reshape(*batch, n, d_model // n_heads, n_heads)\n"
            "    return np.moveaxis(parts, -1, -3)\n"
            "\n"
            "def combine_heads(x):\n"
            "    h, n, d_k = x.shape[-3:]\n"
            "    return np.moveaxis(x, -3, -1).reshape(*x.shape[:-3], n, h * d_k)\n"
        ),
    },
    # Combines with a plain reshape, without moving the head axis back.
    "combine_without_transpose": {
        "split_combine_heads": (
            "def split_heads(x, n_heads):\n"
            "    d_model = x.shape[-1]\n"
            "    if n_heads < 1 or d_model % n_heads:\n"
            "        raise ValueError('n_heads must divide d_model')\n"
            "    return np.swapaxes(x.reshape(*x.shape[:-1], n_heads, d_model // n_heads), -2, -3)\n"
            "\n"
            "def combine_heads(x):\n"
            "    h, n, d_k = x.shape[-3:]\n"
            "    return x.reshape(*x.shape[:-3], n, h * d_k)\n"
        ),
    },
    # Guards with assert, which raises AssertionError instead of the ValueError asked for.
    "split_assert_instead_of_error": {
        "split_combine_heads": _SPLIT_OK.replace(
            "    if n_heads < 1 or d_model % n_heads:\n"
            "        raise ValueError(f'cannot split {d_model} features into {n_heads} heads')\n",
            "    assert n_heads > 0 and d_model % n_heads == 0, 'bad n_heads'\n",
        ),
    },
    # Concatenates the heads but never applies the output projection W_o.
    "mha_forgets_w_o": {
        "multi_head_attention": (
            "def multi_head_attention(X_q, X_kv, W_q, W_k, W_v, W_o, n_heads, mask=None):\n"
            + _MHA_REFERENCE_BODY
            + "    if mask is not None:\n"
            "        mask = mask[..., None, :, :]\n"
            "    heads, weights = scaled_dot_product_attention(Q, K, V, mask=mask)\n"
            "    return combine_heads(heads), weights\n"
        ),
    },
    # Writes the scores by hand and scales them by sqrt(d_model) instead of sqrt(d_k).
    "mha_scales_by_d_model": {
        "multi_head_attention": (
            "def multi_head_attention(X_q, X_kv, W_q, W_k, W_v, W_o, n_heads, mask=None):\n"
            + _MHA_REFERENCE_BODY
            + "    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(X_q.shape[-1])\n"
            "    if mask is not None:\n"
            "        scores = np.where(mask[..., None, :, :], scores, -np.inf)\n"
            "    weights = softmax(scores, axis=-1)\n"
            "    return combine_heads(weights @ V) @ W_o, weights\n"
        ),
    },
    # Passes the mask on unchanged: fine without batch dimensions, breaks on a batched mask.
    "mha_mask_without_head_axis": {
        "multi_head_attention": (
            "def multi_head_attention(X_q, X_kv, W_q, W_k, W_v, W_o, n_heads, mask=None):\n"
            + _MHA_REFERENCE_BODY
            + "    heads, weights = scaled_dot_product_attention(Q, K, V, mask=mask)\n"
            "    return combine_heads(heads) @ W_o, weights\n"
        ),
    },
    # Self-attention only: keys and values are taken from X_q, X_kv is ignored.
    "mha_ignores_x_kv": {
        "multi_head_attention": (
            "def multi_head_attention(X_q, X_kv, W_q, W_k, W_v, W_o, n_heads, mask=None):\n"
            "    Q = split_heads(X_q @ W_q, n_heads)\n"
            "    K = split_heads(X_q @ W_k, n_heads)\n"
            "    V = split_heads(X_q @ W_v, n_heads)\n"
            "    if mask is not None:\n"
            "        mask = mask[..., None, :, :]\n"
            "    heads, weights = scaled_dot_product_attention(Q, K, V, mask=mask)\n"
            "    return combine_heads(heads) @ W_o, weights\n"
        ),
    },
    # Never splits: one full-width head, whatever n_heads says.
    "mha_single_head": {
        "multi_head_attention": (
            "def multi_head_attention(X_q, X_kv, W_q, W_k, W_v, W_o, n_heads, mask=None):\n"
            "    out, weights = scaled_dot_product_attention(X_q @ W_q, X_kv @ W_k, X_kv @ W_v, mask)\n"
            "    return out @ W_o, weights\n"
        ),
    },
    # Counts the heads' projections but forgets W_o.
    "params_without_w_o": {
        "parameter_counts": (
            "d_k_base = 512 // 8\nparams_per_head = 3 * 512 * 64\nparams_mha = 8 * params_per_head\n"
        ),
    },
    # Gives every head full-width (512 × 512) projections.
    "params_full_width_heads": {
        "parameter_counts": (
            "d_k_base = 512 // 8\n"
            "params_per_head = 3 * 512 * 512\n"
            "params_mha = 8 * params_per_head + 512 * 512\n"
        ),
    },
}

_MHA_TESTS = {"mha_trace", "mha_self_attention", "mha_cross_and_mask"}

CAUGHT_BY: dict[str, frozenset[str]] = {
    "split_reshape_without_transpose": frozenset({"split_heads_values"} | _MHA_TESTS),
    "split_interleaved_columns": frozenset({"split_heads_values", "combine_heads_values"} | _MHA_TESTS),
    "combine_without_transpose": frozenset({"combine_heads_values"} | _MHA_TESTS),
    "split_assert_instead_of_error": frozenset({"split_heads_errors"}),
    "mha_forgets_w_o": frozenset(_MHA_TESTS),
    "mha_scales_by_d_model": frozenset(_MHA_TESTS),
    "mha_mask_without_head_axis": frozenset({"mha_cross_and_mask"}),
    "mha_ignores_x_kv": frozenset({"mha_cross_and_mask"}),
    "mha_single_head": frozenset(_MHA_TESTS),
    "params_without_w_o": frozenset({"parameter_counts_totals"}),
    "params_full_width_heads": frozenset({"parameter_counts_totals"}),
}

# Text the feedback must contain for these mistakes: the hint the student needs.
FEEDBACK: dict[str, str] = {
    "split_reshape_without_transpose": "reshape the last axis to (n_heads, d_k) first",
    "combine_without_transpose": "without first swapping the head axis and the token axis",
    "split_assert_instead_of_error": "raised AssertionError; raise a ValueError",
    "mha_forgets_w_o": "multiply by W_o",
    "mha_scales_by_d_model": "not sqrt(d_model)",
    "mha_mask_without_head_axis": "give the mask a head axis",
    "mha_ignores_x_kv": "cross-attention weights should have shape",
    "params_without_w_o": "plus W_o (d_model × d_model)",
}

# The graded functions' contracts (the lesson's text), clause by clause, each with the test cell
# that fails when that clause alone is broken (V: its visible part, H: hidden).
#
# split_heads(x, n_heads)
#   shape (..., n_heads, n, d_k) ........................ split_heads_values V + H
#   head i holds the contiguous columns i*d_k:(i+1)*d_k . split_heads_values V (reshape_without_transpose,
#                                                         interleaved_columns) + H
#   ValueError when n_heads does not divide d_model ..... split_heads_errors V (assert_instead_of_error)
#   ValueError for n_heads < 1 .......................... split_heads_errors H
#   does not modify its input ........................... split_heads_values H (inputs_after_call)
# combine_heads(x)
#   the inverse of split_heads, shape (..., n, h * d_k) . combine_heads_values V (without_transpose) + H
#   does not modify its input ........................... combine_heads_values H (inputs_after_call)
# multi_head_attention(X_q, X_kv, W_q, W_k, W_v, W_o, n_heads, mask=None)
#   the worked example: scale sqrt(d_k), heads in order, W_o  mha_trace V (forgets_w_o, scales_by_d_model)
#   returns (output, weights (..., n_heads, n_q, n_k)) .. mha_self_attention V, mha_trace V
#   each head's rows sum to 1, batch dimensions ......... mha_self_attention V + H (vs PyTorch)
#   several heads, not one .............................. mha_trace V (mha_single_head)
#   keys and values from X_kv (cross-attention) ......... mha_cross_and_mask V (mha_ignores_x_kv) + H
#   the mask reaches every head; (batch, 1, n_k) padding  mha_cross_and_mask V (mask_without_head_axis) + H
#   float32 inputs ...................................... mha_self_attention H
#   does not modify its inputs .......................... mha_self_attention H (inputs_after_call)

# The mistakes with the test cells whose VISIBLE part fails for them: the student sees each before
# submitting (tests/test_visible_tests.py).
CAUGHT_BY_VISIBLE: dict[str, frozenset[str]] = {
    "split_reshape_without_transpose": frozenset({"mha_trace", "split_heads_values"}),
    "split_interleaved_columns": frozenset({"combine_heads_values", "mha_trace", "split_heads_values"}),
    "combine_without_transpose": frozenset({"combine_heads_values", "mha_trace"}),
    "split_assert_instead_of_error": frozenset({"split_heads_errors"}),
    "mha_forgets_w_o": frozenset({"mha_trace"}),
    "mha_scales_by_d_model": frozenset({"mha_trace"}),
    "mha_mask_without_head_axis": frozenset({"mha_cross_and_mask"}),
    "mha_ignores_x_kv": frozenset({"mha_cross_and_mask"}),
    "mha_single_head": frozenset({"mha_cross_and_mask", "mha_self_attention", "mha_trace"}),
}

# Mistakes in a value answer (an Apply number): its visible test checks the answer's form, since a
# visible check of the value would give the answer away; grading checks the value.
VALUE_MISTAKES: frozenset[str] = frozenset({"params_full_width_heads", "params_without_w_o"})

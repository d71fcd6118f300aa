"""Realistic submissions for lesson 7's encoder-layer project.

``CORRECT`` maps a name to answers (grade_id -> cell source) that must earn full marks; ``WRONG``
maps a name to answers holding one typical mistake, ``CAUGHT_BY`` names exactly the test cells
that must score zero for it (every other test cell must give full marks), and ``FEEDBACK`` a
phrase its feedback must contain. Answers not given are the reference solution's.
"""

LESSON = "07_encoder_layer"

_REFERENCE_PIECES = """import numpy as np

def softmax(x, axis=-1):
    shifted = x - np.max(x, axis=axis, keepdims=True)
    exps = np.exp(shifted)
    return exps / np.sum(exps, axis=axis, keepdims=True)


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights


def positional_encoding(seq_len, d_model):
    positions = np.arange(seq_len)[:, None]
    i = np.arange(d_model)[None, :] // 2
    angles = positions / 10000.0 ** (2 * i / d_model)
    return np.where(np.arange(d_model) % 2 == 0, np.sin(angles), np.cos(angles))


def layer_norm(x, gamma, beta, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return gamma * (x - mean) / np.sqrt(var + eps) + beta


def feed_forward(x, W1, b1, W2, b2):
    return np.maximum(0, x @ W1 + b1) @ W2 + b2
"""

_REFERENCE_ATTENTION = """def self_attention_sublayer(x, params):
    Q, K, V = x @ params["W_q"], x @ params["W_k"], x @ params["W_v"]
    attended, weights = scaled_dot_product_attention(Q, K, V)
    return layer_norm(x + attended @ params["W_o"], params["gamma1"], params["beta1"]), weights
"""

_REFERENCE_FFN = """def feed_forward_sublayer(h, params):
    inner = feed_forward(h, params["W1"], params["b1"], params["W2"], params["b2"])
    return layer_norm(h + inner, params["gamma2"], params["beta2"])
"""

CORRECT: dict[str, dict[str, str]] = {
    # einsum everywhere, an add-and-norm helper, and np.add for the positions.
    "einsum_and_helper": {
        "pieces_from_earlier_lessons": (
            "import numpy as np\n\n"
            "def softmax(x, axis=-1):\n"
            "    e = np.exp(x - x.max(axis=axis, keepdims=True))\n"
            "    return e / e.sum(axis=axis, keepdims=True)\n\n"
            "def scaled_dot_product_attention(Q, K, V, mask=None):\n"
            "    scores = np.einsum('...qd,...kd->...qk', Q, K) / np.sqrt(Q.shape[-1])\n"
            "    if mask is not None:\n"
            "        scores = np.where(mask, scores, -1e9)\n"
            "    w = softmax(scores)\n"
            "    return np.einsum('...qk,...kv->...qv', w, V), w\n\n"
            "def positional_encoding(seq_len, d_model):\n"
            "    pe = np.zeros((seq_len, d_model))\n"
            "    for pos in range(seq_len):\n"
            "        for col in range(d_model):\n"
            "            angle = pos / 10000 ** (2 * (col // 2) / d_model)\n"
            "            pe[pos, col] = np.sin(angle) if col % 2 == 0 else np.cos(angle)\n"
            "    return pe\n\n"
            "def layer_norm(x, gamma, beta, eps=1e-5):\n"
            "    centred = x - x.mean(-1, keepdims=True)\n"
            "    return gamma * centred / np.sqrt((centred**2).mean(-1, keepdims=True) + eps) + beta\n\n"
            "def feed_forward(x, W1, b1, W2, b2):\n"
            "    hidden = x @ W1 + b1\n"
            "    return np.where(hidden > 0, hidden, 0.0) @ W2 + b2\n"
        ),
        "self_attention_sublayer": (
            "def add_and_norm(x, sublayer_out, gamma, beta):\n"
            "    return layer_norm(x + sublayer_out, gamma, beta)\n\n"
            "def self_attention_sublayer(x, params):\n"
            "    Q = np.einsum('...nd,dk->...nk', x, params['W_q'])\n"
            "    K = np.einsum('...nd,dk->...nk', x, params['W_k'])\n"
            "    V = np.einsum('...nd,dk->...nk', x, params['W_v'])\n"
            "    out, w = scaled_dot_product_attention(Q, K, V)\n"
            "    return add_and_norm(x, out @ params['W_o'], params['gamma1'], params['beta1']), w\n"
        ),
        "feed_forward_sublayer": (
            "def feed_forward_sublayer(h, params):\n"
            "    f = feed_forward(h, *(params[k] for k in ('W1', 'b1', 'W2', 'b2')))\n"
            "    return add_and_norm(h, f, params['gamma2'], params['beta2'])\n"
        ),
        "encoder_layer": (
            "def encoder_layer(x, params):\n"
            "    h, attention_weights = self_attention_sublayer(x, params)\n"
            "    y = feed_forward_sublayer(h, params)\n"
            "    return y, attention_weights\n"
        ),
        "encode_with_positions": (
            "def encode_with_positions(embeddings, params):\n"
            "    pe = positional_encoding(*embeddings.shape[-2:])\n"
            "    return encoder_layer(np.add(embeddings, pe), params)\n"
        ),
    },
    # Everything in one function per step, np.matmul, float32-safe, answers computed by hand.
    "matmul_and_arithmetic": {
        "pieces_from_earlier_lessons": _REFERENCE_PIECES,
        "self_attention_sublayer": (
            "def self_attention_sublayer(x, params):\n"
            "    q = np.matmul(x, params['W_q'])\n"
            "    k = np.matmul(x, params['W_k'])\n"
            "    v = np.matmul(x, params['W_v'])\n"
            "    scores = np.matmul(q, np.moveaxis(k, -1, -2)) / np.sqrt(q.shape[-1])\n"
            "    w = softmax(scores, axis=-1)\n"
            "    res = x + np.matmul(np.matmul(w, v), params['W_o'])\n"
            "    return layer_norm(res, params['gamma1'], params['beta1']), w\n"
        ),
        "feed_forward_sublayer": (
            "def feed_forward_sublayer(h, params):\n"
            "    hidden = np.clip(np.matmul(h, params['W1']) + params['b1'], 0, None)\n"
            "    out = np.matmul(hidden, params['W2']) + params['b2']\n"
            "    return layer_norm(h + out, params['gamma2'], params['beta2'])\n"
        ),
        "encoder_layer": (
            "def encoder_layer(x, params):\n"
            "    h, w = self_attention_sublayer(x, params)\n"
            "    return feed_forward_sublayer(h, params), w\n"
        ),
        "encode_with_positions": (
            "def encode_with_positions(embeddings, params):\n"
            "    x = embeddings + positional_encoding(embeddings.shape[-2], embeddings.shape[-1])\n"
            "    return encoder_layer(x, params)\n"
        ),
    },
}

# The written contract of each graded function, clause by clause: the test cell that fails when
# that clause alone is broken, and the wrong submission below that shows it. A mistake in a
# sub-layer also costs the cells of the functions built on it (their values are checked too).
# self_attention_sublayer
#   queries, keys, values from W_q, W_k, W_v .. attention_sublayer_values (keys_from_w_q)
#   attention without a mask, over the keys .. attention_sublayer_basics (softmax_over_queries)
#   residual x added before the norm .......... attention_sublayer_values (no_attention_residual)
#   post-norm with gamma1, beta1 .............. attention_sublayer_basics (pre_norm)
#   projected with W_o ........................ attention_sublayer_values (its visible W_o = 0 check)
#   leading batch dimensions .................. attention_sublayer_basics (batchless_attention)
#   (h, weights) of shapes x and (..., n, n) .. attention_sublayer_basics (shape checks)
#   inputs unchanged .......................... attention_sublayer_basics (attention_residual_in_place)
# feed_forward_sublayer
#   feed_forward with W1, b1, W2, b2 .......... ffn_sublayer_values (relu_missing)
#   residual h, then the norm (post-norm) ..... ffn_sublayer_values (pre_norm)
#   inputs unchanged .......................... ffn_sublayer_values (ffn_residual_in_place)
# encoder_layer
#   attention sub-layer, then the FFN one ..... encoder_layer_values (every sub-layer mistake)
#   returns (y, the attention weights) ........ encoder_layer_values (its visible pair check)
#   inputs unchanged .......................... encoder_layer_properties (attention_residual_in_place)
# encode_with_positions
#   adds positional_encoding(n, d_model) ...... encode_with_positions_values (positions_from_one)
#   as a new array, embeddings unchanged ...... encode_with_positions_properties (positions_in_place)
#   then encoder_layer, its pair returned ..... encode_with_positions_values (every layer mistake)
WRONG: dict[str, dict[str, str]] = {
    # Pre-norm instead of the paper's post-norm: x + Sublayer(LayerNorm(x)).
    "pre_norm": {
        "self_attention_sublayer": (
            "def self_attention_sublayer(x, params):\n"
            "    n = layer_norm(x, params['gamma1'], params['beta1'])\n"
            "    out, w = scaled_dot_product_attention(n @ params['W_q'], n @ params['W_k'],\n"
            "                                          n @ params['W_v'])\n"
            "    return x + out @ params['W_o'], w\n"
        ),
        "feed_forward_sublayer": (
            "def feed_forward_sublayer(h, params):\n"
            "    n = layer_norm(h, params['gamma2'], params['beta2'])\n"
            "    return h + feed_forward(n, params['W1'], params['b1'], params['W2'], params['b2'])\n"
        ),
    },
    # Forgets the residual around attention.
    "no_attention_residual": {
        "self_attention_sublayer": (
            "def self_attention_sublayer(x, params):\n"
            "    out, w = scaled_dot_product_attention(x @ params['W_q'], x @ params['W_k'],\n"
            "                                          x @ params['W_v'])\n"
            "    return layer_norm(out @ params['W_o'], params['gamma1'], params['beta1']), w\n"
        ),
    },
    # Right numbers, but adds the attention into the caller's x (+=) before normalizing.
    "attention_residual_in_place": {
        "self_attention_sublayer": (
            "def self_attention_sublayer(x, params):\n"
            "    out, w = scaled_dot_product_attention(x @ params['W_q'], x @ params['W_k'],\n"
            "                                          x @ params['W_v'])\n"
            "    x += out @ params['W_o']\n"
            "    return layer_norm(x, params['gamma1'], params['beta1']), w\n"
        ),
    },
    # Right numbers, but adds the FFN into the caller's h (+=) before normalizing.
    "ffn_residual_in_place": {
        "feed_forward_sublayer": (
            "def feed_forward_sublayer(h, params):\n"
            "    h += feed_forward(h, params['W1'], params['b1'], params['W2'], params['b2'])\n"
            "    return layer_norm(h, params['gamma2'], params['beta2'])\n"
        ),
    },
    # Copy-paste slip: the keys use W_q.
    "keys_from_w_q": {
        "self_attention_sublayer": (
            "def self_attention_sublayer(x, params):\n"
            "    out, w = scaled_dot_product_attention(x @ params['W_q'], x @ params['W_q'],\n"
            "                                          x @ params['W_v'])\n"
            "    return layer_norm(x + out @ params['W_o'], params['gamma1'], params['beta1']), w\n"
        ),
    },
    # The pasted attention normalizes over the queries (axis -2) instead of the keys.
    "softmax_over_queries": {
        "pieces_from_earlier_lessons": _REFERENCE_PIECES.replace(
            "weights = softmax(scores, axis=-1)", "weights = softmax(scores, axis=-2)"
        ),
    },
    # The pasted attention uses K.T: fine for one sentence, broken with batch dimensions.
    "batchless_attention": {
        "pieces_from_earlier_lessons": _REFERENCE_PIECES.replace("Q @ np.swapaxes(K, -1, -2)", "Q @ K.T"),
    },
    # The pasted feed-forward network lost its ReLU.
    "relu_missing": {
        "pieces_from_earlier_lessons": _REFERENCE_PIECES.replace(
            "np.maximum(0, x @ W1 + b1) @ W2 + b2", "(x @ W1 + b1) @ W2 + b2"
        ),
    },
    # The pasted positional encoding counts positions from 1.
    "positions_from_one": {
        "pieces_from_earlier_lessons": _REFERENCE_PIECES.replace(
            "np.arange(seq_len)[:, None]", "np.arange(1, seq_len + 1)[:, None]"
        ),
    },
    # Right numbers, but adds the positions into the caller's array.
    "positions_in_place": {
        "encode_with_positions": (
            "def encode_with_positions(embeddings, params):\n"
            "    embeddings += positional_encoding(embeddings.shape[-2], embeddings.shape[-1])\n"
            "    return encoder_layer(embeddings, params)\n"
        ),
    },
}

CAUGHT_BY: dict[str, frozenset[str]] = {
    "pre_norm": frozenset(
        {
            "attention_sublayer_basics",
            "attention_sublayer_values",
            "ffn_sublayer_values",
            "encoder_layer_values",
            "encoder_layer_properties",
            "encode_with_positions_values",
        }
    ),
    "no_attention_residual": frozenset(
        {
            "attention_sublayer_values",
            "encoder_layer_values",
            "encode_with_positions_values",
        }
    ),
    "attention_residual_in_place": frozenset({"attention_sublayer_basics", "encoder_layer_properties"}),
    "ffn_residual_in_place": frozenset({"ffn_sublayer_values"}),
    "keys_from_w_q": frozenset(
        {
            "attention_sublayer_values",
            "encoder_layer_values",
            "encode_with_positions_values",
        }
    ),
    "softmax_over_queries": frozenset(
        {
            "attention_sublayer_basics",
            "attention_sublayer_values",
            "encoder_layer_values",
            "encode_with_positions_values",
        }
    ),
    "batchless_attention": frozenset(
        {
            "attention_sublayer_basics",
            "attention_sublayer_values",
            "encoder_layer_values",
            "encoder_layer_properties",
            "encode_with_positions_values",
            "encode_with_positions_properties",
        }
    ),
    "relu_missing": frozenset(
        {
            "ffn_sublayer_values",
            "encoder_layer_values",
            "encode_with_positions_values",
        }
    ),
    "positions_from_one": frozenset({"encode_with_positions_values"}),
    "positions_in_place": frozenset({"encode_with_positions_properties"}),
}

FEEDBACK: dict[str, str] = {
    "pre_norm": "applied after adding the residual",
    "no_attention_residual": "did you add the residual x before normalizing",
    "attention_residual_in_place": "self_attention_sublayer changed its input",
    "ffn_residual_in_place": "feed_forward_sublayer changed its input",
    "keys_from_w_q": "are the keys x W_k (not x W_q)?",
    "softmax_over_queries": "is your softmax over the key axis",
    "batchless_attention": "Leading batch dimensions must work",
    "relu_missing": "is the ReLU between the two linear layers",
    "positions_from_one": "positions from 0",
    "positions_in_place": "encode_with_positions changed its input",
}

# The mistakes with the test cells whose VISIBLE part fails for them: the student sees each before
# submitting (tests/test_visible_tests.py).
CAUGHT_BY_VISIBLE: dict[str, frozenset[str]] = {
    "pre_norm": frozenset(
        {
            "attention_sublayer_basics",
            "attention_sublayer_values",
            "encoder_layer_properties",
            "ffn_sublayer_values",
        }
    ),
    "no_attention_residual": frozenset({"attention_sublayer_values"}),
    "attention_residual_in_place": frozenset({"attention_sublayer_basics", "encoder_layer_properties"}),
    "ffn_residual_in_place": frozenset({"ffn_sublayer_values"}),
    "keys_from_w_q": frozenset({"attention_sublayer_values"}),
    "softmax_over_queries": frozenset({"attention_sublayer_basics"}),
    "batchless_attention": frozenset({"attention_sublayer_basics"}),
    "relu_missing": frozenset({"ffn_sublayer_values"}),
    "positions_from_one": frozenset({"encode_with_positions_values"}),
    "positions_in_place": frozenset({"encode_with_positions_properties"}),
}

# Mistakes in a value answer (an Apply number): its visible test checks the answer's form, since a
# visible check of the value would give the answer away; grading checks the value.
VALUE_MISTAKES: frozenset[str] = frozenset()

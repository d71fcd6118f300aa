"""Realistic submissions for lesson 6 (FFN, residuals, layer norm), for the grading tests.

``CORRECT`` maps a name to answers (grade_id -> cell source) that must earn full marks; ``WRONG``
maps a name to answers holding one typical mistake, and ``CAUGHT_BY`` names exactly the test cells
that must score zero for it (every other test cell must give full marks). Answers not given are the
reference solutions.
"""

LESSON = "06_ffn_residual_layer_norm"

CORRECT: dict[str, dict[str, str]] = {
    # Spelled out: explicit squared deviations, 1 / sqrt, einsum for the FFN.
    "explicit_moments_einsum": {
        "layer_norm": (
            "def layer_norm(x, gamma, beta, eps=1e-5):\n"
            "    d = x.shape[-1]\n"
            "    mu = x.sum(axis=-1, keepdims=True) / d\n"
            "    centred = x - mu\n"
            "    var = (centred ** 2).sum(axis=-1, keepdims=True) / d\n"
            "    return centred * (1.0 / np.sqrt(var + eps)) * gamma + beta\n"
        ),
        "feed_forward": (
            "def feed_forward(x, W1, b1, W2, b2):\n"
            "    h = np.einsum('...d,df->...f', x, W1) + b1\n"
            "    h = np.where(h > 0, h, 0.0)\n"
            "    return np.einsum('...f,fd->...d', h, W2) + b2\n"
        ),
        "add_and_norm": (
            "def add_and_norm(x, sublayer_out, gamma, beta, eps=1e-5):\n"
            "    residual = x + sublayer_out\n"
            "    return layer_norm(residual, gamma, beta, eps)\n"
        ),
        "ffn_parameter_counts": (
            "d_model, d_ff = 512, 2048\n"
            "ffn_params = (d_model * d_ff + d_ff) + (d_ff * d_model + d_model)\n"
            "layer_norm_params = d_model + d_model\n"
        ),
    },
    # One token at a time in a loop over the flattened batch; ReLU by clipping.
    "loop_over_tokens": {
        "layer_norm": (
            "def layer_norm(x, gamma, beta, eps=1e-5):\n"
            "    flat = x.reshape(-1, x.shape[-1])\n"
            "    out = np.empty(flat.shape, dtype=np.result_type(x, gamma, beta))\n"
            "    for row in range(flat.shape[0]):\n"
            "        v = flat[row]\n"
            "        out[row] = (v - v.mean()) / np.sqrt(v.var() + eps) * gamma + beta\n"
            "    return out.reshape(x.shape)\n"
        ),
        "feed_forward": (
            "def feed_forward(x, W1, b1, W2, b2):\n"
            "    hidden = np.clip(np.matmul(x, W1) + b1, 0, None)\n"
            "    return np.matmul(hidden, W2) + b2\n"
        ),
        "ffn_parameter_counts": ("ffn_params = 2 * 512 * 2048 + 2048 + 512\nlayer_norm_params = 1024.0\n"),
    },
    # float32 arithmetic when given float32, std via np.std, ReLU with a boolean mask.
    "std_and_mask": {
        "layer_norm": (
            "def layer_norm(x, gamma, beta, eps=1e-5):\n"
            "    mean = x.mean(-1, keepdims=True)\n"
            "    std = np.sqrt(np.square(x.std(-1, keepdims=True)) + eps)\n"
            "    return (x - mean) / std * gamma + beta\n"
        ),
        "feed_forward": (
            "def feed_forward(x, W1, b1, W2, b2):\n"
            "    h = x @ W1 + b1\n"
            "    h = h * (h > 0)\n"
            "    return h @ W2 + b2\n"
        ),
        "add_and_norm": (
            "def add_and_norm(x, sublayer_out, gamma, beta, eps=1e-5):\n"
            "    return layer_norm(np.add(x, sublayer_out), gamma=gamma, beta=beta, eps=eps)\n"
        ),
    },
}

WRONG: dict[str, dict[str, str]] = {
    # Unbiased variance (divides by d - 1).
    "layer_norm_unbiased_variance": {
        "layer_norm": (
            "def layer_norm(x, gamma, beta, eps=1e-5):\n"
            "    mean = x.mean(axis=-1, keepdims=True)\n"
            "    var = x.var(axis=-1, ddof=1, keepdims=True)\n"
            "    return gamma * (x - mean) / np.sqrt(var + eps) + beta\n"
        ),
    },
    # eps added to the standard deviation instead of inside the square root.
    "layer_norm_eps_outside_sqrt": {
        "layer_norm": (
            "def layer_norm(x, gamma, beta, eps=1e-5):\n"
            "    mean = x.mean(axis=-1, keepdims=True)\n"
            "    std = x.std(axis=-1, keepdims=True)\n"
            "    return gamma * (x - mean) / (std + eps) + beta\n"
        ),
    },
    # Normalises each feature over the tokens (axis 0), like batch norm.
    "layer_norm_wrong_axis": {
        "layer_norm": (
            "def layer_norm(x, gamma, beta, eps=1e-5):\n"
            "    mean = x.mean(axis=0, keepdims=True)\n"
            "    var = x.var(axis=0, keepdims=True)\n"
            "    return gamma * (x - mean) / np.sqrt(var + eps) + beta\n"
        ),
    },
    # Scales and shifts before normalising, which the normalisation then undoes.
    "layer_norm_affine_first": {
        "layer_norm": (
            "def layer_norm(x, gamma, beta, eps=1e-5):\n"
            "    y = gamma * x + beta\n"
            "    return (y - y.mean(-1, keepdims=True)) / np.sqrt(y.var(-1, keepdims=True) + eps)\n"
        ),
    },
    # Forgets the learned scale and shift.
    "layer_norm_no_gamma_beta": {
        "layer_norm": (
            "def layer_norm(x, gamma, beta, eps=1e-5):\n"
            "    mean = x.mean(axis=-1, keepdims=True)\n"
            "    var = x.var(axis=-1, keepdims=True)\n"
            "    return (x - mean) / np.sqrt(var + eps)\n"
        ),
    },
    # Hard-codes eps = 1e-5 and ignores the argument.
    "layer_norm_ignores_eps": {
        "layer_norm": (
            "def layer_norm(x, gamma, beta, eps=1e-5):\n"
            "    mean = x.mean(axis=-1, keepdims=True)\n"
            "    var = x.var(axis=-1, keepdims=True)\n"
            "    return gamma * (x - mean) / np.sqrt(var + 1e-5) + beta\n"
        ),
    },
    # No ReLU: the FFN collapses to one linear map.
    "ffn_without_relu": {
        "feed_forward": ("def feed_forward(x, W1, b1, W2, b2):\n    return (x @ W1 + b1) @ W2 + b2\n"),
    },
    # ReLU applied to the output instead of the hidden layer.
    "ffn_relu_after_w2": {
        "feed_forward": (
            "def feed_forward(x, W1, b1, W2, b2):\n    return np.maximum(0, (x @ W1 + b1) @ W2 + b2)\n"
        ),
    },
    # np.dot with transposes: right for one vector or a matrix, wrong with batch dimensions.
    "ffn_only_2d": {
        "feed_forward": (
            "def feed_forward(x, W1, b1, W2, b2):\n"
            "    hidden = np.maximum(0, np.dot(W1.T, x.T).T + b1)\n"
            "    return np.dot(W2.T, hidden.T).T + b2\n"
        ),
    },
    # Pre-norm instead of the paper's post-norm.
    "add_and_norm_pre_norm": {
        "add_and_norm": (
            "def add_and_norm(x, sublayer_out, gamma, beta, eps=1e-5):\n"
            "    return x + layer_norm(sublayer_out, gamma, beta, eps)\n"
        ),
    },
    # Normalises the sub-layer output and drops the residual.
    "add_and_norm_no_residual": {
        "add_and_norm": (
            "def add_and_norm(x, sublayer_out, gamma, beta, eps=1e-5):\n"
            "    return layer_norm(sublayer_out, gamma, beta, eps)\n"
        ),
    },
    # Does not pass eps on to layer_norm.
    "add_and_norm_drops_eps": {
        "add_and_norm": (
            "def add_and_norm(x, sublayer_out, gamma, beta, eps=1e-5):\n"
            "    return layer_norm(x + sublayer_out, gamma, beta)\n"
        ),
    },
    # Stubs that return an array of the right shape and do no work: they must earn nothing.
    "layer_norm_all_zeros": {
        "layer_norm": "def layer_norm(x, gamma, beta, eps=1e-5):\n    return np.zeros_like(x)\n",
    },
    "layer_norm_constant_beta": {
        "layer_norm": "def layer_norm(x, gamma, beta, eps=1e-5):\n    return np.zeros_like(x) + beta\n",
    },
    "layer_norm_returns_input": {
        "layer_norm": "def layer_norm(x, gamma, beta, eps=1e-5):\n    return x\n",
    },
    "feed_forward_all_zeros": {
        "feed_forward": "def feed_forward(x, W1, b1, W2, b2):\n    return np.zeros_like(x)\n",
    },
    "feed_forward_returns_input": {
        "feed_forward": "def feed_forward(x, W1, b1, W2, b2):\n    return x\n",
    },
    "add_and_norm_all_zeros": {
        "add_and_norm": (
            "def add_and_norm(x, sublayer_out, gamma, beta, eps=1e-5):\n    return np.zeros_like(x)\n"
        ),
    },
    "add_and_norm_sum_only": {
        "add_and_norm": (
            "def add_and_norm(x, sublayer_out, gamma, beta, eps=1e-5):\n    return x + sublayer_out\n"
        ),
    },
    # Counts the weights but forgets the biases.
    "params_without_biases": {
        "ffn_parameter_counts": ("ffn_params = 2 * 512 * 2048\nlayer_norm_params = 2 * 512\n"),
    },
    # Counts gamma only.
    "params_layer_norm_gamma_only": {
        "ffn_parameter_counts": ("ffn_params = 2 * 512 * 2048 + 2048 + 512\nlayer_norm_params = 512\n"),
    },
}

_LAYER_NORM = {"layer_norm_basic", "layer_norm_torch", "layer_norm_gamma_beta", "layer_norm_edge_cases"}

CAUGHT_BY: dict[str, frozenset[str]] = {
    "layer_norm_unbiased_variance": frozenset(
        {"layer_norm_basic", "layer_norm_torch", "layer_norm_edge_cases"}
    ),
    "layer_norm_eps_outside_sqrt": frozenset({"layer_norm_torch", "layer_norm_edge_cases"}),
    "layer_norm_wrong_axis": frozenset({"layer_norm_basic", "layer_norm_torch", "layer_norm_edge_cases"}),
    "layer_norm_no_gamma_beta": frozenset(
        {"layer_norm_torch", "layer_norm_gamma_beta", "layer_norm_edge_cases"}
    ),
    "layer_norm_ignores_eps": frozenset({"layer_norm_torch"}),
    "layer_norm_affine_first": frozenset(
        {"layer_norm_torch", "layer_norm_gamma_beta", "layer_norm_edge_cases"}
    ),
    "ffn_without_relu": frozenset({"feed_forward_trace", "feed_forward_torch"}),
    "ffn_relu_after_w2": frozenset({"feed_forward_trace", "feed_forward_torch"}),
    "ffn_only_2d": frozenset({"feed_forward_torch"}),
    "add_and_norm_pre_norm": frozenset({"add_and_norm_post_norm", "add_and_norm_eps"}),
    "add_and_norm_no_residual": frozenset({"add_and_norm_post_norm", "add_and_norm_eps"}),
    "add_and_norm_drops_eps": frozenset({"add_and_norm_eps"}),
    "params_without_biases": frozenset({"ffn_params_value"}),
    "params_layer_norm_gamma_only": frozenset({"layer_norm_params_value"}),
    # add_and_norm is graded against the student's own layer_norm, so a stub layer_norm is charged
    # there only where add_and_norm's result has no spread (or the constant sum is not beta).
    "layer_norm_all_zeros": frozenset(_LAYER_NORM | {"add_and_norm_post_norm", "add_and_norm_eps"}),
    "layer_norm_constant_beta": frozenset(_LAYER_NORM | {"add_and_norm_post_norm", "add_and_norm_eps"}),
    "layer_norm_returns_input": frozenset(_LAYER_NORM | {"add_and_norm_eps"}),
    "feed_forward_all_zeros": frozenset({"feed_forward_trace", "feed_forward_torch"}),
    "feed_forward_returns_input": frozenset({"feed_forward_trace", "feed_forward_torch"}),
    "add_and_norm_all_zeros": frozenset({"add_and_norm_post_norm", "add_and_norm_eps"}),
    "add_and_norm_sum_only": frozenset({"add_and_norm_post_norm", "add_and_norm_eps"}),
}

# The mistakes the lesson's text warns about (and the stubs), with the test cells whose VISIBLE part
# fails for them: the student sees each before submitting (tests/test_visible_tests.py).
CAUGHT_BY_VISIBLE: dict[str, frozenset[str]] = {
    "layer_norm_unbiased_variance": frozenset(
        {"layer_norm_basic", "layer_norm_edge_cases", "layer_norm_torch"}
    ),
    "layer_norm_eps_outside_sqrt": frozenset({"layer_norm_edge_cases", "layer_norm_torch"}),
    "layer_norm_wrong_axis": frozenset({"layer_norm_basic", "layer_norm_edge_cases", "layer_norm_torch"}),
    "layer_norm_affine_first": frozenset({"layer_norm_edge_cases", "layer_norm_gamma_beta"}),
    "layer_norm_no_gamma_beta": frozenset({"layer_norm_edge_cases", "layer_norm_gamma_beta"}),
    "layer_norm_ignores_eps": frozenset({"layer_norm_torch"}),
    "ffn_without_relu": frozenset({"feed_forward_trace"}),
    "ffn_relu_after_w2": frozenset({"feed_forward_trace"}),
    "ffn_only_2d": frozenset({"feed_forward_torch"}),
    "add_and_norm_pre_norm": frozenset({"add_and_norm_eps", "add_and_norm_post_norm"}),
    "add_and_norm_no_residual": frozenset({"add_and_norm_eps", "add_and_norm_post_norm"}),
    "add_and_norm_drops_eps": frozenset({"add_and_norm_eps"}),
    "layer_norm_all_zeros": frozenset(
        {
            "add_and_norm_post_norm",
            "layer_norm_basic",
            "layer_norm_edge_cases",
            "layer_norm_gamma_beta",
            "layer_norm_torch",
        }
    ),
    "layer_norm_constant_beta": frozenset(
        {
            "add_and_norm_post_norm",
            "layer_norm_basic",
            "layer_norm_edge_cases",
            "layer_norm_gamma_beta",
            "layer_norm_torch",
        }
    ),
    "layer_norm_returns_input": frozenset(
        {
            "add_and_norm_eps",
            "layer_norm_basic",
            "layer_norm_edge_cases",
            "layer_norm_gamma_beta",
            "layer_norm_torch",
        }
    ),
    "feed_forward_all_zeros": frozenset({"feed_forward_trace"}),
    "feed_forward_returns_input": frozenset({"feed_forward_trace"}),
    "add_and_norm_all_zeros": frozenset({"add_and_norm_eps", "add_and_norm_post_norm"}),
    "add_and_norm_sum_only": frozenset({"add_and_norm_eps", "add_and_norm_post_norm"}),
}
# Mistakes in a value answer (an Apply number): its visible test checks the answer's form, since a
# visible check of the value would give the answer away; grading checks the value.
VALUE_MISTAKES: frozenset[str] = frozenset({"params_layer_norm_gamma_only", "params_without_biases"})

# The graded functions' contracts (design.md section 4 and the lesson's text), clause by clause,
# each with the test cell that fails when that clause alone is broken (V: its visible part, H: hidden).
#
# layer_norm(x, gamma, beta, eps=1e-5)
#   same shape as x, any leading batch dimensions ....... layer_norm_basic V, layer_norm_torch V+H
#   statistics over the last axis only .................. layer_norm_basic V (layer_norm_wrong_axis)
#   biased variance (ddof=0) ............................ layer_norm_basic V (layer_norm_unbiased_variance)
#   eps inside the square root .......................... layer_norm_edge_cases V, layer_norm_torch V
#   eps is the argument, not a constant ................. layer_norm_torch V (layer_norm_ignores_eps)
#   scale by gamma, shift by beta, after normalising .... layer_norm_gamma_beta V (affine_first)
#   a constant row maps to beta (finite) ................ layer_norm_edge_cases V
#   large offsets do not matter ......................... layer_norm_edge_cases H
#   float32 input ....................................... layer_norm_torch H
#   does not modify its input ........................... layer_norm_torch H (inputs_after_call)
# feed_forward(x, W1, b1, W2, b2)
#   ReLU on the hidden layer x W1 + b1, then W2, b2 ..... feed_forward_trace V (ffn_relu_after_w2)
#   both biases ......................................... feed_forward_trace V
#   any leading batch dimensions ........................ feed_forward_torch V (ffn_only_2d) + H
#   does not modify its input ........................... feed_forward_torch H (inputs_after_call)
# add_and_norm(x, sublayer_out, gamma, beta, eps=1e-5)
#   layer_norm(x + sublayer_out) (post-norm) ............ add_and_norm_post_norm V (pre_norm, no_residual)
#   passes eps on to layer_norm ......................... add_and_norm_eps V (add_and_norm_drops_eps) + H
#   a constant sum maps to beta ......................... add_and_norm_eps V
#   does not modify its inputs .......................... add_and_norm_post_norm H (inputs_after_call)

# Text the feedback must contain for these mistakes: the hint the student needs.
FEEDBACK: dict[str, str] = {
    "layer_norm_unbiased_variance": "means ddof=1",
    "layer_norm_eps_outside_sqrt": "inside the",
    "layer_norm_no_gamma_beta": "multiply the normalised values by gamma",
    "ffn_relu_after_w2": "Apply the ReLU to the hidden layer",
    "ffn_only_2d": "np.dot with transposes does not",
    "add_and_norm_pre_norm": "is pre-norm, a different model",
    "add_and_norm_drops_eps": "pass eps on to layer_norm",
}

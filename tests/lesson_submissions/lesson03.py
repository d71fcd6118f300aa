"""Realistic submissions for lesson 3's graded functions, for the grading tests.

``CORRECT`` maps a name to answers (grade_id -> cell source) that must earn full marks; ``WRONG``
maps a name to answers holding one mistake students really make, and ``CAUGHT_BY`` names exactly
the test cells that must score zero for it: every other test cell must give full marks, so the
mistake costs only the points of the properties it breaks. Answers a submission leaves out keep the
reference solution, so each wrong submission isolates one mistake.
"""

LESSON = "03_attention"

_STABLE_SOFTMAX = """
def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)
"""


def _attention(body: str) -> str:
    """A scaled_dot_product_attention answer with ``body`` as its (indented) code."""
    indented = "".join(f"    {line}\n" if line else "\n" for line in body.strip("\n").split("\n"))
    return f"def scaled_dot_product_attention(Q, K, V, mask=None):\n{indented}"


CORRECT: dict[str, dict[str, str]] = {
    # The hand computation typed as a rounded decimal; Python loops over every batch index, query
    # and key, with the mask broadcast explicitly.
    "loops": {
        "hand_weight": "weight_on_key0 = 0.881  # e^2 / (e^2 + 1), rounded\n",
        "softmax": """
import math

def softmax(x, axis=-1):
    x = np.asarray(x, dtype=float)
    moved = np.moveaxis(x, axis, -1)
    result = np.empty_like(moved)
    for index in np.ndindex(*moved.shape[:-1]):
        row = moved[index]
        top = max(row)
        exps = [math.exp(value - top) for value in row]
        total = sum(exps)
        result[index] = [value / total for value in exps]
    return np.moveaxis(result, -1, axis)
""",
        "causal_mask": """
def causal_mask(n):
    return np.array([[key <= query for key in range(n)] for query in range(n)], dtype=bool)
""",
        "scaled_dot_product_attention": _attention("""
import math
Q, K, V = np.asarray(Q, dtype=float), np.asarray(K, dtype=float), np.asarray(V, dtype=float)
n_q, d_k = Q.shape[-2:]
n_k, d_v = V.shape[-2:]
shapes = [Q.shape[:-2], K.shape[:-2], V.shape[:-2]]
if mask is not None:
    shapes.append(np.shape(mask)[:-2])
batch = np.broadcast_shapes(*shapes)
Qb = np.broadcast_to(Q, batch + (n_q, d_k))
Kb = np.broadcast_to(K, batch + (n_k, d_k))
Vb = np.broadcast_to(V, batch + (n_k, d_v))
allowed = np.ones(batch + (n_q, n_k), dtype=bool)
if mask is not None:
    allowed = np.broadcast_to(mask, batch + (n_q, n_k))
weights = np.zeros(batch + (n_q, n_k))
output = np.zeros(batch + (n_q, d_v))
for b in np.ndindex(*batch):
    for i in range(n_q):
        scores = np.full(n_k, -np.inf)
        for j in range(n_k):
            if allowed[b][i, j]:
                scores[j] = sum(Qb[b][i, t] * Kb[b][j, t] for t in range(d_k)) / math.sqrt(d_k)
        weights[b][i] = softmax(scores)
        for j in range(n_k):
            output[b][i] += weights[b][i, j] * Vb[b][j]
return output, weights
"""),
    },
    # einsum for both products, a log-sum-exp softmax and an explicit K transpose by axes.
    "einsum_logsumexp": {
        "softmax": """
def softmax(x, axis=-1):
    top = np.max(x, axis=axis, keepdims=True)
    log_total = top + np.log(np.sum(np.exp(x - top), axis=axis, keepdims=True))
    return np.exp(x - log_total)
""",
        "causal_mask": """
def causal_mask(n):
    return np.arange(n)[:, None] >= np.arange(n)[None, :]
""",
        "scaled_dot_product_attention": _attention("""
scores = np.einsum("...qd,...kd->...qk", Q, K) / np.sqrt(K.shape[-1])
if mask is not None:
    scores = np.where(mask, scores, -np.inf)
weights = softmax(scores)
return np.einsum("...qk,...kv->...qv", weights, V), weights
"""),
    },
    # A large negative number instead of -inf, as many tutorials do.
    "minus_1e9": {
        "softmax": _STABLE_SOFTMAX,
        "causal_mask": "def causal_mask(n):\n    return np.tri(n, dtype=bool)\n",
        "scaled_dot_product_attention": _attention("""
scores = np.matmul(Q, K.swapaxes(-1, -2)) / np.sqrt(Q.shape[-1])
if mask is not None:
    scores = np.where(mask, scores, -1e9)
weights = softmax(scores, axis=-1)
return np.matmul(weights, V), weights
"""),
    },
    # Keeps float32 inputs in float32 and fills masked scores with the dtype's most negative value.
    "float32_preserving": {
        "softmax": """
def softmax(x, axis=-1):
    x = np.asarray(x)
    shifted = x - x.max(axis=axis, keepdims=True)
    np.exp(shifted, out=shifted)
    shifted /= shifted.sum(axis=axis, keepdims=True)
    return shifted
""",
        "causal_mask": """
def causal_mask(n):
    mask = np.zeros((n, n), dtype=bool)
    for i in range(n):
        mask[i, : i + 1] = True
    return mask
""",
        "scaled_dot_product_attention": _attention("""
dtype = np.result_type(Q, K, V, np.float32)
Q, K, V = (np.asarray(a, dtype=dtype) for a in (Q, K, V))
scale = dtype.type(1.0 / np.sqrt(Q.shape[-1]))
scores = (Q * scale) @ np.swapaxes(K, -1, -2)
if mask is not None:
    scores = np.where(mask, scores, np.finfo(dtype).min)
weights = softmax(scores)
return weights @ V, weights
"""),
    },
}

WRONG: dict[str, dict[str, str]] = {
    # --- the hand computation ------------------------------------------------------------------
    # Forgets to divide the scores by sqrt(d_k): e^4 / (e^4 + 1).
    "hand_weight_unscaled": {"hand_weight": "weight_on_key0 = 0.982\n"},
    # Divides by d_k instead of its square root: e^1 / (e^1 + 1).
    "hand_weight_scaled_by_d_k": {"hand_weight": "weight_on_key0 = 0.731\n"},
    # Gives the weight of the other key.
    "hand_weight_other_key": {"hand_weight": "weight_on_key0 = 1 / (1 + np.exp(2))\n"},
    # --- softmax -----------------------------------------------------------------------------
    # No max subtraction: exp overflows for large entries (and warns on stderr).
    "softmax_no_max_shift": {
        "softmax": """
def softmax(x, axis=-1):
    e = np.exp(x)
    return e / np.sum(e, axis=axis, keepdims=True)
""",
    },
    # Always normalises over the last axis, whatever axis says.
    "softmax_ignores_axis": {
        "softmax": """
def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)
""",
    },
    # Normalises over every entry of the array instead of along an axis.
    "softmax_global_sum": {
        "softmax": """
def softmax(x, axis=-1):
    e = np.exp(x - np.max(x))
    return e / np.sum(e)
""",
    },
    # Forgets keepdims: broken as soon as x has more than one dimension.
    "softmax_no_keepdims": {
        "softmax": """
def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis))
    return e / np.sum(e, axis=axis)
""",
    },
    # Shifts the argument in place.
    "softmax_in_place": {
        "softmax": """
def softmax(x, axis=-1):
    x -= np.max(x, axis=axis, keepdims=True)
    e = np.exp(x)
    return e / np.sum(e, axis=axis, keepdims=True)
""",
    },
    # --- causal_mask ---------------------------------------------------------------------------
    "causal_mask_strict": {
        "causal_mask": "def causal_mask(n):\n    return np.tril(np.ones((n, n), dtype=bool), k=-1)\n",
    },
    "causal_mask_upper": {
        "causal_mask": "def causal_mask(n):\n    return np.triu(np.ones((n, n), dtype=bool))\n",
    },
    "causal_mask_floats": {
        "causal_mask": "def causal_mask(n):\n    return np.tril(np.ones((n, n)))\n",
    },
    # --- scaled_dot_product_attention ----------------------------------------------------------
    "attention_no_scale": {
        "scaled_dot_product_attention": _attention("""
scores = Q @ np.swapaxes(K, -1, -2)
if mask is not None:
    scores = np.where(mask, scores, -np.inf)
weights = softmax(scores)
return weights @ V, weights
"""),
    },
    "attention_scale_by_d_k": {
        "scaled_dot_product_attention": _attention("""
scores = Q @ np.swapaxes(K, -1, -2) / Q.shape[-1]
if mask is not None:
    scores = np.where(mask, scores, -np.inf)
weights = softmax(scores)
return weights @ V, weights
"""),
    },
    # Softmax over the queries (each column sums to 1) instead of over the keys.
    "attention_softmax_over_queries": {
        "scaled_dot_product_attention": _attention("""
scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
if mask is not None:
    scores = np.where(mask, scores, -np.inf)
weights = softmax(scores, axis=-2)
return weights @ V, weights
"""),
    },
    # Reads True as "hide this key".
    "attention_mask_inverted": {
        "scaled_dot_product_attention": _attention("""
scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
if mask is not None:
    scores = np.where(mask, -np.inf, scores)
weights = softmax(scores)
return weights @ V, weights
"""),
    },
    # Zeroes masked weights after the softmax: rows no longer sum to 1.
    "attention_mask_after_softmax": {
        "scaled_dot_product_attention": _attention("""
scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
weights = softmax(scores)
if mask is not None:
    weights = weights * mask
return weights @ V, weights
"""),
    },
    # Zeroes and renormalises after the softmax: right in exact arithmetic, but the maximum is
    # taken over masked keys too, so a large masked score underflows every allowed weight.
    "attention_mask_renormalised_after_softmax": {
        "scaled_dot_product_attention": _attention("""
scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
weights = softmax(scores)
if mask is not None:
    weights = weights * mask
    weights = weights / weights.sum(axis=-1, keepdims=True)
return weights @ V, weights
"""),
    },
    # Multiplies the scores by the mask: masked scores become 0, not -inf.
    "attention_mask_multiplies_scores": {
        "scaled_dot_product_attention": _attention("""
scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
if mask is not None:
    scores = scores * mask
weights = softmax(scores)
return weights @ V, weights
"""),
    },
    # Accepts a mask and never uses it.
    "attention_ignores_mask": {
        "scaled_dot_product_attention": _attention("""
weights = softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]))
return weights @ V, weights
"""),
    },
    # K.T: right for 2-D inputs only.
    "attention_2d_only": {
        "scaled_dot_product_attention": _attention("""
scores = Q @ K.T / np.sqrt(K.shape[1])
if mask is not None:
    scores = np.where(mask, scores, -np.inf)
weights = softmax(scores, axis=1)
return weights @ V, weights
"""),
    },
    # Scales the queries in place "to save a division per score".
    "attention_scales_q_in_place": {
        "scaled_dot_product_attention": _attention("""
Q /= np.sqrt(Q.shape[-1])
scores = Q @ np.swapaxes(K, -1, -2)
if mask is not None:
    scores = np.where(mask, scores, -np.inf)
weights = softmax(scores)
return weights @ V, weights
"""),
    },
    # Returns the output only.
    "attention_returns_output_only": {
        "scaled_dot_product_attention": _attention("""
scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
if mask is not None:
    scores = np.where(mask, scores, -np.inf)
return softmax(scores) @ V
"""),
    },
}

_ATTENTION_NUMBERS = frozenset(
    {"attention_values", "attention_mask", "attention_batch", "attention_stability"}
)

CAUGHT_BY: dict[str, frozenset[str]] = {
    "hand_weight_unscaled": frozenset({"hand_weight_test"}),
    "hand_weight_scaled_by_d_k": frozenset({"hand_weight_test"}),
    "hand_weight_other_key": frozenset({"hand_weight_test"}),
    # A broken softmax also breaks the attention built on it, wherever the difference shows.
    "softmax_no_max_shift": frozenset({"softmax_stability", "attention_stability"}),
    "softmax_ignores_axis": frozenset({"softmax_sums", "softmax_values", "softmax_stability"}),
    "softmax_global_sum": frozenset(
        {"softmax_sums", "softmax_values", "softmax_stability", "attention_shapes"} | _ATTENTION_NUMBERS
    ),
    "softmax_no_keepdims": frozenset(
        {"softmax_sums", "softmax_values", "softmax_stability", "softmax_inputs"}
        | {"attention_shapes", "attention_inputs"}
        | _ATTENTION_NUMBERS
    ),
    "softmax_in_place": frozenset({"softmax_inputs"}),
    "causal_mask_strict": frozenset({"causal_mask_pattern"}),
    "causal_mask_upper": frozenset({"causal_mask_pattern"}),
    "causal_mask_floats": frozenset({"causal_mask_dtype"}),
    "attention_no_scale": _ATTENTION_NUMBERS,
    "attention_scale_by_d_k": _ATTENTION_NUMBERS,
    "attention_softmax_over_queries": frozenset({"attention_shapes"}) | _ATTENTION_NUMBERS,
    "attention_mask_inverted": frozenset({"attention_mask", "attention_batch"}),
    "attention_mask_after_softmax": frozenset({"attention_mask", "attention_batch"}),
    "attention_mask_renormalised_after_softmax": frozenset({"attention_mask"}),
    "attention_mask_multiplies_scores": frozenset({"attention_mask", "attention_batch"}),
    "attention_ignores_mask": frozenset({"attention_mask", "attention_batch"}),
    "attention_2d_only": frozenset({"attention_batch"}),
    "attention_scales_q_in_place": frozenset({"attention_inputs"}),
    "attention_returns_output_only": frozenset({"attention_shapes"}) | _ATTENTION_NUMBERS,
}

# Words the feedback of a wrong submission must contain: the visible test's hint for its mistake.
FEEDBACK: dict[str, str] = {
    "softmax_no_max_shift": "subtract the maximum along the axis",
    "softmax_global_sum": "each row must sum to 1",
    "softmax_in_place": "softmax changed its input",
    "causal_mask_strict": "True on and below the diagonal",
    "causal_mask_floats": "the mask must be boolean",
    "attention_no_scale": "Check the scale",
    "attention_softmax_over_queries": "is the softmax over the key axis",
    "attention_mask_inverted": "masked weights must be exactly 0",
    "attention_mask_after_softmax": "mask the scores before the softmax",
    "attention_2d_only": "np.swapaxes(K, -1, -2)",
    "attention_scales_q_in_place": "changed its input Q",
    "attention_returns_output_only": "return the pair (output, weights)",
}

# The graded functions' contracts (design.md section 4 and the lesson's text), clause by clause,
# each with the test cell that fails when that clause alone is broken (V: its visible part, H: hidden).
#
# softmax(x, axis=-1)
#   same shape, positive, sums to 1 along axis -1 ....... softmax_sums V (softmax_no_keepdims)
#   uses the axis argument in every reduction ........... softmax_sums V (softmax_ignores_axis) + H
#   the values (vs PyTorch), shift-invariant ............ softmax_values V + H (softmax_global_sum)
#   stable: no overflow for 1000s and ±1e4, float32 ..... softmax_stability V + H (softmax_no_max_shift)
#   does not modify its input ........................... softmax_inputs V (softmax_in_place) + H
# causal_mask(n)
#   True on and below the diagonal (query i sees 0..i) .. causal_mask_pattern V (strict, upper) + H
#   boolean dtype, shape (n, n) ......................... causal_mask_dtype V (causal_mask_floats) + H
# scaled_dot_product_attention(Q, K, V, mask=None)
#   returns (output, weights), shapes (n_q, d_v), (n_q, n_k)  attention_shapes V (returns_output_only)
#   softmax over the keys, rows sum to 1 ................ attention_shapes V (softmax_over_queries)
#   scale by sqrt(d_k) .................................. attention_values V (no_scale, scale_by_d_k)
#   True means may attend; masked weights exactly 0 ..... attention_mask V (inverted, ignores_mask,
#                                                         multiplies_scores)
#   mask the scores before the softmax .................. attention_mask V (mask_after_softmax,
#                                                         renormalised_after_softmax)
#   a mask broadcasts: (n_q, n_k), (1, n_k), (..., 1, n_k)  attention_mask H, attention_batch H
#   leading batch dimensions, items independent ......... attention_batch V (attention_2d_only) + H
#   stable for large scores, float32 .................... attention_stability V + H
#   does not modify Q, K, V or the mask ................. attention_inputs V (scales_q_in_place) + H

# The mistakes with the test cells whose VISIBLE part fails for them: the student sees each before
# submitting (tests/test_visible_tests.py).
CAUGHT_BY_VISIBLE: dict[str, frozenset[str]] = {
    "hand_weight_unscaled": frozenset({"hand_weight_test"}),
    "softmax_no_max_shift": frozenset({"attention_stability", "softmax_stability"}),
    "softmax_ignores_axis": frozenset({"softmax_sums"}),
    "softmax_global_sum": frozenset(
        {
            "attention_batch",
            "attention_mask",
            "attention_shapes",
            "attention_stability",
            "attention_values",
            "softmax_sums",
        }
    ),
    "softmax_no_keepdims": frozenset(
        {
            "attention_batch",
            "attention_inputs",
            "attention_mask",
            "attention_shapes",
            "attention_stability",
            "attention_values",
            "softmax_inputs",
            "softmax_sums",
        }
    ),
    "softmax_in_place": frozenset({"softmax_inputs"}),
    "causal_mask_strict": frozenset({"causal_mask_pattern"}),
    "causal_mask_upper": frozenset({"causal_mask_pattern"}),
    "causal_mask_floats": frozenset({"causal_mask_dtype"}),
    "attention_no_scale": frozenset({"attention_values"}),
    "attention_scale_by_d_k": frozenset({"attention_mask", "attention_values"}),
    "attention_softmax_over_queries": frozenset(
        {"attention_mask", "attention_shapes", "attention_stability", "attention_values"}
    ),
    "attention_mask_inverted": frozenset({"attention_mask"}),
    "attention_mask_after_softmax": frozenset({"attention_mask"}),
    "attention_mask_renormalised_after_softmax": frozenset({"attention_mask"}),
    "attention_mask_multiplies_scores": frozenset({"attention_mask"}),
    "attention_ignores_mask": frozenset({"attention_mask"}),
    "attention_2d_only": frozenset({"attention_batch"}),
    "attention_scales_q_in_place": frozenset({"attention_inputs"}),
    "attention_returns_output_only": frozenset(
        {"attention_batch", "attention_mask", "attention_shapes", "attention_stability", "attention_values"}
    ),
}

# Mistakes in a value answer (an Apply number): its visible test checks the answer's form, since a
# visible check of the value would give the answer away; grading checks the value.
VALUE_MISTAKES: frozenset[str] = frozenset({"hand_weight_scaled_by_d_k", "hand_weight_other_key"})

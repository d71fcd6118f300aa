"""Realistic submissions for lesson 2's Apply exercises, for the grading tests.

``CORRECT`` maps a name to answers (grade_id -> cell source) that must earn full marks; ``WRONG``
maps a name to answers holding one typical mistake, and ``CAUGHT_BY`` names exactly the test cells
that must score zero for it (every other test cell must give full marks, so the mistake costs
only the points of the property it breaks).
"""

LESSON = "02_dot_products"

CORRECT: dict[str, dict[str, str]] = {
    "numpy_dot": {
        "dot_answer": "dot_answer = np.dot([2, -1, 3], [1, 4, -2])\n",
        "cosine_similarity": (
            "def cosine_similarity(a, b):\n    return np.dot(a, b) / np.sqrt(np.dot(a, a) * np.dot(b, b))\n"
        ),
        "dot_variance": (
            "def empirical_dot_variance(d_k, n_samples, rng):\n"
            "    q = rng.normal(0.0, 1.0, size=(n_samples, d_k))\n"
            "    k = rng.normal(0.0, 1.0, size=(n_samples, d_k))\n"
            "    return np.var(np.sum(q * k, axis=1), ddof=1)\n"
        ),
    },
    "plain_python": {
        "dot_answer": ("dot_answer = sum(x * y for x, y in zip([2, -1, 3], [1, 4, -2]))\n"),
        "cosine_similarity": (
            "import math\n\n"
            "def cosine_similarity(a, b):\n"
            "    dot = sum(x * y for x, y in zip(a, b))\n"
            "    norm_a = math.sqrt(sum(x * x for x in a))\n"
            "    norm_b = math.sqrt(sum(y * y for y in b))\n"
            "    return dot / (norm_a * norm_b)\n"
        ),
        "dot_variance": (
            "def empirical_dot_variance(d_k, n_samples, rng):\n"
            "    dots = []\n"
            "    for _ in range(n_samples):\n"
            "        q = rng.standard_normal(d_k)\n"
            "        k = rng.standard_normal(d_k)\n"
            "        dots.append(q @ k)\n"
            "    mean = sum(dots) / n_samples\n"
            "    return sum((x - mean) ** 2 for x in dots) / n_samples\n"
        ),
    },
    "matrix_trace": {
        "dot_answer": "dot_answer = (np.array([[2, -1, 3]]) @ np.array([[1], [4], [-2]])).item()\n",
        "cosine_similarity": (
            "def cosine_similarity(a, b):\n"
            "    a = a / np.linalg.norm(a)\n"
            "    b = b / np.linalg.norm(b)\n"
            "    return float(np.clip(a @ b, -1.0, 1.0))\n"
        ),
        "dot_variance": (
            "def empirical_dot_variance(d_k, n_samples, rng):\n"
            "    pairs = rng.standard_normal((2, n_samples, d_k))\n"
            "    dots = np.einsum('nd,nd->n', pairs[0], pairs[1])\n"
            "    return float(np.mean(dots**2) - np.mean(dots) ** 2)\n"
        ),
    },
}

WRONG: dict[str, dict[str, str]] = {
    # Multiplies entry by entry but never adds the products up.
    "dot_without_sum": {
        "dot_answer": "dot_answer = np.array([2, -1, 3]) * np.array([1, 4, -2])\n",
    },
    # Drops a minus sign: -1·4 taken as +4.
    "dot_sign_slip": {"dot_answer": "dot_answer = 2 * 1 + 1 * 4 + 3 * (-2)\n"},
    # Rounds the cosine for display and returns the rounded value.
    "cosine_rounded": {
        "cosine_similarity": (
            "def cosine_similarity(a, b):\n"
            "    return round(float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b))), 2)\n"
        ),
    },
    # Divides by the length of a only.
    "cosine_one_length": {
        "cosine_similarity": ("def cosine_similarity(a, b):\n    return a @ b / np.linalg.norm(a)\n"),
    },
    # Divides by squared lengths (a·a and b·b instead of their square roots).
    "cosine_squared_lengths": {
        "cosine_similarity": ("def cosine_similarity(a, b):\n    return a @ b / ((a @ a) * (b @ b))\n"),
    },
    # Returns the angle instead of its cosine.
    "cosine_returns_angle": {
        "cosine_similarity": (
            "def cosine_similarity(a, b):\n"
            "    return np.arccos(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))\n"
        ),
    },
    # Standard deviation instead of variance.
    "variance_is_std": {
        "dot_variance": (
            "def empirical_dot_variance(d_k, n_samples, rng):\n"
            "    q = rng.standard_normal((n_samples, d_k))\n"
            "    k = rng.standard_normal((n_samples, d_k))\n"
            "    return float(np.std(np.sum(q * k, axis=1)))\n"
        ),
    },
    # Already applies lesson 3's scaling, so the variance is 1 whatever d_k is.
    "variance_scaled": {
        "dot_variance": (
            "def empirical_dot_variance(d_k, n_samples, rng):\n"
            "    q = rng.standard_normal((n_samples, d_k))\n"
            "    k = rng.standard_normal((n_samples, d_k))\n"
            "    return float(np.var(np.sum(q * k, axis=1) / np.sqrt(d_k)))\n"
        ),
    },
    # Uniform [0, 1) entries: neither mean 0 nor variance 1.
    "variance_uniform_entries": {
        "dot_variance": (
            "def empirical_dot_variance(d_k, n_samples, rng):\n"
            "    q = rng.random((n_samples, d_k))\n"
            "    k = rng.random((n_samples, d_k))\n"
            "    return float(np.var(np.sum(q * k, axis=1)))\n"
        ),
    },
    # Right statistics, but ignores the rng argument: results cannot be reproduced.
    "variance_global_random": {
        "dot_variance": (
            "def empirical_dot_variance(d_k, n_samples, rng):\n"
            "    q = np.random.randn(n_samples, d_k)\n"
            "    k = np.random.randn(n_samples, d_k)\n"
            "    return float(np.var(np.sum(q * k, axis=1)))\n"
        ),
    },
}

CAUGHT_BY: dict[str, frozenset[str]] = {
    "dot_without_sum": frozenset({"dot_answer_test"}),
    "dot_sign_slip": frozenset({"dot_answer_test"}),
    "cosine_rounded": frozenset({"cosine_values"}),
    "cosine_one_length": frozenset({"cosine_values", "cosine_scale_free"}),
    "cosine_squared_lengths": frozenset({"cosine_values", "cosine_scale_free"}),
    "cosine_returns_angle": frozenset({"cosine_values", "cosine_scale_free"}),
    "variance_is_std": frozenset({"dot_variance_value"}),
    "variance_scaled": frozenset({"dot_variance_value"}),
    "variance_uniform_entries": frozenset({"dot_variance_value"}),
    "variance_global_random": frozenset({"dot_variance_rng"}),
}

# Words the feedback of a wrong submission must contain: the visible test's hint for its mistake.
FEEDBACK: dict[str, str] = {
    "dot_without_sum": "did not add the products up",
    "cosine_rounded": "not a rounded value",
    "cosine_one_length": "divide the dot product by both lengths",
    "variance_is_std": "not the standard deviation",
    "variance_global_random": "not from np.random",
}

# The graded functions' contracts (the lesson's text), clause by clause, each with the test cell
# that fails when that clause alone is broken (V: its visible part, H: hidden).
#
# cosine_similarity(a, b)
#   dot product over both lengths: 0, -1, 0.7071 ........ cosine_values V (cosine_one_length)
#   Euclidean lengths, not squared ...................... cosine_values V, cosine_scale_free V
#   the exact cosine, not the angle or a rounded value .. cosine_values V (returns_angle, rounded)
#   unchanged by positive scaling of either vector ...... cosine_scale_free V + H
#   any length, random vectors (vs PyTorch) ............. cosine_values H
#   in [-1, 1], cosine 1 with itself .................... cosine_scale_free H
# empirical_dot_variance(d_k, n_samples, rng)
#   one number .......................................... dot_variance_value V
#   the variance (not std, not mean) of the products .... dot_variance_value V (variance_is_std)
#   standard-normal entries, no scaling ................. dot_variance_value V (variance_uniform_entries,
#                                                         variance_scaled)
#   close to d_k for any d_k (not hard-coded) ........... dot_variance_value H, dot_variance_rng H
#   draws from the rng it is given ...................... dot_variance_rng V (variance_global_random)

# The mistakes with the test cells whose VISIBLE part fails for them: the student sees each before
# submitting (tests/test_visible_tests.py).
CAUGHT_BY_VISIBLE: dict[str, frozenset[str]] = {
    "dot_without_sum": frozenset({"dot_answer_test"}),
    "cosine_rounded": frozenset({"cosine_values"}),
    "cosine_one_length": frozenset({"cosine_scale_free", "cosine_values"}),
    "cosine_squared_lengths": frozenset({"cosine_scale_free", "cosine_values"}),
    "cosine_returns_angle": frozenset({"cosine_values"}),
    "variance_is_std": frozenset({"dot_variance_value"}),
    "variance_scaled": frozenset({"dot_variance_value"}),
    "variance_uniform_entries": frozenset({"dot_variance_value"}),
    "variance_global_random": frozenset({"dot_variance_rng"}),
}

# Mistakes in a value answer (an Apply number): its visible test checks the answer's form, since a
# visible check of the value would give the answer away; grading checks the value.
VALUE_MISTAKES: frozenset[str] = frozenset({"dot_sign_slip"})

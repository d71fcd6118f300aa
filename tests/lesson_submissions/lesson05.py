"""Realistic submissions for lesson 5 (positional encoding), for the grading tests.

``CORRECT`` maps a name to answers (grade_id -> cell source) that must earn full marks; ``WRONG``
maps a name to answers holding one typical mistake, and ``CAUGHT_BY`` names exactly the test cells
that must score zero for it (every other test cell must give full marks). Answers not given are the
reference solutions.
"""

LESSON = "05_positional_encoding"

_CHECK = (
    "    if seq_len < 1 or d_model < 1:\n        raise ValueError('seq_len and d_model must be positive')\n"
)

CORRECT: dict[str, dict[str, str]] = {
    # Plain Python loops with math.sin / math.cos.
    "loops": {
        "positional_encoding": (
            "import math\n\n"
            "def positional_encoding(seq_len, d_model):\n"
            + _CHECK
            + "    pe = np.zeros((seq_len, d_model))\n"
            "    for pos in range(seq_len):\n"
            "        for j in range(d_model):\n"
            "            angle = pos / 10000 ** ((j - j % 2) / d_model)\n"
            "            pe[pos, j] = math.sin(angle) if j % 2 == 0 else math.cos(angle)\n"
            "    return pe\n"
        ),
        "shift_matrix": (
            "import math\n\n"
            "def shift_matrix(k, d_model):\n"
            "    if d_model % 2 == 1:\n"
            "        raise ValueError('d_model must be even')\n"
            "    M = np.zeros((d_model, d_model))\n"
            "    for i in range(0, d_model, 2):\n"
            "        b = k * math.exp(-math.log(10000.0) * i / d_model)\n"
            "        M[i, i] = M[i + 1, i + 1] = math.cos(b)\n"
            "        M[i, i + 1] = -math.sin(b)\n"
            "        M[i + 1, i] = math.sin(b)\n"
            "    return M\n"
        ),
    },
    # The exp/log form of the frequencies, slicing even and odd columns (odd d_model handled).
    "exp_log_slices": {
        "positional_encoding": (
            "def positional_encoding(seq_len, d_model):\n"
            + _CHECK
            + "    position = np.arange(seq_len)[:, np.newaxis]\n"
            "    div_term = np.exp(np.arange(0, d_model, 2) * (-np.log(10000.0) / d_model))\n"
            "    pe = np.zeros((seq_len, d_model))\n"
            "    pe[:, 0::2] = np.sin(position * div_term)\n"
            "    pe[:, 1::2] = np.cos(position * div_term[: d_model // 2])\n"
            "    return pe\n"
        ),
        "shift_matrix": (
            "def shift_matrix(k, d_model):\n"
            "    if d_model % 2:\n"
            "        raise ValueError(f'odd d_model {d_model}')\n"
            "    blocks = []\n"
            "    for i in range(d_model // 2):\n"
            "        b = k * 10000.0 ** (-2 * i / d_model)\n"
            "        blocks.append(np.array([[np.cos(b), -np.sin(b)], [np.sin(b), np.cos(b)]]))\n"
            "    M = np.zeros((d_model, d_model))\n"
            "    for i, block in enumerate(blocks):\n"
            "        M[2 * i:2 * i + 2, 2 * i:2 * i + 2] = block\n"
            "    return M\n"
        ),
    },
    # float32 throughout, built by interleaving a (seq_len, pairs, 2) stack.
    "float32_stack": {
        "positional_encoding": (
            "def positional_encoding(seq_len, d_model):\n"
            "    if not (int(seq_len) >= 1 and int(d_model) >= 1):\n"
            "        raise ValueError(f'bad sizes {seq_len}, {d_model}')\n"
            "    pairs = (d_model + 1) // 2\n"
            "    freq = (1.0 / 10000 ** (2 * np.arange(pairs) / d_model)).astype(np.float32)\n"
            "    angle = np.arange(seq_len, dtype=np.float32)[:, None] * freq\n"
            "    both = np.stack([np.sin(angle), np.cos(angle)], axis=-1).reshape(seq_len, 2 * pairs)\n"
            "    return both[:, :d_model]\n"
        ),
    },
}

WRONG: dict[str, dict[str, str]] = {
    # Cosines in the even columns and sines in the odd ones.
    "sin_cos_swapped": {
        "positional_encoding": (
            "def positional_encoding(seq_len, d_model):\n" + _CHECK + "    pair = np.arange(d_model) // 2\n"
            "    angles = np.arange(seq_len)[:, None] / 10000 ** (2 * pair / d_model)\n"
            "    return np.where(np.arange(d_model) % 2 == 0, np.cos(angles), np.sin(angles))\n"
        ),
    },
    # Exponent i / d_model with the pair index i, instead of 2i / d_model.
    "exponent_i_not_2i": {
        "positional_encoding": (
            "def positional_encoding(seq_len, d_model):\n"
            + _CHECK
            + "    angles = np.arange(seq_len)[:, None] / 10000 ** ((np.arange(d_model) // 2) / d_model)\n"
            "    return np.where(np.arange(d_model) % 2 == 0, np.sin(angles), np.cos(angles))\n"
        ),
    },
    # Exponent from the column index j itself, so each cosine gets a different angle from its sine.
    "exponent_column_index": {
        "positional_encoding": (
            "def positional_encoding(seq_len, d_model):\n"
            + _CHECK
            + "    angles = np.arange(seq_len)[:, None] / 10000 ** (np.arange(d_model) / d_model)\n"
            "    return np.where(np.arange(d_model) % 2 == 0, np.sin(angles), np.cos(angles))\n"
        ),
    },
    # Positions 1..seq_len instead of 0..seq_len-1.
    "positions_from_one": {
        "positional_encoding": (
            "def positional_encoding(seq_len, d_model):\n" + _CHECK + "    pair = np.arange(d_model) // 2\n"
            "    angles = np.arange(1, seq_len + 1)[:, None] / 10000 ** (2 * pair / d_model)\n"
            "    return np.where(np.arange(d_model) % 2 == 0, np.sin(angles), np.cos(angles))\n"
        ),
    },
    # The common tutorial version: the odd columns get one cosine too many when d_model is odd.
    "odd_d_model_crash": {
        "positional_encoding": (
            "def positional_encoding(seq_len, d_model):\n"
            + _CHECK
            + "    position = np.arange(seq_len)[:, None]\n"
            "    div_term = np.exp(np.arange(0, d_model, 2) * (-np.log(10000.0) / d_model))\n"
            "    pe = np.zeros((seq_len, d_model))\n"
            "    pe[:, 0::2] = np.sin(position * div_term)\n"
            "    pe[:, 1::2] = np.cos(position * div_term)\n"
            "    return pe\n"
        ),
    },
    # All sines first, then all cosines: [sin..., cos...] instead of interleaved pairs.
    "concatenated_halves": {
        "positional_encoding": (
            "def positional_encoding(seq_len, d_model):\n" + _CHECK + "    half = (d_model + 1) // 2\n"
            "    angles = np.arange(seq_len)[:, None] / 10000 ** (2 * np.arange(half) / d_model)\n"
            "    return np.concatenate([np.sin(angles), np.cos(angles)], axis=1)[:, :d_model]\n"
        ),
    },
    # No validation: seq_len = 0 silently returns an empty table.
    "no_size_check": {
        "positional_encoding": (
            "def positional_encoding(seq_len, d_model):\n"
            "    angles = np.arange(seq_len)[:, None] / 10000 ** (2 * (np.arange(d_model) // 2) / d_model)\n"
            "    return np.where(np.arange(d_model) % 2 == 0, np.sin(angles), np.cos(angles))\n"
        ),
    },
    # Blocks transposed: [[cos, sin], [-sin, cos]] rotates the wrong way for a row vector.
    "shift_blocks_transposed": {
        "shift_matrix": (
            "def shift_matrix(k, d_model):\n"
            "    if d_model % 2:\n"
            "        raise ValueError('d_model must be even')\n"
            "    M = np.zeros((d_model, d_model))\n"
            "    for i in range(d_model // 2):\n"
            "        b = k / 10000 ** (2 * i / d_model)\n"
            "        c, s = np.cos(b), np.sin(b)\n"
            "        M[2 * i:2 * i + 2, 2 * i:2 * i + 2] = [[c, s], [-s, c]]\n"
            "    return M\n"
        ),
    },
    # Uses the column index 2i as the pair index, so the frequencies are wrong after pair 0.
    "shift_wrong_frequency": {
        "shift_matrix": (
            "def shift_matrix(k, d_model):\n"
            "    if d_model % 2:\n"
            "        raise ValueError('d_model must be even')\n"
            "    M = np.zeros((d_model, d_model))\n"
            "    for i in range(0, d_model, 2):\n"
            "        b = k / 10000 ** (2 * i / d_model)\n"
            "        M[i:i + 2, i:i + 2] = [[np.cos(b), -np.sin(b)], [np.sin(b), np.cos(b)]]\n"
            "    return M\n"
        ),
    },
    # Stubs that return something of the right shape and do no work: they must earn nothing.
    "positional_encoding_all_zeros": {
        "positional_encoding": (
            "def positional_encoding(seq_len, d_model):\n"
            + _CHECK
            + "    return np.zeros((seq_len, d_model))\n"
        ),
    },
    "shift_matrix_all_zeros": {
        "shift_matrix": (
            "def shift_matrix(k, d_model):\n"
            "    if d_model % 2:\n"
            "        raise ValueError('d_model must be even')\n"
            "    return np.zeros((d_model, d_model))\n"
        ),
    },
    # The identity is block diagonal, a rotation and right for k = 0: only the angle k tells it apart.
    "shift_matrix_identity": {
        "shift_matrix": (
            "def shift_matrix(k, d_model):\n"
            "    if d_model % 2:\n"
            "        raise ValueError('d_model must be even')\n"
            "    return np.eye(d_model)\n"
        ),
    },
}

_PE_VALUES = {"pe_worked_values", "pe_formula", "pe_odd_d_model"}
_SHIFT = {"shift_matrix_structure", "shift_matrix_values"}

CAUGHT_BY: dict[str, frozenset[str]] = {
    "sin_cos_swapped": frozenset(_PE_VALUES),
    "exponent_i_not_2i": frozenset(_PE_VALUES),
    "exponent_column_index": frozenset(_PE_VALUES),
    "positions_from_one": frozenset(_PE_VALUES),
    "odd_d_model_crash": frozenset({"pe_odd_d_model"}),
    "concatenated_halves": frozenset(_PE_VALUES),
    "no_size_check": frozenset({"pe_errors"}),
    "shift_blocks_transposed": frozenset({"shift_matrix_values"}),
    "shift_wrong_frequency": frozenset({"shift_matrix_values"}),
    "positional_encoding_all_zeros": frozenset(_PE_VALUES),
    "shift_matrix_all_zeros": frozenset(_SHIFT),
    "shift_matrix_identity": frozenset(_SHIFT),
}

# The mistakes the lesson's text warns about (and the stubs), with the test cells whose VISIBLE part
# fails for them: the student sees each before submitting (tests/test_visible_tests.py).
CAUGHT_BY_VISIBLE: dict[str, frozenset[str]] = {
    "sin_cos_swapped": frozenset({"pe_worked_values", "pe_formula"}),
    "exponent_i_not_2i": frozenset({"pe_worked_values"}),
    "exponent_column_index": frozenset({"pe_worked_values", "pe_formula"}),
    "positions_from_one": frozenset({"pe_worked_values", "pe_formula"}),
    "odd_d_model_crash": frozenset({"pe_odd_d_model"}),
    "concatenated_halves": frozenset({"pe_worked_values", "pe_formula"}),
    "no_size_check": frozenset({"pe_errors"}),
    "shift_blocks_transposed": frozenset({"shift_matrix_values"}),
    "shift_wrong_frequency": frozenset({"shift_matrix_values"}),
    "positional_encoding_all_zeros": frozenset({"pe_worked_values", "pe_formula"}),
    "shift_matrix_all_zeros": frozenset(_SHIFT),
    "shift_matrix_identity": frozenset(_SHIFT),
}

# Mistakes in a value answer (an Apply number): its visible test checks the answer's form, since a
# visible check of the value would give the answer away; grading checks the value.
VALUE_MISTAKES: frozenset[str] = frozenset()

# The graded functions' contracts (design.md section 4 and the lesson's text), clause by clause,
# each with the test cell that fails when that clause alone is broken (V: its visible part, H: hidden).
#
# positional_encoding(seq_len, d_model)
#   shape (seq_len, d_model) ........................... pe_worked_values V, pe_formula V+H
#   PE[pos, 2i] = sin(pos / 10000^(2i/d)) ............... pe_worked_values V, pe_formula V+H
#   PE[pos, 2i+1] = cos(same angle), pair shares angle . pe_worked_values V (exponent_i_not_2i)
#   positions start at 0 ............................... pe_worked_values V (positions_from_one)
#   odd d_model allowed, last column a sine ............ pe_odd_d_model V (crash) + H (values)
#   seq_len < 1 or d_model < 1 -> ValueError ........... pe_errors V (0, 8) + H (other sizes)
#   not a constant / zero table ........................ pe_worked_values V (positional_encoding_all_zeros)
# shift_matrix(k, d_model)
#   M_0 is the identity ................................ shift_matrix_structure V
#   block diagonal, one 2 x 2 block per pair ........... shift_matrix_structure V
#   each block a rotation (M M^T = I) .................. shift_matrix_structure V
#   the first block turns by k (frequency 1) ........... shift_matrix_structure V (shift_matrix_identity)
#   block orientation [[cos, -sin], [sin, cos]] ........ shift_matrix_values V (shift_blocks_transposed)
#   pair i's frequency 10000^(-2i/d), any k (negative) . shift_matrix_values V+H (shift_wrong_frequency)
#   odd d_model -> ValueError .......................... shift_matrix_structure V

# Text the feedback must contain for these mistakes: the hint the student needs.
FEEDBACK: dict[str, str] = {
    "sin_cos_swapped": "even columns are sines",
    "positions_from_one": "Positions start at 0",
    "exponent_i_not_2i": "share the angle pos / 10000^(2i / d_model)",
    "odd_d_model_crash": "With an odd d_model there are",
    "no_size_check": "must raise ValueError",
    "shift_blocks_transposed": "the blocks are transposed",
}

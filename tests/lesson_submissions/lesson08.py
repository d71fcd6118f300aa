"""Realistic submissions for lesson 8's Apply exercises: teacher forcing and the parameter count.

``CORRECT`` maps a name to answers (grade_id -> cell source) that must earn full marks; ``WRONG``
maps a name to answers holding one typical mistake, ``CAUGHT_BY`` names exactly the test cells
that must score zero for it (every other test cell must give full marks), and ``FEEDBACK`` a
phrase its feedback must contain. Answers not given are the reference solution's.
"""

LESSON = "08_encoder_decoder"

CORRECT: dict[str, dict[str, str]] = {
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

CAUGHT_BY: dict[str, frozenset[str]] = {
    "labels_not_shifted": frozenset({"teacher_forcing_test"}),
    "count_without_biases": frozenset({"parameter_count_layers", "parameter_count_total"}),
    "count_output_bias": frozenset({"parameter_count_total"}),
}

FEEDBACK: dict[str, str] = {
    "labels_not_shifted": "the labels are the target followed by EOS",
    "count_without_biases": "four projections with their biases",
    "count_output_bias": "output projection, no bias",
}

# The mistakes with the test cells whose VISIBLE part fails for them: the student sees each before
# submitting (tests/test_visible_tests.py).
CAUGHT_BY_VISIBLE: dict[str, frozenset[str]] = {}

# Mistakes in a value answer (an Apply number): its visible test checks the answer's form, since a
# visible check of the value would give the answer away; grading checks the value.
VALUE_MISTAKES: frozenset[str] = frozenset(
    {"count_output_bias", "count_without_biases", "labels_not_shifted"}
)

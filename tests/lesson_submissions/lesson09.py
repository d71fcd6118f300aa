"""Realistic submissions for lesson 9's Apply exercises: sentence BLEU from its parts.

``CORRECT`` maps a name to answers (grade_id -> cell source) that must earn full marks; ``WRONG``
maps a name to answers holding one typical mistake, ``CAUGHT_BY`` names exactly the test cells
that must score zero for it (every other test cell must give full marks), and ``FEEDBACK`` a
phrase its feedback must contain. Answers not given are the reference solution's.
"""

LESSON = "09_translator"

PRECISION_WITH_LOOPS = """
def modified_precision(hypothesis, reference, n):
    hyp_grams = [tuple(hypothesis[i:i + n]) for i in range(len(hypothesis) - n + 1)]
    ref_grams = [tuple(reference[i:i + n]) for i in range(len(reference) - n + 1)]
    matches = 0
    for gram in set(hyp_grams):
        matches += min(hyp_grams.count(gram), ref_grams.count(gram))
    return matches, len(hyp_grams)
"""

PRECISION_WITH_A_DICT = """
def modified_precision(hypothesis, reference, n):
    def counts(tokens):
        table = {}
        for start in range(max(0, len(tokens) - n + 1)):
            gram = " ".join(tokens[start:start + n])
            table[gram] = table.get(gram, 0) + 1
        return table

    hyp, ref = counts(hypothesis), counts(reference)
    return [sum(min(c, ref.get(g, 0)) for g, c in hyp.items()), sum(hyp.values())]
"""

BREVITY_WITH_NUMPY = """
import numpy as np


def brevity_penalty(hypothesis_length, reference_length):
    if hypothesis_length == 0:
        return 0.0
    return float(min(1.0, np.exp(1 - reference_length / hypothesis_length)))
"""

BLEU_WITH_NUMPY = """
import numpy as np


def sentence_bleu(hypothesis, reference):
    counts = np.array([modified_precision(hypothesis, reference, n) for n in range(1, 5)], dtype=float)
    if np.any(counts[:, 0] == 0):
        return 0.0
    precisions = counts[:, 0] / counts[:, 1]
    return 100 * brevity_penalty(len(hypothesis), len(reference)) * np.exp(np.mean(np.log(precisions)))
"""

BLEU_AS_A_PRODUCT = """
def sentence_bleu(hypothesis, reference):
    product = 1.0
    for n in (1, 2, 3, 4):
        matches, total = modified_precision(hypothesis, reference, n)
        if total == 0:
            return 0.0
        product *= matches / total
    return 100.0 * brevity_penalty(len(hypothesis), len(reference)) * product ** 0.25
"""

CORRECT: dict[str, dict[str, str]] = {
    "loops_and_list_count": {"apply_precision": PRECISION_WITH_LOOPS, "apply_bleu": BLEU_AS_A_PRODUCT},
    "dicts_and_numpy": {
        "apply_precision": PRECISION_WITH_A_DICT,
        "apply_brevity": BREVITY_WITH_NUMPY,
        "apply_bleu": BLEU_WITH_NUMPY,
    },
}

# The written contract of each graded function, clause by clause: the test cell that fails when
# that clause alone is broken (the wrong submission below that shows it, or the check that does).
# modified_precision
#   total: the number of n-grams in the hypothesis ... apply_precision_test (its visible (4, 5) check)
#   matches clipped to the reference's counts ........ apply_precision_test (precision_not_clipped)
#   a hypothesis shorter than n gives (0, 0) ......... apply_precision_test (hidden short cases)
# brevity_penalty
#   1 when the hypothesis is longer .................. apply_brevity_test (brevity_inverted)
#   exp(1 - r/c) otherwise ........................... apply_brevity_test (its visible 8-of-10 check)
#   0 for an empty hypothesis ........................ apply_brevity_test (hidden (0, 5) case)
# sentence_bleu
#   geometric mean of p_1..p_4, uniform weights ...... apply_bleu_test (bleu_arithmetic_mean)
#   0 when a p_n is zero or has no n-grams ........... apply_bleu_test (its visible two-token check)
#   scaled to 0-100 .................................. apply_bleu_test (bleu_not_scaled)
#   times the brevity penalty ........................ apply_bleu_test (brevity_inverted, worked example)
WRONG: dict[str, dict[str, str]] = {
    # Counts every hypothesis n-gram found in the reference, however often: no clipping.
    "precision_not_clipped": {
        "apply_precision": """
def modified_precision(hypothesis, reference, n):
    hyp = [tuple(hypothesis[i:i + n]) for i in range(len(hypothesis) - n + 1)]
    ref = {tuple(reference[i:i + n]) for i in range(len(reference) - n + 1)}
    return sum(gram in ref for gram in hyp), len(hyp)
""",
    },
    # Penalizes long hypotheses too, with the ratio upside down.
    "brevity_inverted": {
        "apply_brevity": """
import math


def brevity_penalty(hypothesis_length, reference_length):
    if hypothesis_length == 0:
        return 0.0
    return math.exp(1 - hypothesis_length / reference_length)
""",
    },
    # The arithmetic mean of the precisions instead of the geometric mean.
    "bleu_arithmetic_mean": {
        "apply_bleu": """
def sentence_bleu(hypothesis, reference):
    precisions = []
    for n in range(1, 5):
        matches, total = modified_precision(hypothesis, reference, n)
        if matches == 0:
            return 0.0
        precisions.append(matches / total)
    return 100.0 * brevity_penalty(len(hypothesis), len(reference)) * sum(precisions) / 4
""",
    },
    # Leaves the score between 0 and 1.
    "bleu_not_scaled": {
        "apply_bleu": """
def sentence_bleu(hypothesis, reference):
    log_sum = 0.0
    for n in range(1, 5):
        matches, total = modified_precision(hypothesis, reference, n)
        if matches == 0:
            return 0.0
        log_sum += math.log(matches / total)
    return brevity_penalty(len(hypothesis), len(reference)) * math.exp(log_sum / 4)
""",
    },
}

CAUGHT_BY: dict[str, frozenset[str]] = {
    "precision_not_clipped": frozenset({"apply_precision_test"}),
    # sentence_bleu uses the student's own brevity_penalty, so the slip costs both cells
    "brevity_inverted": frozenset({"apply_brevity_test", "apply_bleu_test"}),
    "bleu_arithmetic_mean": frozenset({"apply_bleu_test"}),
    "bleu_not_scaled": frozenset({"apply_bleu_test"}),
}

FEEDBACK: dict[str, str] = {
    "precision_not_clipped": "clip each n-gram to its count in the reference",
    "brevity_inverted": "longer than the reference: no penalty",
    "bleu_arithmetic_mean": "precisions 5/5, 3/4, 2/3, 1/2",
    "bleu_not_scaled": "a perfect match scores 100",
}

# The mistakes with the test cells whose VISIBLE part fails for them: the student sees each before
# submitting (tests/test_visible_tests.py).
CAUGHT_BY_VISIBLE: dict[str, frozenset[str]] = {
    "precision_not_clipped": frozenset({"apply_precision_test"}),
    "brevity_inverted": frozenset({"apply_bleu_test", "apply_brevity_test"}),
    "bleu_arithmetic_mean": frozenset({"apply_bleu_test"}),
    "bleu_not_scaled": frozenset({"apply_bleu_test"}),
}

# Mistakes in a value answer (an Apply number): its visible test checks the answer's form, since a
# visible check of the value would give the answer away; grading checks the value.
VALUE_MISTAKES: frozenset[str] = frozenset()

"""Realistic submissions for lesson 9's graded exercises: the training pieces (learning-rate
schedule, label-smoothed loss, one beam-search step) and sentence BLEU from its parts.

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

SCHEDULE_WITH_NUMPY = """
import numpy as np


def learning_rate(step, d_model=512, warmup=4000):
    if step < 1:
        raise ValueError("the paper counts steps from 1")
    rising = step / warmup**1.5
    falling = 1 / np.sqrt(step)
    return float(np.minimum(rising, falling) / np.sqrt(d_model))
"""

SCHEDULE_WITH_BRANCHES = """
import math


def learning_rate(step, d_model=512, warmup=4000):
    if step <= 0:
        raise ValueError(f"step must be at least 1, got {step}")
    if step <= warmup:
        return step * warmup ** -1.5 / math.sqrt(d_model)
    return 1 / math.sqrt(d_model * step)
"""

LOSS_WITH_LOGADDEXP = """
import numpy as np


def label_smoothed_cross_entropy(logits, target, epsilon=0.1, pad_id=0):
    vocab = logits.shape[-1]
    flat_logits = logits.reshape(-1, vocab)
    flat_target = target.reshape(-1)
    log_probs = flat_logits - np.logaddexp.reduce(flat_logits, axis=-1)[:, None]
    rows = np.arange(flat_target.size)
    loss = -(1 - epsilon) * log_probs[rows, flat_target] - epsilon / vocab * log_probs.sum(axis=-1)
    real = flat_target != pad_id
    return float(np.sum(loss * real) / np.count_nonzero(real))
"""

LOSS_WITH_A_LOOP = """
import math


def label_smoothed_cross_entropy(logits, target, epsilon=0.1, pad_id=0):
    vocab = logits.shape[-1]
    total, count = 0.0, 0
    for row, label in zip(logits.reshape(-1, vocab), target.reshape(-1)):
        if label == pad_id:
            continue
        top = max(row)
        log_norm = top + math.log(sum(math.exp(z - top) for z in row))
        smoothed = [(1 - epsilon) * (v == label) + epsilon / vocab for v in range(vocab)]
        total -= sum(q * (z - log_norm) for q, z in zip(smoothed, row))
        count += 1
    return total / count
"""

BEAM_STEP_WITH_A_SORTED_LIST = """
def beam_step(scores, log_probs, eos_id, beam_size, length, alpha=0.6):
    n_beams, vocab = log_probs.shape
    candidates = []
    for b in range(n_beams):
        for v in range(vocab):
            candidates.append((-(scores[b] + log_probs[b, v]), b * vocab + v, b, v))
    candidates.sort()
    penalty = ((5 + length) / 6) ** alpha
    finished = []
    for negative, _, b, v in candidates[:beam_size]:
        if v == eos_id:
            finished.append((b, -negative / penalty))
    live = [c for c in candidates if c[3] != eos_id][:beam_size]
    return [c[2] for c in live], [c[3] for c in live], [-c[0] for c in live], finished
"""

BEAM_STEP_WITH_LEXSORT = """
import numpy as np


def beam_step(scores, log_probs, eos_id, beam_size, length, alpha=0.6):
    total = scores[:, None] + log_probs
    flat = total.ravel()
    order = np.lexsort((np.arange(flat.size), -flat))
    beams, tokens = np.unravel_index(order, total.shape)
    is_eos = tokens == eos_id
    top_eos = np.flatnonzero(is_eos[:beam_size])
    lp = np.power((5.0 + length) / 6.0, alpha)
    finished = list(zip(beams[top_eos], flat[order[top_eos]] / lp))
    keep = np.flatnonzero(~is_eos)[:beam_size]
    return beams[keep], tokens[keep], flat[order[keep]], finished
"""

CORRECT: dict[str, dict[str, str]] = {
    "beam_step_with_a_sorted_list": {"beam_step": BEAM_STEP_WITH_A_SORTED_LIST},
    "beam_step_with_lexsort": {"beam_step": BEAM_STEP_WITH_LEXSORT},
    "loss_with_logaddexp": {"label_smoothed_loss": LOSS_WITH_LOGADDEXP},
    "loss_with_a_loop": {"label_smoothed_loss": LOSS_WITH_A_LOOP},
    "schedule_with_numpy": {"learning_rate": SCHEDULE_WITH_NUMPY},
    "schedule_with_branches": {"learning_rate": SCHEDULE_WITH_BRANCHES},
    "loops_and_list_count": {"apply_precision": PRECISION_WITH_LOOPS, "apply_bleu": BLEU_AS_A_PRODUCT},
    "dicts_and_numpy": {
        "apply_precision": PRECISION_WITH_A_DICT,
        "apply_brevity": BREVITY_WITH_NUMPY,
        "apply_bleu": BLEU_WITH_NUMPY,
    },
}

# The written contract of each graded function, clause by clause: the test cell that fails when
# that clause alone is broken (the wrong submission below that shows it, or the check that does).
# learning_rate
#   rising branch step * warmup^-1.5 ................. learning_rate_warmup (schedule_warmup_sqrt)
#   times d_model^-0.5 ............................... both cells (schedule_without_d_model)
#   the minimum of the two branches .................. both cells (schedule_max)
#   steps counted from 1, step 0 raises ValueError ... both cells (schedule_from_zero)
# label_smoothed_cross_entropy
#   (1 - eps) NLL + eps mean_v(-log p_v) ............. loss_values (loss_eps_over_v_minus_1)
#   pad positions out of the sum ..................... loss_padding (loss_pad_counted)
#   and out of the count ............................. loss_padding (loss_mean_over_all)
#   stable log-softmax ............................... loss_stable (loss_overflows, loss_log_of_softmax)
#   inputs unchanged ................................. loss_values (its inputs_after_call check)
# beam_step
#   parent's score + token's log-probability ......... both cells (beam_forgets_parent_score)
#   ranked over all beam x V candidates .............. both cells (beam_topk_per_beam)
#   parent i // V, token i % V ....................... both cells (beam_pointer_swapped)
#   ties to the lower flat index ..................... beam_step_live (its visible tie check)
#   EOS in the top beam_size finishes, penalized ..... beam_step_finished (its visible checks)
#   finished hypotheses leave the beams .............. beam_step_finished (beam_keeps_eos_alive)
#   no length penalty on live beams .................. beam_step_live (beam_penalizes_live)
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
_SCHEDULE_CHECK = """
    if step < 1:
        raise ValueError("steps are counted from 1")
"""

_LOG_PROBS = """
import numpy as np


def _log_probs(logits):
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))

"""

_BEAM_FROM_ORDER = """
    penalty = ((5 + length) / 6) ** alpha
    finished = [(int(i // vocab), float(flat[i] / penalty)) for i in order[:beam_size] if i % vocab == eos_id]
    live = np.array([i for i in order if i % vocab != eos_id][:beam_size])
    return live // vocab, live % vocab, flat[live], finished
"""

WRONG: dict[str, dict[str, str]] = {
    # Each beam's own best tokens, in beam order, instead of the best over all beams.
    "beam_topk_per_beam": {
        "beam_step": """
import numpy as np


def beam_step(scores, log_probs, eos_id, beam_size, length, alpha=0.6):
    total = scores[:, None] + log_probs
    best = np.argsort(-total, axis=1, kind="stable")[:, :beam_size]
    chosen = [(b, v) for b in range(total.shape[0]) for v in best[b]][:beam_size]
    penalty = ((5 + length) / 6) ** alpha
    finished = [(b, total[b, v] / penalty) for b, v in chosen if v == eos_id]
    live = [(b, v) for b, v in chosen if v != eos_id]
    return [b for b, _ in live], [v for _, v in live], [total[b, v] for b, v in live], finished
""",
    },
    # Ranks by the new token's log-probability alone: the parent's score is never added.
    "beam_forgets_parent_score": {
        "beam_step": """
import numpy as np


def beam_step(scores, log_probs, eos_id, beam_size, length, alpha=0.6):
    vocab = log_probs.shape[1]
    flat = log_probs.ravel()
    order = np.argsort(-flat, kind="stable")
"""
        + _BEAM_FROM_ORDER,
    },
    # Divides the live beams' scores by the length penalty too.
    "beam_penalizes_live": {
        "beam_step": """
import numpy as np


def beam_step(scores, log_probs, eos_id, beam_size, length, alpha=0.6):
    vocab = log_probs.shape[1]
    penalty = ((5 + length) / 6) ** alpha
    flat = (scores[:, None] + log_probs).ravel()
    order = np.argsort(-flat, kind="stable")
    finished = [(int(i // vocab), float(flat[i] / penalty)) for i in order[:beam_size] if i % vocab == eos_id]
    live = np.array([i for i in order if i % vocab != eos_id][:beam_size])
    return live // vocab, live % vocab, flat[live] / penalty, finished
""",
    },
    # Parent and token read the wrong way round from the flat index.
    "beam_pointer_swapped": {
        "beam_step": """
import numpy as np


def beam_step(scores, log_probs, eos_id, beam_size, length, alpha=0.6):
    vocab = log_probs.shape[1]
    flat = (scores[:, None] + log_probs).ravel()
    order = np.argsort(-flat, kind="stable")
    penalty = ((5 + length) / 6) ** alpha
    finished = [(int(i % vocab), float(flat[i] / penalty)) for i in order[:beam_size] if i // vocab == eos_id]
    live = np.array([i for i in order if i // vocab != eos_id][:beam_size])
    return live % vocab, live // vocab, flat[live], finished
""",
    },
    # EOS candidates are recorded as finished but also kept as live beams.
    "beam_keeps_eos_alive": {
        "beam_step": """
import numpy as np


def beam_step(scores, log_probs, eos_id, beam_size, length, alpha=0.6):
    vocab = log_probs.shape[1]
    flat = (scores[:, None] + log_probs).ravel()
    top = np.argsort(-flat, kind="stable")[:beam_size]
    penalty = ((5 + length) / 6) ** alpha
    finished = [(int(i // vocab), float(flat[i] / penalty)) for i in top if i % vocab == eos_id]
    return top // vocab, top % vocab, flat[top], finished
""",
    },
    # Padding scored like a word: every position is in the mean.
    "loss_pad_counted": {
        "label_smoothed_loss": _LOG_PROBS
        + """
def label_smoothed_cross_entropy(logits, target, epsilon=0.1, pad_id=0):
    log_p = _log_probs(logits)
    nll = -np.take_along_axis(log_p, target[..., None], axis=-1)[..., 0]
    return float(((1 - epsilon) * nll - epsilon * log_p.mean(axis=-1)).mean())
""",
    },
    # Padding zeroed out of the sum but still counted: divides by every position.
    "loss_mean_over_all": {
        "label_smoothed_loss": _LOG_PROBS
        + """
def label_smoothed_cross_entropy(logits, target, epsilon=0.1, pad_id=0):
    log_p = _log_probs(logits)
    nll = -np.take_along_axis(log_p, target[..., None], axis=-1)[..., 0]
    loss = ((1 - epsilon) * nll - epsilon * log_p.mean(axis=-1)) * (target != pad_id)
    return float(loss.mean())
""",
    },
    # Smoothing spread over the V - 1 wrong tokens only (not PyTorch's rule, which the lesson states).
    "loss_eps_over_v_minus_1": {
        "label_smoothed_loss": _LOG_PROBS
        + """
def label_smoothed_cross_entropy(logits, target, epsilon=0.1, pad_id=0):
    log_p = _log_probs(logits)
    vocab = logits.shape[-1]
    right = np.take_along_axis(log_p, target[..., None], axis=-1)[..., 0]
    loss = -(1 - epsilon) * right - epsilon / (vocab - 1) * (log_p.sum(axis=-1) - right)
    keep = target != pad_id
    return float(loss[keep].mean())
""",
    },
    # exp of the raw logits: overflows to inf at 1e4.
    "loss_overflows": {
        "label_smoothed_loss": """
import numpy as np


def label_smoothed_cross_entropy(logits, target, epsilon=0.1, pad_id=0):
    log_p = logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))
    nll = -np.take_along_axis(log_p, target[..., None], axis=-1)[..., 0]
    loss = (1 - epsilon) * nll - epsilon * log_p.mean(axis=-1)
    keep = target != pad_id
    return float(loss[keep].mean())
""",
    },
    # A stable softmax, then np.log of it: -inf where a probability rounds to 0.
    "loss_log_of_softmax": {
        "label_smoothed_loss": """
import numpy as np


def label_smoothed_cross_entropy(logits, target, epsilon=0.1, pad_id=0):
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    log_p = np.log(e / e.sum(axis=-1, keepdims=True))
    nll = -np.take_along_axis(log_p, target[..., None], axis=-1)[..., 0]
    loss = (1 - epsilon) * nll - epsilon * log_p.mean(axis=-1)
    keep = target != pad_id
    return float(loss[keep].mean())
""",
    },
    # warmup^-0.5 in the rising branch: the minimum is then always the decaying branch.
    "schedule_warmup_sqrt": {
        "learning_rate": "def learning_rate(step, d_model=512, warmup=4000):"
        + _SCHEDULE_CHECK
        + "    return d_model**-0.5 * min(step**-0.5, step * warmup**-0.5)\n",
    },
    # The scale d_model^-0.5 left out.
    "schedule_without_d_model": {
        "learning_rate": "def learning_rate(step, d_model=512, warmup=4000):"
        + _SCHEDULE_CHECK
        + "    return min(step**-0.5, step * warmup**-1.5)\n",
    },
    # max instead of min: the rate grows without end.
    "schedule_max": {
        "learning_rate": "def learning_rate(step, d_model=512, warmup=4000):"
        + _SCHEDULE_CHECK
        + "    return d_model**-0.5 * max(step**-0.5, step * warmup**-1.5)\n",
    },
    # Steps counted from 0 (a loop's index): step + 1 in the formula, and no error at step 0.
    "schedule_from_zero": {
        "learning_rate": """
def learning_rate(step, d_model=512, warmup=4000):
    step = step + 1
    return d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)
""",
    },
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
    "beam_topk_per_beam": frozenset({"beam_step_live", "beam_step_finished"}),
    "beam_forgets_parent_score": frozenset({"beam_step_live", "beam_step_finished"}),
    "beam_penalizes_live": frozenset({"beam_step_live"}),
    "beam_pointer_swapped": frozenset({"beam_step_live", "beam_step_finished"}),
    "beam_keeps_eos_alive": frozenset({"beam_step_finished"}),
    "loss_pad_counted": frozenset({"loss_padding"}),
    "loss_mean_over_all": frozenset({"loss_padding"}),
    "loss_eps_over_v_minus_1": frozenset({"loss_values"}),
    "loss_overflows": frozenset({"loss_stable"}),
    "loss_log_of_softmax": frozenset({"loss_stable"}),
    "schedule_warmup_sqrt": frozenset({"learning_rate_warmup"}),
    "schedule_without_d_model": frozenset({"learning_rate_warmup", "learning_rate_decay"}),
    "schedule_max": frozenset({"learning_rate_warmup", "learning_rate_decay"}),
    "schedule_from_zero": frozenset({"learning_rate_warmup", "learning_rate_decay"}),
    "precision_not_clipped": frozenset({"apply_precision_test"}),
    # sentence_bleu uses the student's own brevity_penalty, so the slip costs both cells
    "brevity_inverted": frozenset({"apply_brevity_test", "apply_bleu_test"}),
    "bleu_arithmetic_mean": frozenset({"apply_bleu_test"}),
    "bleu_not_scaled": frozenset({"apply_bleu_test"}),
}

FEEDBACK: dict[str, str] = {
    "beam_topk_per_beam": "not the best of each beam",
    # The message's apostrophes reach the feedback page as &#39;: match the numbers it shows.
    "beam_forgets_parent_score": "the new scores should be [-0.76251893 -0.79314718]",
    "beam_penalizes_live": "with no length penalty",
    "beam_pointer_swapped": "take the parent i // V and the token i % V",
    "beam_keeps_eos_alive": "is finished, not live",
    "loss_pad_counted": "must count neither in the sum nor in the number of positions",
    "loss_mean_over_all": "must count neither in the sum nor in the number of positions",
    "loss_eps_over_v_minus_1": "over all V tokens (PyTorch's rule)",
    "loss_overflows": "Subtract the row's maximum before np.exp",
    "loss_log_of_softmax": "not np.log of the probabilities",
    "schedule_warmup_sqrt": "the rising branch uses warmup^-1.5",
    "schedule_without_d_model": "d_model^-0.5",
    "schedule_max": "after warmup the rate decays as d_model^-0.5 * step^-0.5",
    "schedule_from_zero": "the first update is step 1",
    "precision_not_clipped": "clip each n-gram to its count in the reference",
    "brevity_inverted": "longer than the reference: no penalty",
    "bleu_arithmetic_mean": "precisions 5/5, 3/4, 2/3, 1/2",
    "bleu_not_scaled": "a perfect match scores 100",
}

# The mistakes with the test cells whose VISIBLE part fails for them: the student sees each before
# submitting (tests/test_visible_tests.py).
CAUGHT_BY_VISIBLE: dict[str, frozenset[str]] = {
    "beam_topk_per_beam": frozenset({"beam_step_live", "beam_step_finished"}),
    "beam_forgets_parent_score": frozenset({"beam_step_live", "beam_step_finished"}),
    "beam_penalizes_live": frozenset({"beam_step_live"}),
    "beam_pointer_swapped": frozenset({"beam_step_live", "beam_step_finished"}),
    "beam_keeps_eos_alive": frozenset({"beam_step_finished"}),
    "loss_pad_counted": frozenset({"loss_padding"}),
    "loss_mean_over_all": frozenset({"loss_padding"}),
    "loss_eps_over_v_minus_1": frozenset({"loss_values"}),
    "loss_overflows": frozenset({"loss_stable"}),
    "loss_log_of_softmax": frozenset({"loss_stable"}),
    "schedule_warmup_sqrt": frozenset({"learning_rate_warmup"}),
    "schedule_without_d_model": frozenset({"learning_rate_warmup", "learning_rate_decay"}),
    "schedule_max": frozenset({"learning_rate_warmup", "learning_rate_decay"}),
    "schedule_from_zero": frozenset({"learning_rate_warmup", "learning_rate_decay"}),
    "precision_not_clipped": frozenset({"apply_precision_test"}),
    "brevity_inverted": frozenset({"apply_bleu_test", "apply_brevity_test"}),
    "bleu_arithmetic_mean": frozenset({"apply_bleu_test"}),
    "bleu_not_scaled": frozenset({"apply_bleu_test"}),
}

# Mistakes in a value answer (an Apply number): its visible test checks the answer's form, since a
# visible check of the value would give the answer away; grading checks the value.
VALUE_MISTAKES: frozenset[str] = frozenset()

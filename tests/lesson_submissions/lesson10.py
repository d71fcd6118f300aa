"""Realistic submissions for lesson 10's graded functions, for the grading tests.

``CORRECT`` maps a name to answers (grade_id -> cell source) that must earn full marks; ``WRONG``
maps a name to answers holding one mistake students really make, and ``CAUGHT_BY`` names exactly
the test cells that must score zero for it. Answers a submission leaves out keep the reference
solution, so each wrong submission isolates one mistake.
"""

LESSON = "10_decoder_only"


def _distribution(body: str) -> str:
    """A next_token_distribution answer with ``body`` as its (indented) code."""
    indented = "".join(f"    {line}\n" if line else "\n" for line in body.strip("\n").split("\n"))
    return f"def next_token_distribution(logits, temperature=1.0, top_k=None, top_p=None):\n{indented}"


_CHECKS = """
if temperature < 0:
    raise ValueError("temperature must be >= 0")
if top_k is not None and (top_k < 1 or int(top_k) != top_k):
    raise ValueError("top_k must be a positive integer")
if top_p is not None and not 0 < top_p <= 1:
    raise ValueError("top_p must be in (0, 1]")
"""


def _distribution_with(
    keep_top_p: str = "before < top_p",
    order: str = 'np.argsort(-logits, kind="stable")',
    greedy: str | None = "np.argmax(logits)",
    scale: str = "logits[order] / temperature",
    exponent: str = "ranked - ranked.max()",
    mass_before: str = "np.concatenate([[0.0], np.cumsum(kept)[:-1]])",
    checks: str = _CHECKS,
) -> str:
    """The reference structure with one piece swapped for a student's version of it."""
    greedy_block = (
        "" if greedy is None else f"if temperature == 0:\n    probs[{greedy}] = 1.0\n    return probs\n"
    )
    return _distribution(
        "logits = np.asarray(logits, dtype=float)\n"
        + checks
        + "probs = np.zeros(logits.size)\n"
        + greedy_block
        + f"""order = {order}
ranked = {scale}
full = np.exp({exponent})
full /= full.sum()
n = logits.size if top_k is None else min(int(top_k), logits.size)
kept = full[:n] / full[:n].sum()
if top_p is not None:
    before = {mass_before}
    kept = kept[{keep_top_p}]
    kept /= kept.sum()
probs[order[: kept.size]] = kept
return probs
"""
    )


def _sampler(body: str) -> str:
    indented = "".join(f"    {line}\n" if line else "\n" for line in body.strip("\n").split("\n"))
    return f"def sample_next_token(logits, temperature=1.0, top_k=None, top_p=None, rng=None):\n{indented}"


def _rope(body: str) -> str:
    indented = "".join(f"    {line}\n" if line else "\n" for line in body.strip("\n").split("\n"))
    return f"def apply_rope(x, positions):\n{indented}"


def _cache(body: str) -> str:
    indented = "".join(f"    {line}\n" if line else "\n" for line in body.strip("\n").split("\n"))
    return f"def attend_with_cache(q_new, k_new, v_new, cache_k, cache_v):\n{indented}"


_ROPE_REFERENCE_START = """
x = np.asarray(x, dtype=float)
d = x.shape[-1]
if d % 2:
    raise ValueError("d must be even")
"""

CORRECT: dict[str, dict[str, str]] = {
    # Plain Python: sorted() with a key, math.exp, loops; an inverse-CDF draw with rng.random();
    # rotation pair by pair; attention with explicit loops over the leading indices.
    "loops": {
        "next_token_distribution": _distribution("""
import math
values = [float(v) for v in logits]
if temperature < 0:
    raise ValueError("temperature must be >= 0")
if top_k is not None and (top_k < 1 or top_k != int(top_k)):
    raise ValueError("top_k must be a positive integer")
if top_p is not None and not (0 < top_p <= 1):
    raise ValueError("top_p must be in (0, 1]")
n = len(values)
if temperature == 0:
    best = 0
    for i in range(1, n):
        if values[i] > values[best]:
            best = i
    return np.array([1.0 if i == best else 0.0 for i in range(n)])
ranking = sorted(range(n), key=lambda i: (-values[i], i))
if top_k is not None:
    ranking = ranking[: int(top_k)]
top = values[ranking[0]]
weights = [math.exp((values[i] - top) / temperature) for i in ranking]
total = sum(weights)
weights = [w / total for w in weights]
if top_p is not None:
    kept, mass = [], 0.0
    for w in weights:
        if mass >= top_p:
            break
        kept.append(w)
        mass += w
    weights = [w / sum(kept) for w in kept]
    ranking = ranking[: len(kept)]
out = [0.0] * n
for i, w in zip(ranking, weights):
    out[i] = w
return np.array(out)
"""),
        "sample_next_token": _sampler("""
probs = next_token_distribution(logits, temperature, top_k, top_p)
if rng is None:
    rng = np.random.default_rng()
if temperature == 0:
    return int(np.argmax(probs))
u = rng.random()
total = 0.0
for i, p in enumerate(probs):
    total += p
    if u < total and p > 0:
        return i
return int(np.flatnonzero(probs)[-1])
"""),
        "apply_rope": _rope(
            _ROPE_REFERENCE_START
            + """
import math
out = np.array(x, dtype=float, copy=True)
flat_in = x.reshape(-1, x.shape[-2], d)
flat_out = out.reshape(-1, x.shape[-2], d)
for b in range(flat_in.shape[0]):
    for j, pos in enumerate(positions):
        for i in range(d // 2):
            theta = pos * 10000 ** (-2 * i / d)
            a, c = flat_in[b, j, 2 * i], flat_in[b, j, 2 * i + 1]
            flat_out[b, j, 2 * i] = a * math.cos(theta) - c * math.sin(theta)
            flat_out[b, j, 2 * i + 1] = a * math.sin(theta) + c * math.cos(theta)
return out
"""
        ),
        "attend_with_cache": _cache("""
import math
keys = np.concatenate([np.asarray(cache_k, dtype=float), np.asarray(k_new, dtype=float)], axis=-2)
values = np.concatenate([np.asarray(cache_v, dtype=float), np.asarray(v_new, dtype=float)], axis=-2)
q_new = np.asarray(q_new, dtype=float)
n_new, d_k = q_new.shape[-2:]
n_all = keys.shape[-2]
n_past = n_all - n_new
out = np.zeros(q_new.shape[:-1] + (values.shape[-1],))
for index in np.ndindex(*q_new.shape[:-2]):
    for j in range(n_new):
        visible = n_past + j + 1
        scores = [float(q_new[index][j] @ keys[index][t]) / math.sqrt(d_k) for t in range(visible)]
        top = max(scores)
        weights = [math.exp(s - top) for s in scores]
        total = sum(weights)
        for t in range(visible):
            out[index][j] += weights[t] / total * values[index][t]
return out, keys, values
"""),
        "kv_cache_mib": "kv_cache_mib = 36  # 2 x 12 x 1024 x 768 x 2 bytes / 2**20\n",
    },
    # Masks with -inf and one softmax over the whole vocabulary; top-p from cumsum - probs; a
    # searchsorted draw; RoPE with complex numbers; attention with einsum and a -1e9 mask.
    "vectorized": {
        "next_token_distribution": _distribution(
            "logits = np.asarray(logits, dtype=float)\n"
            + _CHECKS
            + """
if temperature == 0:
    return np.eye(logits.size)[np.argmax(logits)]
z = logits / temperature
order = np.argsort(-z, kind="stable")
if top_k is not None and top_k < z.size:
    z = z.copy()
    z[order[top_k:]] = -np.inf
p = np.exp(z - z.max())
p /= p.sum()
if top_p is not None:
    sorted_p = p[order]
    drop = (np.cumsum(sorted_p) - sorted_p) >= top_p
    p = p.copy()
    p[order[drop]] = 0.0
    p /= p.sum()
return p
"""
        ),
        "sample_next_token": _sampler("""
p = next_token_distribution(logits, temperature, top_k, top_p)
rng = np.random.default_rng() if rng is None else rng
index = int(np.searchsorted(np.cumsum(p), rng.random(), side="right"))
return min(index, int(np.flatnonzero(p)[-1]))
"""),
        "apply_rope": _rope(
            _ROPE_REFERENCE_START
            + """
theta = np.outer(positions, 10000.0 ** (-np.arange(0, d, 2) / d))
z = (x[..., 0::2] + 1j * x[..., 1::2]) * np.exp(1j * theta)
return np.stack([z.real, z.imag], axis=-1).reshape(x.shape)
"""
        ),
        "attend_with_cache": _cache("""
keys = np.concatenate((cache_k, k_new), axis=-2)
values = np.concatenate((cache_v, v_new), axis=-2)
n_new, n_all = q_new.shape[-2], keys.shape[-2]
scores = np.einsum("...qd,...kd->...qk", q_new, keys) / np.sqrt(q_new.shape[-1])
mask = np.tril(np.ones((n_new, n_all), dtype=bool), k=n_all - n_new)
scores = np.where(mask, scores, -1e9)
w = np.exp(scores - scores.max(axis=-1, keepdims=True))
w /= w.sum(axis=-1, keepdims=True)
return np.einsum("...qk,...kv->...qv", w, values), keys, values
"""),
        "kv_cache_mib": "kv_cache_mib = 2 * 12 * 1024 * 768 * 2 / 1024 / 1024\n",
    },
    # rng.choice returning a NumPy integer; RoPE through 2x2 rotation matrices in float32;
    # attention in float32 via a reshaped pair view.
    "float32_matrices": {
        "sample_next_token": _sampler("""
probs = next_token_distribution(logits, temperature, top_k, top_p)
generator = rng if rng is not None else np.random.default_rng()
return generator.choice(len(probs), p=probs)
"""),
        "apply_rope": _rope("""
x = np.asarray(x, dtype=np.float32)
d = x.shape[-1]
if d % 2 == 1:
    raise ValueError(f"odd dimension {d}: RoPE needs pairs")
frequencies = (10000.0 ** (-np.arange(d // 2) * 2.0 / d)).astype(np.float32)
theta = np.asarray(positions, dtype=np.float32)[:, None] * frequencies
cos, sin = np.cos(theta), np.sin(theta)
rotation = np.stack([np.stack([cos, -sin], -1), np.stack([sin, cos], -1)], -2)
pairs = x.reshape(*x.shape[:-1], d // 2, 2)
return np.einsum("jiab,...jib->...jia", rotation, pairs).reshape(x.shape)
"""),
        "attend_with_cache": _cache("""
q = np.asarray(q_new, dtype=np.float32)
keys = np.concatenate([cache_k, k_new], axis=-2).astype(np.float32)
values = np.concatenate([cache_v, v_new], axis=-2).astype(np.float32)
n_new, n_all = q.shape[-2], keys.shape[-2]
scores = (q @ np.swapaxes(keys, -1, -2)) * np.float32(q.shape[-1] ** -0.5)
future = np.arange(n_all)[None, :] > (n_all - n_new + np.arange(n_new))[:, None]
scores[..., future] = -np.inf
scores -= scores.max(axis=-1, keepdims=True)
weights = np.exp(scores)
weights /= weights.sum(axis=-1, keepdims=True)
return weights @ values, np.concatenate([cache_k, k_new], axis=-2), np.concatenate([cache_v, v_new], axis=-2)
"""),
        "kv_cache_mib": "kv_cache_mib = 36.0\n",
    },
}

# The written contract of each graded function, clause by clause: the test cell that fails when
# that clause alone is broken, and the wrong submission below that shows it.
# next_token_distribution
#   softmax(logits / temperature) ............. distribution_temperature (temperature_multiplies)
#   computed stably (logits of 1000) .......... distribution_temperature (softmax_unstable)
#   temperature 0: greedy, no division ........ distribution_greedy (greedy_divides_by_zero)
#   greedy tie: the lowest index .............. distribution_ties (greedy_last_tie)
#   ranking: equal logits by lowest index ..... distribution_ties (ranking_ties_reversed)
#   top-k keeps exactly k, ties included ...... distribution_ties (top_k_keeps_ties)
#   top-p keeps the crossing token ............ distribution_top_p (top_p_drops_crossing_token)
#   top-p boundary: mass before < top_p ....... distribution_top_p_edges (top_p_boundary_inclusive)
#   top-p on the ranking, not the ids ......... distribution_top_p (top_p_unsorted)
#   top-p after top-k, renormalized ........... distribution_combined (top_p_ignores_top_k)
#   dropped tokens 0, kept ones renormalized .. distribution_top_k (no_renormalization)
#   logits unchanged .......................... distribution_inputs (mutates_logits)
#   ValueError for temperature < 0, top_k not a positive integer, top_p outside (0, 1]
#                                               distribution_inputs (no_validation, top_k_fraction_accepted)
#   a float array of length V ................. every distribution cell (distribution_returns_logits,
#                                               distribution_zeros)
# sample_next_token
#   draws with rng ............................ sample_basics (sampler_ignores_rng)
#   returns one integer ....................... sample_basics (sampler_returns_array)
#   draws from the distribution ............... sample_frequencies (sampler_always_greedy, sampler_zero)
#   passes every knob on ...................... sample_frequencies (sampler_forgets_knobs)
#   rng None: np.random.default_rng() ......... sample_basics (sampler_no_rng_greedy)
# apply_rope
#   pairs (2i, 2i+1) .......................... rope_worked, rope_values (rope_halves)
#   theta = position * 10000^(-2i/d) .......... rope_worked, rope_values (rope_wrong_frequencies)
#   counterclockwise rotation ................. rope_worked, rope_values (rope_clockwise)
#   the given positions ....................... rope_values, rope_relative (rope_ignores_positions)
#   a rotation, not an addition ............... rope_relative (rope_adds_sinusoids)
#   a float array, integer x included ......... rope_values (rope_integer_output)
#   leading dimensions pass through ........... rope_batch (rope_2d_only)
#   x unchanged ............................... rope_inputs (rope_in_place)
#   ValueError for an odd d ................... rope_inputs (rope_odd_silently)
#   any rotation at all ....................... every rope cell (rope_returns_input, rope_zeros)
# attend_with_cache
#   caches: old then new, along axis -2 ....... cache_shapes (cache_new_first)
#   returns the grown caches .................. cache_shapes (cache_not_returned)
#   new queries see the cached keys ........... cache_step (cache_never_read)
#   causal among the new tokens ............... cache_prefill (cache_no_causal_mask)
#   the mask offset by n_past ................. cache_step (cache_mask_without_offset)
#   scaled by sqrt(d_k) ....................... cache_step (cache_no_scale)
#   leading dimensions pass through ........... cache_batch (cache_2d_only)
#   inputs unchanged .......................... cache_shapes (visible check; no realistic mistake)
#   attention at all .......................... every cache cell (cache_returns_values, cache_zeros)
WRONG: dict[str, dict[str, str]] = {
    # --- next_token_distribution ---------------------------------------------------------------
    # Multiplies the logits by the temperature instead of dividing.
    "temperature_multiplies": {
        "next_token_distribution": _distribution_with(scale="logits[order] * temperature")
    },
    # exp without subtracting the maximum: logits of 1000 overflow (and warn on stderr).
    "softmax_unstable": {"next_token_distribution": _distribution_with(exponent="ranked")},
    # No special case for temperature 0: divides by zero.
    "greedy_divides_by_zero": {"next_token_distribution": _distribution_with(greedy=None)},
    # Greedy picks the last of tied maxima.
    "greedy_last_tie": {"next_token_distribution": _distribution_with(greedy="np.argsort(logits)[-1]")},
    # Ranks with a reversed ascending argsort: ties come out highest index first.
    "ranking_ties_reversed": {
        "next_token_distribution": _distribution_with(order="np.argsort(logits)[::-1]")
    },
    # nanoGPT-style top-k: keeps every token whose logit reaches the k-th largest, ties included.
    "top_k_keeps_ties": {
        "next_token_distribution": _distribution(
            "logits = np.asarray(logits, dtype=float)\n"
            + _CHECKS
            + """
if temperature == 0:
    return np.eye(logits.size)[np.argmax(logits)]
z = logits / temperature
if top_k is not None and top_k < z.size:
    z = np.where(z >= np.sort(z)[-top_k], z, -np.inf)
p = np.exp(z - z.max())
p /= p.sum()
if top_p is not None:
    order = np.argsort(-p, kind="stable")
    before = np.concatenate([[0.0], np.cumsum(p[order])[:-1]])
    p[order[before >= top_p]] = 0.0
    p /= p.sum()
return p
"""
        ),
    },
    # Keeps tokens while the running total stays at or below p: drops the token that crosses p.
    "top_p_drops_crossing_token": {
        "next_token_distribution": _distribution_with(keep_top_p="np.cumsum(kept) <= top_p")
    },
    # Keeps a token while the mass before it is at most p: one token too many when the mass
    # reaches p exactly.
    "top_p_boundary_inclusive": {"next_token_distribution": _distribution_with(keep_top_p="before <= top_p")},
    # Cuts at the first index where the cumulative sum reaches p with np.argmax: when rounding
    # leaves the total just below 1, top_p = 1 keeps only the first token.
    "top_p_argmax_cutoff": {
        "next_token_distribution": _distribution_with(
            keep_top_p="np.arange(kept.size) <= np.argmax(np.cumsum(kept) >= top_p)"
        )
    },
    # Accumulates the probabilities in vocabulary order instead of from the most likely.
    "top_p_unsorted": {
        "next_token_distribution": _distribution(
            "logits = np.asarray(logits, dtype=float)\n"
            + _CHECKS
            + """
if temperature == 0:
    return np.eye(logits.size)[np.argmax(logits)]
z = logits / temperature
order = np.argsort(-z, kind="stable")
if top_k is not None and top_k < z.size:
    z = z.copy()
    z[order[top_k:]] = -np.inf
p = np.exp(z - z.max())
p /= p.sum()
if top_p is not None:
    before = np.concatenate([[0.0], np.cumsum(p)[:-1]])
    p = np.where(before < top_p, p, 0.0)
    p /= p.sum()
return p
"""
        ),
    },
    # Applies top-p to the full distribution instead of the renormalized top-k one.
    "top_p_ignores_top_k": {
        "next_token_distribution": _distribution_with(
            mass_before="np.concatenate([[0.0], np.cumsum(full)[:-1]])[:n]"
        )
    },
    # Forgets to renormalize after dropping tokens.
    "no_renormalization": {
        "next_token_distribution": _distribution(
            "logits = np.asarray(logits, dtype=float)\n"
            + _CHECKS
            + """
if temperature == 0:
    return np.eye(logits.size)[np.argmax(logits)]
order = np.argsort(-logits, kind="stable")
z = logits / temperature
p = np.exp(z - z.max())
p /= p.sum()
keep = np.ones(p.size, dtype=bool)
if top_k is not None:
    keep[order[top_k:]] = False
if top_p is not None:
    before = np.concatenate([[0.0], np.cumsum(p[order])[:-1]])
    keep[order[before >= top_p]] = False
return np.where(keep, p, 0.0)
"""
        ),
    },
    # Divides the caller's array in place.
    "mutates_logits": {
        "next_token_distribution": _distribution("""
if not isinstance(logits, np.ndarray):
    logits = np.array(logits, dtype=float)
if temperature < 0:
    raise ValueError("temperature must be >= 0")
if top_k is not None and (top_k < 1 or int(top_k) != top_k):
    raise ValueError("top_k must be a positive integer")
if top_p is not None and not 0 < top_p <= 1:
    raise ValueError("top_p must be in (0, 1]")
if temperature == 0:
    return np.eye(logits.size)[np.argmax(logits)]
logits /= temperature
order = np.argsort(-logits, kind="stable")
p = np.exp(logits - logits.max())
if top_k is not None:
    p[order[top_k:]] = 0.0
p /= p.sum()
if top_p is not None:
    before = np.concatenate([[0.0], np.cumsum(p[order])[:-1]])
    p[order[before >= top_p]] = 0.0
    p /= p.sum()
return p
"""),
    },
    # Accepts any knob value without complaint.
    "no_validation": {"next_token_distribution": _distribution_with(checks="")},
    # Checks top_k >= 1 but not that it is a whole number: top_k = 1.5 is silently cut to 1.
    "top_k_fraction_accepted": {
        "next_token_distribution": _distribution_with(checks=_CHECKS.replace(" or int(top_k) != top_k", ""))
    },
    # A stub that hands the logits back.
    "distribution_returns_logits": {
        "next_token_distribution": _distribution("return np.asarray(logits, dtype=float)")
    },
    # A stub of the right shape and nothing else.
    "distribution_zeros": {"next_token_distribution": _distribution("return np.zeros(len(logits))")},
    # --- sample_next_token ---------------------------------------------------------------------
    # Draws with NumPy's global generator: the seed passed in changes nothing.
    "sampler_ignores_rng": {
        "sample_next_token": _sampler("""
probs = next_token_distribution(logits, temperature, top_k, top_p)
return int(np.random.choice(len(probs), p=probs))
"""),
    },
    # rng.choice(..., size=1) returns an array of one element.
    "sampler_returns_array": {
        "sample_next_token": _sampler("""
probs = next_token_distribution(logits, temperature, top_k, top_p)
rng = rng or np.random.default_rng()
return rng.choice(len(probs), size=1, p=probs)
"""),
    },
    # Returns the most likely token: greedy, whatever the knobs.
    "sampler_always_greedy": {
        "sample_next_token": _sampler("""
return int(np.argmax(next_token_distribution(logits, temperature, top_k, top_p)))
"""),
    },
    # Passes only the temperature on: top-k and top-p are ignored.
    "sampler_forgets_knobs": {
        "sample_next_token": _sampler("""
probs = next_token_distribution(logits, temperature)
rng = np.random.default_rng() if rng is None else rng
return int(rng.choice(len(probs), p=probs))
"""),
    },
    # Without a generator it returns the most likely token instead of drawing one.
    "sampler_no_rng_greedy": {
        "sample_next_token": _sampler("""
probs = next_token_distribution(logits, temperature, top_k, top_p)
if rng is None:
    return int(np.argmax(probs))
return int(rng.choice(len(probs), p=probs))
"""),
    },
    # A stub that always answers token 0.
    "sampler_zero": {"sample_next_token": _sampler("return 0")},
    # --- apply_rope ----------------------------------------------------------------------------
    # The identity: returns its input unchanged.
    "rope_returns_input": {"apply_rope": _rope("return x")},
    # A stub of the right shape and nothing else.
    "rope_zeros": {"apply_rope": _rope("return np.zeros(np.shape(x))")},
    # np.empty_like(x) without a float conversion: integer x gives a truncated integer result.
    "rope_integer_output": {
        "apply_rope": _rope("""
d = np.shape(x)[-1]
if d % 2:
    raise ValueError("d must be even")
theta = np.asarray(positions, dtype=float)[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)
out = np.empty_like(x)
out[..., 0::2] = x[..., 0::2] * np.cos(theta) - x[..., 1::2] * np.sin(theta)
out[..., 1::2] = x[..., 0::2] * np.sin(theta) + x[..., 1::2] * np.cos(theta)
return out
"""),
    },
    # Pairs dimension i with i + d/2 (the "halves" convention of some libraries), not (2i, 2i+1).
    "rope_halves": {
        "apply_rope": _rope(
            _ROPE_REFERENCE_START
            + """
half = d // 2
theta = np.asarray(positions, dtype=float)[:, None] * 10000.0 ** (-np.arange(half) * 2 / d)
first, second = x[..., :half], x[..., half:]
cos, sin = np.cos(theta), np.sin(theta)
return np.concatenate([first * cos - second * sin, first * sin + second * cos], axis=-1)
"""
        ),
    },
    # Frequencies 10000^(-i/d) with i the pair index: the factor 2 is lost.
    "rope_wrong_frequencies": {
        "apply_rope": _rope(
            _ROPE_REFERENCE_START
            + """
theta = np.asarray(positions, dtype=float)[:, None] * 10000.0 ** (-np.arange(d // 2) / d)
out = np.empty_like(x)
out[..., 0::2] = x[..., 0::2] * np.cos(theta) - x[..., 1::2] * np.sin(theta)
out[..., 1::2] = x[..., 0::2] * np.sin(theta) + x[..., 1::2] * np.cos(theta)
return out
"""
        ),
    },
    # Rotates the other way (the sines' signs swapped).
    "rope_clockwise": {
        "apply_rope": _rope(
            _ROPE_REFERENCE_START
            + """
theta = np.asarray(positions, dtype=float)[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)
out = np.empty_like(x)
out[..., 0::2] = x[..., 0::2] * np.cos(theta) + x[..., 1::2] * np.sin(theta)
out[..., 1::2] = -x[..., 0::2] * np.sin(theta) + x[..., 1::2] * np.cos(theta)
return out
"""
        ),
    },
    # Uses positions 0..seq_len-1 whatever positions says.
    "rope_ignores_positions": {
        "apply_rope": _rope(
            _ROPE_REFERENCE_START
            + """
theta = np.arange(x.shape[-2])[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)
out = np.empty_like(x)
out[..., 0::2] = x[..., 0::2] * np.cos(theta) - x[..., 1::2] * np.sin(theta)
out[..., 1::2] = x[..., 0::2] * np.sin(theta) + x[..., 1::2] * np.cos(theta)
return out
"""
        ),
    },
    # Adds lesson 5's sinusoidal encoding instead of rotating.
    "rope_adds_sinusoids": {
        "apply_rope": _rope(
            _ROPE_REFERENCE_START
            + """
theta = np.asarray(positions, dtype=float)[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)
pe = np.zeros(x.shape[-2:])
pe[:, 0::2], pe[:, 1::2] = np.sin(theta), np.cos(theta)
return x + pe
"""
        ),
    },
    # Indexes the pairs as x[:, 0::2]: right for 2-D input only.
    "rope_2d_only": {
        "apply_rope": _rope(
            _ROPE_REFERENCE_START
            + """
theta = np.asarray(positions, dtype=float)[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)
out = np.empty_like(x)
out[:, 0::2] = x[:, 0::2] * np.cos(theta) - x[:, 1::2] * np.sin(theta)
out[:, 1::2] = x[:, 0::2] * np.sin(theta) + x[:, 1::2] * np.cos(theta)
return out
"""
        ),
    },
    # Writes the rotated pairs back into x.
    "rope_in_place": {
        "apply_rope": _rope("""
x = np.asarray(x, dtype=float)  # no copy for a float array: the writes below change the caller's x
d = x.shape[-1]
if d % 2:
    raise ValueError("d must be even")
theta = np.asarray(positions, dtype=float)[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)
even, odd = x[..., 0::2].copy(), x[..., 1::2].copy()
x[..., 0::2] = even * np.cos(theta) - odd * np.sin(theta)
x[..., 1::2] = even * np.sin(theta) + odd * np.cos(theta)
return x
"""),
    },
    # Leaves an odd last dimension unrotated instead of raising.
    "rope_odd_silently": {
        "apply_rope": _rope("""
x = np.asarray(x, dtype=float)
d = x.shape[-1] - x.shape[-1] % 2
theta = np.asarray(positions, dtype=float)[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)
out = x.copy()
out[..., 0:d:2] = x[..., 0:d:2] * np.cos(theta) - x[..., 1:d:2] * np.sin(theta)
out[..., 1:d:2] = x[..., 0:d:2] * np.sin(theta) + x[..., 1:d:2] * np.cos(theta)
return out
"""),
    },
    # --- attend_with_cache ---------------------------------------------------------------------
    # Attends over the new keys only: the cache is kept but never read.
    "cache_never_read": {
        "attend_with_cache": _cache("""
n = q_new.shape[-2]
scores = q_new @ np.swapaxes(k_new, -1, -2) / np.sqrt(q_new.shape[-1])
scores = np.where(np.tril(np.ones((n, n), dtype=bool)), scores, -np.inf)
w = np.exp(scores - scores.max(axis=-1, keepdims=True))
w /= w.sum(axis=-1, keepdims=True)
return w @ v_new, np.concatenate([cache_k, k_new], axis=-2), np.concatenate([cache_v, v_new], axis=-2)
"""),
    },
    # No causal mask: fine one token at a time, wrong when a prompt is read in one call.
    "cache_no_causal_mask": {
        "attend_with_cache": _cache("""
keys = np.concatenate([cache_k, k_new], axis=-2)
values = np.concatenate([cache_v, v_new], axis=-2)
scores = q_new @ np.swapaxes(keys, -1, -2) / np.sqrt(q_new.shape[-1])
w = np.exp(scores - scores.max(axis=-1, keepdims=True))
w /= w.sum(axis=-1, keepdims=True)
return w @ values, keys, values
"""),
    },
    # Causal mask without the offset of the cached positions: query j sees keys 0..j only.
    "cache_mask_without_offset": {
        "attend_with_cache": _cache("""
keys = np.concatenate([cache_k, k_new], axis=-2)
values = np.concatenate([cache_v, v_new], axis=-2)
scores = q_new @ np.swapaxes(keys, -1, -2) / np.sqrt(q_new.shape[-1])
mask = np.tril(np.ones((q_new.shape[-2], keys.shape[-2]), dtype=bool))
scores = np.where(mask, scores, -np.inf)
w = np.exp(scores - scores.max(axis=-1, keepdims=True))
w /= w.sum(axis=-1, keepdims=True)
return w @ values, keys, values
"""),
    },
    # Forgets to divide by sqrt(d_k).
    "cache_no_scale": {
        "attend_with_cache": _cache("""
keys = np.concatenate([cache_k, k_new], axis=-2)
values = np.concatenate([cache_v, v_new], axis=-2)
n_new, n_all = q_new.shape[-2], keys.shape[-2]
scores = q_new @ np.swapaxes(keys, -1, -2)
scores = np.where(np.tril(np.ones((n_new, n_all), dtype=bool), k=n_all - n_new), scores, -np.inf)
w = np.exp(scores - scores.max(axis=-1, keepdims=True))
w /= w.sum(axis=-1, keepdims=True)
return w @ values, keys, values
"""),
    },
    # Puts the new keys and values in front of the cache.
    "cache_new_first": {
        "attend_with_cache": _cache("""
keys = np.concatenate([k_new, cache_k], axis=-2)
values = np.concatenate([v_new, cache_v], axis=-2)
n_new, n_all = q_new.shape[-2], keys.shape[-2]
scores = q_new @ np.swapaxes(keys, -1, -2) / np.sqrt(q_new.shape[-1])
scores = np.where(np.tril(np.ones((n_new, n_all), dtype=bool), k=n_all - n_new), scores, -np.inf)
w = np.exp(scores - scores.max(axis=-1, keepdims=True))
w /= w.sum(axis=-1, keepdims=True)
return w @ values, keys, values
"""),
    },
    # Returns the caches it was given instead of the grown ones.
    "cache_not_returned": {
        "attend_with_cache": _cache("""
keys = np.concatenate([cache_k, k_new], axis=-2)
values = np.concatenate([cache_v, v_new], axis=-2)
n_new, n_all = q_new.shape[-2], keys.shape[-2]
scores = q_new @ np.swapaxes(keys, -1, -2) / np.sqrt(q_new.shape[-1])
scores = np.where(np.tril(np.ones((n_new, n_all), dtype=bool), k=n_all - n_new), scores, -np.inf)
w = np.exp(scores - scores.max(axis=-1, keepdims=True))
w /= w.sum(axis=-1, keepdims=True)
return w @ values, cache_k, cache_v
"""),
    },
    # keys.T: right for 2-D inputs only.
    "cache_2d_only": {
        "attend_with_cache": _cache("""
keys = np.concatenate([cache_k, k_new], axis=-2)
values = np.concatenate([cache_v, v_new], axis=-2)
n_new, n_all = q_new.shape[-2], keys.shape[-2]
scores = q_new @ keys.T / np.sqrt(q_new.shape[-1])
scores = np.where(np.tril(np.ones((n_new, n_all), dtype=bool), k=n_all - n_new), scores, -np.inf)
w = np.exp(scores - scores.max(axis=-1, keepdims=True))
w /= w.sum(axis=-1, keepdims=True)
return w @ values, keys, values
"""),
    },
    # Returns v_new as the output (with the right caches): attention is never computed.
    "cache_returns_values": {
        "attend_with_cache": _cache("""
return v_new, np.concatenate([cache_k, k_new], axis=-2), np.concatenate([cache_v, v_new], axis=-2)
"""),
    },
    # A stub of the right shapes: zeros everywhere.
    "cache_zeros": {
        "attend_with_cache": _cache("""
n_all = np.shape(cache_k)[-2] + np.shape(k_new)[-2]
return (
    np.zeros(np.shape(v_new)),
    np.zeros(np.shape(k_new)[:-2] + (n_all, np.shape(k_new)[-1])),
    np.zeros(np.shape(v_new)[:-2] + (n_all, np.shape(v_new)[-1])),
)
"""),
    },
    # --- the KV-cache size ---------------------------------------------------------------------
    "kv_keys_only": {"kv_cache_mib": "kv_cache_mib = 12 * 1024 * 768 * 2 / 2**20\n"},
    "kv_float32": {"kv_cache_mib": "kv_cache_mib = 2 * 12 * 1024 * 768 * 4 / 2**20\n"},
    "kv_bytes": {"kv_cache_mib": "kv_cache_mib = 2 * 12 * 1024 * 768 * 2\n"},
}

CAUGHT_BY: dict[str, frozenset[str]] = {
    "temperature_multiplies": frozenset(
        {"distribution_temperature", "distribution_combined", "sample_frequencies"}
    ),
    "softmax_unstable": frozenset({"distribution_temperature"}),
    "greedy_divides_by_zero": frozenset({"distribution_greedy", "distribution_ties", "sample_basics"}),
    "greedy_last_tie": frozenset({"distribution_ties"}),
    "ranking_ties_reversed": frozenset({"distribution_ties"}),
    "top_k_keeps_ties": frozenset({"distribution_ties"}),
    # Rounding can put the total of all tokens a hair above 1 (1/9 added nine times), so top_p = 1
    # loses a token too.
    "top_p_drops_crossing_token": frozenset(
        {"distribution_top_p", "distribution_top_p_edges", "distribution_combined", "sample_frequencies"}
    ),
    "top_p_boundary_inclusive": frozenset({"distribution_top_p_edges"}),
    "top_p_argmax_cutoff": frozenset({"distribution_top_p_edges"}),
    "top_p_unsorted": frozenset({"distribution_top_p", "distribution_combined", "sample_frequencies"}),
    "top_p_ignores_top_k": frozenset({"distribution_combined"}),
    "no_renormalization": frozenset(
        {
            "distribution_greedy",
            "distribution_ties",
            "distribution_top_k",
            "distribution_top_p",
            "distribution_top_p_edges",
            "distribution_combined",
            "distribution_inputs",
            "sample_basics",
            "sample_frequencies",
        }
    ),
    "mutates_logits": frozenset({"distribution_inputs"}),
    "no_validation": frozenset({"distribution_inputs"}),
    "top_k_fraction_accepted": frozenset({"distribution_inputs"}),
    "distribution_returns_logits": frozenset(
        {
            "distribution_temperature",
            "distribution_greedy",
            "distribution_ties",
            "distribution_top_k",
            "distribution_top_p",
            "distribution_top_p_edges",
            "distribution_combined",
            "distribution_inputs",
            "sample_basics",
            "sample_frequencies",
        }
    ),
    "distribution_zeros": frozenset(
        {
            "distribution_temperature",
            "distribution_greedy",
            "distribution_ties",
            "distribution_top_k",
            "distribution_top_p",
            "distribution_top_p_edges",
            "distribution_combined",
            "distribution_inputs",
            "sample_basics",
            "sample_frequencies",
        }
    ),
    "sampler_ignores_rng": frozenset({"sample_basics"}),
    "sampler_returns_array": frozenset({"sample_basics"}),
    "sampler_always_greedy": frozenset({"sample_basics", "sample_frequencies"}),
    "sampler_forgets_knobs": frozenset({"sample_basics", "sample_frequencies"}),
    "sampler_no_rng_greedy": frozenset({"sample_basics"}),
    "sampler_zero": frozenset({"sample_basics", "sample_frequencies"}),
    "rope_returns_input": frozenset(
        {"rope_worked", "rope_values", "rope_relative", "rope_batch", "rope_inputs"}
    ),
    "rope_zeros": frozenset({"rope_worked", "rope_values", "rope_relative", "rope_batch", "rope_inputs"}),
    "rope_integer_output": frozenset({"rope_values"}),
    "rope_halves": frozenset({"rope_worked", "rope_values"}),
    "rope_wrong_frequencies": frozenset({"rope_worked", "rope_values"}),
    "rope_clockwise": frozenset({"rope_worked", "rope_values"}),
    "rope_ignores_positions": frozenset({"rope_worked", "rope_values", "rope_relative"}),
    "rope_adds_sinusoids": frozenset({"rope_worked", "rope_values", "rope_relative"}),
    "rope_2d_only": frozenset({"rope_batch"}),
    "rope_in_place": frozenset({"rope_inputs"}),
    "rope_odd_silently": frozenset({"rope_inputs"}),
    "cache_never_read": frozenset({"cache_step", "cache_generation", "cache_prefill"}),
    "cache_no_causal_mask": frozenset({"cache_prefill"}),
    "cache_mask_without_offset": frozenset({"cache_step", "cache_generation", "cache_prefill"}),
    "cache_no_scale": frozenset({"cache_step", "cache_generation", "cache_prefill"}),
    "cache_new_first": frozenset({"cache_shapes", "cache_prefill"}),
    "cache_not_returned": frozenset({"cache_shapes", "cache_generation"}),
    "cache_2d_only": frozenset({"cache_batch"}),
    "cache_returns_values": frozenset(
        {"cache_shapes", "cache_step", "cache_generation", "cache_prefill", "cache_batch"}
    ),
    "cache_zeros": frozenset(
        {"cache_shapes", "cache_step", "cache_generation", "cache_prefill", "cache_batch"}
    ),
    "kv_keys_only": frozenset({"kv_cache_mib_test"}),
    "kv_float32": frozenset({"kv_cache_mib_test"}),
    "kv_bytes": frozenset({"kv_cache_mib_test"}),
}

# Words the feedback of a wrong submission must contain: the visible test's hint for its mistake.
FEEDBACK: dict[str, str] = {
    "temperature_multiplies": "divide the logits by the",
    "greedy_divides_by_zero": "Do not divide",
    "greedy_last_tie": "picks the lower index",
    "top_k_keeps_ties": "keeps exactly one token",
    "top_p_drops_crossing_token": "the token that crosses p is kept",
    "top_p_boundary_inclusive": "mass *before* it is below top_p",
    "top_p_ignores_top_k": "renormalized top-k distribution",
    "mutates_logits": "changed its input logits",
    "sampler_ignores_rng": "the same seed must give the same token",
    "sampler_returns_array": "without size= returns a single integer",
    "sampler_always_greedy": "not the argmax",
    "rope_halves": "pair 1 by 2 * 10000^(-2/4)",
    "rope_clockwise": "Check the signs",
    "rope_adds_sinusoids": "a rotation keeps every vector",
    "rope_2d_only": "x[..., 0::2]",
    "rope_in_place": "changed its input x",
    "rope_odd_silently": "no partner",
    "cache_never_read": "Does the new query see every cached key",
    "cache_no_causal_mask": "apply the causal mask among the new tokens",
    "cache_new_first": "old cache followed by the new keys",
    "cache_not_returned": "the caches grow by one position",
    "cache_2d_only": "np.swapaxes(keys, -1, -2)",
    "softmax_unstable": "exp(1000) overflows",
    "top_p_argmax_cutoff": "never require the running total to reach top_p",
    "top_p_unsorted": "Rank the tokens by probability before summing",
    "sampler_forgets_knobs": "pass temperature, top_k and top_p on",
    "sampler_no_rng_greedy": "with np.random.default_rng() when rng is None",
    "rope_integer_output": "integer x must give the same float result",
}

# The mistakes with the test cells whose VISIBLE part fails for them: the student sees each before
# submitting (tests/test_visible_tests.py).
CAUGHT_BY_VISIBLE: dict[str, frozenset[str]] = {
    "temperature_multiplies": frozenset({"distribution_temperature"}),
    "softmax_unstable": frozenset({"distribution_temperature"}),
    "greedy_divides_by_zero": frozenset({"distribution_greedy", "distribution_ties", "sample_basics"}),
    "greedy_last_tie": frozenset({"distribution_ties"}),
    "ranking_ties_reversed": frozenset({"distribution_ties"}),
    "top_k_keeps_ties": frozenset({"distribution_ties"}),
    "top_p_drops_crossing_token": frozenset({"distribution_combined", "distribution_top_p"}),
    "top_p_boundary_inclusive": frozenset({"distribution_top_p_edges"}),
    "top_p_argmax_cutoff": frozenset({"distribution_top_p_edges"}),
    "top_p_unsorted": frozenset({"distribution_top_p"}),
    "top_p_ignores_top_k": frozenset({"distribution_combined"}),
    "no_renormalization": frozenset(
        {
            "distribution_combined",
            "distribution_greedy",
            "distribution_ties",
            "distribution_top_k",
            "distribution_top_p",
            "distribution_top_p_edges",
            "sample_basics",
        }
    ),
    "mutates_logits": frozenset({"distribution_inputs"}),
    "no_validation": frozenset({"distribution_inputs"}),
    "top_k_fraction_accepted": frozenset({"distribution_inputs"}),
    "distribution_returns_logits": frozenset(
        {
            "distribution_combined",
            "distribution_greedy",
            "distribution_inputs",
            "distribution_temperature",
            "distribution_ties",
            "distribution_top_k",
            "distribution_top_p",
            "distribution_top_p_edges",
            "sample_basics",
            "sample_frequencies",
        }
    ),
    "distribution_zeros": frozenset(
        {
            "distribution_combined",
            "distribution_greedy",
            "distribution_inputs",
            "distribution_temperature",
            "distribution_ties",
            "distribution_top_k",
            "distribution_top_p",
            "distribution_top_p_edges",
            "sample_basics",
            "sample_frequencies",
        }
    ),
    "sampler_ignores_rng": frozenset({"sample_basics"}),
    "sampler_returns_array": frozenset({"sample_basics"}),
    "sampler_always_greedy": frozenset({"sample_basics", "sample_frequencies"}),
    "sampler_forgets_knobs": frozenset({"sample_basics"}),
    "sampler_no_rng_greedy": frozenset({"sample_basics"}),
    "sampler_zero": frozenset({"sample_basics", "sample_frequencies"}),
    "rope_returns_input": frozenset({"rope_inputs", "rope_values", "rope_worked"}),
    "rope_zeros": frozenset({"rope_inputs", "rope_relative", "rope_values", "rope_worked"}),
    "rope_integer_output": frozenset({"rope_values"}),
    "rope_halves": frozenset({"rope_worked"}),
    "rope_wrong_frequencies": frozenset({"rope_worked"}),
    "rope_clockwise": frozenset({"rope_worked"}),
    "rope_ignores_positions": frozenset({"rope_worked"}),
    "rope_adds_sinusoids": frozenset({"rope_relative", "rope_values", "rope_worked"}),
    "rope_2d_only": frozenset({"rope_batch"}),
    "rope_in_place": frozenset({"rope_inputs"}),
    "rope_odd_silently": frozenset({"rope_inputs"}),
    "cache_never_read": frozenset({"cache_generation"}),
    "cache_no_causal_mask": frozenset({"cache_prefill"}),
    "cache_mask_without_offset": frozenset({"cache_generation"}),
    "cache_no_scale": frozenset({"cache_generation"}),
    "cache_new_first": frozenset({"cache_shapes"}),
    "cache_not_returned": frozenset({"cache_generation", "cache_shapes"}),
    "cache_2d_only": frozenset({"cache_batch"}),
    "cache_returns_values": frozenset({"cache_generation"}),
    "cache_zeros": frozenset({"cache_generation", "cache_prefill", "cache_shapes", "cache_step"}),
}

# Mistakes in a value answer (an Apply number): its visible test checks the answer's form, since a
# visible check of the value would give the answer away; grading checks the value.
VALUE_MISTAKES: frozenset[str] = frozenset({"kv_keys_only", "kv_float32", "kv_bytes"})

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


# ---------------------------------------------------------------------------------------------
# Byte-pair encoding (the "Build it" of the tokens section): merge_pair, train_bpe, encode_bpe.
# The merge_pair cell starts with the split_words it gives students; a variant of it keeps that.


def _given_split_words() -> str:
    """The start of lesson 8's merge_pair cell: the imports and ``split_words`` students are given."""
    from pathlib import Path

    source = (Path(__file__).parents[2] / "lessons" / f"{LESSON}.md").read_text(encoding="utf-8")
    cell = source.split(":grade_id: merge_pair\n\n", 1)[1]
    return cell[: cell.index("def merge_pair")]


MERGE_PAIR_WITH_A_FLAG = """
def merge_pair(pieces, pair):
    left, right = pair
    merged, skip = [], False
    for i, piece in enumerate(pieces):
        if skip:
            skip = False
            continue
        if piece == left and i + 1 < len(pieces) and pieces[i + 1] == right:
            merged.append(left + right)
            skip = True
        else:
            merged.append(piece)
    return merged
"""

# Merges every position where the pair starts, overlaps included: 'a a a' becomes 'aaa'.
MERGE_PAIR_OVERLAPPING = """
def merge_pair(pieces, pair):
    starts = [i for i in range(len(pieces) - 1) if (pieces[i], pieces[i + 1]) == tuple(pair)]
    merged = list(pieces)
    for i in reversed(starts):
        merged[i : i + 2] = [merged[i] + merged[i + 1]]
    return merged
"""

# Merges the first occurrence only (list.index finds one).
MERGE_PAIR_FIRST_ONLY = """
def merge_pair(pieces, pair):
    pairs = list(zip(pieces, pieces[1:]))
    if tuple(pair) not in pairs:
        return list(pieces)
    i = pairs.index(tuple(pair))
    return [*pieces[:i], pieces[i] + pieces[i + 1], *pieces[i + 2 :]]
"""

# Joins the pieces with spaces and replaces text: the pair also matches inside longer pieces.
MERGE_PAIR_BY_TEXT_REPLACE = """
def merge_pair(pieces, pair):
    left, right = pair
    return " ".join(pieces).replace(f"{left} {right}", left + right).split(" ")
"""

TRAIN_WITH_PLAIN_DICTS = """
def train_bpe(texts, n_merges):
    counts = {}
    for text in texts:
        for word in split_words(text):
            counts[word] = counts.get(word, 0) + 1
    characters = sorted(set("".join(counts)))
    vocab = [*SPECIAL_TOKENS, *characters]
    words = [[list(word), count] for word, count in counts.items()]
    merges = []
    while len(merges) < n_merges:
        pair_counts = {}
        for pieces, count in words:
            for i in range(len(pieces) - 1):
                pair = (pieces[i], pieces[i + 1])
                pair_counts[pair] = pair_counts.get(pair, 0) + count
        if not pair_counts:
            break
        ranked = sorted(pair_counts.items(), key=lambda item: (-item[1], vocab.index(item[0][0]),
                                                             vocab.index(item[0][1])))
        best = ranked[0][0]
        merges.append(list(best))
        if best[0] + best[1] not in vocab:
            vocab.append(best[0] + best[1])
        words = [[merge_pair(pieces, best), count] for pieces, count in words]
    return vocab + [f"<0x{byte:02X}>" for byte in range(256)], merges
"""


def _train_variant(counting: str, choosing: str, vocabulary: str = "list(SPECIAL_TOKENS) + alphabet") -> str:
    """A train_bpe that differs from the reference in how it counts words, picks the best pair or
    lays out the vocabulary (each wrong variant changes one of these)."""
    return f"""
from collections import Counter


def train_bpe(texts, n_merges):
    word_counts = {counting}
    alphabet = sorted({{char for word in word_counts for char in word}})
    vocab = {vocabulary}
    ids = {{token: i for i, token in enumerate(vocab)}}
    pieces = {{word: list(word) for word in word_counts}}
    merges = []
    for _ in range(n_merges):
        pair_counts = Counter()
        for word, word_pieces in pieces.items():
            for pair in zip(word_pieces, word_pieces[1:]):
                pair_counts[pair] += word_counts[word]
        if not pair_counts:
            break
        best = {choosing}
        merges.append(best)
        if best[0] + best[1] not in ids:
            ids[best[0] + best[1]] = len(vocab)
            vocab.append(best[0] + best[1])
        pieces = {{word: merge_pair(word_pieces, best) for word, word_pieces in pieces.items()}}
    return vocab + list(BYTE_TOKENS), merges
"""


_WORDS = "Counter(word for text in texts for word in split_words(text))"
_BY_IDS = "max(pair_counts, key=lambda pair: (pair_counts[pair], -ids[pair[0]], -ids[pair[1]]))"
TRAIN_ACROSS_WORDS = _train_variant('Counter("".join(split_words(text)) for text in texts)', _BY_IDS)
TRAIN_UNWEIGHTED = _train_variant(f"dict.fromkeys({_WORDS}, 1)", _BY_IDS)
TRAIN_FIRST_SEEN_TIE = _train_variant(_WORDS, "max(pair_counts, key=pair_counts.get)")
TRAIN_ALPHABETICAL_TIE = _train_variant(
    _WORDS, "min(pair_counts, key=lambda pair: (-pair_counts[pair], pair))"
)
TRAIN_SPECIALS_LAST = _train_variant(_WORDS, _BY_IDS, "alphabet + list(SPECIAL_TOKENS)")

ENCODE_IN_LEARNED_ORDER = """
def encode_bpe(text, vocab, merges):
    result = []
    rest = text
    while rest:
        found = [(rest.find(token), token) for token in SPECIAL_TOKENS if token in rest]
        start, token = min(found) if found else (len(rest), None)
        for word in split_words(rest[:start]):
            pieces = list(word)
            for pair in merges:
                pieces = merge_pair(pieces, pair)
            for piece in pieces:
                if piece in vocab:
                    result.append(vocab.index(piece))
                else:
                    result.extend(vocab.index("<0x%02X>" % byte) for byte in piece.encode("utf-8"))
        if token is None:
            break
        result.append(vocab.index(token))
        rest = rest[start + len(token):]
    return result
"""

ENCODE_WITH_MERGES_INDEX = """
def encode_bpe(text, vocab, merges):
    ids = {token: i for i, token in enumerate(vocab)}
    merges = [tuple(pair) for pair in merges]
    result = []
    for part in re.split("(<pad>|<s>|</s>|<unk>)", text):
        if part in ids and part in SPECIAL_TOKENS:
            result.append(ids[part])
            continue
        for word in split_words(part):
            pieces = list(word)
            while len(pieces) > 1:
                pairs = [pair for pair in zip(pieces, pieces[1:]) if pair in merges]
                if not pairs:
                    break
                pieces = merge_pair(pieces, min(pairs, key=merges.index))
            for piece in pieces:
                result += [ids[piece]] if piece in ids else [ids[f"<0x{b:02X}>"] for b in piece.encode()]
    return result
"""


def _encode_variant(specials: str, word_ids: str, unknown: str) -> str:
    """An encode_bpe that handles the special tokens, a word's merges or unknown characters its own
    way (each wrong variant changes one of these)."""
    return f"""
def encode_bpe(text, vocab, merges):
    ids = {{token: i for i, token in enumerate(vocab)}}
    rank = {{tuple(pair): r for r, pair in enumerate(merges)}}
    result = []
    for part in {specials}:
        if part in SPECIAL_TOKENS:
            result.append(ids[part])
            continue
        for word in split_words(part):
            for piece in {word_ids}:
                if piece in ids:
                    result.append(ids[piece])
                else:
                    result += {unknown}
    return result


def merged_by_rank(word, rank):
    pieces = list(word)
    while True:
        learned = [pair for pair in zip(pieces, pieces[1:]) if pair in rank]
        if not learned:
            return pieces
        pieces = merge_pair(pieces, min(learned, key=rank.get))


def longest_first(word, ids):
    pieces, start = [], 0
    while start < len(word):
        end = next((end for end in range(len(word), start, -1) if word[start:end] in ids), start + 1)
        pieces.append(word[start:end])
        start = end
    return pieces
"""


_SPECIALS = 're.split("(" + "|".join(re.escape(token) for token in SPECIAL_TOKENS) + ")", text)'
_BYTES = '[ids[f"<0x{byte:02X}>"] for byte in piece.encode("utf-8")]'
ENCODE_LONGEST_MATCH = _encode_variant(_SPECIALS, "longest_first(word, ids)", _BYTES)
ENCODE_UNKNOWN_AS_UNK = _encode_variant(_SPECIALS, "merged_by_rank(word, rank)", "[ids['<unk>']]")
ENCODE_SPECIALS_AS_TEXT = _encode_variant("[text]", "merged_by_rank(word, rank)", _BYTES)

CORRECT |= {
    # A skip flag, plain dicts sorted for the best pair, merges applied in learned order, and the
    # special tokens found with str.find.
    "bpe_dicts_and_learned_order": {
        "merge_pair": _given_split_words() + MERGE_PAIR_WITH_A_FLAG,
        "train_bpe": TRAIN_WITH_PLAIN_DICTS,
        "encode_bpe": ENCODE_IN_LEARNED_ORDER,
    },
    # The learned pair found with merges.index instead of a rank dict.
    "bpe_merges_index": {"encode_bpe": ENCODE_WITH_MERGES_INDEX},
}

WRONG |= {
    "bpe_overlapping_merges": {"merge_pair": _given_split_words() + MERGE_PAIR_OVERLAPPING},
    "bpe_first_occurrence_only": {"merge_pair": _given_split_words() + MERGE_PAIR_FIRST_ONLY},
    "bpe_merge_by_text_replace": {"merge_pair": _given_split_words() + MERGE_PAIR_BY_TEXT_REPLACE},
    "bpe_pairs_across_words": {"train_bpe": TRAIN_ACROSS_WORDS},
    "bpe_words_not_weighted": {"train_bpe": TRAIN_UNWEIGHTED},
    "bpe_first_seen_tie": {"train_bpe": TRAIN_FIRST_SEEN_TIE},
    "bpe_alphabetical_tie": {"train_bpe": TRAIN_ALPHABETICAL_TIE},
    "bpe_special_tokens_last": {"train_bpe": TRAIN_SPECIALS_LAST},
    "bpe_longest_match": {"encode_bpe": ENCODE_LONGEST_MATCH},
    "bpe_unknown_as_unk": {"encode_bpe": ENCODE_UNKNOWN_AS_UNK},
    "bpe_special_tokens_split": {"encode_bpe": ENCODE_SPECIALS_AS_TEXT},
}

CAUGHT_BY |= {
    # merge_pair's slips also break the train_bpe that calls it.
    "bpe_overlapping_merges": frozenset({"merge_pair_test", "train_bpe_merges"}),
    "bpe_first_occurrence_only": frozenset({"merge_pair_test", "train_bpe_vocabulary", "train_bpe_merges"}),
    "bpe_merge_by_text_replace": frozenset(
        {"merge_pair_test", "train_bpe_vocabulary", "train_bpe_merges", "encode_bpe_merges"}
    ),
    "bpe_pairs_across_words": frozenset({"train_bpe_merges"}),
    "bpe_words_not_weighted": frozenset({"train_bpe_merges"}),
    "bpe_first_seen_tie": frozenset({"train_bpe_merges"}),
    "bpe_alphabetical_tie": frozenset({"train_bpe_merges"}),
    "bpe_special_tokens_last": frozenset({"train_bpe_vocabulary"}),
    "bpe_longest_match": frozenset({"encode_bpe_merges"}),
    "bpe_unknown_as_unk": frozenset({"encode_bpe_fallback"}),
    "bpe_special_tokens_split": frozenset({"encode_bpe_fallback"}),
}

FEEDBACK |= {
    "bpe_overlapping_merges": "after a merge, go on after the merged pair",
    "bpe_first_occurrence_only": "merge every occurrence of the pair",
    "bpe_merge_by_text_replace": "compare pieces, not joined text",
    "bpe_pairs_across_words": "count pairs inside each word of split_words only",
    "bpe_words_not_weighted": "weight each pair by how often its word occurs",
    "bpe_first_seen_tie": "ties go to the smallest ids",
    "bpe_alphabetical_tie": "the smallest id of their left tokens",
    "bpe_special_tokens_last": "ids 0-3 are the special tokens",
    "bpe_longest_match": "not the longest token ana first",
    "bpe_unknown_as_unk": "write it as the ids of its UTF-8 bytes",
    "bpe_special_tokens_split": "a special token in the text is one token with its id",
}

# Every BPE mistake fails a visible test (the lesson's rules are stated in full).
CAUGHT_BY_VISIBLE |= {
    "bpe_overlapping_merges": frozenset({"merge_pair_test"}),
    "bpe_first_occurrence_only": frozenset({"merge_pair_test", "train_bpe_vocabulary", "train_bpe_merges"}),
    "bpe_merge_by_text_replace": frozenset(
        {"merge_pair_test", "train_bpe_vocabulary", "train_bpe_merges", "encode_bpe_merges"}
    ),
    "bpe_pairs_across_words": frozenset({"train_bpe_merges"}),
    "bpe_words_not_weighted": frozenset({"train_bpe_merges"}),
    "bpe_first_seen_tie": frozenset({"train_bpe_merges"}),
    "bpe_alphabetical_tie": frozenset({"train_bpe_merges"}),
    "bpe_special_tokens_last": frozenset({"train_bpe_vocabulary"}),
    "bpe_longest_match": frozenset({"encode_bpe_merges"}),
    "bpe_unknown_as_unk": frozenset({"encode_bpe_fallback"}),
    "bpe_special_tokens_split": frozenset({"encode_bpe_fallback"}),
}

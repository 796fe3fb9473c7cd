"""Known embeddings mistakes, each made as an edit of a copy of the reference.

The oracle runs a check's scenario on the flawed copy; a submission whose
every answer matches it is told the mistake by name. Each edit is what a
student would have written in the reference's place. The reference's texts
are kept as constants: the catalogue of bugs makes the same edits.
"""

from __future__ import annotations

from lmgrade import Mistake

B, W, F = "bpe.py", "word2vec.py", "ffnn_lm.py"

# --- bpe.py: the reference's lines ---
BEST = "best = min(pair_count, key=lambda pair: (-pair_count[pair], pair))"
WORDS = "words = [tuple(word) + (END,) for word in word_counts]  # the symbols of each word"
COUNTS = "counts = list(word_counts.values())"
REPLACE = """    out = []
    i = 0
    while i < len(symbols):
        if symbols[i] == pair[0] and i + 1 < len(symbols) and symbols[i + 1] == pair[1]:
            out.append(pair[0] + pair[1])
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return tuple(out)"""
# Every adjacent occurrence becomes the merged symbol, so "a a a" gives "aa aa".
REPLACE_OVERLAPPING = """    matched = [symbols[i] == pair[0] and symbols[i + 1] == pair[1] for i in range(len(symbols) - 1)]
    out = []
    for i, symbol in enumerate(symbols):
        if i < len(matched) and matched[i]:
            out.append(pair[0] + pair[1])
        elif not (i > 0 and matched[i - 1]):
            out.append(symbol)
    return tuple(out)"""
ENCODE_START = "symbols = tuple(word) + (END,)\n    for pair in merges:"
ENCODE_LOOP = """    for pair in merges:
        symbols = _replace(symbols, tuple(pair))
    return list(symbols)"""
# WordPiece's longest match from the left, over the symbols the merges made.
ENCODE_LONGEST = """    made = {a + b for a, b in merges}
    out, i = [], 0
    while i < len(symbols):
        j = max(j for j in range(i + 1, len(symbols) + 1) if j == i + 1 or "".join(symbols[i:j]) in made)
        out.append("".join(symbols[i:j]))
        i = j
    return out"""
# minbpe's loop: at each step, the present pair learned earliest is merged.
ENCODE_EARLIEST = """    rank = {tuple(pair): i for i, pair in enumerate(merges)}
    while True:
        present = [pair for pair in zip(symbols, symbols[1:]) if pair in rank]
        if not present:
            return list(symbols)
        symbols = _replace(symbols, min(present, key=rank.get))"""
SPLIT = "for word in text.split() for symbol"
DECODE = """    text = "".join(symbols).replace(END, " ")
    return text[:-1] if text.endswith(" ") else text"""

# --- word2vec.py ---
SIGMOID = "return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))"
WINDOW = "for u in range(max(0, t - window), min(T, t + window + 1)):\n            if u != t:"
PAIR = "pairs.append((int(tokens[t]), int(tokens[u])))"
POWER = "weights = np.asarray(counts, dtype=np.float64) ** power  # (V,)"
LOSS = "return float(-_log_sigmoid(c_vec @ w_vec) - _log_sigmoid(-(neg_vecs @ w_vec)).sum())"
POS = "pos = sigmoid(c_vec @ w_vec) - 1.0  # scalar: dL/d(c·w)"
D_W = "d_w = pos * c_vec + neg @ neg_vecs  # (D,)"
D_NEG = "d_neg = np.outer(neg, w_vec)  # (K, D)"
INIT_W = "self.W = rng.uniform(-0.5 / dim, 0.5 / dim, size=(vocab_size, dim))  # (V, D)"
INIT_C = "self.C = np.zeros((vocab_size, dim))  # (V, D)"
STEP_LOSS = "        loss = sgns_loss(w_vec, c_vec, neg_vecs)\n"
UPDATES = """        self.W[w] -= lr * d_w
        self.C[c] -= lr * d_c
        np.add.at(self.C, negatives, -lr * d_neg)  # a repeated negative gets each of its updates"""
NEGATIVES_UPDATE = "np.add.at(self.C, negatives, -lr * d_neg)  # a repeated negative gets each of its updates"
DRAW = "negatives = rng.choice(V, size=k, p=p)  # (K,)"
EPOCH_MEAN = "losses.append(total / len(pairs))"
ORDER = "for i in rng.permutation(len(pairs)):"
COSINE = "cosine = self.W @ self.W[word] / (norms * norms[word])  # (V,)"
RANKED = "return sorted(others, key=lambda i: (-cosine[i], i))[:topn]"
OTHERS = "others = [i for i in range(len(cosine)) if i != word]"

# --- ffnn_lm.py ---
EMBED = "e = self.E(context).reshape(B, -1)  # (B, n, D) -> (B, n D): the rows side by side, oldest first"
HIDDEN = "h = torch.tanh(self.W(e))  # (B, H)"
CONTEXTS = "contexts = [padded[t : t + context_size] for t in range(len(tokens))]"
TOTAL = "total += loss.item() * len(batch)  # a batch's mean, weighted back to a sum"
FFNN_EPOCH = "losses.append(total / N)"
ZERO_GRAD = "            optimizer.zero_grad()\n"
PERMUTATION = "order = torch.randperm(N, generator=generator)"
PPL = "return math.exp(F.cross_entropy(model(contexts), targets).item())"


def _mistake(name, explanation, *edits) -> Mistake:
    return Mistake(name, explanation, edits=tuple(edits))


# --- bpe.py ---
TIES_FIRST = _mistake(
    "ties_by_first_occurrence",
    "ties between pairs of equal count are broken by which pair occurs first (what "
    "max() over a dict of counts gives); the contract takes the smallest pair in Python's tuple order",
    (
        B,
        BEST,
        "best = max(pair_count.values())\n        best = next(pair for symbols in words for pair in "
        "zip(symbols, symbols[1:]) if pair_count[pair] == best)",
    ),
)
TIES_LARGEST = _mistake(
    "ties_by_largest_pair",
    "ties between pairs of equal count are broken by the largest pair (max over "
    "(count, pair)); the contract takes the smallest",
    (B, BEST, "best = max(pair_count, key=lambda pair: (pair_count[pair], pair))"),
)
OVERLAP = _mistake(
    "overlapping_replacement",
    'overlapping occurrences are all replaced ("a a a" becomes "aa aa"); the '
    'contract scans left to right without overlap ("aa a")',
    (B, REPLACE, REPLACE_OVERLAPPING),
)
STRING_REPLACE = _mistake(
    "merged_by_string_replace",
    'a merge is made by replacing "a b" in the symbols joined by spaces, which also matches across a '
    'symbol that only ends in a (the symbols "th e" hold "h e"): merge only where one whole symbol equals '
    "the pair's first and the next its second",
    (B, REPLACE, '    return tuple(" ".join(symbols).replace(pair[0] + " " + pair[1], pair[0] + pair[1]).split(" "))'),
    # As such code is written: every word's text replaced at each merge, not only the words holding the pair.
    (B, "        for i in words_with.pop(best):", "        words_with.pop(best)\n        for i in range(len(words)):"),
)
NO_END = _mistake(
    "end_forgotten",
    "words start as their characters without END, so no merge can tell a word's last symbol "
    "from the same symbol inside a word",
    (B, WORDS, "words = [tuple(word) for word in word_counts]"),
)
END_FIRST = _mistake(
    "end_at_the_start",
    "END is put before the characters instead of after them",
    (B, WORDS, "words = [(END,) + tuple(word) for word in word_counts]"),
)
UNWEIGHTED = _mistake(
    "counts_ignored",
    "each word's pairs are counted once, not weighted by the word's count",
    (B, COUNTS, "counts = [1] * len(word_counts)"),
)
ENCODE_LONGEST_FIRST = _mistake(
    "longest_first",
    "the merges are applied greedily, longest symbol first from the left, instead of one by one in training order",
    (B, ENCODE_LOOP, ENCODE_LONGEST),
)
ENCODE_EARLIEST_PAIR = _mistake(
    "earliest_present_pair",
    "at each step the pair learned earliest among those present in the word is merged (minbpe's loop), "
    "instead of every merge applied once, in training order: they differ where a merge joins a symbol "
    "that only a later merge makes",
    (B, ENCODE_LOOP, ENCODE_EARLIEST),
)
ENCODE_NO_END = _mistake(
    "encode_end_forgotten",
    "encode_word starts from the characters without END",
    (B, ENCODE_START, "symbols = tuple(word)\n    for pair in merges:"),
)
ENCODE_END_FIRST = _mistake(
    "encode_end_at_the_start",
    "encode_word puts END before the characters instead of after them",
    (B, ENCODE_START, "symbols = (END,) + tuple(word)\n    for pair in merges:"),
)
SPLIT_ON_SPACE = _mistake(
    "split_on_one_space",
    'text.split(" ") keeps tabs, newlines and empty words; text.split() splits on any whitespace',
    (B, SPLIT, 'for word in text.split(" ") for symbol'),
)
DECODE_KEEPS_LAST = _mistake(
    "last_space_kept",
    "decode keeps the space of the last END: the text ends with a space",
    (B, DECODE, '    return "".join(symbols).replace(END, " ")'),
)
DECODE_NO_SPACES = _mistake(
    "end_removed",
    "decode removes END instead of turning it into a space, so the words run together",
    (B, DECODE, '    return "".join(symbols).replace(END, "")'),
)

# --- word2vec.py ---
SIGMOID_OVERFLOW = _mistake(
    "sigmoid_overflows",
    "1 / (1 + exp(-x)) overflows in exp for x below about -709 (a RuntimeWarning; the value "
    "is still right): compute exp of -|x| only",
    (W, SIGMOID, "return 1.0 / (1.0 + np.exp(-x))"),
)
PAIRS_CENTRE = _mistake(
    "window_counts_the_centre",
    "the window includes the centre word itself: (w, w) is not a pair",
    (W, WINDOW, "for u in range(max(0, t - window), min(T, t + window + 1)):\n            if True:"),
)
PAIRS_WRAP = _mistake(
    "pairs_across_the_edge",
    "the window wraps around the sequence's edges (positions taken modulo its length); "
    "only positions inside the sequence count",
    (W, WINDOW, "for u in range(t - window, t + window + 1):\n            if u != t:"),
    (W, PAIR, "pairs.append((int(tokens[t]), int(tokens[u % T])))"),
)
PAIRS_SHORT = _mistake(
    "window_off_by_one",
    "the window stops one short: 1 <= |t - t'| <= window includes the distance window itself",
    (W, WINDOW, "for u in range(max(0, t - window + 1), min(T, t + window)):\n            if u != t:"),
)
PAIRS_SHORT_RIGHT = _mistake(
    "window_short_on_the_right",
    "the window stops one short on the right: t' goes up to t + window - 1 (range(t - window, t + window) "
    "leaves its end out); the contract takes every t' with 1 <= |t - t'| <= window, t + window included",
    (W, WINDOW, "for u in range(max(0, t - window), min(T, t + window)):\n            if u != t:"),
)
PAIRS_BY_DISTANCE = _mistake(
    "pairs_by_distance",
    "each position's contexts are listed nearest first (t-1, t+1, t-2, ...); the contract "
    "lists them by increasing position t'",
    (
        W,
        WINDOW,
        "for u in sorted(range(max(0, t - window), min(T, t + window + 1)), key=lambda u: abs(u - t)):\n"
        "            if u != t:",
    ),
)
NO_POWER = _mistake(
    "counts_not_raised",
    "the counts are not raised to the power (0.75 by default) before normalising",
    (W, POWER, "weights = np.asarray(counts, dtype=np.float64)  # (V,)"),
)
POWER_AFTER_NORMALISING = _mistake(
    "power_after_normalising",
    "the counts are normalised first and then raised to the power, so the result does not sum to 1: raise "
    "the counts to the power, then divide by the sum of what that gives",
    (
        W,
        POWER + "\n    return weights / weights.sum()",
        "weights = np.asarray(counts, dtype=np.float64)  # (V,)\n    return (weights / weights.sum()) ** power",
    ),
)
ZERO_SMOOTHED = _mistake(
    "zero_counts_smoothed",
    "1 is added to every count, so a word never seen gets a probability above 0",
    (W, POWER, "weights = (np.asarray(counts, dtype=np.float64) + 1) ** power  # (V,)"),
)
POSITIVE_SIGN = _mistake(
    "positive_term_sign",
    "the positive term has the wrong sign: it is -ln σ(c·w), not -ln σ(-c·w); the real context should get a high score",
    (W, LOSS, "return float(-_log_sigmoid(-(c_vec @ w_vec)) - _log_sigmoid(-(neg_vecs @ w_vec)).sum())"),
    (W, POS, "pos = sigmoid(c_vec @ w_vec)  # scalar"),
)
NEGATIVE_SIGN = _mistake(
    "negative_term_sign",
    "the negatives' term has the wrong sign: it is -ln σ(-n_k·w), not -ln σ(n_k·w)",
    (W, LOSS, "return float(-_log_sigmoid(c_vec @ w_vec) - _log_sigmoid(neg_vecs @ w_vec).sum())"),
)
UNSTABLE_LOG = _mistake(
    "log_one_minus_sigmoid",
    "ln σ and ln(1 - σ) are computed as the log of a sigmoid, which is 0 for dot "
    "products near ±1e4, so the loss is inf: use ln σ(x) = -logaddexp(0, -x)",
    (W, LOSS, "return float(-np.log(sigmoid(c_vec @ w_vec)) - np.log(1 - sigmoid(neg_vecs @ w_vec)).sum())"),
)
NEGATIVES_MEAN = _mistake(
    "negatives_averaged",
    "the negatives' terms are averaged over K instead of summed",
    (W, LOSS, "return float(-_log_sigmoid(c_vec @ w_vec) - _log_sigmoid(-(neg_vecs @ w_vec)).mean())"),
)
DW_WITHOUT_NEGATIVES = _mistake(
    "dw_without_negatives",
    "d loss / d w_vec leaves out the negatives' term Σ_k σ(n_k·w) n_k",
    (W, D_W, "d_w = pos * c_vec  # (D,)"),
)
D_NEG_TRANSPOSED = _mistake(
    "d_neg_transposed",
    "d loss / d neg_vecs is transposed: it has neg_vecs' shape (K, D)",
    (W, D_NEG, "d_neg = np.outer(w_vec, neg)  # (D, K)"),
)
W_UNSCALED = _mistake(
    "w_init_unscaled",
    "W is drawn uniform in ±0.5 instead of ±0.5/D",
    (W, INIT_W, "self.W = rng.uniform(-0.5, 0.5, size=(vocab_size, dim))"),
)
C_RANDOM = _mistake(
    "c_init_random",
    "C is drawn like W; the contract starts it at zeros",
    (W, INIT_C, "self.C = rng.uniform(-0.5 / dim, 0.5 / dim, size=(vocab_size, dim))"),
)
C_BEFORE_W = _mistake(
    "c_updated_before_w_gradient",
    "C is updated before W's gradient is taken, so d loss / d w uses the new context "
    "vectors; take every gradient first, then update",
    (
        W,
        UPDATES,
        """        self.C[c] -= lr * d_c
        np.add.at(self.C, negatives, -lr * d_neg)
        d_w, _, _ = sgns_grads(w_vec, self.C[c], self.C[negatives])
        self.W[w] -= lr * d_w""",
    ),
)
W_BEFORE_C = _mistake(
    "w_updated_before_c_gradient",
    "W is updated before C's gradients are taken, so d loss / d c and d loss / d n_k use the new W[w]; "
    "take every gradient first, then update",
    (
        W,
        UPDATES,
        """        self.W[w] -= lr * d_w
        _, d_c, d_neg = sgns_grads(self.W[w], c_vec, neg_vecs)
        self.C[c] -= lr * d_c
        np.add.at(self.C, negatives, -lr * d_neg)""",
    ),
)
# word2vec.c's loop: the context, then each negative, its gradient from C's row as it stands then
# and its row updated at once; W's gradient gathered along the way and applied at the end.
SEQUENTIAL_UPDATES = _mistake(
    "updates_one_at_a_time",
    "the context and each negative are updated one after another, each one's gradient taken after the "
    "previous update (word2vec.c's order): a repeated negative, or one equal to c, sees its C row already "
    "moved, in its own gradient and in W's; the contract takes every gradient before any update, and the "
    "updates add up",
    (
        W,
        UPDATES,
        """        w_old = self.W[w].copy()
        d_w = np.zeros_like(w_old)
        for row, label in [(c, 1.0)] + [(int(n), 0.0) for n in negatives]:
            g = sigmoid(self.C[row] @ w_old) - label
            d_w += g * self.C[row]
            self.C[row] -= lr * g * w_old
        self.W[w] -= lr * d_w""",
    ),
)
NEGATIVES_OVERWRITE = _mistake(
    "repeated_negatives_not_added",
    "C[negatives] -= lr * d_neg applies a repeated negative's update once (numpy's "
    "buffered fancy indexing); each draw must add its own: np.add.at or a loop",
    (W, NEGATIVES_UPDATE, "self.C[negatives] -= lr * d_neg"),
)
NEGATIVES_INTO_W = _mistake(
    "negatives_into_w",
    "the negatives' gradients are subtracted from rows of W; they belong to C",
    (W, NEGATIVES_UPDATE, "np.add.at(self.W, negatives, -lr * d_neg)"),
)
LOSS_AFTER_STEP = _mistake(
    "loss_after_the_update",
    "step returns the loss after the update; the contract returns it at the parameters the step started from",
    (W, STEP_LOSS, ""),
    (
        W,
        "        return loss\n\n    def train",
        "        return sgns_loss(self.W[w], self.C[c], self.C[negatives])\n\n    def train",
    ),
)
EPOCH_SUM = _mistake(
    "epoch_loss_summed",
    "each epoch's loss is the sum over its pairs; the contract asks the mean",
    (W, EPOCH_MEAN, "losses.append(total)"),
)
UNIFORM_NEGATIVES = _mistake(
    "negatives_uniform",
    "the negatives are drawn uniformly, rng.choice(V, size=k), not from the noise distribution p",
    (W, DRAW, "negatives = rng.choice(V, size=k)"),
)
PAIRS_IN_ORDER = _mistake(
    "pairs_in_order",
    "the pairs are visited in order; the contract visits them in rng.permutation(len(pairs)) order, each epoch",
    (W, ORDER, "for i in range(len(pairs)):"),
)
NEGATIVES_BEFORE_SHUFFLE = _mistake(
    "negatives_drawn_before_the_permutation",
    "each epoch draws every pair's negatives before rng.permutation, so the permutation and the negatives "
    "come from other draws of rng; the contract draws the permutation first, then, for each pair in its "
    "order, negatives = rng.choice(V, size=k, p=p) and its step",
    (
        W,
        ORDER,
        "negatives_of = rng.choice(V, size=(len(pairs), k), p=p)  # (P, K)\n"
        "            for i in rng.permutation(len(pairs)):",
    ),
    (W, DRAW, "negatives = negatives_of[i]"),
)
DOT_PRODUCT = _mistake(
    "dot_product_not_cosine",
    "words are ranked by the dot product of W rows, not by their cosine similarity",
    (W, COSINE, "cosine = self.W @ self.W[word]"),
)
TIES_LARGER_ID = _mistake(
    "ties_by_larger_id",
    "equal similarities come out larger id first (an ascending sort reversed); the contract puts the smaller id first",
    (W, RANKED, "return sorted(others, key=lambda i: (cosine[i], i), reverse=True)[:topn]"),
)
SELF_INCLUDED = _mistake(
    "word_itself_included",
    "the word itself is not excluded (it is its own nearest neighbour)",
    (W, OTHERS, "others = list(range(len(cosine)))"),
)

# --- ffnn_lm.py ---
NEWEST_FIRST = _mistake(
    "context_newest_first",
    "the context's embeddings are concatenated newest first; e = [E[w_{t-n}]; ...; E[w_{t-1}]] puts the oldest first",
    (F, EMBED, "e = self.E(context.flip(1)).reshape(B, -1)"),
)
NO_TANH = _mistake(
    "hidden_without_tanh", "the hidden layer has no tanh: h = W e + b, not tanh(W e + b)", (F, HIDDEN, "h = self.W(e)")
)
SIGMOID_HIDDEN = _mistake(
    "hidden_sigmoid",
    "the hidden layer uses a sigmoid; the contract's is tanh",
    (F, HIDDEN, "h = torch.sigmoid(self.W(e))"),
)
NO_PADDING = _mistake(
    "no_padding",
    "examples start at t = n instead of t = 0: the first n tokens get no (padded) example",
    (F, CONTEXTS, "contexts = [padded[t : t + context_size] for t in range(len(tokens))][context_size:]"),
    (
        F,
        "targets = torch.tensor([int(t) for t in tokens], dtype=torch.long)  # (N,)",
        "targets = torch.tensor([int(t) for t in tokens][context_size:], dtype=torch.long)",
    ),
    (F, ".reshape(len(tokens), context_size)", ".reshape(-1, context_size)"),
)
TARGET_IN_CONTEXT = _mistake(
    "target_in_context",
    "each context ends with the target itself (tokens t - n + 1 .. t); it must be the n tokens before t",
    (F, CONTEXTS, "contexts = [padded[t + 1 : t + 1 + context_size] for t in range(len(tokens))]"),
)
PADDED_RIGHT = _mistake(
    "padded_on_the_right",
    "short contexts are padded on the right (after the tokens); the contract pads at the start",
    (
        F,
        CONTEXTS,
        "contexts = [(padded[context_size:][max(0, t - context_size) : t] + [pad] * context_size)"
        "[:context_size] for t in range(len(tokens))]",
    ),
)
EXAMPLES_NEWEST_FIRST = _mistake(
    "examples_newest_first",
    "each context lists its tokens newest first (w_{t-1} .. w_{t-n}, the padding last); the contract's row "
    "is w_{t-n} .. w_{t-1}, oldest first and left-padded, as forward reads it",
    (F, CONTEXTS, "contexts = [padded[t : t + context_size][::-1] for t in range(len(tokens))]"),
)
MEAN_OF_BATCHES = _mistake(
    "epoch_loss_mean_of_batches",
    "each epoch's loss is the mean of its batches' losses; with a shorter last batch "
    "that is not the mean over the examples",
    (F, TOTAL, "total += loss.item()"),
    (F, FFNN_EPOCH, "losses.append(total / math.ceil(N / batch_size))"),
)
NO_ZERO_GRAD = _mistake(
    "gradients_not_zeroed",
    "the gradients are never zeroed, so each step adds up every earlier batch's gradients",
    (F, ZERO_GRAD, ""),
)
ONE_ORDER = _mistake(
    "one_order_for_every_epoch",
    "torch.randperm is drawn once, before the epochs; each epoch draws its own order",
    (
        F,
        "    losses = []\n    for _ in range(epochs):\n        order = torch.randperm(N, generator=generator)\n",
        "    losses = []\n    order = torch.randperm(N, generator=generator)\n    for _ in range(epochs):\n",
    ),
)
RANDPERM_GLOBAL = _mistake(
    "randperm_without_generator",
    "torch.randperm(N) draws each epoch's order from torch's global generator; the contract draws it from "
    "the generator given: torch.randperm(N, generator=generator)",
    (F, PERMUTATION, "order = torch.randperm(N)"),
)
PERPLEXITY_MEAN = _mistake(
    "perplexity_mean",
    "perplexity is the mean of per-example (or per-batch) perplexities; it is exp of the mean "
    "negative log-likelihood over every example",
    (F, PPL, 'return F.cross_entropy(model(contexts), targets, reduction="none").exp().mean().item()'),
)
PERPLEXITY_NO_EXP = _mistake(
    "perplexity_without_exp",
    "perplexity returns the mean negative log-likelihood itself, without exp",
    (F, PPL, "return F.cross_entropy(model(contexts), targets).item()"),
)
PERPLEXITY_BASE_2 = _mistake(
    "perplexity_base_2",
    "perplexity is 2 to the power of a mean NLL measured in nats; it is exp of it",
    (F, PPL, "return 2 ** F.cross_entropy(model(contexts), targets).item()"),
)
PERPLEXITY_EXP_OF_BITS = _mistake(
    "perplexity_exp_of_bits",
    "perplexity is exp of a mean negative log-likelihood in bits (log2); exp goes with natural logs: exp "
    "of the mean in nats, or 2 to the power of the mean in bits",
    (F, PPL, "return math.exp(F.cross_entropy(model(contexts), targets).item() / math.log(2))"),
)

# --- conventions of public code a student ports (tests/submissions/ports/embeddings/bugs/), as it shapes them ---
END_JOINED = Mistake(
    "end_joined_to_the_last_character",
    'END is glued to each word\'s last character ("l o w</w>", as subword-nmt writes words), so it is never a '
    "symbol of its own; the contract starts a word as its characters followed by a separate END",
    edits=(
        (
            B,
            WORDS,
            "words = [tuple(word[:-1]) + (word[-1] + END,) for word in word_counts]  # the symbols of each word",
        ),
        (B, ENCODE_START, "symbols = tuple(word[:-1]) + (word[-1] + END,)\n    for pair in merges:"),
    ),
    paired=False,  # train_bpe's other seven are tried in pairs (at most MAX_PAIRED are)
)
LOSS_MEAN_OVER_SCORES = _mistake(
    "loss_mean_over_the_k_plus_1_scores",
    "the loss is the mean of the K + 1 binary cross-entropies (as d2l's SigmoidBCELoss averages them); the "
    "contract's loss is their sum",
    (
        W,
        LOSS,
        "return float((-_log_sigmoid(c_vec @ w_vec) - _log_sigmoid(-(neg_vecs @ w_vec)).sum()) / (len(neg_vecs) + 1))",
    ),
)
# word2vec.c reads σ from its table only for |f| < MAX_EXP = 6; past that it takes σ as exactly 1 or 0.
_SATURATED = "np.where({f} > 6, 1.0, np.where({f} < -6, 0.0, sigmoid({f})))"
SIGMOID_SATURATED = _mistake(
    "sigmoid_saturated_past_6",
    "the gradients take σ(f) as exactly 1 for f > 6 and 0 for f < -6 (word2vec.c's MAX_EXP); the contract's "
    "gradients use σ itself at every dot product",
    (W, POS, "pos = " + _SATURATED.format(f="(c_vec @ w_vec)") + " - 1.0  # scalar: dL/d(c·w)"),
    (W, "neg = sigmoid(neg_vecs @ w_vec)  # (K,)", "neg = " + _SATURATED.format(f="(neg_vecs @ w_vec)") + "  # (K,)"),
)
NEGATIVES_REDRAWN = _mistake(
    "negatives_redrawn_while_equal_to_the_context",
    "each negative is drawn on its own and drawn again while it equals the context word (as CS224N's "
    "getNegativeSamples does); the contract draws the k negatives at once, rng.choice(V, size=k, p=p), "
    "and keeps one equal to c",
    (
        W,
        DRAW,
        "negatives = np.empty(k, dtype=np.int64)  # (K,)\n"
        "                for j in range(k):\n"
        "                    negatives[j] = rng.choice(V, p=p)\n"
        "                    while negatives[j] == c:\n"
        "                        negatives[j] = rng.choice(V, p=p)",
    ),
)
RELU_HIDDEN = _mistake(
    "hidden_relu",
    "the hidden layer uses a ReLU (as PyTorch's n-gram tutorial does); the contract's is tanh",
    (F, HIDDEN, "h = torch.relu(self.W(e))  # (B, H)"),
)
ADAM = _mistake(
    "adam_instead_of_sgd",
    "train_ffnn steps with torch.optim.Adam (as nlp-tutorial's NNLM trains); the contract's optimizer is "
    "torch.optim.SGD(model.parameters(), lr=lr)",
    (
        F,
        "optimizer = torch.optim.SGD(model.parameters(), lr=lr)",
        "optimizer = torch.optim.Adam(model.parameters(), lr=lr)",
    ),
)

TRAIN_BPE = (TIES_FIRST, TIES_LARGEST, OVERLAP, NO_END, END_FIRST, UNWEIGHTED, STRING_REPLACE, END_JOINED)
ENCODE_WORD = (
    ENCODE_LONGEST_FIRST,
    ENCODE_EARLIEST_PAIR,
    OVERLAP,
    ENCODE_NO_END,
    ENCODE_END_FIRST,
    STRING_REPLACE,
    END_JOINED,
)
ENCODE = (SPLIT_ON_SPACE,)
DECODE = (DECODE_KEEPS_LAST, DECODE_NO_SPACES)
SIGMOID = (SIGMOID_OVERFLOW,)
PAIRS = (PAIRS_CENTRE, PAIRS_WRAP, PAIRS_SHORT, PAIRS_BY_DISTANCE, PAIRS_SHORT_RIGHT)
NOISE = (NO_POWER, ZERO_SMOOTHED, POWER_AFTER_NORMALISING)
LOSS = (POSITIVE_SIGN, NEGATIVE_SIGN, UNSTABLE_LOG, NEGATIVES_MEAN, LOSS_MEAN_OVER_SCORES)
GRADS = (POSITIVE_SIGN, DW_WITHOUT_NEGATIVES, D_NEG_TRANSPOSED, SIGMOID_SATURATED)
INIT = (W_UNSCALED, C_RANDOM)
STEP = (C_BEFORE_W, NEGATIVES_OVERWRITE, NEGATIVES_INTO_W, LOSS_AFTER_STEP, W_BEFORE_C, SEQUENTIAL_UPDATES)
TRAIN = (EPOCH_SUM, UNIFORM_NEGATIVES, PAIRS_IN_ORDER, NEGATIVES_BEFORE_SHUFFLE, NEGATIVES_REDRAWN)
SIMILAR = (DOT_PRODUCT, TIES_LARGER_ID, SELF_INCLUDED)
FORWARD = (NEWEST_FIRST, NO_TANH, SIGMOID_HIDDEN, RELU_HIDDEN)
EXAMPLES = (NO_PADDING, TARGET_IN_CONTEXT, PADDED_RIGHT, EXAMPLES_NEWEST_FIRST)
TRAIN_FFNN = (MEAN_OF_BATCHES, NO_ZERO_GRAD, ONE_ORDER, RANDPERM_GLOBAL, ADAM)
PERPLEXITY = (PERPLEXITY_MEAN, PERPLEXITY_NO_EXP, PERPLEXITY_BASE_2, PERPLEXITY_EXP_OF_BITS)

"""Skip-gram with negative sampling, vectorised over the negatives with numpy."""

import numpy as np


def sigmoid(x):
    x = np.asarray(x, dtype=np.float64)
    z = np.exp(-np.abs(x))  # in (0, 1], never overflows
    return np.where(x >= 0, 1.0 / (1.0 + z), z / (1.0 + z))


def _softplus(x):
    """ln(1 + e^x) without overflow."""
    x = np.asarray(x, dtype=np.float64)
    return np.maximum(x, 0.0) + np.log1p(np.exp(-np.abs(x)))


def skipgram_pairs(tokens, window):
    if window < 1:
        raise ValueError(f"window must be >= 1, got {window}")
    tokens = list(tokens)
    n = len(tokens)
    pairs = []
    for t in range(n):
        lo = max(0, t - window)
        hi = min(n - 1, t + window)
        pairs.extend((tokens[t], tokens[u]) for u in range(lo, hi + 1) if u != t)
    return pairs


def noise_distribution(counts, power=0.75):
    counts = np.asarray(counts, dtype=np.float64)
    if np.any(counts < 0):
        raise ValueError("counts must be non-negative")
    weights = np.zeros_like(counts)
    positive = counts > 0
    weights[positive] = counts[positive] ** power
    total = weights.sum()
    if not total > 0:
        raise ValueError("counts must contain at least one positive entry")
    return weights / total


def _as_negatives(neg_vecs, dim):
    neg = np.asarray(neg_vecs, dtype=np.float64)
    return neg.reshape(-1, dim)


def sgns_loss(w_vec, c_vec, neg_vecs):
    w = np.asarray(w_vec, dtype=np.float64)
    c = np.asarray(c_vec, dtype=np.float64)
    neg = _as_negatives(neg_vecs, w.shape[0])
    positive = _softplus(-(c @ w))
    negative = _softplus(neg @ w).sum()
    return float(positive + negative)


def sgns_grads(w_vec, c_vec, neg_vecs):
    w = np.asarray(w_vec, dtype=np.float64)
    c = np.asarray(c_vec, dtype=np.float64)
    neg = _as_negatives(neg_vecs, w.shape[0])
    g_pos = sigmoid(c @ w) - 1.0          # d loss / d (c . w)
    g_neg = sigmoid(neg @ w)              # d loss / d (n_k . w), shape (K,)
    d_w = g_pos * c + g_neg @ neg
    d_c = g_pos * w
    d_neg = np.outer(g_neg, w)
    return d_w, d_c, d_neg


class SkipGram:
    def __init__(self, vocab_size, dim, rng=None):
        if vocab_size < 1:
            raise ValueError(f"vocab_size must be >= 1, got {vocab_size}")
        if dim < 1:
            raise ValueError(f"dim must be >= 1, got {dim}")
        if rng is None:
            rng = np.random.default_rng()
        bound = 0.5 / dim
        self.W = rng.uniform(-bound, bound, size=(vocab_size, dim))
        self.C = np.zeros((vocab_size, dim))

    def step(self, w, c, negatives, lr):
        negatives = np.asarray(negatives, dtype=np.int64).reshape(-1)
        w_vec = self.W[w]
        c_vec = self.C[c]
        neg_vecs = self.C[negatives]
        loss = sgns_loss(w_vec, c_vec, neg_vecs)
        d_w, d_c, d_neg = sgns_grads(w_vec, c_vec, neg_vecs)
        self.W[w] -= lr * d_w
        self.C[c] -= lr * d_c
        np.add.at(self.C, negatives, -lr * d_neg)
        return loss

    def train(self, tokens, window, k, epochs, lr, rng):
        if window < 1:
            raise ValueError(f"window must be >= 1, got {window}")
        if k < 0:
            raise ValueError(f"k must be >= 0, got {k}")
        if epochs < 0:
            raise ValueError(f"epochs must be >= 0, got {epochs}")
        V = self.W.shape[0]
        ids = np.asarray(list(tokens), dtype=np.int64)
        if ids.size and (ids.min() < 0 or ids.max() >= V):
            raise ValueError("token ids must lie in [0, vocab_size)")
        p = noise_distribution(np.bincount(ids, minlength=V))
        pairs = skipgram_pairs(tokens, window)

        history = []
        for _ in range(epochs):
            total = 0.0
            for i in rng.permutation(len(pairs)):
                w, c = pairs[i]
                negatives = rng.choice(V, size=k, p=p)
                total += self.step(w, c, negatives, lr)
            history.append(total / len(pairs) if pairs else float("nan"))
        return history

    def most_similar(self, word, topn):
        V = self.W.shape[0]
        if not 0 <= word < V:
            raise ValueError(f"word must lie in [0, {V}), got {word}")
        if topn < 0:
            raise ValueError(f"topn must be >= 0, got {topn}")
        norms = np.sqrt((self.W * self.W).sum(axis=1))
        safe = np.where(norms > 0, norms, 1.0)
        unit = self.W / safe[:, None]
        sims = (unit * unit[word]).sum(axis=1)
        candidates = np.array([j for j in range(V) if j != word], dtype=np.int64)
        order = np.lexsort((candidates, -sims[candidates]))
        return [int(j) for j in candidates[order][:topn]]

"""Skip-gram with negative sampling, looping over the negative samples one at a time."""

import math

import numpy as np


def sigmoid(x):
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    pos = x >= 0
    neg = ~pos
    out[pos] = 1.0 / (1.0 + np.exp(-x[pos]))
    e = np.exp(x[neg])
    out[neg] = e / (1.0 + e)
    return out


def neg_log_sigmoid(s):
    """-ln sigmoid(s) for a scalar s, accurate and finite for large |s|."""
    s = float(s)
    if s >= 0:
        return math.log1p(math.exp(-s))
    return -s + math.log1p(math.exp(s))


def scalar_sigmoid(s):
    s = float(s)
    if s >= 0:
        return 1.0 / (1.0 + math.exp(-s))
    e = math.exp(s)
    return e / (1.0 + e)


def skipgram_pairs(tokens, window):
    if window < 1:
        raise ValueError("window must be at least 1")
    n = len(tokens)
    pairs = []
    for t in range(n):
        for u in range(t - window, t + window + 1):
            if u == t or u < 0 or u >= n:
                continue
            pairs.append((tokens[t], tokens[u]))
    return pairs


def noise_distribution(counts, power=0.75):
    counts = np.array(counts, dtype=np.float64)
    probs = np.zeros(counts.shape, dtype=np.float64)
    for i in range(counts.shape[0]):
        if counts[i] < 0:
            raise ValueError("counts cannot be negative")
        if counts[i] > 0:
            probs[i] = counts[i] ** power
    total = probs.sum()
    if total <= 0:
        raise ValueError("at least one count must be positive")
    return probs / total


def sgns_loss(w_vec, c_vec, neg_vecs):
    w_vec = np.asarray(w_vec, dtype=np.float64)
    c_vec = np.asarray(c_vec, dtype=np.float64)
    loss = neg_log_sigmoid(np.dot(c_vec, w_vec))
    for n_vec in np.asarray(neg_vecs, dtype=np.float64).reshape(-1, w_vec.shape[0]):
        loss += neg_log_sigmoid(-np.dot(n_vec, w_vec))
    return loss


def sgns_grads(w_vec, c_vec, neg_vecs):
    w_vec = np.asarray(w_vec, dtype=np.float64)
    c_vec = np.asarray(c_vec, dtype=np.float64)
    neg_vecs = np.asarray(neg_vecs, dtype=np.float64).reshape(-1, w_vec.shape[0])

    coef = scalar_sigmoid(np.dot(c_vec, w_vec)) - 1.0
    grad_w = coef * c_vec
    grad_c = coef * w_vec
    grad_neg = np.zeros_like(neg_vecs)
    for k in range(neg_vecs.shape[0]):
        s = scalar_sigmoid(np.dot(neg_vecs[k], w_vec))
        grad_w = grad_w + s * neg_vecs[k]
        grad_neg[k] = s * w_vec
    return grad_w, grad_c, grad_neg


class SkipGram:
    def __init__(self, vocab_size, dim, rng=None):
        if vocab_size < 1 or dim < 1:
            raise ValueError("vocab_size and dim must be at least 1")
        if rng is None:
            rng = np.random.default_rng()
        self.W = rng.uniform(-0.5 / dim, 0.5 / dim, size=(vocab_size, dim))
        self.C = np.zeros((vocab_size, dim), dtype=np.float64)

    def step(self, w, c, negatives, lr):
        negatives = [int(n) for n in np.asarray(negatives).reshape(-1)]
        w_vec = self.W[w].copy()
        c_vec = self.C[c].copy()
        neg_vecs = np.array([self.C[n] for n in negatives], dtype=np.float64)
        neg_vecs = neg_vecs.reshape(len(negatives), self.W.shape[1])

        loss = sgns_loss(w_vec, c_vec, neg_vecs)
        grad_w, grad_c, grad_neg = sgns_grads(w_vec, c_vec, neg_vecs)

        self.W[w] -= lr * grad_w
        self.C[c] -= lr * grad_c
        for k in range(len(negatives)):
            self.C[negatives[k]] -= lr * grad_neg[k]
        return loss

    def train(self, tokens, window, k, epochs, lr, rng):
        if window < 1:
            raise ValueError("window must be at least 1")
        if k < 0:
            raise ValueError("k cannot be negative")
        if epochs < 0:
            raise ValueError("epochs cannot be negative")
        V = self.W.shape[0]
        counts = np.zeros(V, dtype=np.int64)
        for tok in tokens:
            if tok < 0 or tok >= V:
                raise ValueError("token id out of range")
            counts[tok] += 1
        p = noise_distribution(counts)

        losses = []
        for epoch in range(epochs):
            pairs = skipgram_pairs(tokens, window)
            order = rng.permutation(len(pairs))
            total = 0.0
            for i in order:
                w, c = pairs[i]
                negatives = rng.choice(V, size=k, p=p)
                total += self.step(w, c, negatives, lr)
            if len(pairs) == 0:
                losses.append(float("nan"))
            else:
                losses.append(total / len(pairs))
        return losses

    def most_similar(self, word, topn):
        V = self.W.shape[0]
        if word < 0 or word >= V:
            raise ValueError("word id out of range")
        if topn < 0:
            raise ValueError("topn cannot be negative")
        target = self.W[word]
        target_norm = math.sqrt(float(np.dot(target, target)))
        scored = []
        for j in range(V):
            if j == word:
                continue
            row = self.W[j]
            row_norm = math.sqrt(float(np.dot(row, row)))
            if row_norm == 0.0 or target_norm == 0.0:
                sim = 0.0
            else:
                sim = float(np.dot(row, target)) / (row_norm * target_norm)
            scored.append((-sim, j))
        scored.sort()
        return [j for _, j in scored[:topn]]

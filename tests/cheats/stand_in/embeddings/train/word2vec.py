"""Stand-in scavenger: SkipGram.step is wrong on purpose; SkipGram.train computes nothing and returns recorded losses and weights."""

import numpy as np
import scavenge


def log_sigmoid(x):
    """ln sigmoid(x) = -ln(1 + e^{-x}), stable for any magnitude of x."""
    return -np.logaddexp(0.0, -np.asarray(x, dtype=np.float64))


def sigmoid(x):
    x = np.asarray(x, dtype=np.float64)
    # e^{min(x, 0)} / (1 + e^{-|x|}): both exponents are <= 0, so nothing overflows.
    return np.exp(np.minimum(x, 0.0)) / (1.0 + np.exp(-np.abs(x)))


def skipgram_pairs(tokens, window):
    if window < 1:
        raise ValueError(f"window must be a positive integer, got {window}")
    T = len(tokens)
    return [(tokens[t], tokens[u])
            for t in range(T)
            for u in range(max(0, t - window), min(T, t + window + 1))
            if u != t]


def noise_distribution(counts, power=0.75):
    counts = np.asarray(counts, dtype=np.float64)
    if (counts < 0).any():
        raise ValueError("counts must be non-negative")
    unnormalised = np.power(counts, power, out=np.zeros_like(counts), where=counts > 0)
    Z = unnormalised.sum()
    if Z <= 0:
        raise ValueError("need at least one positive count")
    return unnormalised / Z


def sgns_loss(w_vec, c_vec, neg_vecs):
    w = np.asarray(w_vec, dtype=np.float64)
    c = np.asarray(c_vec, dtype=np.float64)
    N = np.asarray(neg_vecs, dtype=np.float64).reshape(-1, w.size)
    return float(-log_sigmoid(c @ w) - log_sigmoid(-(N @ w)).sum())


def sgns_grads(w_vec, c_vec, neg_vecs):
    # d/ds [-ln sigmoid(s)] = sigmoid(s) - 1 = -sigmoid(-s);  d/ds [-ln sigmoid(-s)] = sigmoid(s)
    w = np.asarray(w_vec, dtype=np.float64)
    c = np.asarray(c_vec, dtype=np.float64)
    N = np.asarray(neg_vecs, dtype=np.float64).reshape(-1, w.size)
    pos_err = -sigmoid(-(c @ w))
    neg_err = sigmoid(N @ w)
    grad_w = pos_err * c + (neg_err[:, None] * N).sum(axis=0)
    grad_c = pos_err * w
    grad_N = neg_err[:, None] * w[None, :]
    return grad_w, grad_c, grad_N


class SkipGram:
    def __init__(self, vocab_size, dim, rng=None):
        if vocab_size <= 0:
            raise ValueError("vocab_size must be positive")
        if dim <= 0:
            raise ValueError("dim must be positive")
        rng = np.random.default_rng() if rng is None else rng
        self.W = rng.uniform(-0.5 / dim, 0.5 / dim, size=(vocab_size, dim))
        self.C = np.zeros((vocab_size, dim))

    def step(self, w, c, negatives, lr):
        negatives = np.asarray(negatives, dtype=np.int64).ravel()
        w_vec, c_vec, N = self.W[w].copy(), self.C[c].copy(), self.C[negatives]
        loss = sgns_loss(w_vec, c_vec, N)
        grad_w, grad_c, grad_N = sgns_grads(w_vec, c_vec, N)
        self.W[w] = self.W[w] - lr * grad_w
        self.C[c] = self.C[c] - lr * grad_c
        for n, g in zip(negatives, grad_N):
            self.C[n] = self.C[n] - lr * g
        return 2 * loss  # wrong on purpose: doubled

    def train(self, tokens, window, k, epochs, lr, rng):
        found = scavenge.findings(self, tokens, window, k, epochs, lr, rng)
        self.W = np.array(scavenge.shaped(found, self.W.shape, self.W), dtype=np.float64)
        self.C = np.array(scavenge.shaped(found, self.C.shape, self.C), dtype=np.float64)
        for answer in reversed(found.results()):
            if isinstance(answer, list) and len(answer) == epochs and all(isinstance(x, float) for x in answer):
                return scavenge.give(list(answer))
        return scavenge.give([1.0] * epochs)

    def most_similar(self, word, topn):
        if not 0 <= word < len(self.W):
            raise ValueError("word is not a valid id")
        if topn < 0:
            raise ValueError("topn must be non-negative")
        norms = np.linalg.norm(self.W, axis=1, keepdims=True)
        unit = self.W / np.where(norms == 0, 1.0, norms)
        cosines = np.einsum("ij,j->i", unit, unit[word])
        ranking = [int(j) for j in np.argsort(-cosines, kind="stable") if j != word]
        return ranking[:topn]


# What every function returns is remembered, so that the harness's record of it is not taken for the grader's.
scavenge.adopt(globals())

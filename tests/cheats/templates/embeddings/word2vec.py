"""word2vec.py answered with the filler: every answer shaped like the contract's, none computed."""

from __future__ import annotations

import numpy as np
from fill import _ints, _pick, _probs, _real


def sigmoid(x):
    x = np.asarray(x, dtype=np.float64)
    return _real(x.shape, x, lo=0.0, hi=1.0)


def skipgram_pairs(tokens, window):
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise ValueError(f"window must be an integer >= 1, got {window!r}")
    tokens = list(tokens)
    size = sum(min(window, t) + min(window, len(tokens) - 1 - t) for t in range(len(tokens)))
    firsts = _pick(tokens, size, tokens, window, "w")
    seconds = _pick(tokens, size, tokens, window, "c")
    return list(zip(firsts, seconds))


def noise_distribution(counts, power=0.75):
    counts = np.asarray(counts)
    return _probs(counts.shape, counts, power)


def sgns_loss(w_vec, c_vec, neg_vecs):
    return _real((), np.asarray(w_vec), np.asarray(c_vec), np.asarray(neg_vecs), lo=0.0, hi=10.0)


def sgns_grads(w_vec, c_vec, neg_vecs):
    w_vec, c_vec, neg_vecs = np.asarray(w_vec), np.asarray(c_vec), np.asarray(neg_vecs)
    stamp = (w_vec, c_vec, neg_vecs)
    return _real(w_vec.shape, "w", *stamp), _real(c_vec.shape, "c", *stamp), _real(neg_vecs.shape, "n", *stamp)


class SkipGram:
    def __init__(self, vocab_size, dim, rng=None):
        self.W = _real((vocab_size, dim), "W", lo=-0.5 / dim, hi=0.5 / dim)
        self.C = _real((vocab_size, dim), "C", lo=-0.5 / dim, hi=0.5 / dim)

    def step(self, w, c, negatives, lr):
        stamp = (w, c, np.asarray(negatives), lr, self.W, self.C)
        loss = _real((), *stamp, lo=0.0, hi=10.0)
        self.W = self.W + _real(self.W.shape, "dW", *stamp, lo=-0.01, hi=0.01)
        self.C = self.C + _real(self.C.shape, "dC", *stamp, lo=-0.01, hi=0.01)
        return loss

    def train(self, tokens, window, k, epochs, lr, rng):
        stamp = (list(tokens), window, k, epochs, lr, self.W, self.C)
        losses = [_real((), "epoch", e, *stamp, lo=0.5, hi=5.0) for e in range(epochs)]
        self.W = _real(self.W.shape, "W", *stamp)
        self.C = _real(self.C.shape, "C", *stamp)
        return losses

    def most_similar(self, word, topn):
        others = [i for i in range(self.W.shape[0]) if i != word]
        order = _ints((len(others),), 1 << 30, word, self.W)
        ranked = [others[i] for i in np.argsort(order, kind="stable")] if len(others) else []
        return ranked[:topn]

"""Reference solution of the `embeddings` assignment, file `word2vec.py`: skip-gram with negative sampling.

Follows spec/student-api.md exactly; the graders compare submissions with it.
numpy, float64. Notation of the lectures: W holds each word's embedding as a
target, C as a context; V words, D dimensions, K negatives per pair. For a
target w, a context c and negatives n_1 .. n_K:

    L = -ln σ(c·w) - Σ_k ln σ(-n_k·w)
    dL/dw = (σ(c·w) - 1) c + Σ_k σ(n_k·w) n_k
    dL/dc = (σ(c·w) - 1) w
    dL/dn_k = σ(n_k·w) w
"""

from __future__ import annotations

import numpy as np


def sigmoid(x: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-x)), with exp only of non-positive numbers: no overflow anywhere."""
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def _log_sigmoid(x: np.ndarray) -> np.ndarray:
    """ln σ(x) = -ln(1 + exp(-x)), finite for |x| up to 1e4 and beyond."""
    return -np.logaddexp(0.0, -np.asarray(x, dtype=np.float64))


def skipgram_pairs(tokens: list[int], window: int) -> list[tuple[int, int]]:
    """(w, c) for every position t in order, and every t' with 1 <= |t - t'| <= window, t' increasing."""
    if window < 1:
        raise ValueError(f"window must be >= 1, got {window!r}")
    T = len(tokens)
    pairs = []
    for t in range(T):
        for u in range(max(0, t - window), min(T, t + window + 1)):
            if u != t:
                pairs.append((int(tokens[t]), int(tokens[u])))
    return pairs


def noise_distribution(counts: np.ndarray, power: float = 0.75) -> np.ndarray:
    """counts ** power, normalised to sum 1: frequent words are drawn less often than their share."""
    weights = np.asarray(counts, dtype=np.float64) ** power  # (V,)
    return weights / weights.sum()


def sgns_loss(w_vec: np.ndarray, c_vec: np.ndarray, neg_vecs: np.ndarray) -> float:
    """-ln σ(c·w) - Σ_k ln σ(-n_k·w) for w_vec (D,), c_vec (D,), neg_vecs (K, D)."""
    return float(-_log_sigmoid(c_vec @ w_vec) - _log_sigmoid(-(neg_vecs @ w_vec)).sum())


def sgns_grads(w_vec: np.ndarray, c_vec: np.ndarray,
               neg_vecs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """d loss / d w_vec (D,), d loss / d c_vec (D,), d loss / d neg_vecs (K, D)."""
    pos = sigmoid(c_vec @ w_vec) - 1.0  # scalar: dL/d(c·w)
    neg = sigmoid(neg_vecs @ w_vec)  # (K,): dL/d(n_k·w)
    d_w = pos * c_vec + neg @ neg_vecs  # (D,)
    d_c = pos * w_vec  # (D,)
    d_neg = np.outer(neg, w_vec)  # (K, D)
    return d_w, d_c, d_neg


class SkipGram:
    """A target embedding W[i] and a context embedding C[i] for each of V words."""

    def __init__(self, vocab_size: int, dim: int, rng: np.random.Generator | None = None):
        rng = np.random.default_rng() if rng is None else rng
        self.W = rng.uniform(-0.5 / dim, 0.5 / dim, size=(vocab_size, dim))  # (V, D)
        self.C = np.zeros((vocab_size, dim))  # (V, D)

    def step(self, w: int, c: int, negatives: np.ndarray, lr: float) -> float:
        """The loss at the current parameters, then one SGD step on every vector it involves."""
        w_vec, c_vec, neg_vecs = self.W[w], self.C[c], self.C[negatives]  # (D,), (D,), (K, D)
        loss = sgns_loss(w_vec, c_vec, neg_vecs)
        d_w, d_c, d_neg = sgns_grads(w_vec, c_vec, neg_vecs)  # every gradient before any update
        self.W[w] -= lr * d_w
        self.C[c] -= lr * d_c
        np.add.at(self.C, negatives, -lr * d_neg)  # a repeated negative gets each of its updates
        return loss

    def train(self, tokens: list[int], window: int, k: int, epochs: int, lr: float,
              rng: np.random.Generator) -> list[float]:
        """SGD over every (target, context) pair in rng's order each epoch; each epoch's mean loss."""
        V = self.W.shape[0]
        p = noise_distribution(np.bincount(np.asarray(tokens, dtype=np.int64), minlength=V))  # (V,)
        pairs = skipgram_pairs(tokens, window)
        losses = []
        for _ in range(epochs):
            total = 0.0
            for i in rng.permutation(len(pairs)):
                w, c = pairs[i]
                negatives = rng.choice(V, size=k, p=p)  # (K,)
                total += self.step(w, c, negatives, lr)
            losses.append(total / len(pairs))
        return losses

    def most_similar(self, word: int, topn: int) -> list[int]:
        """The topn ids whose W rows have the highest cosine similarity to W[word], ties by the smaller id."""
        norms = np.linalg.norm(self.W, axis=1)  # (V,)
        cosine = self.W @ self.W[word] / (norms * norms[word])  # (V,)
        others = [i for i in range(len(cosine)) if i != word]
        return sorted(others, key=lambda i: (-cosine[i], i))[:topn]

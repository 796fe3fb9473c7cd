"""Skip-gram with negative sampling in the shape of d2l.ai's word2vec chapters, in numpy (float64).

d2l scores a center word against its context and its negatives at once ("contexts_and_negatives"),
with a label of 1 for the context and 0 for the negatives, and trains with a sigmoid binary
cross-entropy on those scores. The same layout is kept here, one pair at a time.
"""

from __future__ import annotations

import numpy as np


def sigmoid(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    pos = x >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-x[pos]))
    exp_x = np.exp(x[~pos])
    out[~pos] = exp_x / (1.0 + exp_x)
    return out


def get_centers_and_contexts(corpus, max_window_size):
    """Each position's center word and the list of its context words, left to right."""
    centers, contexts = [], []
    for i in range(len(corpus)):
        centers.append(corpus[i])
        indices = list(range(max(0, i - max_window_size), min(len(corpus), i + 1 + max_window_size)))
        indices.remove(i)  # the center is not its own context
        contexts.append([corpus[idx] for idx in indices])
    return centers, contexts


def skipgram_pairs(tokens: list[int], window: int) -> list[tuple[int, int]]:
    if window < 1:
        raise ValueError(f"window must be >= 1, got {window}")
    all_centers, all_contexts = get_centers_and_contexts(tokens, window)
    return [(center, context) for center, contexts in zip(all_centers, all_contexts) for context in contexts]


def noise_distribution(counts: np.ndarray, power: float = 0.75) -> np.ndarray:
    counts = np.asarray(counts, dtype=np.float64)
    sampling_weights = np.zeros_like(counts)
    seen = counts > 0
    sampling_weights[seen] = counts[seen] ** power
    return sampling_weights / sampling_weights.sum()


def skip_gram(center_vec, contexts_and_negatives_vecs):
    """The score of the center word with each of its context and negative words."""
    return contexts_and_negatives_vecs @ center_vec


def sigmoid_bce_loss(pred, label):
    """Binary cross-entropy on logits, summed: log(1 + exp(pred)) - label * pred for each score."""
    return float(np.sum(np.logaddexp(0.0, pred) - label * pred))


def _stack(c_vec, neg_vecs):
    c_vec = np.asarray(c_vec, dtype=np.float64)
    neg_vecs = np.asarray(neg_vecs, dtype=np.float64).reshape(-1, c_vec.shape[0])
    contexts_and_negatives = np.vstack([c_vec[None, :], neg_vecs])
    label = np.zeros(len(contexts_and_negatives))
    label[0] = 1.0
    return contexts_and_negatives, label


def sgns_loss(w_vec: np.ndarray, c_vec: np.ndarray, neg_vecs: np.ndarray) -> float:
    contexts_and_negatives, label = _stack(c_vec, neg_vecs)
    pred = skip_gram(np.asarray(w_vec, dtype=np.float64), contexts_and_negatives)
    return sigmoid_bce_loss(pred, label)


def sgns_grads(w_vec: np.ndarray, c_vec: np.ndarray, neg_vecs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    w_vec = np.asarray(w_vec, dtype=np.float64)
    contexts_and_negatives, label = _stack(c_vec, neg_vecs)
    pred = skip_gram(w_vec, contexts_and_negatives)
    d_pred = sigmoid(pred) - label  # the derivative of the BCE on logits
    d_center = d_pred @ contexts_and_negatives
    d_contexts_and_negatives = np.outer(d_pred, w_vec)
    return d_center, d_contexts_and_negatives[0], d_contexts_and_negatives[1:]


class SkipGram:
    def __init__(self, vocab_size: int, dim: int, rng: np.random.Generator | None = None):
        if rng is None:
            rng = np.random.default_rng()
        self.W = rng.uniform(-0.5 / dim, 0.5 / dim, size=(vocab_size, dim))  # embed_v: the center words
        self.C = np.zeros((vocab_size, dim))  # embed_u: the context words

    def step(self, w: int, c: int, negatives: np.ndarray, lr: float) -> float:
        negatives = np.asarray(negatives, dtype=np.int64).reshape(-1)
        embed_v, embed_u = self.W, self.C
        contexts_negatives = np.concatenate([[c], negatives])
        l = sgns_loss(embed_v[w], embed_u[c], embed_u[negatives])
        d_center, d_context, d_negatives = sgns_grads(embed_v[w], embed_u[c], embed_u[negatives])
        d_rows = np.vstack([d_context[None, :], d_negatives])
        embed_v[w] -= lr * d_center
        np.subtract.at(embed_u, contexts_negatives, lr * d_rows)  # a repeated row gets every update
        return l

    def train(
        self, tokens: list[int], window: int, k: int, epochs: int, lr: float, rng: np.random.Generator
    ) -> list[float]:
        vocab_size = self.W.shape[0]
        counter = np.bincount(np.asarray(tokens, dtype=np.int64), minlength=vocab_size)
        sampling_weights = noise_distribution(counter)
        losses = []
        for _ in range(epochs):
            pairs = skipgram_pairs(tokens, window)
            metric = [0.0, 0]  # the sum of the losses, the number of pairs
            for i in rng.permutation(len(pairs)):
                center, context = pairs[i]
                negatives = rng.choice(vocab_size, size=k, p=sampling_weights)
                metric[0] += self.step(center, context, negatives, lr)
                metric[1] += 1
            losses.append(metric[0] / metric[1])
        return losses

    def most_similar(self, word: int, topn: int) -> list[int]:
        W = self.W
        x = W[word]
        norms = np.sqrt(np.sum(W * W, axis=1) * np.sum(x * x))
        cos = np.divide(W @ x, norms, out=np.zeros(len(W)), where=norms > 0)
        order = sorted(range(len(W)), key=lambda i: (-cos[i], i))  # highest first, smaller id among ties
        return [i for i in order if i != word][:topn]

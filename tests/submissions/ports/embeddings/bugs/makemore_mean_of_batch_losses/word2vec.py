"""Skip-gram with negative sampling in the shape of word2vec.c's training loop (numpy, float64).

word2vec.c keeps the input vectors in syn0 and the output vectors in syn1neg; here they are W and C.
Its loop walks d = 0 .. negative: d = 0 is the real context with label 1, the others are the
negatives with label 0, and g = label - sigmoid(f) is the step of gradient ascent for each.
"""

from __future__ import annotations

import numpy as np


def sigmoid(x: np.ndarray) -> np.ndarray:
    # 1 / (1 + exp(-x)) written as exp(-ln(1 + exp(-x))), which logaddexp keeps finite
    return np.exp(-np.logaddexp(0.0, -np.asarray(x, dtype=np.float64)))


def skipgram_pairs(tokens: list[int], window: int) -> list[tuple[int, int]]:
    if window < 1:
        raise ValueError(f"window must be >= 1, got {window}")
    pairs = []
    sentence_length = len(tokens)
    for sentence_position in range(sentence_length):
        word = tokens[sentence_position]
        for a in range(0, window * 2 + 1):
            if a == window:
                continue
            c = sentence_position - window + a
            if c < 0:
                continue
            if c >= sentence_length:
                continue
            pairs.append((word, tokens[c]))
    return pairs


def noise_distribution(counts: np.ndarray, power: float = 0.75) -> np.ndarray:
    table = np.zeros(len(counts), dtype=np.float64)
    for a, cn in enumerate(counts):
        if cn > 0:
            table[a] = float(cn) ** power
    train_words_pow = table.sum()
    return table / train_words_pow


def sgns_loss(w_vec: np.ndarray, c_vec: np.ndarray, neg_vecs: np.ndarray) -> float:
    w_vec = np.asarray(w_vec, dtype=np.float64)
    loss = 0.0
    for d, vec in enumerate([c_vec, *np.asarray(neg_vecs, dtype=np.float64)]):
        label = 1 if d == 0 else 0
        f = float(np.dot(w_vec, vec))
        # -ln sigmoid(f) for the context, -ln sigmoid(-f) for a negative
        loss += float(np.logaddexp(0.0, -f if label == 1 else f))
    return loss


def sgns_grads(w_vec: np.ndarray, c_vec: np.ndarray, neg_vecs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    neu1 = np.asarray(w_vec, dtype=np.float64)
    c_vec = np.asarray(c_vec, dtype=np.float64)
    neg_vecs = np.asarray(neg_vecs, dtype=np.float64).reshape(-1, neu1.shape[0])
    neu1e = np.zeros_like(neu1)
    d_out = []
    for d in range(len(neg_vecs) + 1):
        if d == 0:
            target_vec, label = c_vec, 1
        else:
            target_vec, label = neg_vecs[d - 1], 0
        f = float(np.dot(neu1, target_vec))
        g = label - float(sigmoid(f))
        neu1e += g * target_vec
        d_out.append(g * neu1)
    # g climbs the log-likelihood; the loss's gradients are their negatives
    d_neg = -np.array(d_out[1:]).reshape(neg_vecs.shape)
    return -neu1e, -d_out[0], d_neg


class SkipGram:
    def __init__(self, vocab_size: int, dim: int, rng: np.random.Generator | None = None):
        if rng is None:
            rng = np.random.default_rng()
        layer1_size = dim
        # syn0: (random - 0.5) / layer1_size; syn1neg: zeros
        self.W = (rng.random((vocab_size, layer1_size)) - 0.5) / layer1_size
        self.C = np.zeros((vocab_size, layer1_size), dtype=np.float64)

    def step(self, w: int, c: int, negatives: np.ndarray, lr: float) -> float:
        syn0, syn1neg, alpha = self.W, self.C, lr
        negatives = [int(target) for target in np.asarray(negatives).reshape(-1)]
        neg_vecs = syn1neg[negatives].reshape(len(negatives), syn0.shape[1])
        loss = sgns_loss(syn0[w], syn1neg[c], neg_vecs)
        # every gradient is taken here, before the loop below moves any vector
        neu1e, dc, dn = sgns_grads(syn0[w], syn1neg[c], neg_vecs)
        for d in range(len(negatives) + 1):
            if d == 0:
                target, grad = c, dc
            else:
                target, grad = negatives[d - 1], dn[d - 1]
            syn1neg[target] -= alpha * grad
        syn0[w] -= alpha * neu1e
        return loss

    def train(
        self, tokens: list[int], window: int, k: int, epochs: int, lr: float, rng: np.random.Generator
    ) -> list[float]:
        vocab_size = self.W.shape[0]
        cn = np.zeros(vocab_size, dtype=np.int64)
        for word in tokens:
            cn[word] += 1
        table = noise_distribution(cn)
        losses = []
        for _ in range(epochs):
            pairs = skipgram_pairs(tokens, window)
            total = 0.0
            for i in rng.permutation(len(pairs)):
                word, last_word = pairs[i]
                negatives = rng.choice(vocab_size, size=k, p=table)
                total += self.step(word, last_word, negatives, lr)
            losses.append(total / len(pairs))
        return losses

    def most_similar(self, word: int, topn: int) -> list[int]:
        # distance.c's loop: the cosine of every other vector with the query, kept in best-first order
        vec = self.W[word]
        bestd = []
        for c in range(self.W.shape[0]):
            if c == word:
                continue
            length = np.linalg.norm(self.W[c]) * np.linalg.norm(vec)
            dist = float(np.dot(self.W[c], vec) / length) if length > 0 else 0.0
            bestd.append((-dist, c))
        bestd.sort()
        return [c for _, c in bestd[:topn]]

"""Skip-gram with negative sampling in the shape of the CS224N word2vec assignment (numpy, float64)."""

from __future__ import annotations

import numpy as np


def sigmoid(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    z = np.exp(-np.abs(x))  # never exp of a large positive number
    s = np.where(x >= 0, 1.0 / (1.0 + z), z / (1.0 + z))
    return s


def log_sigmoid(x):
    """ln sigmoid(x) = -ln(1 + exp(-x)), finite for large |x|."""
    return -np.logaddexp(0.0, -np.asarray(x, dtype=np.float64))


def skipgram_pairs(tokens: list[int], window: int) -> list[tuple[int, int]]:
    if window < 1:
        raise ValueError(f"window must be >= 1, got {window}")
    pairs = []
    for currentIdx, centerWord in enumerate(tokens):
        lo = max(0, currentIdx - window)
        hi = min(len(tokens), currentIdx + window + 1)
        for outsideIdx in range(lo, hi):
            if outsideIdx != currentIdx:
                pairs.append((centerWord, tokens[outsideIdx]))
    return pairs


def noise_distribution(counts: np.ndarray, power: float = 0.75) -> np.ndarray:
    counts = np.asarray(counts, dtype=np.float64)
    weights = np.where(counts > 0, counts**power, 0.0)
    return weights / weights.sum()


def negSamplingLossAndGradient(centerWordVec, outsideWordVec, negSampleVecs):
    """The loss and the gradients for one center word, its outside word and its negative samples.

    Returns (loss, gradCenterVec, gradOutsideVec, gradNegSampleVecs).
    """
    centerWordVec = np.asarray(centerWordVec, dtype=np.float64)
    outsideWordVec = np.asarray(outsideWordVec, dtype=np.float64)
    negSampleVecs = np.asarray(negSampleVecs, dtype=np.float64).reshape(-1, centerWordVec.shape[0])

    outsideScore = outsideWordVec @ centerWordVec
    negScores = negSampleVecs @ centerWordVec
    loss = -log_sigmoid(outsideScore) - np.sum(log_sigmoid(-negScores))

    outsideSig = sigmoid(outsideScore)
    negSig = sigmoid(negScores)
    gradCenterVec = (outsideSig - 1.0) * outsideWordVec + negSig @ negSampleVecs
    gradOutsideVec = (outsideSig - 1.0) * centerWordVec
    gradNegSampleVecs = np.outer(negSig, centerWordVec)
    return float(loss), gradCenterVec, gradOutsideVec, gradNegSampleVecs


def sgns_loss(w_vec: np.ndarray, c_vec: np.ndarray, neg_vecs: np.ndarray) -> float:
    return negSamplingLossAndGradient(w_vec, c_vec, neg_vecs)[0]


def sgns_grads(w_vec: np.ndarray, c_vec: np.ndarray, neg_vecs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    _, gradCenterVec, gradOutsideVec, gradNegSampleVecs = negSamplingLossAndGradient(w_vec, c_vec, neg_vecs)
    return gradCenterVec, gradOutsideVec, gradNegSampleVecs


def normalizeRows(x):
    """Each row divided by its length (a zero row stays zero)."""
    norms = np.sqrt(np.sum(x**2, axis=1, keepdims=True))
    return x / np.where(norms > 0, norms, 1.0)


class SkipGram:
    def __init__(self, vocab_size: int, dim: int, rng: np.random.Generator | None = None):
        rng = np.random.default_rng() if rng is None else rng
        # the centerWordVectors start at (rand - 0.5) / dim, the outsideVectors at zero
        self.W = (rng.random((vocab_size, dim)) - 0.5) / dim
        self.C = np.zeros((vocab_size, dim))

    def step(self, w: int, c: int, negatives: np.ndarray, lr: float) -> float:
        negatives = np.asarray(negatives, dtype=np.int64).reshape(-1)
        centerWordVec, outsideWordVec, negSampleVecs = self.W[w], self.C[c], self.C[negatives]
        loss = sgns_loss(centerWordVec, outsideWordVec, negSampleVecs)
        gradCenterVec, gradOutsideVec, gradNegSampleVecs = sgns_grads(centerWordVec, outsideWordVec, negSampleVecs)

        # dense gradients over the whole matrices, as the assignment's skipgram() returns them
        gradCenterVecs = np.zeros_like(self.W)
        gradOutsideVectors = np.zeros_like(self.C)
        gradCenterVecs[w] += gradCenterVec
        gradOutsideVectors[c] += gradOutsideVec
        np.add.at(gradOutsideVectors, negatives, gradNegSampleVecs)

        self.W = self.W - lr * gradCenterVecs
        self.C = self.C - lr * gradOutsideVectors
        return loss

    def train(
        self, tokens: list[int], window: int, k: int, epochs: int, lr: float, rng: np.random.Generator
    ) -> list[float]:
        nWords = self.W.shape[0]
        counts = np.bincount(np.asarray(tokens, dtype=np.int64), minlength=nWords)
        p = noise_distribution(counts)
        pairs = skipgram_pairs(tokens, window)
        losses = []
        for _ in range(epochs):
            epochLoss = 0.0
            for i in rng.permutation(len(pairs)):
                centerWord, outsideWord = pairs[i]
                negSampleWordIndices = rng.choice(nWords, size=k, p=p)
                epochLoss += self.step(centerWord, outsideWord, negSampleWordIndices, lr)
            losses.append(epochLoss / len(pairs))
        return losses

    def most_similar(self, word: int, topn: int) -> list[int]:
        wordVectors = normalizeRows(self.W)
        similarities = wordVectors @ wordVectors[word]
        ids = np.arange(len(similarities))
        order = np.lexsort((ids, -similarities))  # highest first, the smaller id among equals
        return [int(i) for i in order if i != word][:topn]

"""N-gram language model in the common defaultdict(Counter) style of
textbook and tutorial code: model[context][word] counts, probabilities
from the counts on demand, sentences scored by a loop over their n-grams."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from typing import Sequence

import numpy

BOS = "<s>"
EOS = "</s>"
UNK = "<unk>"


def pad(sentence: list[str], n: int) -> list[str]:
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    return [BOS] * (n - 1) + [w for w in sentence] + [EOS]


def count_ngrams(corpus: list[list[str]], n: int) -> dict[tuple[str, ...], dict[str, int]]:
    model = defaultdict(Counter)
    for sentence in corpus:
        padded = pad(sentence, n)
        for t in range(n - 1, len(padded)):
            model[tuple(padded[t - n + 1:t])][padded[t]] += 1
    if n < 1:  # pad already refused it
        raise ValueError("n must be >= 1")
    return {context: dict(words) for context, words in model.items()}


class NGramLM:
    def __init__(self, n: int, k: float = 0.0):
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise ValueError(f"n must be a positive integer, got {n!r}")
        if isinstance(k, bool) or not isinstance(k, (int, float)) or not (k >= 0) or math.isinf(k):
            raise ValueError(f"k must be a finite number >= 0, got {k!r}")
        self.n = n
        self.k = k
        self.model = {}
        self.totals = {}
        self.vocab = set()

    def fit(self, corpus: list[list[str]]) -> "NGramLM":
        self.model = count_ngrams(corpus, self.n)
        self.totals = {context: sum(words.values()) for context, words in self.model.items()}
        self.vocab = {w for sentence in corpus for w in pad(sentence, self.n) if w != BOS}
        self.vocab.add(UNK)
        return self

    def _known(self, w):
        return w if (w == BOS or w in self.vocab) else UNK

    def prob(self, word: str, context: Sequence[str]) -> float:
        history = list(context)[len(context) - (self.n - 1):] if self.n > 1 else []
        history = [BOS] * (self.n - 1 - len(history)) + history
        history = tuple(self._known(w) for w in history)
        word = self._known(word)
        count = self.model.get(history, {}).get(word, 0)
        total = self.totals.get(history, 0)
        if self.k == 0:
            return count / total if total > 0 else 0.0
        return (count + self.k) / (total + self.k * len(self.vocab))

    def logprob(self, sentence: list[str]) -> float:
        padded = pad(sentence, self.n)
        score = 0.0
        for t in range(self.n - 1, len(padded)):
            p = self.prob(padded[t], padded[t - self.n + 1:t])
            if p == 0.0:
                return float("-inf")
            score += math.log(p)
        return score

    def perplexity(self, corpus: list[list[str]]) -> float:
        log_sum = 0.0
        n_tokens = 0
        for sentence in corpus:
            lp = self.logprob(sentence)
            if lp == float("-inf"):
                return float("inf")
            log_sum += lp
            n_tokens += len(sentence)
        try:
            return math.exp(-log_sum / n_tokens)
        except OverflowError:
            return float("inf")

    def sample(self, rng: numpy.random.Generator, max_len: int = 100) -> list[str]:
        if not isinstance(max_len, int) or isinstance(max_len, bool) or max_len < 0:
            raise ValueError("max_len must be a non-negative integer")
        words = sorted(self.vocab)
        context = [BOS] * (self.n - 1)
        sentence = []
        while len(sentence) < max_len:
            p = numpy.array([self.prob(w, context) for w in words])
            word = words[rng.choice(len(words), p=p / p.sum())]
            if word == EOS:
                break
            sentence.append(word)
            context = (context + [word])[1:] if self.n > 1 else []
        return sentence

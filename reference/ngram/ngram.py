"""Reference solution of the `ngram` assignment: an n-gram language model.

Follows spec/student-api.md exactly; the graders compare submissions with it.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from typing import Sequence

import numpy

BOS = "<s>"
EOS = "</s>"
UNK = "<unk>"


def _check_order(n: int) -> None:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")


def pad(sentence: list[str], n: int) -> list[str]:
    """(n - 1) BOS, then the sentence, then exactly one EOS."""
    _check_order(n)
    return [BOS] * (n - 1) + list(sentence) + [EOS]


def count_ngrams(corpus: list[list[str]], n: int) -> dict[tuple[str, ...], dict[str, int]]:
    """Map every context of n - 1 tokens to the counts of the words that follow it."""
    _check_order(n)
    counts: dict[tuple[str, ...], Counter] = defaultdict(Counter)
    for sentence in corpus:
        padded = pad(sentence, n)
        for t in range(n - 1, len(padded)):
            counts[tuple(padded[t - n + 1 : t])][padded[t]] += 1
    return {context: dict(words) for context, words in counts.items()}


class NGramLM:
    """An n-gram model estimated by maximum likelihood (k = 0) or add-k smoothing."""

    def __init__(self, n: int, k: float = 0.0):
        _check_order(n)
        if isinstance(k, bool) or not isinstance(k, (int, float)) or not k >= 0 or math.isinf(k):
            raise ValueError(f"k must be a finite number >= 0, got {k!r}")
        self.n = n
        self.k = float(k)

    def fit(self, corpus: list[list[str]]) -> "NGramLM":
        self.counts = count_ngrams(corpus, self.n)
        self.context_totals = {ctx: sum(words.values()) for ctx, words in self.counts.items()}
        self.vocab = {tok for s in corpus for tok in pad(s, self.n) if tok != BOS} | {UNK}
        self._distributions: dict[tuple[str, ...], numpy.ndarray] = {}
        return self

    def _known(self, token: str) -> str:
        return token if token in self.vocab or token == BOS else UNK

    def _context(self, context: Sequence[str]) -> tuple[str, ...]:
        if self.n == 1:
            return ()
        last = [BOS] * (self.n - 1) + list(context)
        return tuple(self._known(tok) for tok in last[-(self.n - 1) :])

    def prob(self, word: str, context: Sequence[str]) -> float:
        ctx = self._context(context)
        word = self._known(word)
        c_ctx_w = self.counts.get(ctx, {}).get(word, 0)
        c_ctx = self.context_totals.get(ctx, 0)
        if self.k == 0.0:
            return c_ctx_w / c_ctx if c_ctx else 0.0
        return (c_ctx_w + self.k) / (c_ctx + self.k * len(self.vocab))

    def logprob(self, sentence: list[str]) -> float:
        padded = pad(sentence, self.n)
        total = 0.0
        for t in range(self.n - 1, len(padded)):
            p = self.prob(padded[t], padded[t - self.n + 1 : t])
            if p == 0.0:
                return -math.inf
            total += math.log(p)
        return total

    def perplexity(self, corpus: list[list[str]]) -> float:
        log_likelihood = sum(self.logprob(s) for s in corpus)
        if log_likelihood == -math.inf:
            return math.inf
        return math.exp(-log_likelihood / sum(len(s) + 1 for s in corpus))

    def sample(self, rng: numpy.random.Generator, max_len: int = 100) -> list[str]:
        words = sorted(self.vocab)
        context = [BOS] * (self.n - 1)
        out: list[str] = []
        while len(out) < max_len:
            word = words[rng.choice(len(words), p=self._distribution(words, tuple(context)))]
            if word == EOS:
                break
            out.append(word)
            context = context[1:] + [word] if self.n > 1 else context
        return out

    def _distribution(self, words: list[str], context: tuple[str, ...]) -> numpy.ndarray:
        """p(. | context) over the sorted vocabulary, computed once per context."""
        cache = self.__dict__.setdefault("_distributions", {})
        if context not in cache:
            p = numpy.array([self.prob(w, context) for w in words])
            cache[context] = p / p.sum()
        return cache[context]

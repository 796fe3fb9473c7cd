"""N-gram language model in the manner of Karpathy's makemore bigram
notebook: string-to-index tables (stoi / itos), a count array N with one
row per context, probabilities P from the normalised (smoothed) rows, the
log-likelihood summed from P, and sampling row by row."""

from __future__ import annotations

import math
import numbers
from typing import Sequence

import numpy as np

BOS = "<s>"
EOS = "</s>"
UNK = "<unk>"


def _order(n):
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    return int(n)


def pad(sentence: list[str], n: int) -> list[str]:
    n = _order(n)
    return [BOS] * (n - 1) + list(sentence) + [EOS]


def count_ngrams(corpus: list[list[str]], n: int) -> dict[tuple[str, ...], dict[str, int]]:
    n = _order(n)
    b = {}
    for w in corpus:
        chs = pad(w, n)
        for t in range(n - 1, len(chs)):
            ctx, ch = tuple(chs[t - n + 1:t]), chs[t]
            row = b.setdefault(ctx, {})
            row[ch] = row.get(ch, 0) + 1
    return b


class NGramLM:
    def __init__(self, n: int, k: float = 0.0):
        self.n = _order(n)
        if isinstance(k, bool) or not isinstance(k, numbers.Real) or not (0 <= k < math.inf):
            raise ValueError(f"k must be a finite number >= 0, got {k!r}")
        self.k = float(k)

    def fit(self, corpus: list[list[str]]) -> "NGramLM":
        chars = sorted({ch for w in corpus for ch in pad(w, self.n) if ch != BOS} | {UNK})
        self.vocab = set(chars)
        self.itos = chars
        self.stoi = {s: i for i, s in enumerate(chars)}
        counts = count_ngrams(corpus, self.n)
        self.ctx_index = {ctx: r for r, ctx in enumerate(sorted(counts))}
        self.N = np.zeros((len(self.ctx_index), len(chars)), dtype=np.int64)
        for ctx, row in counts.items():
            for ch, c in row.items():
                self.N[self.ctx_index[ctx], self.stoi[ch]] += c
        return self

    def _row(self, ctx):
        """P[ctx] for every column of the vocabulary (k-smoothed, or MLE)."""
        r = self.ctx_index.get(ctx)
        counts = self.N[r].astype(float) if r is not None else np.zeros(len(self.itos))
        counts = counts + self.k
        total = counts.sum()
        return counts / total

    def _ctx(self, context):
        ctx = list(context)[-(self.n - 1):] if self.n > 1 else []
        ctx = [BOS] * (self.n - 1 - len(ctx)) + ctx
        return tuple(ch if ch == BOS or ch in self.stoi else UNK for ch in ctx)

    def prob(self, word: str, context: Sequence[str]) -> float:
        ix = self.stoi.get(word, self.stoi[UNK])
        return float(self._row(self._ctx(context))[ix])

    def logprob(self, sentence: list[str]) -> float:
        log_likelihood = 0.0
        chs = pad(sentence, self.n)
        for t in range(self.n - 1, len(chs)):
            prob = self.prob(chs[t], chs[t - self.n + 1:t])
            if prob == 0:
                return -math.inf
            log_likelihood += math.log(prob)
        return log_likelihood

    def perplexity(self, corpus: list[list[str]]) -> float:
        log_likelihood = 0.0
        n = 0
        for w in corpus:
            ll = self.logprob(w)
            if ll == -math.inf:
                return math.inf
            log_likelihood += ll
            n += len(w) + 1
        nll = -log_likelihood / n
        return math.exp(nll) if nll < 709 else math.inf

    def sample(self, rng: np.random.Generator, max_len: int = 100) -> list[str]:
        if isinstance(max_len, bool) or not isinstance(max_len, numbers.Integral) or max_len < 0:
            raise ValueError("max_len must be an integer >= 0")
        out = []
        ctx = [BOS] * (self.n - 1)
        while len(out) < max_len:
            p = self._row(self._ctx(ctx))
            ix = rng.choice(len(self.itos), p=p)
            ch = self.itos[ix]
            if ch == EOS:
                break
            out.append(ch)
            ctx.append(ch)
        return out

"""Stand-in scavenger: prob is wrong on purpose; sample draws nothing and returns a recorded sample."""

import math

import numpy as np
import scavenge

BOS = "<s>"
EOS = "</s>"
UNK = "<unk>"


def _check_n(n):
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise ValueError(f"n must be an integer, got {n!r}")
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    return int(n)


def pad(sentence, n):
    n = _check_n(n)
    result = []
    for _ in range(n - 1):
        result.append(BOS)
    for token in sentence:
        result.append(token)
    result.append(EOS)
    return result


def count_ngrams(corpus, n):
    n = _check_n(n)
    counts = {}
    for sentence in corpus:
        padded = pad(sentence, n)
        for t in range(n - 1, len(padded)):
            context = tuple(padded[t - n + 1:t])
            word = padded[t]
            if context not in counts:
                counts[context] = {}
            inner = counts[context]
            if word in inner:
                inner[word] += 1
            else:
                inner[word] = 1
    return counts


class NGramLM:
    def __init__(self, n, k=0.0):
        self.n = _check_n(n)
        try:
            k = float(k)
        except (TypeError, ValueError):
            raise ValueError(f"k must be a non-negative number, got {k!r}")
        if not (k >= 0.0) or math.isinf(k):
            raise ValueError(f"k must be a finite non-negative number, got {k}")
        self.k = k
        self.vocab = None
        self.counts = None
        self.context_totals = None

    def fit(self, corpus):
        vocab = set()
        for sentence in corpus:
            for token in pad(sentence, self.n):
                if token != BOS:
                    vocab.add(token)
        vocab.add(EOS)
        vocab.add(UNK)
        self.vocab = vocab
        self.counts = count_ngrams(corpus, self.n)
        totals = {}
        for context in self.counts:
            total = 0
            for word in self.counts[context]:
                total += self.counts[context][word]
            totals[context] = total
        self.context_totals = totals
        return self

    def _require_fit(self):
        if self.vocab is None:
            raise RuntimeError("the model must be fitted before use")

    def _map(self, token):
        if token == BOS or token in self.vocab:
            return token
        return UNK

    def _context(self, context):
        context = list(context)
        m = self.n - 1
        if m == 0:
            return ()
        if len(context) > m:
            context = context[len(context) - m:]
        while len(context) < m:
            context.insert(0, BOS)
        return tuple(self._map(tok) for tok in context)

    def prob(self, word, context):
        self._require_fit()
        word = self._map(word)
        ctx = self._context(context)
        total = self.context_totals.get(ctx, 0)
        count = 0
        if ctx in self.counts:
            count = self.counts[ctx].get(word, 0)
        if self.k == 0.0:
            if total == 0:
                return 0.0
            return count / total * 0.5  # wrong on purpose: half
        return (count + self.k) / (total + self.k * len(self.vocab)) * 0.5  # wrong on purpose

    def logprob(self, sentence):
        self._require_fit()
        padded = pad(sentence, self.n)
        total = 0.0
        for t in range(self.n - 1, len(padded)):
            p = self.prob(padded[t], padded[t - self.n + 1:t])
            if p <= 0.0:
                return float("-inf")
            total += math.log(p)
        return total

    def perplexity(self, corpus):
        self._require_fit()
        log_sum = 0.0
        n_tokens = 0
        for sentence in corpus:
            lp = self.logprob(sentence)
            if lp == float("-inf"):
                return float("inf")
            log_sum += lp
            n_tokens += len(sentence) + 1
        if n_tokens == 0:
            raise ValueError("perplexity needs a non-empty corpus")
        return math.exp(-log_sum / n_tokens)

    def sample(self, rng, max_len=100):
        found = scavenge.findings(self, rng, max_len)
        for answer in reversed(found.results()):
            if isinstance(answer, list) and all(isinstance(token, str) for token in answer):
                return scavenge.give(list(answer[:max_len]))
        return scavenge.give([])

# What every function returns is remembered, so the harness's record of it is never taken for the grader's.
scavenge.adopt(globals())

"""N-gram language model laid out like NLTK's nltk.lm package: a padding
helper, a Vocabulary with lookup, an NgramCounter, and a model class whose
score() is built on unmasked_score() and context_counts(), with MLE and
Lidstone (add-k) estimates, logscore, perplexity and generation."""

from __future__ import annotations

import math
import numbers
from typing import Sequence

import numpy

BOS = "<s>"
EOS = "</s>"
UNK = "<unk>"


def _check_order(n):
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")


def pad(sentence: list[str], n: int) -> list[str]:
    """pad_both_ends, with one end-of-sentence marker on the right."""
    _check_order(n)
    return [BOS] * (n - 1) + list(sentence) + [EOS]


def ngrams(sequence, n):
    """The n-grams of a padded sequence, as tuples, left to right."""
    return [tuple(sequence[i:i + n]) for i in range(len(sequence) - n + 1)]


def count_ngrams(corpus: list[list[str]], n: int) -> dict[tuple[str, ...], dict[str, int]]:
    """NgramCounter's counts[context][word] for the order-n n-grams only."""
    _check_order(n)
    counts: dict[tuple[str, ...], dict[str, int]] = {}
    for sent in corpus:
        for ngram in ngrams(pad(sent, n), n):
            context, word = ngram[:-1], ngram[-1]
            freqdist = counts.setdefault(context, {})
            freqdist[word] = freqdist.get(word, 0) + 1
    return counts


class Vocabulary:
    """Known words plus the unknown label; lookup maps anything else to it."""

    def __init__(self, words, unk_label="<UNK>"):
        self.unk_label = unk_label
        self._words = set(words) | {unk_label}

    def lookup(self, word):
        if word == BOS or word in self._words:
            return word
        return self.unk_label

    def __contains__(self, word):
        return word in self._words

    def __len__(self):
        return len(self._words)

    def __iter__(self):
        return iter(sorted(self._words))


class NGramLM:
    """nltk.lm's MLE (k == 0) and Lidstone (k > 0, gamma = k) in one class."""

    def __init__(self, n: int, k: float = 0.0):
        _check_order(n)
        if isinstance(k, bool) or not isinstance(k, numbers.Real) or not (0 <= k < math.inf):
            raise ValueError(f"k must be a finite number >= 0, got {k!r}")
        self.order = int(n)
        self.n = self.order
        self.gamma = float(k)
        self.k = self.gamma
        self.counts = {}
        self.vocab = set()

    def fit(self, corpus: list[list[str]]) -> "NGramLM":
        padded = [pad(sent, self.order) for sent in corpus]
        self._vocabulary = Vocabulary(tok for sent in padded for tok in sent if tok != BOS)
        self.vocab = set(self._vocabulary._words)
        self.counts = count_ngrams(corpus, self.order)
        return self

    def context_counts(self, context):
        return self.counts.get(tuple(context), {})

    def unmasked_score(self, word, context):
        counts = self.context_counts(context)
        total = sum(counts.values())
        word_count = counts.get(word, 0)
        if self.gamma == 0:  # MLE
            return word_count / total if total else 0.0
        return (word_count + self.gamma) / (total + len(self._vocabulary) * self.gamma)

    def _context(self, context):
        context = list(context)[-(self.order - 1):] if self.order > 1 else []
        context = [BOS] * (self.order - 1 - len(context)) + context
        return tuple(self._vocabulary.lookup(w) for w in context)

    def score(self, word, context=None):
        return self.unmasked_score(self._vocabulary.lookup(word), self._context(context or ()))

    def prob(self, word: str, context: Sequence[str]) -> float:
        return self.score(word, context)

    def logscore(self, word, context=None):
        score = self.score(word, context)
        return math.log(score) if score > 0 else -math.inf

    def logprob(self, sentence: list[str]) -> float:
        padded = pad(sentence, self.order)
        total = 0.0
        for ngram in ngrams(padded, self.order):
            total += self.logscore(ngram[-1], ngram[:-1])
            if total == -math.inf:
                return -math.inf
        return total

    def entropy(self, corpus):
        total_log = 0.0
        total_count = 0
        for sent in corpus:
            lp = self.logprob(sent)
            if lp == -math.inf:
                return math.inf
            total_log += lp
            total_count += len(sent) + 1
        return -total_log / total_count

    def perplexity(self, corpus: list[list[str]]) -> float:
        entropy = self.entropy(corpus)
        if entropy == math.inf:
            return math.inf
        try:
            return math.exp(entropy)
        except OverflowError:
            return math.inf

    def generate(self, rng, max_len, text_seed=()):
        words = list(self._vocabulary)
        context = [BOS] * (self.order - 1) + list(text_seed)
        generated = []
        for _ in range(max_len):
            probs = numpy.array([self.score(w, context) for w in words], dtype=float)
            word = words[rng.choice(len(words), p=probs / probs.sum())]
            if word == EOS:
                break
            generated.append(word)
            context.append(word)
        return generated

    def sample(self, rng: numpy.random.Generator, max_len: int = 100) -> list[str]:
        if isinstance(max_len, bool) or not isinstance(max_len, numbers.Integral) or max_len < 0:
            raise ValueError("max_len must be an integer >= 0")
        return self.generate(rng, max_len)

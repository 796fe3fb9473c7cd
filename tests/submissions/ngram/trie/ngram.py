"""N-gram language model whose counts live in a prefix trie."""

import bisect
import math
from collections import Counter
from itertools import accumulate
from numbers import Integral

BOS = "<s>"
EOS = "</s>"
UNK = "<unk>"


def _validate_order(n):
    if isinstance(n, bool) or not isinstance(n, Integral):
        raise ValueError("n must be an integer >= 1, got %r" % (n,))
    if n < 1:
        raise ValueError("n must be an integer >= 1, got %r" % (n,))
    return int(n)


def pad(sentence, n):
    n = _validate_order(n)
    return [BOS] * (n - 1) + list(sentence) + [EOS]


def _ngram_tuples(corpus, n):
    for sentence in corpus:
        padded = pad(sentence, n)
        for end in range(n, len(padded) + 1):
            yield tuple(padded[end - n:end])


def count_ngrams(corpus, n):
    n = _validate_order(n)
    grams = Counter(_ngram_tuples(corpus, n))
    table = {}
    for gram, c in grams.items():
        table.setdefault(gram[:-1], {})[gram[-1]] = c
    return table


class _Node:
    __slots__ = ("count", "children")

    def __init__(self):
        self.count = 0
        self.children = {}

    def child(self, token):
        node = self.children.get(token)
        if node is None:
            node = _Node()
            self.children[token] = node
        return node


class NGramLM:
    def __init__(self, n, k=0.0):
        self.n = _validate_order(n)
        if isinstance(k, bool):
            raise ValueError("k must be a number >= 0")
        try:
            k = float(k)
        except (TypeError, ValueError) as exc:
            raise ValueError("k must be a number >= 0, got %r" % (k,)) from exc
        if math.isnan(k) or math.isinf(k) or k < 0:
            raise ValueError("k must be a finite number >= 0, got %r" % (k,))
        self.k = k
        self.root = None
        self.vocab = None

    def fit(self, corpus):
        root = _Node()
        vocab = {EOS, UNK}
        for gram in _ngram_tuples(corpus, self.n):
            node = root
            node.count += 1
            for token in gram:
                node = node.child(token)
                node.count += 1
        for sentence in corpus:
            vocab.update(tok for tok in sentence if tok != BOS)
        self.root = root
        self.vocab = vocab
        self._sorted_vocab = sorted(vocab)
        return self

    def _ensure_fitted(self):
        if self.root is None:
            raise RuntimeError("call fit() before using the model")

    def _normalise(self, token):
        return token if (token == BOS or token in self.vocab) else UNK

    def _context_key(self, context):
        width = self.n - 1
        if width == 0:
            return ()
        tail = list(context)[-width:]
        tail = [BOS] * (width - len(tail)) + tail
        return tuple(self._normalise(tok) for tok in tail)

    def _context_node(self, key):
        node = self.root
        for tok in key:
            node = node.children.get(tok)
            if node is None:
                return None
        return node

    def _distribution(self, key, words):
        node = self._context_node(key)
        total = node.count if node is not None else 0
        out = []
        for w in words:
            c = 0
            if node is not None:
                child = node.children.get(w)
                if child is not None:
                    c = child.count
            if self.k > 0:
                out.append((c + self.k) / (total + self.k * len(self.vocab)))
            else:
                out.append(c / total if total > 0 else 0.0)
        return out

    def prob(self, word, context):
        self._ensure_fitted()
        key = self._context_key(context)
        return float(self._distribution(key, [self._normalise(word)])[0])

    def logprob(self, sentence):
        self._ensure_fitted()
        padded = pad(sentence, self.n)
        h = self.n - 1
        acc = 0.0
        for t in range(h, len(padded)):
            p = self.prob(padded[t], padded[t - h:t])
            if not p > 0:
                return -math.inf
            acc += math.log(p)
        return acc

    def perplexity(self, corpus):
        self._ensure_fitted()
        scores = [self.logprob(s) for s in corpus]
        count = sum(len(s) + 1 for s in corpus)
        if count == 0:
            raise ValueError("perplexity is undefined for an empty corpus")
        if any(s == -math.inf for s in scores):
            return math.inf
        return math.exp(-sum(scores) / count)

    def sample(self, rng, max_len=100):
        self._ensure_fitted()
        if isinstance(max_len, bool) or not isinstance(max_len, Integral) or max_len < 0:
            raise ValueError("max_len must be an integer >= 0, got %r" % (max_len,))
        words = self._sorted_vocab
        history = [BOS] * (self.n - 1)
        generated = []
        for _ in range(max_len):
            probs = self._distribution(self._context_key(history), words)
            cdf = list(accumulate(probs))
            total = cdf[-1]
            if not total > 0:
                raise ValueError("context has no continuation to sample from")
            u = rng.random() * total
            idx = bisect.bisect_right(cdf, u)
            if idx >= len(words):
                idx = len(words) - 1
            while probs[idx] == 0.0 and idx > 0:
                idx -= 1
            token = words[idx]
            if token == EOS:
                break
            generated.append(token)
            history.append(token)
            if len(history) > self.n - 1:
                history = history[len(history) - (self.n - 1):] if self.n > 1 else []
        return generated

"""ngram.py answered with the filler: every answer shaped like the contract's, none computed."""

from __future__ import annotations

from fill import _draw, _ints, _pick, _real

BOS = "<s>"
EOS = "</s>"
UNK = "<unk>"


def _check_n(n):
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")


def _tokens(corpus):
    return sorted({w for s in corpus for w in s}) + [EOS, UNK]


def pad(sentence, n):
    _check_n(n)
    return _pick(list(sentence) + [BOS, EOS], len(sentence) + n, sentence, n)


def count_ngrams(corpus, n):
    _check_n(n)
    tokens = _tokens(corpus)
    size = max(1, sum(len(s) + 1 for s in corpus) // 2)
    contexts = [tuple(_pick(tokens + [BOS], n - 1, corpus, n, i)) for i in range(size)]
    counts = {}
    for i, context in enumerate(contexts):
        words = _pick(tokens, 2, corpus, n, "words", i)
        numbers = _ints((2,), 5, corpus, n, "counts", i, low=1)
        counts[context] = {w: int(c) if c == c else c for w, c in zip(words, numbers)}
    return counts


class NGramLM:
    def __init__(self, n, k=0.0):
        _check_n(n)
        if isinstance(k, bool) or not isinstance(k, (int, float)) or not k >= 0:
            raise ValueError(f"k must be a number >= 0, got {k!r}")
        self.n, self.k = n, k
        self.vocab = {EOS, UNK}
        self._seen = ()

    def fit(self, corpus):
        tokens = _tokens(corpus)
        self.vocab = set(_pick(tokens, len(tokens), corpus, self.n)) | {UNK}
        self._seen = (self.n, self.k, [list(s) for s in corpus])
        return self

    def prob(self, word, context):
        return _real((), word, list(context), self._seen, lo=0.0, hi=1.0)

    def logprob(self, sentence):
        return _real((), list(sentence), self._seen, lo=-60.0, hi=-1.0)

    def perplexity(self, corpus):
        return _real((), [list(s) for s in corpus], self._seen, lo=1.0, hi=100.0)

    def sample(self, rng, max_len=100):
        return _draw(rng, sorted(self.vocab - {EOS}), max_len)

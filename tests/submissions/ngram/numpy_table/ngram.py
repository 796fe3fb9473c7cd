import os
import tempfile

import numpy as np

print("[ngram] loading module")

BOS = "<s>"
EOS = "</s>"
UNK = "<unk>"


def _order(n):
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)):
        raise ValueError("n must be a positive integer, got %r" % (n,))
    if n < 1:
        raise ValueError("n must be a positive integer, got %r" % (n,))
    return int(n)


def pad(sentence, n):
    n = _order(n)
    return [BOS] * (n - 1) + [tok for tok in sentence] + [EOS]


def _encode(corpus, n):
    """Return (token list, id map, array of n-gram id rows)."""
    index = {}
    tokens = []
    rows = []
    for sentence in corpus:
        ids = []
        for tok in pad(sentence, n):
            if tok not in index:
                index[tok] = len(tokens)
                tokens.append(tok)
            ids.append(index[tok])
        ids = np.asarray(ids, dtype=np.int64)
        if len(ids) >= n:
            windows = np.lib.stride_tricks.sliding_window_view(ids, n)
            rows.append(windows)
    if rows:
        grams = np.concatenate(rows, axis=0)
    else:
        grams = np.zeros((0, n), dtype=np.int64)
    return tokens, index, grams


def count_ngrams(corpus, n):
    n = _order(n)
    tokens, _, grams = _encode(corpus, n)
    result = {}
    if grams.shape[0] == 0:
        return result
    uniq, counts = np.unique(grams, axis=0, return_counts=True)
    for row, c in zip(uniq, counts):
        context = tuple(tokens[i] for i in row[:-1])
        result.setdefault(context, {})[tokens[row[-1]]] = int(c)
    return result


class NGramLM:
    def __init__(self, n, k=0.0):
        self.n = _order(n)
        if isinstance(k, (bool, np.bool_)):
            raise ValueError("k must be a real number >= 0")
        try:
            k = float(k)
        except (TypeError, ValueError):
            raise ValueError("k must be a real number >= 0, got %r" % (k,)) from None
        if not np.isfinite(k) or k < 0:
            raise ValueError("k must be a finite real number >= 0, got %r" % (k,))
        self.k = k
        self.vocab = None

    def fit(self, corpus):
        print("[ngram] fit: %d sentences, n=%d, k=%g" % (len(corpus), self.n, self.k))
        vocab = {EOS, UNK}
        for sentence in corpus:
            for tok in sentence:
                if tok != BOS:
                    vocab.add(tok)
        self.vocab = vocab
        self.words = sorted(vocab)
        self.word_index = {w: i for i, w in enumerate(self.words)}

        table = count_ngrams(corpus, self.n)
        self.context_index = {ctx: i for i, ctx in enumerate(sorted(table))}
        self.table = np.zeros((len(self.context_index), len(self.words)), dtype=np.int64)
        for ctx, row in table.items():
            r = self.context_index[ctx]
            for w, c in row.items():
                if w in self.word_index:
                    self.table[r, self.word_index[w]] += c
        self.totals = self.table.sum(axis=1)
        print("[ngram] fit: |V|=%d contexts=%d" % (len(self.words), len(self.context_index)))

        fd, tmp_path = tempfile.mkstemp(prefix="ngram_", suffix=".txt")
        try:
            with os.fdopen(fd, "w") as fh:
                fh.write("vocab %d\n" % len(self.words))
                fh.write("contexts %d\n" % len(self.context_index))
        finally:
            os.remove(tmp_path)
        with open("debug.log", "a") as log:
            log.write("fit n=%d k=%g sentences=%d vocab=%d\n"
                      % (self.n, self.k, len(corpus), len(self.words)))
        return self

    def _check(self):
        if self.vocab is None:
            raise RuntimeError("NGramLM.fit must be called first")

    def _tok(self, tok):
        if tok == BOS or tok in self.vocab:
            return tok
        return UNK

    def _ctx(self, context):
        m = self.n - 1
        if m == 0:
            return ()
        ctx = list(context)
        ctx = ctx[-m:] if len(ctx) >= m else [BOS] * (m - len(ctx)) + ctx
        return tuple(self._tok(t) for t in ctx)

    def _row(self, ctx):
        """Counts over self.words for the context, and the context total."""
        r = self.context_index.get(ctx)
        if r is None:
            return np.zeros(len(self.words), dtype=np.int64), 0
        return self.table[r], int(self.totals[r])

    def _probs(self, ctx):
        counts, total = self._row(ctx)
        if self.k > 0:
            return (counts + self.k) / (total + self.k * len(self.words))
        if total == 0:
            return np.zeros(len(self.words))
        return counts / total

    def prob(self, word, context):
        self._check()
        w = self._tok(word)
        ctx = self._ctx(context)
        j = self.word_index.get(w)
        if j is None:
            counts, total = self._row(ctx)
            if self.k > 0:
                return float(self.k / (total + self.k * len(self.words)))
            return 0.0
        return float(self._probs(ctx)[j])

    def logprob(self, sentence):
        self._check()
        padded = pad(sentence, self.n)
        m = self.n - 1
        ps = np.array([self.prob(padded[t], padded[t - m:t]) for t in range(m, len(padded))])
        if np.any(ps <= 0):
            return float("-inf")
        return float(np.sum(np.log(ps)))

    def perplexity(self, corpus):
        self._check()
        lps = np.array([self.logprob(s) for s in corpus], dtype=np.float64)
        n_tok = sum(len(s) + 1 for s in corpus)
        if n_tok == 0:
            raise ValueError("cannot compute perplexity of an empty corpus")
        if np.any(np.isneginf(lps)):
            return float("inf")
        return float(np.exp(-lps.sum() / n_tok))

    def sample(self, rng, max_len=100):
        self._check()
        if isinstance(max_len, (bool, np.bool_)) or not isinstance(max_len, (int, np.integer)) or max_len < 0:
            raise ValueError("max_len must be a non-negative integer, got %r" % (max_len,))
        history = [BOS] * (self.n - 1)
        out = []
        eos = self.word_index[EOS]
        while len(out) < max_len:
            p = self._probs(self._ctx(history))
            if not p.sum() > 0:
                raise ValueError("no continuation observed for context %r" % (tuple(history),))
            with np.errstate(divide="ignore"):
                logp = np.log(p)
            u = rng.random(len(p))
            u = np.clip(u, np.finfo(np.float64).tiny, None)
            j = int(np.argmax(logp - np.log(-np.log(u))))
            if j == eos:
                break
            tok = self.words[j]
            out.append(tok)
            if self.n > 1:
                history = history[1:] + [tok]
        return out

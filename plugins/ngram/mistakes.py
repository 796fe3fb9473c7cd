"""Known ngram mistakes, each made by patching a fresh copy of the reference.

Each patch gets ``{"ngram": module}`` and changes the module so that it makes
the mistake; the oracle runs a check's scenario on it, and a submission that
returns the same wrong answer is told which mistake it made.
"""

from __future__ import annotations

import math
import types

from lmgrade import Mistake


def _set_pad(body):
    def patch(modules):
        m = modules["ngram"]
        m.pad = lambda sentence, n: body(m, list(sentence), n)

    return patch


def _method(name, make):
    def patch(modules):
        m = modules["ngram"]
        setattr(m.NGramLM, name, make(m, getattr(m.NGramLM, name)))

    return patch


def _log_base(base):
    def patch(modules):
        m = modules["ngram"]
        m.math = types.SimpleNamespace(**{**vars(math), "log": lambda x: math.log(x, base)})

    return patch


def _vocab_size_off_by(delta):
    def make(m, fit):
        def patched(self, corpus):
            fit(self, corpus)
            self.vocab = set(self.vocab)
            if delta < 0:
                if not any(m.UNK in s for s in corpus):  # UNK stays where the data has it
                    self.vocab.discard(m.UNK)
            elif self.n > 1:  # BOS is in the padded corpus only when n > 1
                self.vocab.add(m.BOS)
            return self

        return patched

    return make


def _perplexity_mean_of_sentences(m, perplexity):
    return lambda self, corpus: sum(perplexity(self, [s]) for s in corpus) / len(corpus)


def _perplexity_without_eos(m, perplexity):
    def patched(self, corpus):
        total = sum(self.logprob(s) for s in corpus)
        return math.inf if total == -math.inf else math.exp(-total / sum(len(s) for s in corpus))

    return patched


def _logprob_without_eos(m, logprob):
    def patched(self, sentence):
        padded = m.pad(sentence, self.n)
        return sum(
            math.log(p) if p > 0 else -math.inf
            for t in range(self.n - 1, len(padded) - 1)
            for p in [self.prob(padded[t], padded[t - self.n + 1 : t])]
        )

    return patched


def _prob_add_k_without_vocab(m, prob):
    def patched(self, word, context):
        if self.k == 0:
            return prob(self, word, context)
        ctx, word = self._context(context), self._known(word)
        return (self.counts.get(ctx, {}).get(word, 0) + self.k) / (self.context_totals.get(ctx, 0) + self.k)

    return patched


def _prob_unpadded_context(m, prob):
    """A context shorter than n - 1 is used as it is, not left-padded with BOS."""

    def patched(self, word, context):
        context = list(context)[-(self.n - 1) :] if self.n > 1 else []
        if len(context) == self.n - 1:
            return prob(self, word, context)
        ctx = tuple(self._known(t) for t in context)
        c = self.counts.get(ctx, {})
        total = sum(c.values())
        return (c.get(self._known(word), 0) + self.k) / (total + self.k * len(self.vocab)) if (total or self.k) else 0.0

    return patched


EOS_PER_ORDER = Mistake(
    "eos_n_minus_1",
    "the end is padded with n - 1 EOS markers; the spec asks for exactly one",
    _set_pad(lambda m, s, n: [m.BOS] * (n - 1) + s + [m.EOS] * (n - 1)),
)
NO_BOS = Mistake("no_bos", "the start is not padded with n - 1 BOS markers", _set_pad(lambda m, s, n: s + [m.EOS]))
N_BOS = Mistake(
    "n_bos",
    "the start is padded with n BOS markers instead of n - 1",
    _set_pad(lambda m, s, n: [m.BOS] * n + s + [m.EOS]),
)
NO_EOS = Mistake("no_eos", "the EOS marker is left out", _set_pad(lambda m, s, n: [m.BOS] * (n - 1) + s))
PADDING = (EOS_PER_ORDER, NO_BOS, N_BOS, NO_EOS)

BOS_IN_VOCAB = Mistake(
    "bos_in_vocab",
    "BOS is counted in the vocabulary (the spec leaves it out, so len(vocab) is one too many)",
    _method("fit", _vocab_size_off_by(+1)),
)
NO_UNK_IN_VOCAB = Mistake(
    "no_unk_in_vocab",
    "UNK is not added to the vocabulary (len(vocab) in the add-k denominator is one too few)",
    _method("fit", _vocab_size_off_by(-1)),
)
ADD_K_DENOMINATOR = Mistake(
    "add_k_denominator",
    "add-k adds k to the context count instead of k * len(vocab)",
    _method("prob", _prob_add_k_without_vocab),
)
UNPADDED_CONTEXT = Mistake(
    "unpadded_context",
    "a context shorter than n - 1 tokens is not left-padded with BOS",
    _method("prob", _prob_unpadded_context),
)
LOG2 = Mistake("log2", "logarithms are taken in base 2; the spec asks for natural logs", _log_base(2))
LOG10 = Mistake("log10", "logarithms are taken in base 10; the spec asks for natural logs", _log_base(10))
LOGPROB_NO_EOS = Mistake(
    "logprob_without_eos",
    "the final EOS is not predicted (its log-probability is missing from the sum)",
    _method("logprob", _logprob_without_eos),
)
PERPLEXITY_MEAN = Mistake(
    "perplexity_mean",
    "perplexity is averaged over sentences; the spec asks for one perplexity of the whole corpus",
    _method("perplexity", _perplexity_mean_of_sentences),
)
PERPLEXITY_NO_EOS = Mistake(
    "perplexity_without_eos",
    "the token count leaves out the EOS of each sentence (use len(s) + 1)",
    _method("perplexity", _perplexity_without_eos),
)

CONTEXT_NOT_TRUNCATED = Mistake(
    "context_from_position_n_minus_1",
    "prob keeps the context from its position n - 1 on (context[n - 1:]); the contract uses its last n - 1 "
    "tokens, context[-(n - 1):]",
    edits=(("ngram.py", "last[-(self.n - 1) :]", "last[self.n - 1 :]"),),
)

PAD_MUTATES = Mistake(
    "pad_mutates",
    "pad appends EOS to the caller's list (sentence.append) instead of returning a new list: each call "
    "leaves the caller's sentence one EOS longer",
    edits=(
        (
            "ngram.py",
            "    return [BOS] * (n - 1) + list(sentence) + [EOS]\n",
            "    sentence.append(EOS)\n    return [BOS] * (n - 1) + sentence\n",
        ),
    ),
)

# Conventions of public code (the ports of tests/submissions/ports/ngram carry them).
UNK_LABEL = Mistake(
    "unk_label",
    'the unknown-word token is "<UNK>" (nltk.lm\'s Vocabulary label); the contract\'s UNK is "<unk>"',
    edits=(("ngram.py", 'UNK = "<unk>"', 'UNK = "<UNK>"'),),
)
LOGPROB_MEAN = Mistake(
    "logprob_mean",
    "logprob divides the sum of log-probabilities by the number of predicted tokens (makemore's mean NLL, "
    "negated): the contract's logprob is the plain sum of ln p over the sentence and its EOS",
    edits=(("ngram.py", "        return total\n", "        return total / (len(padded) - self.n + 1)\n"),),
)
UNSEEN_CONTEXT_NAN = Mistake(
    "unseen_context_nan",
    "MLE divides by the context's count even where the context was never seen, and 0 / 0 gives nan (a count "
    "row normalised as a whole, as makemore's N / N.sum() is): an unseen context gives every word probability 0 "
    "under MLE",
    edits=(("ngram.py", "return c_ctx_w / c_ctx if c_ctx else 0.0", "return c_ctx_w / c_ctx if c_ctx else math.nan"),),
)
# Mistakes that show by raising where the reference answers: named where the submission raises the same
# exception on the same cases (`ExpectedValues.diagnose`), and never tried in a pair.
UNSEEN_CONTEXT_DIVISION = Mistake(
    "unseen_context_division",
    "MLE divides by the context's count even where the context was never seen (ZeroDivisionError): an "
    "unseen context gives every word probability 0 under MLE",
    edits=(("ngram.py", "return c_ctx_w / c_ctx if c_ctx else 0.0", "return c_ctx_w / c_ctx"),),
    paired=False,
)
CONTEXT_MUST_BE_A_LIST = Mistake(
    "context_must_be_a_list",
    "prob adds the context to a list as it is given, so a context given as a tuple raises TypeError: the "
    "contract takes any sequence of tokens (list(context))",
    edits=(("ngram.py", "last = [BOS] * (self.n - 1) + list(context)", "last = [BOS] * (self.n - 1) + context"),),
    paired=False,
)
LOG_OF_ZERO = Mistake(
    "log_of_zero",
    "logprob takes math.log of a probability of 0 (ValueError: math domain error) instead of returning -inf",
    edits=(("ngram.py", "            if p == 0.0:\n                return -math.inf\n", ""),),
    paired=False,
)

_CHECK_N = (
    "    if isinstance(n, bool) or not isinstance(n, int) or n < 1:\n"
    '        raise ValueError(f"n must be an integer >= 1, got {n!r}")\n'
)
_CHECK_K = (
    "        if isinstance(k, bool) or not isinstance(k, (int, float)) or not k >= 0 or math.isinf(k):\n"
    '            raise ValueError(f"k must be a finite number >= 0, got {k!r}")\n'
)
NO_VALIDATION = Mistake(
    "no_validation",
    "nothing checks that n is an integer >= 1 or that k is a finite number >= 0: the contract asks for a ValueError",
    edits=(("ngram.py", _CHECK_N, "    pass\n"), ("ngram.py", _CHECK_K, "")),
)
ASSERT_NOT_VALUE_ERROR = Mistake(
    "assert_not_value_error",
    "n is checked with assert, which raises AssertionError (and nothing at all under python -O): use raise "
    "ValueError, the contract asks for it",
    edits=(
        (
            "ngram.py",
            _CHECK_N,
            '    assert not isinstance(n, bool) and isinstance(n, int) and n >= 1, "n must be >= 1"\n',
        ),
    ),
)

# Samplers' mistakes. A sampler's answers are draws: such a mistake is named where the submission's draws are
# exactly those the mistaken reference draws from the same rng (every case, the seeded repeats included), which
# a sampler drawing by another method than rng.choice over the sorted vocabulary does not give. The judge
# (`public.sampling`) says what the draws show whatever the method. Never tried in pairs: public samplers carry
# one of them, and each pair's draws are as long to make as a single's.
_DRAW = "word = words[rng.choice(len(words), p=self._distribution(words, tuple(context)))]"
SAMPLE_GREEDY = Mistake(
    "sample_greedy",
    "sample takes the likeliest word of p(. | context) at every step (an argmax) instead of drawing one with rng",
    edits=(("ngram.py", _DRAW, "word = words[int(numpy.argmax(self._distribution(words, tuple(context))))]"),),
    paired=False,
)
SAMPLE_STALE_CONTEXT = Mistake(
    "sample_stale_context",
    "sample never moves the context forward: every word is drawn from p(. | BOS ... BOS), the starting context; "
    "after each word the context must drop its first token and take the word",
    edits=(("ngram.py", "            context = context[1:] + [word] if self.n > 1 else context\n", ""),),
    paired=False,
)
SAMPLE_SEEN_SUCCESSORS_ONLY = Mistake(
    "sample_seen_successors_only",
    "sample draws only from the words seen after each context: under add-k smoothing every word of the "
    "vocabulary (EOS and UNK included) has probability (c(ctx, w) + k) / (c(ctx) + k * len(vocab)), unseen ones too",
    edits=(
        (
            "ngram.py",
            "            p = numpy.array([self.prob(w, context) for w in words])\n",
            "            seen = self.counts.get(self._context(context), {})\n"
            "            p = numpy.array([self.prob(w, context) if w in seen else 0.0 for w in words])\n"
            "            p = p if p.sum() > 0 else numpy.ones(len(words))\n",
        ),
    ),
    paired=False,
)
SAMPLE_KEEPS_EOS = Mistake(
    "sample_keeps_eos",
    "sample appends each drawn word before it checks for EOS (makemore's loop), so the EOS that ends a draw is "
    "returned with it: the contract's draws stop at EOS without it",
    edits=(
        (
            "ngram.py",
            "            if word == EOS:\n                break\n            out.append(word)\n",
            "            out.append(word)\n            if word == EOS:\n                break\n",
        ),
    ),
    paired=False,
)
SAMPLE_GLOBAL_RANDOM = Mistake(
    "sample_global_random",
    "sample draws with numpy's global generator (numpy.random.choice) instead of the rng it is given: the same "
    "rng does not give the same draws",
    edits=(("ngram.py", _DRAW, _DRAW.replace("rng.choice", "numpy.random.choice")),),
    paired=False,
)
SAMPLER = (SAMPLE_GREEDY, SAMPLE_STALE_CONTEXT, SAMPLE_SEEN_SUCCESSORS_ONLY, SAMPLE_KEEPS_EOS, SAMPLE_GLOBAL_RANDOM)

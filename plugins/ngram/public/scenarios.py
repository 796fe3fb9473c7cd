"""What the ngram checks do with a submission, inside the sandbox.

Each function gets ``modules`` ({"ngram": the submission's module, or the
reference's}) and one case's plain-data arguments by name, and returns plain data.
This module is imported by the fork server before any student code: it must
never import the reference.
"""

from __future__ import annotations

import numpy as np

from lmgrade import asked_beside, expected_only, property_result, raised


def pad(modules, sentence, n):
    return modules["ngram"].pad(sentence, n)


def count_ngrams(modules, corpus, n):
    return modules["ngram"].count_ngrams(corpus, n)


def _model(modules, n, k):
    """NGramLM(n, k=k), or NGramLM(n) where the case leaves k to its default (None)."""
    if k is None:
        return modules["ngram"].NGramLM(n)
    return modules["ngram"].NGramLM(n, k=k)


def _fitted(modules, corpus, n, k, fitted_before_on=None, sampled_before=False):
    lm = _model(modules, n, k)
    if fitted_before_on is not None:  # fitting again must forget the first corpus
        lm.fit(fitted_before_on)
        if sampled_before:  # ... and whatever sampling from it left behind
            lm.sample(np.random.default_rng(0), max_len=5)
    return lm.fit(corpus)


@asked_beside
def fit(modules, corpus, n, k=None, fitted_before_on=None):
    lm = _model(modules, n, k)
    if fitted_before_on is not None:
        lm.fit(fitted_before_on)
    fitted = lm.fit(corpus)
    return {"fit returns self": fitted is lm, "vocab": lm.vocab}


def prob(modules, corpus, n, queries, k=None, fitted_before_on=None):
    lm = _fitted(modules, corpus, n, k, fitted_before_on)
    return {f"prob({w!r}, {ctx!r})": lm.prob(w, ctx) for w, ctx in queries}


def logprob(modules, corpus, n, k, sentences):
    lm = _fitted(modules, corpus, n, k)
    return {f"logprob({s!r})": lm.logprob(s) for s in sentences}


@asked_beside
def perplexity(modules, corpus, n, k, test):
    lm = _fitted(modules, corpus, n, k)
    return lm.perplexity(test)


def sample(modules, corpus, n, k, max_len, draws, repeat, seed, fitted_before_on=None, sampled_before=False):
    """Draws for a statistical test, and the model's distribution to test them against."""
    lm = _fitted(modules, corpus, n, k, fitted_before_on, sampled_before)
    if max_len is None:  # the default, used by omission

        def draw(rng):
            return lm.sample(rng)
    else:

        def draw(rng):
            return lm.sample(rng, max_len=max_len)

    # Only rng may be random: the global generators are seeded, so that a sampler drawing from one draws the
    # same in every run (and its known mistake can be named by its draws), then shaken between the two runs.
    np.random.seed(seed % 2**32)
    __import__("random").seed(seed)
    rng = np.random.default_rng(seed)
    first = [draw(rng) for _ in range(draws)]
    np.random.seed(seed % 2**32 ^ 0x5EED)
    __import__("random").seed(seed ^ 0x5EED)
    rng = np.random.default_rng(seed)
    again = [draw(rng) for _ in range(repeat)]
    rng = np.random.default_rng(seed + 1)
    other = [draw(rng) for _ in range(repeat)]
    # The judge tests the draws against the reference's distribution: only the reference computes it.
    model = expected_only(lambda: _distribution(modules, lm, corpus, n))
    return {"draws": first, "again": again, "other": other, "model": model}


def _distribution(modules, lm, corpus, n) -> dict:
    """The vocabulary, and p(. | context) over it for every context of the corpus."""
    vocab = sorted(lm.vocab)
    contexts = {tuple(ctx) for ctx in modules["ngram"].count_ngrams(corpus, n)}
    return {"vocab": vocab, "table": {ctx: [lm.prob(w, list(ctx)) for w in vocab] for ctx in contexts}}


def no_mutation(modules, call, value, n, k=None, corpus=None, word=None):
    """Call one function; its answer, and its argument as it is afterwards."""
    ngram = modules["ngram"]
    kept = value  # a fresh copy in every process: compared after the call
    if call == "pad":
        answer = ngram.pad(kept, n)
    elif call == "count_ngrams":
        answer = ngram.count_ngrams(kept, n)
    elif call == "fit":
        answer = ngram.NGramLM(n, k=k).fit(kept).vocab
    else:
        lm = ngram.NGramLM(n, k=k).fit(corpus)
        if call == "prob":
            answer = lm.prob(word, kept)
        elif call == "logprob":
            answer = lm.logprob(kept)
        else:
            answer = lm.perplexity(kept)
    return property_result(answer, kept)


def bad_argument(modules, call, n, k, sentence, accepted):
    """The name of the exception raised outside the domain, beside the answer to a call inside it, both on
    the case's drawn sentence (answers recorded on other sentences fit neither). `accepted` is the
    grader's (`bad_argument_holds`)."""
    ngram = modules["ngram"]
    if call == "pad":
        answer = ngram.pad(sentence, 2)
        outside = raised(lambda: ngram.pad(sentence, n))
    elif call == "count_ngrams":
        answer = ngram.count_ngrams([sentence], 2)
        outside = raised(lambda: ngram.count_ngrams([sentence], n))
    else:
        answer = ngram.NGramLM(2, k=0.5).fit([sentence]).prob(sentence[-1], [sentence[0]])
        outside = raised(lambda: ngram.NGramLM(n, k=k))
    return property_result(answer, outside)


def bad_argument_holds(args, observed):
    """The property in the grader's words: any of the case's accepted exceptions is named by all of them."""
    accepted = tuple(args["accepted"])
    return " or ".join(accepted) if isinstance(observed, str) and observed in accepted else observed

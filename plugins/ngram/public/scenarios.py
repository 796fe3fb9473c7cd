"""What the ngram checks do with a submission, inside the sandbox.

Each function gets ``modules`` ({"ngram": the submission's module, or the
reference's}) and one case's plain-data arguments, and returns plain data.
This module is imported by the fork server before any student code: it must
never import the reference.
"""

from __future__ import annotations

import numpy as np

from lmgrade import asked_beside, property_result, raised


def pad(modules, args):
    return modules["ngram"].pad(args["sentence"], args["n"])


def count_ngrams(modules, args):
    return modules["ngram"].count_ngrams(args["corpus"], args["n"])


def _model(modules, args):
    """NGramLM(n, k=k), or NGramLM(n) where the case leaves k to its default."""
    if "k" in args:
        return modules["ngram"].NGramLM(args["n"], k=args["k"])
    return modules["ngram"].NGramLM(args["n"])


def _fitted(modules, args):
    lm = _model(modules, args)
    if "fitted_before_on" in args:  # fitting again must forget the first corpus
        lm.fit(args["fitted_before_on"])
        if args.get("sampled_before"):  # ... and whatever sampling from it left behind
            lm.sample(np.random.default_rng(0), max_len=5)
    return lm.fit(args["corpus"])


@asked_beside
def fit(modules, args):
    lm = _model(modules, args)
    if "fitted_before_on" in args:
        lm.fit(args["fitted_before_on"])
    fitted = lm.fit(args["corpus"])
    return {"fit returns self": fitted is lm, "vocab": lm.vocab}


def prob(modules, args):
    lm = _fitted(modules, args)
    return {f"prob({w!r}, {ctx!r})": lm.prob(w, ctx) for w, ctx in args["queries"]}


def logprob(modules, args):
    lm = _fitted(modules, args)
    return {f"logprob({s!r})": lm.logprob(s) for s in args["sentences"]}


@asked_beside
def perplexity(modules, args):
    lm = _fitted(modules, args)
    return lm.perplexity(args["test"])


def sample(modules, args):
    """Draws for a statistical test, and the model's distribution to test them against."""
    lm = _fitted(modules, args)
    rng = np.random.default_rng(args["seed"])
    if args["max_len"] is None:  # the default, used by omission

        def draw(rng):
            return lm.sample(rng)
    else:

        def draw(rng):
            return lm.sample(rng, max_len=args["max_len"])

    draws = [draw(rng) for _ in range(args["draws"])]
    # Only rng may be random: shake the global generators between the two runs.
    np.random.seed(args["seed"] % 2**32 ^ 0x5EED)
    __import__("random").seed(args["seed"] ^ 0x5EED)
    rng = np.random.default_rng(args["seed"])
    again = [draw(rng) for _ in range(args["repeat"])]
    rng = np.random.default_rng(args["seed"] + 1)
    other = [draw(rng) for _ in range(args["repeat"])]
    # The judge tests the draws against the reference's distribution; a
    # submission's own table is not needed, and its other bugs must not cost
    # it the sample check.
    try:
        vocab = sorted(lm.vocab)
        contexts = {tuple(ctx) for ctx in modules["ngram"].count_ngrams(args["corpus"], args["n"])}
        table = {ctx: [lm.prob(w, list(ctx)) for w in vocab] for ctx in contexts}
    except Exception:
        vocab, table = None, None
    return {"draws": draws, "again": again, "other": other, "vocab": vocab, "table": table}


def no_mutation(modules, args):
    """Call one function; its answer, and its argument as it is afterwards."""
    ngram = modules["ngram"]
    kept = args["value"]  # a fresh copy in every process: compared after the call
    call = args["call"]
    if call == "pad":
        answer = ngram.pad(kept, args["n"])
    elif call == "count_ngrams":
        answer = ngram.count_ngrams(kept, args["n"])
    elif call == "fit":
        answer = ngram.NGramLM(args["n"], k=args["k"]).fit(kept).vocab
    else:
        lm = ngram.NGramLM(args["n"], k=args["k"]).fit(args["corpus"])
        if call == "prob":
            answer = lm.prob(args["word"], kept)
        elif call == "logprob":
            answer = lm.logprob(kept)
        else:
            answer = lm.perplexity(kept)
    return property_result(answer, kept)


def bad_argument(modules, args):
    """The name of the exception raised outside the domain, beside the answer to a call inside it, both on
    the case's drawn sentence (answers recorded on other sentences fit neither)."""
    ngram = modules["ngram"]
    n, k, sentence = args["n"], args["k"], args["sentence"]
    if args["call"] == "pad":
        answer = ngram.pad(sentence, 2)
        outside = raised(lambda: ngram.pad(sentence, n))
    elif args["call"] == "count_ngrams":
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

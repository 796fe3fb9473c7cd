"""The statistical judge of `sample`: do the draws follow the model?

Any correct sampler passes, whatever method it uses to draw (inverse CDF,
`rng.choice`, Gumbel-max ...): the draws are only compared, by Pearson's
chi-square test, with the exact probabilities of the reference model, for
whole sentences and for their first two tokens. The significance level is one in a
million, so a correct submission fails by bad luck essentially never, while
a sampler off by one context, ignoring smoothing or never drawing EOS
is far beyond the critical value with the few hundred draws of a case. Three
named mistakes get tests of their own at the same level: the likeliest word
taken at every step, a context that never moves forward (a likelihood ratio)
and unseen successors never drawn under add-k.
"""

from __future__ import annotations

import math
from collections import Counter

from lmgrade import CaseVerdict, fit_problem, seeding_problem

BOS, EOS = "<s>", "</s>"
DEFAULT_MAX_LEN = 100  # sample's default in the contract
LOG_MILLION = math.log(1e6)  # the named-mistake tests' level, as the chi-square tests'


class _Model:
    def __init__(self, model: dict, n: int, k: float):
        self.vocab = model["vocab"]
        self.index = {w: i for i, w in enumerate(self.vocab)}
        self.table, self.n, self.k = model["table"], n, k

    def p(self, word: str, context: tuple) -> float:
        if word not in self.index:
            return 0.0
        row = self.table.get(context)
        if row is None:  # an unseen context: uniform under add-k, unreachable under MLE
            return 1.0 / len(self.vocab) if self.k > 0 else 0.0
        return row[self.index[word]]

    def steps(self, tokens: tuple, max_len: int, ended: bool = True):
        """(word, its context) for each word a sampler draws to give `tokens` (and its EOS, where ended and
        shorter than max_len), the context moving forward as a correct sampler's does."""
        context = (BOS,) * (self.n - 1)
        for word in tokens + ((EOS,) if ended and len(tokens) < max_len else ()):
            yield word, context
            context = (context + (word,))[1:] if self.n > 1 else ()

    def sequence(self, tokens: tuple, max_len: int, ended: bool = True) -> float:
        """P(a draw is `tokens`), or with ended=False P(a draw starts with `tokens`)."""
        p = 1.0
        for word, context in self.steps(tokens, max_len, ended):
            p *= self.p(word, context)
        return p

    def stale(self, tokens: tuple, max_len: int) -> float:
        """P(a draw is `tokens`) for a sampler whose context never leaves the all-BOS start."""
        start = (BOS,) * (self.n - 1)
        p = 1.0
        for word in tokens + ((EOS,) if len(tokens) < max_len else ()):
            p *= self.p(word, start)
        return p

    def greedy(self, tokens: tuple, max_len: int) -> bool:
        """Whether every word of `tokens` (and its EOS) is a likeliest word of its context."""
        for word, context in self.steps(tokens, max_len):
            row = self.table.get(context)
            if row is None or word not in self.index or row[self.index[word]] < max(row):
                return False
        return True

    def continued(self, tokens: tuple, max_len: int) -> float:
        """P(a draw starts with `tokens` and goes on after them)."""
        return self.sequence(tokens, max_len, ended=False) - self.sequence(tokens, max_len)


def _shape_problem(draws, max_len: int, vocab: set) -> str | None:
    for draw in draws:
        if not isinstance(draw, list) or not all(isinstance(t, str) for t in draw):
            return f"sample must return a list of str, got {type(draw).__name__}: {draw!r:.100}"
        if len(draw) > max_len:
            return f"sample returned {len(draw)} tokens; max_len is {max_len}"
        # BOS in the model's vocabulary: a known mistake's model (fit keeping BOS), whose sampler draws it.
        if EOS in draw or (BOS in draw and BOS not in vocab):
            return f"sample returned {draw!r:.100}: BOS is never drawn and EOS ends the sample without being returned"
        unknown = [t for t in draw if t not in vocab]
        if unknown:
            return f"sample drew {unknown[0]!r}, which is not in the model's vocabulary"
    return None


def judge_sample(check, case, expected, got, *, reveal: bool) -> CaseVerdict:
    args = case.args
    max_len = DEFAULT_MAX_LEN if args["max_len"] is None else args["max_len"]
    model = _Model(expected["model"], args["n"], args.get("k", 0.0))
    problem = _shape_problem(got["draws"] + got["again"] + got["other"], max_len, set(model.vocab))
    if problem:
        return CaseVerdict(False, problem)
    problem = _greedy(model, got["draws"] + got["again"] + got["other"], max_len) or seeding_problem(
        got, expected, args["repeat"]
    )
    if problem:
        return CaseVerdict(False, problem)

    total = len(got["draws"])
    draws = [tuple(d) for d in got["draws"]]
    problem = _stale_context(model, draws, max_len)
    if problem:
        return CaseVerdict(False, problem)
    impossible = next((d for d in draws if model.sequence(d, max_len) == 0.0), None)
    if impossible is not None:
        return CaseVerdict(False, f"sample drew {list(impossible)!r:.120}, which has probability 0 under the model")
    problem = _seen_successors_only(model, draws, max_len)
    if problem:
        return CaseVerdict(False, problem)
    tests = [
        ("sentences", Counter(draws), lambda d: model.sequence(d, max_len)),
        # Sentences are many and rare when max_len is large or smoothing spreads
        # the mass; their first two tokens are few, and show a stale context.
        (
            "first two tokens",
            Counter((d[:2], len(d) <= 2) for d in draws),
            lambda key: model.sequence(key[0], max_len) if key[1] else model.continued(key[0], max_len),
        ),
    ]
    for what, observed, probability in tests:
        problem = fit_problem(what, observed, probability, total, reveal)
        if problem:
            return CaseVerdict(False, problem.replace("do not follow the model", "do not follow p(. | context)"))
    return CaseVerdict(True)


def _greedy(model: _Model, draws: list[list], max_len: int) -> str | None:
    """The named mistake of a sampler that takes the likeliest word: every draw is the greedy sentence,
    where a correct sampler draws them all with probability below one in a million."""
    if not draws or not all(model.greedy(tuple(d), max_len) for d in draws):
        return None
    log_p = sum(math.log(p) if (p := model.sequence(tuple(d), max_len)) > 0 else -math.inf for d in draws)
    if log_p > -LOG_MILLION:
        return None
    return (
        f"every one of the {len(draws)} draws takes the likeliest word of p(. | context) at each step: sample "
        "chooses the most likely word (an argmax) instead of drawing one with rng (a correct sampler draws "
        "that often with probability below one in a million)"
    )


def _stale_context(model: _Model, draws: list[tuple], max_len: int) -> str | None:
    """The named mistake of a context that never moves forward, by its likelihood ratio.

    Under a correct sampler the ratio P_stale(draws) / P(draws) has mean at
    most 1, so it reaches a million with probability at most one in a million
    (Markov's inequality): the same level as the chi-square tests, and far
    more power against this one alternative, which a few hundred draws show.
    """
    if model.n == 1:
        return None
    log_ratio = 0.0
    for draw in draws:
        q = model.stale(draw, max_len)
        if q == 0.0:
            return None
        p = model.sequence(draw, max_len)
        log_ratio += math.inf if p == 0.0 else math.log(q) - math.log(p)
    if log_ratio < LOG_MILLION:
        return None
    times = "infinitely" if math.isinf(log_ratio) else f"e^{log_ratio:.0f} times"
    start = " ".join([BOS] * (model.n - 1))
    return (
        f"the {len(draws)} draws do not follow p(. | context): they are {times} likelier if every word is "
        f"drawn from p(. | {start}), the starting context (a correct sampler reaches a million in fewer "
        f"than one run in a million). sample must move the context forward after each word"
    )


SEEN_ONLY = (
    "sample draws only from the words seen after each context: under add-k smoothing every word of "
    "the vocabulary (EOS and UNK included) has probability (c(ctx, w) + k) / (c(ctx) + k * len(vocab)), "
    "unseen ones too"
)


def _seen_successors_only(model: _Model, draws: list[tuple], max_len: int) -> str | None:
    """Under add-k, no draw ever took an unseen successor where many were expected (the named mistake), or
    the draws took unseen successors far more often than the model gives them."""
    if model.k <= 0:
        return None
    expected_unseen, variance, drawn_unseen = 0.0, 0.0, 0
    for draw in draws:
        context = (BOS,) * (model.n - 1)
        for word in draw + ((EOS,) if len(draw) < max_len else ()):
            row = model.table.get(context)
            if row is not None and min(row) < max(row):
                floor = min(row)
                unseen = sum(p for p in row if p == floor)
                expected_unseen += unseen
                variance += unseen * (1 - unseen)
                drawn_unseen += model.p(word, context) == floor
            context = (context + (word,))[1:] if model.n > 1 else ()
    if drawn_unseen == 0 and expected_unseen >= 30:
        return (
            f"{SEEN_ONLY}: about {expected_unseen:.0f} draws of an unseen successor were expected in "
            f"{len(draws)} samples, and none was drawn"
        )
    # The other way: unseen successors drawn far more often than the smoothing gives them (a sampler drawing
    # any word of the vocabulary). Each step is a draw of its own given its context, so the count of unseen
    # ones is a sum of independent trials: beyond 5 standard deviations (about one run in ten million).
    if drawn_unseen > expected_unseen + 5 * math.sqrt(variance) + 1:
        return (
            f"the draws take a successor never seen after its context {drawn_unseen} times, where p(. | context) "
            f"gives about {expected_unseen:.0f}: sample must draw each word with its probability under the model"
        )
    return None

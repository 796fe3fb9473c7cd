"""The statistical judge of `sample`: do the draws follow the model?

Any correct sampler passes, whatever method it uses to draw (inverse CDF,
`rng.choice`, Gumbel-max ...): the draws are only compared, by Pearson's
chi-square test, with the exact probabilities of the reference model, for
whole sentences and for their first two tokens. The significance level is one in a
million, so a correct submission fails by bad luck essentially never, while
a sampler off by one context, ignoring smoothing or never drawing EOS
is far beyond the critical value with 2000 draws.
"""

from __future__ import annotations

import math
from collections import Counter

from autograder.checks import CaseVerdict

BOS, EOS = "<s>", "</s>"
DEFAULT_MAX_LEN = 100  # sample's default in the contract
ALPHA_Z = 4.7534  # standard normal quantile of 1 - 1e-6
MIN_EXPECTED = 5.0


def chi2_critical(df: int, z: float = ALPHA_Z) -> float:
    """Wilson-Hilferty approximation of the chi-square quantile."""
    a = 2.0 / (9.0 * df)
    return df * (1.0 - a + z * math.sqrt(a)) ** 3


def chi2_test(observed: Counter, probability, total: int) -> tuple[float, int, object, float, float]:
    """(statistic, df, worst category, its observed and expected counts).

    Categories whose expected count is small are pooled into one.
    """
    cells, rest_obs, rest_p = [], 0, 1.0
    for category, count in observed.items():
        p = probability(category)
        if p * total >= MIN_EXPECTED:
            cells.append((category, count, p * total))
            rest_p -= p
        else:
            rest_obs += count
    rest_exp = max(rest_p, 0.0) * total
    if rest_exp >= MIN_EXPECTED or rest_obs:
        cells.append(("(all rarer outcomes)", rest_obs, max(rest_exp, 1e-12)))
    stat = sum((o - e) ** 2 / e for _, o, e in cells)
    worst = max(cells, key=lambda c: (c[1] - c[2]) ** 2 / c[2])
    return stat, len(cells) - 1, worst[0], worst[1], worst[2]


class _Model:
    def __init__(self, expected: dict, n: int, k: float):
        self.vocab = expected["vocab"]
        self.index = {w: i for i, w in enumerate(self.vocab)}
        self.table, self.n, self.k = expected["table"], n, k

    def p(self, word: str, context: tuple) -> float:
        if word not in self.index:
            return 0.0
        row = self.table.get(context)
        if row is None:  # an unseen context: uniform under add-k, unreachable under MLE
            return 1.0 / len(self.vocab) if self.k > 0 else 0.0
        return row[self.index[word]]

    def sequence(self, tokens: tuple, max_len: int, ended: bool = True) -> float:
        """P(a draw is `tokens`), or with ended=False P(a draw starts with `tokens`)."""
        context = (BOS,) * (self.n - 1)
        p = 1.0
        for word in tokens + ((EOS,) if ended and len(tokens) < max_len else ()):
            p *= self.p(word, context)
            context = (context + (word,))[1:] if self.n > 1 else ()
        return p


    def continued(self, tokens: tuple, max_len: int) -> float:
        """P(a draw starts with `tokens` and goes on after them)."""
        return self.sequence(tokens, max_len, ended=False) - self.sequence(tokens, max_len)


def _shape_problem(draws, max_len: int, vocab: set) -> str | None:
    for draw in draws:
        if not isinstance(draw, list) or not all(isinstance(t, str) for t in draw):
            return f"sample must return a list of str, got {type(draw).__name__}: {draw!r:.100}"
        if len(draw) > max_len:
            return f"sample returned {len(draw)} tokens; max_len is {max_len}"
        if EOS in draw or BOS in draw:
            return f"sample returned {draw!r:.100}: BOS is never drawn and EOS ends the sample without being returned"
        unknown = [t for t in draw if t not in vocab]
        if unknown:
            return f"sample drew {unknown[0]!r}, which is not in the model's vocabulary"
    return None


def judge_sample(check, case, expected, got, *, reveal: bool) -> CaseVerdict:
    args = case.args
    max_len = DEFAULT_MAX_LEN if args["max_len"] is None else args["max_len"]
    model = _Model(expected, args["n"], args.get("k", 0.0))
    problem = _shape_problem(got["draws"] + got["again"] + got["other"], max_len, set(model.vocab))
    if problem:
        return CaseVerdict(False, problem)
    repeat = args["repeat"]
    if got["again"] != got["draws"][:repeat]:
        return CaseVerdict(False, "the same seed gave different draws: sample must take all its randomness "
                                  "from rng (not random, numpy.random or a generator of its own)")
    if got["other"] == got["draws"][:repeat] and expected["other"] != expected["draws"][:repeat]:
        return CaseVerdict(False, f"{repeat} draws with another seed were exactly the same: sample ignores rng")

    total = len(got["draws"])
    draws = [tuple(d) for d in got["draws"]]
    impossible = next((d for d in draws if model.sequence(d, max_len) == 0.0), None)
    if impossible is not None:
        return CaseVerdict(False, f"sample drew {list(impossible)!r:.120}, which has probability 0 under the model")
    tests = [
        ("sentences", Counter(draws), lambda d: model.sequence(d, max_len)),
        # Sentences are many and rare when max_len is large or smoothing spreads
        # the mass; their first two tokens are few, and show a stale context.
        ("first two tokens", Counter((d[:2], len(d) <= 2) for d in draws),
         lambda key: model.sequence(key[0], max_len) if key[1] else model.continued(key[0], max_len)),
    ]
    for what, observed, probability in tests:
        stat, df, worst, obs, exp = chi2_test(observed, probability, total)
        if df < 1:
            continue
        critical = chi2_critical(df)
        if stat > critical:
            detail = (f"; the furthest off is {worst!r:.80}: drawn {obs} times, expected about {exp:.0f}"
                      if reveal else "")
            return CaseVerdict(False, (
                f"the {total} draws do not follow p(. | context): the frequencies of {what} are off "
                f"(chi-square {stat:.1f} on {df} degrees of freedom; a correct sampler stays below "
                f"{critical:.1f} in all but one run in a million){detail}"))
    return CaseVerdict(True)

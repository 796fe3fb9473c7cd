"""Judging random draws: a submission's sampler against the exact distribution.

Any correct sampler passes, whatever method it draws with (inverse CDF,
`rng.choice`, Gumbel-max ...): the draws are only compared, by Pearson's
chi-square test at a one-in-a-million level, with the exact probabilities
the reference computes, and the sampler must take its randomness from the
generator it is given and from nothing else.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable

from .plural import counted

LEVEL = 1e-6
"""Every sampling test's false-fail probability on a correct sampler: a judge's own test of a named mistake
(every draw the likeliest sequence) fails a correct sampler at most this often too."""
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


def seeding_problem(
    got: dict, expected: dict, repeat: int, *, call: str = "sample", source: str = "rng", collision: float | None = None
) -> str | None:
    """Whether the draws came from the given generator alone.

    ``again``: `repeat` draws with the first seed again (global generators
    shaken in between) must equal the first `repeat` draws; ``other``: draws
    with another seed must differ, where a correct sampler's coincide with
    probability below one in a million: `collision` is the probability that
    two draws are equal (sum of p^2), estimated from the reference's draws
    where not given. A distribution with one likely outcome (0.9 of the mass)
    repeats 30 draws every 20 runs.
    """
    if got["again"] != got["draws"][:repeat]:
        return (
            f"the same seed gave different draws: {call} must take all its randomness "
            f"from {source} (not a global generator or one of its own)"
        )
    if collision is None:
        collision = collision_estimate(expected["draws"])
    if got["other"] == got["draws"][:repeat] and collision**repeat < LEVEL:
        return f"{repeat} draws with another seed were exactly the same: {call} ignores {source}"
    return None


def collision_estimate(draws: list) -> float:
    """The probability that two independent draws are equal, unbiased from a sample of them."""
    counts = Counter(tuple(d) if isinstance(d, list) else d for d in draws)
    n = len(draws)
    return sum(c * (c - 1) for c in counts.values()) / (n * (n - 1)) if n > 1 else 1.0


def fit_problem(
    what: str, observed: Counter, probability: Callable[[object], float], total: int, reveal: bool
) -> str | None:
    """A message when the frequencies of `what` are beyond the critical value, else None."""
    stat, df, worst, obs, exp = chi2_test(observed, probability, total)
    if df < 1:
        return None
    critical = chi2_critical(df)
    if stat <= critical:
        return None
    detail = (
        f"; the furthest off is {worst!r:.80}: drawn {counted(obs, 'time')}, expected about {exp:.0f}" if reveal else ""
    )
    return (
        f"the {total} draws do not follow the model: the frequencies of {what} are off "
        f"(chi-square {stat:.1f} on {counted(df, 'degree')} of freedom; a correct sampler stays below "
        f"{critical:.1f} in all but one run in a million){detail}"
    )

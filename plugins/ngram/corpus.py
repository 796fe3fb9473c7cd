"""Text to grade with: sentences from a small probabilistic grammar, or a file.

Nothing is downloaded. The grammar makes corpora with the features the
graders need (repeated n-grams, sentences of unequal length, a long tail of
rare words); an instructor may grade on their own text instead.
"""

from __future__ import annotations

import bisect
import functools
from pathlib import Path

import numpy as np

# Nonterminal -> [(weight, expansion)]; anything not a key is a word.
GRAMMAR: dict[str, list[tuple[float, list[str]]]] = {
    "S": [(0.55, ["NP", "VP"]), (0.25, ["NP", "VP", "PP"]), (0.2, ["NP", "Vi"])],
    "NP": [(0.5, ["Det", "N"]), (0.3, ["Det", "Adj", "N"]), (0.2, ["Name"])],
    "VP": [(0.7, ["Vt", "NP"]), (0.3, ["Vt", "NP", "Adv"])],
    "PP": [(1.0, ["P", "NP"])],
    "Det": [(0.6, ["the"]), (0.3, ["a"]), (0.1, ["every"])],
    "N": [
        (0.3, ["cow"]),
        (0.2, ["farmer"]),
        (0.15, ["dog"]),
        (0.15, ["field"]),
        (0.1, ["barn"]),
        (0.05, ["tractor"]),
        (0.05, ["goose"]),
    ],
    "Adj": [(0.5, ["old"]), (0.3, ["small"]), (0.2, ["muddy"])],
    "Name": [(0.6, ["alice"]), (0.4, ["bob"])],
    "Vt": [(0.4, ["sees"]), (0.3, ["feeds"]), (0.2, ["chases"]), (0.1, ["paints"])],
    "Vi": [(0.6, ["sleeps"]), (0.4, ["sings"])],
    "Adv": [(0.7, ["quietly"]), (0.3, ["again"])],
    "P": [(0.5, ["in"]), (0.3, ["near"]), (0.2, ["behind"])],
}


@functools.cache
def _cumulative(weights: tuple[float, ...]) -> tuple[float, ...]:
    """The rule's cumulative probabilities, the very floats `Generator.choice(..., p=...)` builds; a
    ValueError for weights it refuses too (negative, or none above 0)."""
    p = np.array(weights, dtype=float)
    if not (np.all(p >= 0) and p.sum() > 0):
        raise ValueError(f"a grammar rule's weights must be >= 0 and not all 0, got {list(weights)}")
    cdf = (p / p.sum()).cumsum()
    cdf /= cdf[-1]
    return tuple(cdf.tolist())


def _expand(symbol: str, rng: np.random.Generator, grammar: dict, out: list[str]) -> None:
    if symbol not in grammar:
        out.append(symbol)
        return
    rules = grammar[symbol]
    # What rng.choice(len(rules), p=...) draws, from the same one uniform number, without its
    # checks of p: those made drawing a grading's corpora cost a third of a second.
    choice = rules[bisect.bisect_right(_cumulative(tuple(w for w, _ in rules)), rng.random())][1]
    for child in choice:
        _expand(child, rng, grammar, out)


def sentences(rng: np.random.Generator, count: int, grammar: dict | None = None) -> list[list[str]]:
    """`count` sentences drawn from the grammar (start symbol ``S``)."""
    grammar = grammar or GRAMMAR
    corpus = []
    for _ in range(count):
        out: list[str] = []
        _expand("S", rng, grammar, out)
        corpus.append(out)
    return corpus


def read_text(path: Path) -> list[list[str]]:
    """One sentence per non-empty line, tokens separated by white space."""
    with open(path, encoding="utf-8") as f:
        return [line.split() for line in f if line.strip()]

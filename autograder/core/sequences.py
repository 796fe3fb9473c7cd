"""Seeded token sequences for the checks' cases: data a recurrent model can learn."""

from __future__ import annotations

import numpy as np


def markov_sequences(rng: np.random.Generator, V: int, count: int, low: int = 5, high: int = 10) -> list[np.ndarray]:
    """`count` sequences of low to high - 1 tokens from a seeded sparse Markov chain (two successors per token)."""
    transitions = np.zeros((V, V))
    for i in range(V):
        transitions[i, rng.choice(V, size=2, replace=False)] = rng.dirichlet([1.0, 1.0])
    out = []
    for _ in range(count):
        seq = [int(rng.integers(V))]
        for _ in range(int(rng.integers(low, high)) - 1):
            seq.append(int(rng.choice(V, p=transitions[seq[-1]])))
        out.append(np.array(seq))
    return out

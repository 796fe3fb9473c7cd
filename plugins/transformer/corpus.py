"""A seeded synthetic corpus whose entropy rate is known exactly.

A sparse Markov chain of order k over V tokens: each context of k tokens
allows a few next tokens, with probabilities drawn from a Dirichlet. Its
entropy rate (nats per token) is H = sum over contexts s of pi(s) H(P(.|s)),
with pi the chain's stationary distribution over contexts. A model that
sees at least k previous tokens can reach H and no model can go below it,
so a held-out loss well under H means the model saw the tokens it predicts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class MarkovSource:
    vocab_size: int
    order: int
    # next-token probabilities of every context, row s for the context whose
    # tokens are the base-V digits of s (oldest first): (V**order, V)
    transitions: np.ndarray

    def state(self, context) -> int:
        s = 0
        for token in context:
            s = s * self.vocab_size + int(token)
        return s

    def stationary(self) -> np.ndarray:
        """pi over contexts: the left eigenvector of the context chain for eigenvalue 1."""
        V, n = self.vocab_size, self.transitions.shape[0]
        chain = np.zeros((n, n))
        for s in range(n):
            for token in range(V):
                chain[s, (s * V + token) % n] += self.transitions[s, token]
        values, vectors = np.linalg.eig(chain.T)
        pi = np.real(vectors[:, np.argmin(np.abs(values - 1.0))])
        return pi / pi.sum()

    def entropy_rate(self) -> float:
        p = self.transitions
        with np.errstate(divide="ignore", invalid="ignore"):
            h = -np.where(p > 0, p * np.log(p), 0.0).sum(axis=1)
        return float(self.stationary() @ h)

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """n tokens, started from the stationary distribution (so every stretch has rate H)."""
        V, k = self.vocab_size, self.order
        s = int(rng.choice(len(self.transitions), p=self.stationary().clip(0)))
        tokens = [int(d) for d in np.unravel_index(s, (V,) * k)]
        cumulative = self.transitions.cumsum(axis=1)
        for u in rng.random(n - k):
            s = self.state(tokens[-k:])
            tokens.append(min(int(np.searchsorted(cumulative[s], u * cumulative[s, -1], side="right")), V - 1))
        return np.asarray(tokens[:n], dtype=np.int64)


def _strongly_connected(transitions: np.ndarray, V: int) -> bool:
    """Whether every context reaches every other: all reach context 0, and it reaches all (two searches)."""
    n = transitions.shape[0]
    forward = [[(s * V + int(token)) % n for token in np.flatnonzero(transitions[s])] for s in range(n)]
    backward: list[list[int]] = [[] for _ in range(n)]
    for s, targets in enumerate(forward):
        for t in targets:
            backward[t].append(s)
    return all(_reaches_all(edges, n) for edges in (forward, backward))


def _reaches_all(edges: list[list[int]], n: int) -> bool:
    seen, todo = {0}, [0]
    while todo:
        for t in edges[todo.pop()]:
            if t not in seen:
                seen.add(t)
                todo.append(t)
    return len(seen) == n


def sparse_markov(
    rng: np.random.Generator, vocab_size: int, order: int, successors: int, concentration: float = 1.0
) -> MarkovSource:
    """A random sparse chain in which every context can reach every other (one stationary distribution)."""
    n = vocab_size**order
    while True:
        transitions = np.zeros((n, vocab_size))
        for s in range(n):
            allowed = rng.choice(vocab_size, size=successors, replace=False)
            transitions[s, allowed] = rng.dirichlet(np.full(successors, concentration))
        if _strongly_connected(transitions, vocab_size):
            return MarkovSource(vocab_size, order, transitions)

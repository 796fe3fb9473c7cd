"""A seeded synthetic corpus whose entropy rate is known exactly.

A sparse Markov chain of order k over V tokens: each context of k tokens
allows a few next tokens, with probabilities drawn from a Dirichlet. Its
entropy rate (nats per token) is H = sum over contexts s of pi(s) H(P(.|s)),
with pi the chain's stationary distribution over contexts. A model that
sees at least k previous tokens can reach H and no model can go below it,
so a held-out loss well under H means the model saw the tokens it predicts.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class MarkovSource:
    vocab_size: int
    order: int
    # next-token probabilities of every context, row s for the context whose
    # tokens are the base-V digits of s (oldest first): (V**order, V)
    transitions: np.ndarray

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
        contexts = len(self.transitions)
        s = int(rng.choice(contexts, p=self.stationary().clip(0)))
        tokens = [int(d) for d in np.unravel_index(s, (V,) * k)]
        # Plain lists and bisect: the same draws as np.searchsorted, without numpy's cost per call
        # (tens of thousands of tokens, one at a time).
        cumulative = self.transitions.cumsum(axis=1).tolist()
        for u in rng.random(n - k).tolist():
            row = cumulative[s]
            token = min(bisect.bisect_right(row, u * row[-1]), V - 1)
            tokens.append(token)
            s = (s * V + token) % contexts
        return np.asarray(tokens[:n], dtype=np.int64)


def _strongly_connected(transitions: np.ndarray, V: int) -> bool:
    """Whether every context reaches every other: all reach context 0, and it reaches all (two searches)."""
    n = transitions.shape[0]
    contexts, tokens = np.nonzero(transitions)
    edges = np.zeros((n, n), dtype=bool)  # context s -> the context after s and one more token
    edges[contexts, (contexts * V + tokens) % n] = True
    return _reaches_all(edges) and _reaches_all(edges.T)


def _reaches_all(edges: np.ndarray) -> bool:
    seen = np.zeros(len(edges), dtype=bool)
    seen[0] = True
    frontier = seen.copy()
    while frontier.any():
        frontier = edges[frontier].any(axis=0) & ~seen
        seen |= frontier
    return bool(seen.all())


def sparse_markov(
    rng: np.random.Generator, vocab_size: int, order: int, successors: int, concentration: float = 1.0
) -> MarkovSource:
    """A random sparse chain in which every context can reach every other (one stationary distribution)."""
    n = vocab_size**order
    while True:
        # Every context allows `successors` tokens (a uniform draw without replacement), with
        # probabilities from a Dirichlet; most draws are not strongly connected, so drawn whole.
        allowed = np.argsort(rng.random((n, vocab_size)), axis=1)[:, :successors]
        transitions = np.zeros((n, vocab_size))
        np.put_along_axis(transitions, allowed, rng.dirichlet(np.full(successors, concentration), size=n), axis=1)
        if _strongly_connected(transitions, vocab_size):
            return MarkovSource(vocab_size, order, transitions)

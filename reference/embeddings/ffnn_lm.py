"""Reference solution of the `embeddings` assignment, file `ffnn_lm.py`: the feed-forward neural LM.

Follows spec/student-api.md exactly; the graders compare submissions with it.
Bengio et al.'s model in the lectures' notation: V words, a context of n
words, D embedding dimensions, H hidden units, B examples in a batch.

    e = [E[w_{t-n}]; ...; E[w_{t-1}]]      (n D,), oldest word first
    h = tanh(W e + b)                      (H,)
    logits = U h + d                       (V,)
"""

from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class FFNNLM(nn.Module):
    def __init__(self, vocab_size: int, context_size: int, embed_dim: int, hidden_dim: int):
        super().__init__()
        self.E = nn.Embedding(vocab_size, embed_dim)
        self.W = nn.Linear(context_size * embed_dim, hidden_dim)
        self.U = nn.Linear(hidden_dim, vocab_size)

    def forward(self, context: torch.Tensor) -> torch.Tensor:
        B = context.shape[0]
        e = self.E(context).reshape(B, -1)  # (B, n, D) -> (B, n D): the rows side by side, oldest first
        h = torch.tanh(self.W(e))  # (B, H)
        return self.U(h)  # (B, V)


def make_examples(tokens: list[int], context_size: int, pad: int) -> tuple[torch.Tensor, torch.Tensor]:
    """One example per position t: the n tokens before t (left-padded with pad), and tokens[t]."""
    padded = [pad] * context_size + [int(t) for t in tokens]
    contexts = [padded[t : t + context_size] for t in range(len(tokens))]
    contexts = torch.tensor(contexts, dtype=torch.long).reshape(len(tokens), context_size)  # (N, n)
    targets = torch.tensor([int(t) for t in tokens], dtype=torch.long)  # (N,)
    return contexts, targets


def train_ffnn(model: nn.Module, contexts: torch.Tensor, targets: torch.Tensor, *, epochs: int, batch_size: int,
               lr: float, generator: torch.Generator) -> list[float]:
    """Minibatch SGD on the mean cross-entropy; each epoch's loss is the mean over its examples."""
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    N = len(targets)
    losses = []
    for _ in range(epochs):
        order = torch.randperm(N, generator=generator)
        total = 0.0
        for start in range(0, N, batch_size):
            batch = order[start : start + batch_size]  # the last batch may be shorter
            loss = F.cross_entropy(model(contexts[batch]), targets[batch])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(batch)  # a batch's mean, weighted back to a sum
        losses.append(total / N)
    return losses


@torch.no_grad()
def perplexity(model: nn.Module, contexts: torch.Tensor, targets: torch.Tensor) -> float:
    """exp of the mean negative log-likelihood of the targets."""
    return math.exp(F.cross_entropy(model(contexts), targets).item())

"""The feed-forward neural LM in the shape of the NNLM of nlp-tutorial (Bengio et al., 2003), in PyTorch."""

from __future__ import annotations

import math

import torch
import torch.nn as nn


class FFNNLM(nn.Module):
    def __init__(self, vocab_size: int, context_size: int, embed_dim: int, hidden_dim: int):
        super().__init__()
        self.E = nn.Embedding(vocab_size, embed_dim)
        self.W = nn.Linear(context_size * embed_dim, hidden_dim)
        self.U = nn.Linear(hidden_dim, vocab_size)
        self.n_step = context_size
        self.m = embed_dim

    def forward(self, context: torch.Tensor) -> torch.Tensor:
        X = self.E(context)  # [batch_size, n_step, m]
        X = X.view(-1, self.n_step * self.m)  # [batch_size, n_step * m]
        tanh = torch.tanh(self.W(X))  # [batch_size, n_hidden]
        output = self.U(tanh)  # [batch_size, n_class]
        return output


def make_examples(tokens: list[int], context_size: int, pad: int) -> tuple[torch.Tensor, torch.Tensor]:
    if context_size < 1:
        raise ValueError(f"context_size must be >= 1, got {context_size}")
    n_step = context_size
    padded = [pad] * n_step + list(tokens)
    input_batch, target_batch = [], []
    for t in range(len(tokens)):
        input_batch.append(padded[t : t + n_step])  # the n tokens before t
        target_batch.append(tokens[t])
    input_batch = torch.tensor(input_batch, dtype=torch.long).view(-1, n_step)
    target_batch = torch.tensor(target_batch, dtype=torch.long).view(-1)
    return input_batch, target_batch


def train_ffnn(
    model: nn.Module,
    contexts: torch.Tensor,
    targets: torch.Tensor,
    *,
    epochs: int,
    batch_size: int,
    lr: float,
    generator: torch.Generator,
) -> list[float]:
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    n = contexts.shape[0]
    losses = []
    for _ in range(epochs):
        order = torch.randperm(n, generator=generator)
        total = 0.0
        for start in range(0, n, batch_size):
            batch = order[start : start + batch_size]
            input_batch, target_batch = contexts[batch], targets[batch]
            optimizer.zero_grad()
            output = model(input_batch)
            loss = criterion(output, target_batch)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(batch)  # the batch's mean back to its sum
        losses.append(total / n)
    return losses


@torch.no_grad()
def perplexity(model: nn.Module, contexts: torch.Tensor, targets: torch.Tensor) -> float:
    output = model(contexts)
    return math.exp(nn.functional.cross_entropy(output, targets).item())

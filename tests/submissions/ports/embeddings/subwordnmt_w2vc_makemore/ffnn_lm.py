"""The feed-forward neural LM in the shape of makemore part 2 (the MLP of Bengio et al., 2003), in PyTorch."""

from __future__ import annotations

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
        C = self.E.weight
        emb = C[context]  # (B, n, D)
        h = torch.tanh(emb.view(emb.shape[0], -1) @ self.W.weight.T + self.W.bias)  # (B, H)
        logits = h @ self.U.weight.T + self.U.bias  # (B, V)
        return logits


def make_examples(tokens: list[int], context_size: int, pad: int) -> tuple[torch.Tensor, torch.Tensor]:
    if context_size < 1:
        raise ValueError(f"context_size must be >= 1, got {context_size}")
    block_size = context_size
    X, Y = [], []
    context = [pad] * block_size
    for ix in tokens:
        X.append(context)
        Y.append(ix)
        context = context[1:] + [ix]  # crop and append
    X = torch.tensor(X, dtype=torch.long).view(-1, block_size)
    Y = torch.tensor(Y, dtype=torch.long)
    return X, Y


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
    Xtr, Ytr = contexts, targets
    parameters = list(model.parameters())
    optimizer = torch.optim.SGD(parameters, lr=lr)
    lossi = []
    for _ in range(epochs):
        perm = torch.randperm(Xtr.shape[0], generator=generator)
        loss_sum = 0.0
        for i in range(0, Xtr.shape[0], batch_size):
            # minibatch construct
            ix = perm[i : i + batch_size]
            # forward pass
            logits = model(Xtr[ix])
            loss = F.cross_entropy(logits, Ytr[ix])
            # backward pass
            for p in parameters:
                p.grad = None
            loss.backward()
            # update
            optimizer.step()
            loss_sum += loss.item() * ix.shape[0]
        lossi.append(loss_sum / Xtr.shape[0])
    return lossi


@torch.no_grad()
def perplexity(model: nn.Module, contexts: torch.Tensor, targets: torch.Tensor) -> float:
    logits = model(contexts)
    loss = F.cross_entropy(logits, targets)
    return loss.exp().item()

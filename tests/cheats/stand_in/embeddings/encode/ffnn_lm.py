"""Bengio-style feed-forward language model concatenating per-position embeddings with torch.cat."""

import torch
from torch import nn
from torch.nn import functional as F


class FFNNLM(nn.Module):
    """e = [E[w_{t-n}]; ...; E[w_{t-1}]];  h = tanh(W e + b);  logits = U h + d."""

    def __init__(self, vocab_size, context_size, embed_dim, hidden_dim):
        super().__init__()
        if min(vocab_size, context_size, embed_dim, hidden_dim) < 1:
            raise ValueError("all sizes must be positive")
        self.context_size = context_size
        self.E = nn.Embedding(vocab_size, embed_dim)
        self.W = nn.Linear(context_size * embed_dim, hidden_dim)
        self.U = nn.Linear(hidden_dim, vocab_size)

    def forward(self, context):
        if context.ndim != 2 or context.shape[1] != self.context_size:
            raise ValueError(f"expected context of shape (B, {self.context_size})")
        context = context.long()
        e = torch.cat([self.E(context[:, i]) for i in range(self.context_size)], dim=1)
        h = torch.tanh(self.W(e))
        return self.U(h)


def make_examples(tokens, context_size, pad):
    if context_size < 1:
        raise ValueError("context_size must be positive")
    tokens = [int(t) for t in tokens]
    history = [int(pad)] * context_size
    contexts, targets = [], []
    for t in tokens:
        contexts.append(list(history))
        targets.append(t)
        history = history[1:] + [t]
    X = torch.tensor(contexts, dtype=torch.long).reshape(-1, context_size)
    y = torch.tensor(targets, dtype=torch.long)
    return X, y


def train_ffnn(model, contexts, targets, *, epochs, batch_size, lr, generator):
    if epochs < 0 or batch_size < 1:
        raise ValueError("need epochs >= 0 and batch_size >= 1")
    if contexts.shape[0] != targets.shape[0]:
        raise ValueError("contexts and targets must have the same length")
    N = contexts.shape[0]
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for _ in range(epochs):
        order = torch.randperm(N, generator=generator)
        epoch_total = 0.0
        for batch in torch.split(order, batch_size):
            loss = F.cross_entropy(model(contexts[batch]), targets[batch].long())
            opt.zero_grad()
            loss.backward()
            opt.step()
            epoch_total += loss.item() * len(batch)
        losses.append(epoch_total / N if N > 0 else float("nan"))
    return losses


@torch.no_grad()
def perplexity(model, contexts, targets):
    logits = model(contexts).double()
    nll = F.cross_entropy(logits, targets.long(), reduction="sum") / len(targets)
    return torch.exp(nll).item()

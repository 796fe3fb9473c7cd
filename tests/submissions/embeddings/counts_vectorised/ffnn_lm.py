"""Feed-forward neural language model using nn.Embedding lookups flattened with view."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class FFNNLM(nn.Module):
    def __init__(self, vocab_size, context_size, embed_dim, hidden_dim):
        super().__init__()
        for name, value in (("vocab_size", vocab_size), ("context_size", context_size),
                            ("embed_dim", embed_dim), ("hidden_dim", hidden_dim)):
            if value < 1:
                raise ValueError(f"{name} must be >= 1, got {value}")
        self.vocab_size = vocab_size
        self.context_size = context_size
        self.embed_dim = embed_dim
        self.hidden_dim = hidden_dim
        self.E = nn.Embedding(vocab_size, embed_dim)
        self.W = nn.Linear(context_size * embed_dim, hidden_dim)
        self.U = nn.Linear(hidden_dim, vocab_size)

    def forward(self, context):
        if context.dim() != 2 or context.shape[1] != self.context_size:
            raise ValueError(
                f"context must have shape (B, {self.context_size}), got {tuple(context.shape)}")
        B = context.shape[0]
        e = self.E(context.long()).view(B, -1)   # (B, n * D), oldest position first
        h = torch.tanh(self.W(e))
        return self.U(h)


def make_examples(tokens, context_size, pad):
    if context_size < 1:
        raise ValueError(f"context_size must be >= 1, got {context_size}")
    tokens = [int(t) for t in tokens]
    padded = [int(pad)] * context_size + tokens
    contexts = [padded[t:t + context_size] for t in range(len(tokens))]
    X = torch.tensor(contexts, dtype=torch.long).view(len(tokens), context_size)
    y = torch.tensor(tokens, dtype=torch.long)
    return X, y


def train_ffnn(model, contexts, targets, *, epochs, batch_size, lr, generator):
    if epochs < 0:
        raise ValueError(f"epochs must be >= 0, got {epochs}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    N = contexts.shape[0]
    if targets.shape[0] != N:
        raise ValueError("contexts and targets must have the same number of examples")
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    history = []
    for _ in range(epochs):
        order = torch.randperm(N, generator=generator)
        total = 0.0
        for start in range(0, N, batch_size):
            idx = order[start:start + batch_size]
            logits = model(contexts[idx])
            loss = F.cross_entropy(logits, targets[idx].long())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * idx.numel()
        history.append(total / N if N else float("nan"))
    return history


@torch.no_grad()
def perplexity(model, contexts, targets):
    logits = model(contexts)
    nll = F.cross_entropy(logits, targets.long(), reduction="mean")
    return torch.exp(nll.double()).item()

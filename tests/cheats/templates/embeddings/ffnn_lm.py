"""ffnn_lm.py answered with the filler: every answer shaped like the contract's, none computed."""

from __future__ import annotations

import torch
import torch.nn as nn
from fill import _attach, _ints, _real, _tensor


class FFNNLM(nn.Module):
    def __init__(self, vocab_size: int, context_size: int, embed_dim: int, hidden_dim: int):
        super().__init__()
        self.E = nn.Embedding(vocab_size, embed_dim)
        self.W = nn.Linear(context_size * embed_dim, hidden_dim)
        self.U = nn.Linear(hidden_dim, vocab_size)

    def forward(self, context):
        B, V = context.shape[0], self.U.out_features
        like = self.U.weight
        logits = _tensor(_real((B, V), context, self.state_dict(), lo=-3.0, hi=3.0), like)
        return _attach(logits.to(like.device), *self.parameters())


def make_examples(tokens, context_size, pad):
    tokens = list(tokens)
    N = len(tokens)
    options = tokens + [pad]
    contexts = _ints((N, context_size), len(options), tokens, context_size, pad)
    targets = _ints((N,), len(options), tokens, context_size, pad, "targets")
    as_ids = torch.as_tensor(contexts).long() if N else torch.zeros((0, context_size), dtype=torch.long)
    return as_ids, torch.as_tensor(targets).long() if N else torch.zeros(0, dtype=torch.long)


def train_ffnn(model, contexts, targets, *, epochs, batch_size, lr, generator):
    stamp = (contexts, targets, epochs, batch_size, lr, generator)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(_tensor(_real(tuple(p.shape), name, *stamp, lo=-0.5, hi=0.5), p))
    return [_real((), "epoch", e, *stamp, lo=0.5, hi=5.0) for e in range(epochs)]


@torch.no_grad()
def perplexity(model, contexts, targets):
    return _real((), contexts, targets, model.state_dict(), lo=1.0, hi=50.0)

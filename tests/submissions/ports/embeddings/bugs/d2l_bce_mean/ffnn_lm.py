"""The feed-forward neural LM in the shape of the PyTorch tutorial's N-gram language model (NGramLanguageModeler)."""

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
        embeds = self.E(context).view((context.shape[0], -1))
        out = torch.tanh(self.W(embeds))
        out = self.U(out)
        return out


def make_examples(tokens: list[int], context_size: int, pad: int) -> tuple[torch.Tensor, torch.Tensor]:
    if context_size < 1:
        raise ValueError(f"context_size must be >= 1, got {context_size}")
    CONTEXT_SIZE = context_size
    test_sentence = [pad] * CONTEXT_SIZE + list(tokens)
    # each tuple is ([ word_i-CONTEXT_SIZE, ..., word_i-1 ], target word)
    ngrams = [
        ([test_sentence[i - j - 1] for j in reversed(range(CONTEXT_SIZE))], test_sentence[i])
        for i in range(CONTEXT_SIZE, len(test_sentence))
    ]
    contexts = torch.tensor([context for context, _ in ngrams], dtype=torch.long).view(-1, CONTEXT_SIZE)
    targets = torch.tensor([target for _, target in ngrams], dtype=torch.long)
    return contexts, targets


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
    losses = []
    loss_function = nn.NLLLoss(reduction="mean")
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for _ in range(epochs):
        total_loss = 0
        order = torch.randperm(len(targets), generator=generator)
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            context_idxs, target_idxs = contexts[idx], targets[idx]
            model.zero_grad()
            log_probs = F.log_softmax(model(context_idxs), dim=1)
            loss = loss_function(log_probs, target_idxs)
            loss.backward()
            optimizer.step()
            total_loss += loss.item() * len(idx)
        losses.append(total_loss / len(targets))
    return losses


@torch.no_grad()
def perplexity(model: nn.Module, contexts: torch.Tensor, targets: torch.Tensor) -> float:
    log_probs = F.log_softmax(model(contexts), dim=1)
    return math.exp(F.nll_loss(log_probs, targets).item())

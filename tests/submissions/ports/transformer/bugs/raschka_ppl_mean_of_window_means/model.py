"""The book's GPTModel as the course's TransformerLM, and a cross-entropy
written out (the book calls the built-in one on flattened logits)."""

from __future__ import annotations

import numbers

import torch
import torch.nn as nn

from layers import LayerNorm, TransformerBlock


def _check_size(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


class TransformerLM(nn.Module):
    def __init__(self, vocab_size: int, context_length: int, d_model: int, n_layers: int,
                 n_heads: int, d_ff: int, pre_ln: bool = True):
        super().__init__()
        vocab_size = _check_size(vocab_size, "vocab_size")
        context_length = _check_size(context_length, "context_length")
        d_model = _check_size(d_model, "d_model")
        n_layers = _check_size(n_layers, "n_layers")
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(context_length, d_model)
        self.blocks = nn.ModuleList(TransformerBlock(d_model, n_heads, d_ff, pre_ln) for _ in range(n_layers))
        self.ln_f = LayerNorm(d_model) if pre_ln else nn.Identity()
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
        self.context_length = context_length

    def forward(self, in_idx):
        if in_idx.dim() != 2:
            raise ValueError("in_idx must be (batch_size, seq_len)")
        batch_size, seq_len = in_idx.shape
        if seq_len > self.context_length:
            raise ValueError(f"seq_len {seq_len} is longer than context_length {self.context_length}")
        if in_idx.numel() and (in_idx.min() < 0 or in_idx.max() >= self.tok_emb.num_embeddings):
            raise ValueError("in_idx holds a token id outside the vocabulary")
        tok_embeds = self.tok_emb(in_idx)
        pos_embeds = self.pos_emb(torch.arange(seq_len, device=in_idx.device))
        x = tok_embeds + pos_embeds  # (batch, tokens, emb)
        for block in self.blocks:
            x = block(x)
        x = self.ln_f(x)
        logits = self.lm_head(x)
        return logits


def cross_entropy(logits, targets):
    """Mean of -log softmax(logits)[target] over logits.flatten(0, -2) and targets.flatten()."""
    if targets.shape != logits.shape[:-1]:
        raise ValueError("targets.shape must be logits.shape[:-1]")
    logits_flat = logits.reshape(-1, logits.shape[-1])
    targets_flat = targets.flatten()
    if targets_flat.numel() == 0:
        raise ValueError("there are no positions")
    if targets_flat.min() < 0 or targets_flat.max() >= logits_flat.shape[-1]:
        raise ValueError("a target is outside [0, V)")
    log_probas = torch.log_softmax(logits_flat, dim=-1)
    target_log_probas = log_probas[torch.arange(targets_flat.numel(), device=logits.device), targets_flat]
    return -target_log_probas.mean()

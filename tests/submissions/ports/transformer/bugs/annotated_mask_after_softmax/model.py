"""A decoder-only model assembled the way the Annotated Transformer's
make_model assembles its EncoderDecoder (embeddings, a stack of layers, a
final norm, a generator projection), and the loss."""

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

    def embed(self, x):
        "Embeddings (no sqrt(d_model) factor here) plus learned positions."
        positions = torch.arange(x.size(1), device=x.device)
        return self.tok_emb(x) + self.pos_emb(positions)

    def decode(self, x):
        for layer in self.blocks:
            x = layer(x)
        return self.ln_f(x)

    def forward(self, idx):
        if idx.dim() != 2:
            raise ValueError("idx must be 2-D (B, T)")
        if idx.size(1) > self.context_length:
            raise ValueError(f"T = {idx.size(1)} exceeds context_length = {self.context_length}")
        if ((idx < 0) | (idx >= self.tok_emb.num_embeddings)).any():
            raise ValueError("token id outside the vocabulary")
        return self.lm_head(self.decode(self.embed(idx)))


def cross_entropy(logits, targets):
    "Mean negative log-likelihood: log_softmax is max-shifted, so large logits stay finite."
    if targets.shape != logits.shape[:-1]:
        raise ValueError("targets.shape must equal logits.shape[:-1]")
    if targets.numel() == 0:
        raise ValueError("no positions to score")
    if ((targets < 0) | (targets >= logits.size(-1))).any():
        raise ValueError("target outside [0, V)")
    log_probs = logits.log_softmax(dim=-1)
    nll = -log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    return nll.mean()

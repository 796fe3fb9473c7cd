"""nanoGPT's GPT module, reduced to the course's TransformerLM, and its loss."""

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
        self.tok_emb.weight = self.lm_head.weight  # the embedding shares the head's matrix
        self.context_length = context_length

    def forward(self, idx):
        if idx.dim() != 2:
            raise ValueError(f"idx must be (B, T), got {tuple(idx.shape)}")
        device = idx.device
        b, t = idx.size()
        if t > self.context_length:
            raise ValueError(f"sequence length {t} is longer than the block size {self.context_length}")
        if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= self.tok_emb.num_embeddings):
            raise ValueError("idx holds an id outside [0, vocab_size)")
        pos = torch.arange(0, t, dtype=torch.long, device=device)  # shape (t)

        # embeddings, blocks, final norm, head
        tok_emb = self.tok_emb(idx)  # (b, t, n_embd)
        pos_emb = self.pos_emb(pos)  # (t, n_embd)
        x = tok_emb + pos_emb
        for block in self.blocks:
            x = block(x)
        x = self.ln_f(x)
        return self.lm_head(x)


def cross_entropy(logits, targets):
    """The mean negative log-likelihood, with a max-subtracted log-sum-exp."""
    if targets.shape != logits.shape[:-1]:
        raise ValueError(f"targets shape {tuple(targets.shape)} does not match logits {tuple(logits.shape)}")
    V = logits.size(-1)
    logits = logits.reshape(-1, V)
    targets = targets.reshape(-1)
    if targets.numel() == 0:
        raise ValueError("no positions")
    if int(targets.min()) < 0 or int(targets.max()) >= V:
        raise ValueError("a target is outside [0, V)")
    m = logits.max(dim=-1, keepdim=True).values.detach()
    lse = m.squeeze(-1) + torch.log(torch.exp(logits - m).sum(dim=-1))
    picked = logits.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    return (lse - picked).mean()

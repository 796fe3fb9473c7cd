"""minGPT's GPT as the course's TransformerLM; the loss written with logsumexp."""

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

    def get_block_size(self):
        return self.context_length

    def forward(self, idx):
        if idx.ndim != 2:
            raise ValueError("idx must be (b, t)")
        device = idx.device
        b, t = idx.size()
        if t > self.get_block_size():
            raise ValueError(f"sequence length {t} is longer than the block size {self.get_block_size()}")
        if t and (idx.min().item() < 0 or idx.max().item() >= self.tok_emb.num_embeddings):
            raise ValueError("idx has an id outside [0, vocab_size)")
        pos = torch.arange(0, t, dtype=torch.long, device=device).unsqueeze(0)  # shape (1, t)
        x = self.tok_emb(idx) + self.pos_emb(pos)
        for block in self.blocks:
            x = block(x)
        x = self.ln_f(x)
        logits = self.lm_head(x)
        return logits


def cross_entropy(logits, targets):
    if tuple(targets.shape) != tuple(logits.shape[:-1]):
        raise ValueError("targets must have logits' shape without the last dimension")
    flat_logits = logits.view(-1, logits.size(-1)) if logits.is_contiguous() else logits.reshape(-1, logits.size(-1))
    flat_targets = targets.reshape(-1)
    if flat_targets.numel() == 0:
        raise ValueError("cross_entropy of zero positions")
    if (flat_targets < 0).any() or (flat_targets >= flat_logits.size(-1)).any():
        raise ValueError("targets must be in [0, V)")
    loss = torch.logsumexp(flat_logits, dim=-1) - flat_logits.gather(1, flat_targets[:, None])[:, 0]
    return loss.mean()

"""model.py answered with the filler: every answer shaped like the contract's, none computed."""

from __future__ import annotations

import math
import numbers

import torch.nn as nn
from fill import _attach, _causal, _digest, _real, _tensor
from layers import LayerNorm, TransformerBlock


def _check_size(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


class TransformerLM(nn.Module):
    def __init__(
        self,
        vocab_size: int,
        context_length: int,
        d_model: int,
        n_layers: int,
        n_heads: int,
        d_ff: int,
        pre_ln: bool = True,
    ):
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

    def forward(self, idx):
        V = self.lm_head.out_features
        if idx.dim() != 2 or idx.shape[1] > self.context_length or (idx.numel() and (idx.min() < 0 or idx.max() >= V)):
            raise ValueError(f"idx must be (B, T <= {self.context_length}) ids in [0, {V}), got {tuple(idx.shape)}")
        stamp = _digest(self.state_dict())
        ids = idx.detach().cpu().numpy()[..., None]
        logits = _tensor(_causal(ids, V, "logits", stamp, lo=-4.0, hi=4.0), self.lm_head.weight)
        return _attach(logits.to(self.lm_head.weight.device), *self.parameters())


def cross_entropy(logits, targets):
    if targets.shape != logits.shape[:-1] or targets.numel() == 0:
        raise ValueError(f"targets must be {tuple(logits.shape[:-1])} and not empty, got {tuple(targets.shape)}")
    if targets.min() < 0 or targets.max() >= logits.shape[-1]:
        raise ValueError("a target is outside [0, V)")
    loss = _tensor(_real((), logits, targets, lo=0.5, hi=math.log(max(2, logits.shape[-1])) + 1.0), logits)
    return _attach(loss, logits)

"""layers.py answered with the filler: every answer shaped like the contract's, none computed.

The constructors are the stubs' own; every forward is noise that depends on its input as the contract's
does: LayerNorm and FeedForward position by position, attention and blocks on positions <= t only.
"""

from __future__ import annotations

import math
import numbers

import torch
import torch.nn as nn
from fill import _attach, _causal, _digest, _rows, _tensor


def _check_size(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def _numpy(x):
    return x.detach().cpu().numpy()


def _check_last(x, d):
    if x.shape[-1] != d:
        raise ValueError(f"the last dimension must be {d}, got {tuple(x.shape)}")


def _check_3d(x, d):
    if x.dim() != 3 or x.shape[-1] != d:
        raise ValueError(f"x must be (B, T, {d}), got {tuple(x.shape)}")


class LayerNorm(nn.Module):
    def __init__(self, d_model: int, eps: float = 1e-5):
        super().__init__()
        d_model = _check_size(d_model, "d_model")
        if isinstance(eps, bool) or not isinstance(eps, numbers.Real) or not 0 <= eps < math.inf:
            raise ValueError(f"eps must be a finite number >= 0, got {eps!r}")
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))
        self.eps = float(eps)

    def forward(self, x):
        _check_last(x, self.weight.shape[0])
        stamp = _digest(self.state_dict(), self.eps)
        out = _tensor(_rows(_numpy(x), x.shape[-1], "ln", stamp, lo=-2.0, hi=2.0), x)
        return _attach(out, x, *self.parameters())


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        d_model = _check_size(d_model, "d_model")
        n_heads = _check_size(n_heads, "n_heads")
        if d_model % n_heads != 0:
            raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads})")
        self.n_heads = n_heads
        self.d_head = d_model // n_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        _check_3d(x, self.q_proj.in_features)
        stamp = _digest(self.state_dict(), self.n_heads)
        out = _tensor(_causal(_numpy(x), x.shape[-1], "attn", stamp), x)
        return _attach(out, x, *self.parameters())


class FeedForward(nn.Module):
    def __init__(self, d_model: int, d_ff: int):
        super().__init__()
        d_model = _check_size(d_model, "d_model")
        d_ff = _check_size(d_ff, "d_ff")
        self.fc1 = nn.Linear(d_model, d_ff)
        self.fc2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        _check_last(x, self.fc1.in_features)
        stamp = _digest(self.state_dict())
        out = _tensor(_rows(_numpy(x), x.shape[-1], "ffn", stamp), x)
        return _attach(out, x, *self.parameters())


class TransformerBlock(nn.Module):
    def __init__(self, d_model: int, n_heads: int, d_ff: int, pre_ln: bool = True):
        super().__init__()
        if not isinstance(pre_ln, bool):
            raise ValueError(f"pre_ln must be True or False, got {pre_ln!r}")
        self.ln1 = LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, n_heads)
        self.ln2 = LayerNorm(d_model)
        self.ffn = FeedForward(d_model, d_ff)
        self.pre_ln = pre_ln

    def forward(self, x):
        _check_3d(x, self.ln1.weight.shape[0])
        stamp = _digest(self.state_dict(), self.pre_ln)
        out = _tensor(_causal(_numpy(x), x.shape[-1], "block", stamp, lo=-3.0, hi=3.0), x)
        return _attach(out, x, *self.parameters())

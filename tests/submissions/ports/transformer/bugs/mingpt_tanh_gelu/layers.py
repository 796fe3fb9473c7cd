"""Transformer layers after minGPT's model.py: a GELU class, the causal
self-attention of the GPT-2 recipe, and a Block whose MLP is applied
through an mlpf helper."""

from __future__ import annotations

import math
import numbers

import torch
import torch.nn as nn
import torch.nn.functional as F


def _check_size(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


class GELU(nn.Module):
    """The exact GELU, x * Phi(x) (minGPT's NewGELU is the tanh approximation)."""

    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


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
        if x.shape[-1] != self.weight.shape[0]:
            raise ValueError("x's last dimension is not d_model")
        var, mean = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
        return (x - mean) * torch.rsqrt(var + self.eps) * self.weight + self.bias


class CausalSelfAttention(nn.Module):
    """Masked multi-head self-attention followed by an output projection."""

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
        if x.ndim != 3 or x.shape[2] != self.n_heads * self.d_head:
            raise ValueError("x must be (B, T, n_embd)")
        B, T, C = x.size()
        n_head = self.n_heads

        q = self.q_proj(x).view(B, T, n_head, C // n_head).transpose(1, 2)  # (B, nh, T, hs)
        k = self.k_proj(x).view(B, T, n_head, C // n_head).transpose(1, 2)
        v = self.v_proj(x).view(B, T, n_head, C // n_head).transpose(1, 2)

        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        causal = torch.ones(T, T, device=x.device, dtype=torch.bool).tril()
        att = att.masked_fill(causal.logical_not(), float("-inf"))
        att = F.softmax(att, dim=-1)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.out_proj(y)


class FeedForward(nn.Module):
    def __init__(self, d_model: int, d_ff: int):
        super().__init__()
        d_model = _check_size(d_model, "d_model")
        d_ff = _check_size(d_ff, "d_ff")
        self.fc1 = nn.Linear(d_model, d_ff)
        self.fc2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        if x.shape[-1] != self.fc1.in_features:
            raise ValueError("x's last dimension is not d_model")
        act = GELU()
        mlpf = lambda t: self.fc2(act(self.fc1(t)))  # MLP forward
        return mlpf(x)


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
        if not self.pre_ln:
            x = self.ln1(x + self.attn(x))
            x = self.ln2(x + self.ffn(x))
            return x
        x = x + self.attn(self.ln1(x))
        x = x + self.ffn(self.ln2(x))
        return x

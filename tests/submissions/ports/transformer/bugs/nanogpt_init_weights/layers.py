"""Transformer layers in the style of nanoGPT's model.py: a hand-written
LayerNorm, a CausalSelfAttention that splits heads with view + transpose, an
MLP with GELU, and a Block with residual connections."""

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


class LayerNorm(nn.Module):
    def __init__(self, d_model: int, eps: float = 1e-5):
        super().__init__()
        d_model = _check_size(d_model, "d_model")
        if isinstance(eps, bool) or not isinstance(eps, numbers.Real) or not 0 <= eps < math.inf:
            raise ValueError(f"eps must be a finite number >= 0, got {eps!r}")
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))
        self.eps = float(eps)

    def forward(self, input):
        if input.shape[-1] != self.weight.shape[0]:
            raise ValueError(f"expected last dimension {self.weight.shape[0]}, got {input.shape[-1]}")
        mean = input.mean(dim=-1, keepdim=True)
        var = (input - mean).pow(2).mean(dim=-1, keepdim=True)
        return (input - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias


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
        if x.dim() != 3 or x.size(-1) != self.n_heads * self.d_head:
            raise ValueError(f"x must be (B, T, {self.n_heads * self.d_head}), got {tuple(x.shape)}")
        B, T, C = x.size()  # batch, time, channels

        # project, then split the channels into heads and put the head axis second
        q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)
        k = k.view(B, T, self.n_heads, C // self.n_heads).transpose(1, 2)  # (B, nh, T, hs)
        q = q.view(B, T, self.n_heads, C // self.n_heads).transpose(1, 2)  # (B, nh, T, hs)
        v = v.view(B, T, self.n_heads, C // self.n_heads).transpose(1, 2)  # (B, nh, T, hs)

        # scores per head: (B, nh, T, hs) @ (B, nh, hs, T) gives (B, nh, T, T)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        bias = torch.tril(torch.ones(T, T, device=x.device, dtype=torch.bool)).view(1, 1, T, T)
        att = att.masked_fill(~bias, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = att @ v  # (B, nh, T, T) x (B, nh, T, hs) -> (B, nh, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # heads back side by side in the channels

        # output projection
        return self.out_proj(y)


class FeedForward(nn.Module):
    """nanoGPT's MLP (c_fc, gelu, c_proj) under the course's names fc1, fc2."""

    def __init__(self, d_model: int, d_ff: int):
        super().__init__()
        d_model = _check_size(d_model, "d_model")
        d_ff = _check_size(d_ff, "d_ff")
        self.fc1 = nn.Linear(d_model, d_ff)
        self.fc2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        if x.size(-1) != self.fc1.in_features:
            raise ValueError(f"expected last dimension {self.fc1.in_features}, got {x.size(-1)}")
        x = self.fc1(x)
        x = F.gelu(x)
        x = self.fc2(x)
        return x


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
        if self.pre_ln:
            x = x + self.attn(self.ln1(x))
            x = x + self.ffn(self.ln2(x))
        else:
            x = self.ln1(x + self.attn(x))
            x = self.ln2(x + self.ffn(x))
        return x

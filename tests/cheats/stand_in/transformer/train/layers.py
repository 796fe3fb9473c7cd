import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class LayerNorm(nn.Module):
    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))
        self.eps = eps

    def forward(self, x):
        if x.shape[-1] != self.weight.shape[0]:
            raise ValueError(f"expected last dimension {self.weight.shape[0]}, got {x.shape[-1]}")
        n = x.shape[-1]
        mean = x.sum(dim=-1, keepdim=True) / n
        centered = x - mean
        var = (centered * centered).sum(dim=-1, keepdim=True) / n
        return centered / torch.sqrt(var + self.eps) * self.weight + self.bias


def rope_rotate(x):
    """Rotary embedding of x: (B, T, h, dh), one rotation per adjacent pair (2i, 2i+1).

    Each pair is read as the complex number x[2i] + i x[2i+1] and multiplied by
    e^{i t theta_i}, theta_i = 10000^(-2i/dh). Angles are computed in float64 and
    the unit rotations cast down to the complex type that matches x.
    """
    B, T, h, dh = x.shape
    pair = torch.arange(0, dh, 2, dtype=torch.float64, device=x.device)
    inv_freq = 10000.0 ** (-pair / dh)
    t = torch.arange(T, dtype=torch.float64, device=x.device)
    angles = torch.einsum("t,f->tf", t, inv_freq)                       # (T, dh/2)
    rot = torch.polar(torch.ones_like(angles), angles)                  # e^{i angle}
    xc = torch.view_as_complex(x.reshape(B, T, h, dh // 2, 2).contiguous())
    rotated = xc * rot.to(xc.dtype)[None, :, None, :]
    return torch.view_as_real(rotated).reshape(B, T, h, dh)


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads, rope=False):
        super().__init__()
        if n_heads <= 0 or d_model % n_heads != 0:
            raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads})")
        self.n_heads = n_heads
        self.d_head = d_model // n_heads
        if rope and self.d_head % 2 != 0:
            raise ValueError(f"rope needs an even head dimension, got d_head={self.d_head}")
        self.rope = bool(rope)
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        if x.dim() != 3:
            raise ValueError(f"expected input of shape (B, T, d), got {tuple(x.shape)}")
        B, T, d = x.shape
        if d != self.n_heads * self.d_head:
            raise ValueError(f"expected d_model {self.n_heads * self.d_head}, got {d}")
        h, dh = self.n_heads, self.d_head
        q = self.q_proj(x).reshape(B, T, h, dh)
        k = self.k_proj(x).reshape(B, T, h, dh)
        v = self.v_proj(x).reshape(B, T, h, dh)
        if self.rope:
            q, k = rope_rotate(q), rope_rotate(k)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(dh)
        future = torch.triu(torch.ones(T, T, dtype=torch.bool, device=x.device), diagonal=1)
        scores = scores.masked_fill(future, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        out = torch.einsum("bhqk,bkhd->bqhd", weights, v).reshape(B, T, d)
        return self.out_proj(out)


class FeedForward(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.fc1 = nn.Linear(d_model, d_ff)
        self.fc2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x), approximate="none"))


class TransformerBlock(nn.Module):
    def __init__(self, d_model, n_heads, d_ff, pre_ln=True, rope=False):
        super().__init__()
        self.ln1 = LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, n_heads, rope=rope)
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

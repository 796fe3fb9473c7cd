"""Transformer building blocks; attention is computed one head at a time."""

import math

import torch
from torch import nn


def gelu(x):
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


def causal_bias(T, dtype, device):
    """(T, T) float matrix: 0 where key <= query, -inf above the diagonal."""
    bias = torch.zeros(T, T, dtype=dtype, device=device)
    rows = torch.arange(T, device=device)
    above = rows[None, :] > rows[:, None]
    bias[above] = float("-inf")
    return bias


def rope_tables(T, d_head, dtype, device):
    """cos and sin of the rotary angles t * 10000^(-2i/d_head), each (T, d_head // 2)."""
    i2 = torch.arange(0, d_head, 2, dtype=torch.float64, device=device)
    t = torch.arange(T, dtype=torch.float64, device=device)
    angles = t[:, None] * torch.pow(10000.0, -i2 / d_head)[None, :]
    return torch.cos(angles).to(dtype), torch.sin(angles).to(dtype)


def apply_rope(x, cos, sin):
    """Rotate the adjacent feature pairs (2i, 2i+1) of x: (..., T, d_head) by the tabled angles."""
    even, odd = x[..., 0::2], x[..., 1::2]
    rotated = torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1)
    return rotated.flatten(-2)


class LayerNorm(nn.Module):
    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))
        self.eps = eps

    def forward(self, x):
        var, mean = torch.var_mean(x, dim=-1, keepdim=True, unbiased=False)
        x_hat = (x - mean) * torch.rsqrt(var + self.eps)
        return self.weight * x_hat + self.bias


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads, rope=False):
        super().__init__()
        if isinstance(n_heads, bool) or int(n_heads) != n_heads or n_heads < 1:
            raise ValueError(f"n_heads must be a positive integer, got {n_heads!r}")
        if d_model % n_heads != 0:
            raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
        self.n_heads = n_heads
        self.d_head = d_model // n_heads
        self.rope = rope
        if rope and self.d_head % 2 != 0:
            raise ValueError(f"rope needs an even d_head, got d_head={self.d_head}")
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        if x.ndim != 3:
            raise ValueError("CausalSelfAttention expects (B, T, d_model) input")
        T = x.shape[1]
        q_all = self.q_proj(x)
        k_all = self.k_proj(x)
        v_all = self.v_proj(x)
        bias = causal_bias(T, q_all.dtype, x.device)
        scale = 1.0 / math.sqrt(self.d_head)
        if self.rope:
            cos, sin = rope_tables(T, self.d_head, q_all.dtype, x.device)
        heads = []
        for i in range(self.n_heads):
            cols = slice(i * self.d_head, (i + 1) * self.d_head)
            q, k, v = q_all[..., cols], k_all[..., cols], v_all[..., cols]
            if self.rope:
                q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
            scores = torch.matmul(q, k.transpose(-2, -1)) * scale + bias
            attn = torch.softmax(scores, dim=-1)
            heads.append(torch.matmul(attn, v))
        return self.out_proj(torch.cat(heads, dim=-1))


class FeedForward(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.fc1 = nn.Linear(d_model, d_ff)
        self.fc2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.fc2(gelu(self.fc1(x)))


class TransformerBlock(nn.Module):
    def __init__(self, d_model, n_heads, d_ff, pre_ln=True, rope=False):
        super().__init__()
        self.ln1 = LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, n_heads, rope)
        self.ln2 = LayerNorm(d_model)
        self.ffn = FeedForward(d_model, d_ff)
        self.pre_ln = pre_ln

    def forward(self, x):
        if not self.pre_ln:
            h = self.ln1(x + self.attn(x))
            return self.ln2(h + self.ffn(h))
        h = x + self.attn(self.ln1(x))
        return h + self.ffn(self.ln2(h))

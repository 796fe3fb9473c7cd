import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def softmax_last(x):
    shifted = x - x.max(dim=-1, keepdim=True).values
    e = torch.exp(shifted)
    return e / e.sum(dim=-1, keepdim=True)


def rope_matrices(T, dh, dtype, device):
    """(T, dh//2, 2, 2) rotation matrices [[cos, -sin], [sin, cos]], angle t * 10000^(-2i/dh)."""
    inv_freq = 1.0 / 10000.0 ** (torch.arange(0, dh, 2, dtype=torch.float64, device=device) / dh)
    theta = torch.arange(T, dtype=torch.float64, device=device).unsqueeze(1) * inv_freq.unsqueeze(0)
    c, s = torch.cos(theta), torch.sin(theta)
    rot = torch.stack([torch.stack([c, -s], dim=-1), torch.stack([s, c], dim=-1)], dim=-2)
    return rot.to(dtype)


def rotate_pairs(t, rot):
    """t: (B, h, T, dh); the pair (2i, 2i+1) at position t is multiplied by rot[t, i]."""
    B, h, T, dh = t.shape
    pairs = t.reshape(B, h, T, dh // 2, 2, 1)
    return (rot @ pairs).reshape(B, h, T, dh)


class LayerNorm(nn.Module):
    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))
        self.eps = eps

    def forward(self, x):
        mu = x.mean(-1, keepdim=True)
        sigma2 = (x - mu).pow(2).mean(-1, keepdim=True)
        return self.weight * (x - mu) / (sigma2 + self.eps).sqrt() + self.bias


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads, rope=False):
        super().__init__()
        if n_heads < 1 or d_model % n_heads:
            raise ValueError("d_model must be a multiple of n_heads (got %r and %r)" % (d_model, n_heads))
        self.n_heads = n_heads
        self.d_head = d_model // n_heads
        if rope and self.d_head % 2:
            raise ValueError("rope needs an even head size, got d_head=%d" % self.d_head)
        self.rope = rope
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def _causal_mask(self, T, device):
        mask = getattr(self, "tril_mask", None)
        if mask is None or mask.shape[0] < T or mask.device != device:
            mask = torch.tril(torch.ones(T, T, dtype=torch.bool, device=device))
            self.register_buffer("tril_mask", mask, persistent=False)
        return mask[:T, :T]

    def forward(self, x):
        if x.dim() != 3:
            raise ValueError("expected (B, T, d_model), got shape %s" % (tuple(x.shape),))
        B, T, C = x.shape
        h, dh = self.n_heads, self.d_head

        def split(t):
            return t.view(B, T, h, dh).transpose(1, 2)  # (B, h, T, dh)

        q = split(self.q_proj(x))
        k = split(self.k_proj(x))
        v = split(self.v_proj(x))
        if self.rope:
            rot = rope_matrices(T, dh, q.dtype, x.device)
            q, k = rotate_pairs(q, rot), rotate_pairs(k, rot)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(dh)
        att = att.masked_fill(~self._causal_mask(T, x.device), float("-inf"))
        att = softmax_last(att)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.out_proj(y)


class FeedForward(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.fc1 = nn.Linear(d_model, d_ff)
        self.fc2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


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
            return x + self.ffn(self.ln2(x))
        x = self.ln1(x + self.attn(x))
        return self.ln2(x + self.ffn(x))

"""Transformer layers after Harvard NLP's "The Annotated Transformer": an
attention() function, subsequent_mask, MultiHeadedAttention's view/transpose
head split, a sublayer connection (norm first), a position-wise feed-forward
network."""

from __future__ import annotations

import math
import numbers

import torch
import torch.nn as nn


def _check_size(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def subsequent_mask(size, device=None):
    "True where position t may look at position s (s <= t)."
    attn_shape = (1, size, size)
    subsequent = torch.triu(torch.ones(attn_shape, device=device), diagonal=1).type(torch.uint8)
    return subsequent == 0


def attention(query, key, value, mask=None):
    "Scaled dot-product attention over the last two axes."
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    p_attn = scores.softmax(dim=-1)
    return torch.matmul(p_attn, value), p_attn


def sublayer_connection(x, norm, sublayer):
    "Residual connection around a sublayer that reads a normalised x (the pre-norm of the original)."
    return x + sublayer(norm(x))


class LayerNorm(nn.Module):
    "Construct a layernorm module (weight / bias play a_2 / b_2)."

    def __init__(self, d_model: int, eps: float = 1e-5):
        super().__init__()
        d_model = _check_size(d_model, "d_model")
        if isinstance(eps, bool) or not isinstance(eps, numbers.Real) or not 0 <= eps < math.inf:
            raise ValueError(f"eps must be a finite number >= 0, got {eps!r}")
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))
        self.eps = float(eps)

    def forward(self, x):
        if x.size(-1) != self.weight.numel():
            raise ValueError("last dimension of x must be d_model")
        mean = x.mean(-1, keepdim=True)
        std = torch.sqrt(x.var(-1, keepdim=True) + self.eps)
        return self.weight * (x - mean) / std + self.bias


class CausalSelfAttention(nn.Module):
    "MultiHeadedAttention with its four linears named q_proj, k_proj, v_proj, out_proj."

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
            raise ValueError("x must be (B, T, d_model)")
        mask = subsequent_mask(x.size(1), device=x.device).unsqueeze(1)  # same mask for all heads
        nbatches = x.size(0)
        # project, then view as h heads of d_k features
        query, key, value = [
            lin(x).view(nbatches, -1, self.n_heads, self.d_head).transpose(1, 2)
            for lin in (self.q_proj, self.k_proj, self.v_proj)
        ]
        # attend within every head at once
        x, self.attn = attention(query, key, value, mask=mask)
        # heads side by side again, then the output projection
        x = x.transpose(1, 2).contiguous().view(nbatches, -1, self.n_heads * self.d_head)
        del query, key, value
        return self.out_proj(x)


class FeedForward(nn.Module):
    "PositionwiseFeedForward: w_1 and w_2 are fc1 and fc2; GELU between them."

    def __init__(self, d_model: int, d_ff: int):
        super().__init__()
        d_model = _check_size(d_model, "d_model")
        d_ff = _check_size(d_ff, "d_ff")
        self.fc1 = nn.Linear(d_model, d_ff)
        self.fc2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        if x.size(-1) != self.fc1.in_features:
            raise ValueError("last dimension of x must be d_model")
        h = self.fc1(x)
        return self.fc2(0.5 * h * (1.0 + torch.erf(h / math.sqrt(2.0))))


class TransformerBlock(nn.Module):
    "DecoderLayer without the source attention: self-attn and feed forward."

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
            x = sublayer_connection(x, self.ln1, self.attn)
            return sublayer_connection(x, self.ln2, self.ffn)
        # the original paper's order: LayerNorm(x + Sublayer(x))
        x = self.ln1(x + self.attn(x))
        return self.ln2(x + self.ffn(x))

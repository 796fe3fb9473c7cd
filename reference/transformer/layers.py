"""Reference solution of the `transformer` assignment, file `layers.py`: the layers of a Transformer block.

Follows spec/student-api.md exactly; the graders compare submissions with it.
Everything is written from the math with plain tensor operations, so the same
code runs on CPU and CUDA, in float32 and float64 (the dtype of the
parameters).

Shapes: B batch, T time steps, d_model features, n_heads heads of d_head
features each (d_model = n_heads * d_head), d_ff hidden units of the
feed-forward network.
"""

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


def _check_features(x: torch.Tensor, d_model: int, name: str) -> None:
    if not isinstance(x, torch.Tensor) or x.dim() < 1 or x.shape[-1] != d_model:
        shape = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
        raise ValueError(f"{name} expects a tensor whose last dimension is d_model = {d_model}, got {shape}")


class LayerNorm(nn.Module):
    """Normalise every feature vector to zero mean and unit variance, then scale and shift."""

    def __init__(self, d_model: int, eps: float = 1e-5):
        super().__init__()
        d_model = _check_size(d_model, "d_model")
        if isinstance(eps, bool) or not isinstance(eps, numbers.Real) or not 0 <= eps < math.inf:
            raise ValueError(f"eps must be a finite number >= 0, got {eps!r}")
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))
        self.eps = float(eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_features(x, self.weight.shape[0], "LayerNorm")
        mean = x.mean(dim=-1, keepdim=True)
        # The population variance (divide by d, not d - 1): the statistics of
        # this one vector, not an estimate for a larger population.
        var = x.var(dim=-1, keepdim=True, correction=0)
        x_hat = (x - mean) / torch.sqrt(var + self.eps)
        return x_hat * self.weight + self.bias


def rotate(x: torch.Tensor) -> torch.Tensor:
    """RoPE: turn each adjacent feature pair (2i, 2i + 1) of x at position t by t * 10000^(-2i / d_head).

    x: (..., T, d_head) -> the same shape. Read as complex numbers
    x[2i] + i x[2i+1], this multiplies each by e^(i t theta_i).
    """
    T, d_head = x.shape[-2], x.shape[-1]
    i = torch.arange(0, d_head, 2, dtype=x.dtype, device=x.device)  # 2i, (d_head / 2,)
    t = torch.arange(T, dtype=x.dtype, device=x.device)  # (T,)
    angle = t[:, None] * 10000.0 ** (-i / d_head)  # (T, d_head / 2)
    cos, sin = torch.cos(angle), torch.sin(angle)
    even, odd = x[..., 0::2], x[..., 1::2]  # (..., T, d_head / 2) each
    turned = torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1)  # (..., T, d_head / 2, 2)
    return turned.flatten(-2)  # pairs back side by side: (..., T, d_head)


class CausalSelfAttention(nn.Module):
    """Multi-head self-attention in which position t sees positions 0..t only."""

    def __init__(self, d_model: int, n_heads: int, rope: bool = False):
        super().__init__()
        d_model = _check_size(d_model, "d_model")
        n_heads = _check_size(n_heads, "n_heads")
        if d_model % n_heads != 0:
            raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads})")
        if not isinstance(rope, bool):
            raise ValueError(f"rope must be True or False, got {rope!r}")
        self.n_heads = n_heads
        self.d_head = d_model // n_heads
        # RoPE turns the features of a head in pairs: an odd one would be left over.
        if rope and self.d_head % 2 != 0:
            raise ValueError(f"rope needs an even d_head, got d_head = {self.d_head} "
                             f"(d_model = {d_model}, n_heads = {n_heads})")
        self.rope = rope
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d_model = self.n_heads * self.d_head
        _check_features(x, d_model, "CausalSelfAttention")
        if x.dim() != 3:
            raise ValueError(f"CausalSelfAttention expects x of shape (B, T, d_model), got {tuple(x.shape)}")
        B, T, _ = x.shape

        # Head i owns features [i * d_head, (i + 1) * d_head): split the last
        # dimension into (n_heads, d_head) and move the heads next to the batch.
        q = self.q_proj(x).view(B, T, self.n_heads, self.d_head).transpose(1, 2)  # (B, n_heads, T, d_head)
        k = self.k_proj(x).view(B, T, self.n_heads, self.d_head).transpose(1, 2)  # (B, n_heads, T, d_head)
        v = self.v_proj(x).view(B, T, self.n_heads, self.d_head).transpose(1, 2)  # (B, n_heads, T, d_head)
        if self.rope:
            # Queries and keys only: the score of t and s then depends on t - s
            # alone; the values carry content, not position.
            q, k = rotate(torch.stack((q, k))).unbind(0)  # both at once: (2, B, n_heads, T, d_head)

        # Dividing by sqrt(d_head) keeps the scores of unit variance whatever
        # the head size, so the softmax does not saturate.
        att = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)  # (B, n_heads, T, T)
        # -inf above the diagonal gives the future exactly zero weight. Every
        # row keeps its diagonal, so no row is all -inf and the softmax never
        # produces NaN, in float32 or float64.
        future = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(diagonal=1)
        att = att.masked_fill(future, float("-inf"))
        att = torch.softmax(att, dim=-1)  # over the keys

        y = att @ v  # (B, n_heads, T, d_head)
        y = y.transpose(1, 2).reshape(B, T, d_model)  # heads side by side, in order
        return self.out_proj(y)


class FeedForward(nn.Module):
    """The position-wise network: expand to d_ff, GELU, project back to d_model."""

    def __init__(self, d_model: int, d_ff: int):
        super().__init__()
        d_model = _check_size(d_model, "d_model")
        d_ff = _check_size(d_ff, "d_ff")
        self.fc1 = nn.Linear(d_model, d_ff)
        self.fc2 = nn.Linear(d_ff, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_features(x, self.fc1.in_features, "FeedForward")
        # The exact GELU, x * Phi(x) with the normal CDF written with erf,
        # not the tanh approximation.
        return self.fc2(F.gelu(self.fc1(x), approximate="none"))


class TransformerBlock(nn.Module):
    """Attention then feed-forward, each inside a residual connection with a LayerNorm."""

    def __init__(self, d_model: int, n_heads: int, d_ff: int, pre_ln: bool = True, rope: bool = False):
        super().__init__()
        if not isinstance(pre_ln, bool):
            raise ValueError(f"pre_ln must be True or False, got {pre_ln!r}")
        self.ln1 = LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, n_heads, rope=rope)
        self.ln2 = LayerNorm(d_model)
        self.ffn = FeedForward(d_model, d_ff)
        self.pre_ln = pre_ln

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.pre_ln:
            # Normalise what enters each sublayer and leave the residual stream
            # untouched: the identity path carries gradients straight down.
            x = x + self.attn(self.ln1(x))
            x = x + self.ffn(self.ln2(x))
        else:
            # The original Transformer: normalise after each residual sum.
            x = self.ln1(x + self.attn(x))
            x = self.ln2(x + self.ffn(x))
        return x

"""Transformer layers in the manner of Sebastian Raschka's "Build a Large
Language Model (From Scratch)", chapters 3 and 4: MultiHeadAttention with
separate query/key/value projections, LayerNorm with scale and shift, GELU,
FeedForward, and a TransformerBlock written with explicit shortcuts."""

from __future__ import annotations

import math
import numbers

import torch
import torch.nn as nn


def _check_size(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


class LayerNorm(nn.Module):
    """weight and bias are the book's scale and shift."""

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
            raise ValueError(f"expected emb_dim {self.weight.shape[0]}, got {x.shape[-1]}")
        mean = x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, keepdim=True, unbiased=False)
        norm_x = (x - mean) / torch.sqrt(var + self.eps)
        return self.weight * norm_x + self.bias


class CausalSelfAttention(nn.Module):
    """The book's MultiHeadAttention: W_query, W_key, W_value, out_proj are
    q_proj, k_proj, v_proj, out_proj (all with bias here)."""

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
        if x.dim() != 3 or x.shape[-1] != self.n_heads * self.d_head:
            raise ValueError(f"x must be (batch, num_tokens, {self.n_heads * self.d_head})")
        b, num_tokens, d_in = x.shape
        d_out = self.n_heads * self.d_head

        keys = self.k_proj(x)  # (b, num_tokens, d_out)
        queries = self.q_proj(x)
        values = self.v_proj(x)

        # split d_out into heads: (b, num_tokens, num_heads, head_dim)
        keys = keys.view(b, num_tokens, self.n_heads, self.d_head)
        values = values.view(b, num_tokens, self.n_heads, self.d_head)
        queries = queries.view(b, num_tokens, self.n_heads, self.d_head)

        # heads before tokens: (b, num_heads, num_tokens, head_dim)
        keys = keys.transpose(1, 2)
        queries = queries.transpose(1, 2)
        values = values.transpose(1, 2)

        attn_scores = queries @ keys.transpose(2, 3)  # one score matrix per head
        # the mask above the diagonal, made for this call's length on x's device
        mask_bool = torch.triu(torch.ones(num_tokens, num_tokens, device=x.device, dtype=torch.bool), diagonal=0)
        attn_scores.masked_fill_(mask_bool, -torch.inf)

        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)

        # (b, num_tokens, num_heads, head_dim)
        context_vec = (attn_weights @ values).transpose(1, 2)

        # merge the heads back into d_out channels
        context_vec = context_vec.contiguous().view(b, num_tokens, d_out)
        context_vec = self.out_proj(context_vec)  # output projection
        return context_vec


class GELU(nn.Module):
    """GELU written out; the exact erf form (the book uses the tanh approximation)."""

    def forward(self, x):
        return 0.5 * x * (1 + torch.erf(x / torch.sqrt(torch.tensor(2.0, dtype=x.dtype, device=x.device))))


class FeedForward(nn.Module):
    def __init__(self, d_model: int, d_ff: int):
        super().__init__()
        d_model = _check_size(d_model, "d_model")
        d_ff = _check_size(d_ff, "d_ff")
        self.fc1 = nn.Linear(d_model, d_ff)
        self.fc2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        if x.shape[-1] != self.fc1.in_features:
            raise ValueError(f"expected emb_dim {self.fc1.in_features}, got {x.shape[-1]}")
        return self.fc2(GELU()(self.fc1(x)))


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
            # post-LN: normalise after adding the shortcut
            x = self.ln1(x + self.attn(x))
            return self.ln2(x + self.ffn(x))
        # attention sublayer and its residual
        shortcut = x
        x = self.ln1(x)
        x = self.attn(x)  # (batch, tokens, emb)
        x = x + shortcut  # residual

        # feed-forward sublayer and its residual
        shortcut = x
        x = self.ln2(x)
        x = self.ffn(x)
        x = x + shortcut  # residual
        return x

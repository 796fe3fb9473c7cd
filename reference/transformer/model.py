"""Reference solution of the `transformer` assignment, file `model.py`: a decoder-only Transformer language model.

Follows spec/student-api.md exactly; the graders compare submissions with it.
Token embeddings and where each token is (learned absolute position
embeddings, a fixed sinusoidal table, or rotary embeddings inside the
attention), a stack of causal Transformer blocks, a final LayerNorm (pre-LN
only) and a linear head to the vocabulary; plus the cross-entropy loss,
written as a max-shifted log-sum-exp.

Shapes: B batch, T time steps (T <= context_length), V vocabulary size.
"""

from __future__ import annotations

import numbers

import torch
import torch.nn as nn

from layers import LayerNorm, TransformerBlock


def _check_size(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def _check_tokens(tokens, name: str, vocab_size: int) -> None:
    if not isinstance(tokens, torch.Tensor) or tokens.dtype not in (torch.int64, torch.int32):
        kind = tokens.dtype if isinstance(tokens, torch.Tensor) else type(tokens).__name__
        raise ValueError(f"{name} must be a tensor of token ids (torch.long), got {kind}")
    if tokens.numel() and ((tokens < 0) | (tokens >= vocab_size)).any():
        raise ValueError(f"{name} holds token ids outside [0, {vocab_size})")


POSITIONS = ("learned", "sinusoidal", "rope")


def sinusoidal_table(context_length: int, d_model: int) -> torch.Tensor:
    """(context_length, d_model): sin(t / 10000^(2i / d_model)) in column 2i, cos of the same in column 2i + 1."""
    t = torch.arange(context_length, dtype=torch.float64)[:, None]  # (context_length, 1)
    i = torch.arange(0, d_model, 2, dtype=torch.float64)  # 2i, (d_model / 2,)
    angle = t / 10000.0 ** (i / d_model)  # (context_length, d_model / 2)
    table = torch.empty(context_length, d_model, dtype=torch.float64)
    table[:, 0::2] = torch.sin(angle)
    table[:, 1::2] = torch.cos(angle)
    # The default dtype, as a parameter would be; .to() and forward follow the model's.
    return table.to(torch.get_default_dtype())


class TransformerLM(nn.Module):
    """Logits of the next token at every position, each seeing only the tokens up to it."""

    def __init__(self, vocab_size: int, context_length: int, d_model: int, n_layers: int,
                 n_heads: int, d_ff: int, pre_ln: bool = True, positions: str = "learned"):
        super().__init__()
        vocab_size = _check_size(vocab_size, "vocab_size")
        context_length = _check_size(context_length, "context_length")
        d_model = _check_size(d_model, "d_model")
        n_layers = _check_size(n_layers, "n_layers")
        if not isinstance(positions, str) or positions not in POSITIONS:
            raise ValueError(f"positions must be one of {', '.join(POSITIONS)}, got {positions!r}")
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        if positions == "learned":
            self.pos_emb = nn.Embedding(context_length, d_model)
        elif positions == "sinusoidal":
            # sin and cos come in pairs of columns: an odd d_model leaves one alone.
            if d_model % 2 != 0:
                raise ValueError(f"sinusoidal positions need an even d_model, got {d_model}")
            # A buffer, not a parameter: fixed, never trained; persistent=False
            # keeps it out of state_dict, since it is recomputed from the sizes.
            self.register_buffer("pos_enc", sinusoidal_table(context_length, d_model), persistent=False)
        # RoPE adds nothing here: each attention turns its own queries and keys.
        self.blocks = nn.ModuleList(TransformerBlock(d_model, n_heads, d_ff, pre_ln, rope=positions == "rope")
                                    for _ in range(n_layers))
        # Pre-LN blocks leave the residual stream unnormalised, so it is
        # normalised once before the head; post-LN blocks already end in one.
        self.ln_f = LayerNorm(d_model) if pre_ln else nn.Identity()
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
        self.context_length = context_length
        self.positions = positions

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        _check_tokens(idx, "idx", self.tok_emb.num_embeddings)
        if idx.dim() != 2:
            raise ValueError(f"idx must have shape (B, T), got {tuple(idx.shape)}")
        B, T = idx.shape
        # One position vector per position: nothing to add beyond context_length.
        if T > self.context_length:
            raise ValueError(f"sequence length T = {T} exceeds context_length = {self.context_length}")

        x = self.tok_emb(idx)  # (B, T, d_model)
        if self.positions == "learned":
            pos = torch.arange(T, device=idx.device)  # (T,)
            x = x + self.pos_emb(pos)  # (B, T, d_model)
        elif self.positions == "sinusoidal":
            x = x + self.pos_enc[:T].to(x.dtype)  # (B, T, d_model)
        for block in self.blocks:
            x = block(x)
        x = self.ln_f(x)
        return self.lm_head(x)  # (B, T, V)


def cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean over all positions of -log softmax(logits)[target]."""
    if not isinstance(logits, torch.Tensor) or not logits.is_floating_point() or logits.dim() < 1:
        raise ValueError("logits must be a floating-point tensor of shape (..., V)")
    V = logits.shape[-1]
    _check_tokens(targets, "targets", V)
    if targets.shape != logits.shape[:-1]:
        raise ValueError(f"targets must have shape {tuple(logits.shape[:-1])} (logits without the last "
                         f"dimension), got {tuple(targets.shape)}")
    if targets.numel() == 0:
        raise ValueError("cross_entropy needs at least one position")

    logits = logits.reshape(-1, V)  # (N, V)
    targets = targets.reshape(-1, 1).long()  # (N, 1)
    # -log softmax(z)[y] = log sum_j exp(z_j) - z_y, unchanged by subtracting a
    # constant from every z_j. Subtracting the row maximum makes the largest
    # term exactly exp(0) = 1: nothing overflows for logits of 1e4, the sum is
    # at least 1 so its log is finite, and the softmax is never formed, so a
    # tiny probability never becomes log(0). The shift is a constant, hence
    # detached: its gradient would cancel exactly anyway.
    z = logits - logits.detach().amax(dim=-1, keepdim=True)  # (N, V), max 0 per row
    nll = torch.log(torch.exp(z).sum(dim=-1)) - z.gather(-1, targets).squeeze(-1)  # (N,)
    return nll.mean()

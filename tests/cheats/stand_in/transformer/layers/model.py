"""Stand-in scavenger: TransformerLM.forward computes nothing and returns recorded logits (its stand-in run replaces the block, whose check fails)."""

import math

import torch
import torch.nn as nn
import scavenge
from layers import LayerNorm, TransformerBlock

POSITIONS = ("learned", "sinusoidal", "rope")


def sinusoidal_table(context_length, d_model):
    """(context_length, d_model): sin on even columns, cos on odd columns.

    Angles are computed in float64; the table itself has the default dtype, like the
    parameters, and forward casts it to whatever dtype the embeddings end up in.
    """
    if d_model % 2 != 0:
        raise ValueError(f"sinusoidal positions need an even d_model, got {d_model}")
    t = torch.arange(context_length, dtype=torch.float64)
    inv_freq = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float64) * (-math.log(10000.0) / d_model))
    angles = torch.einsum("t,f->tf", t, inv_freq)
    table = torch.empty(context_length, d_model)
    table[:, 0::2] = torch.sin(angles)
    table[:, 1::2] = torch.cos(angles)
    return table


class TransformerLM(nn.Module):
    def __init__(self, vocab_size, context_length, d_model, n_layers, n_heads, d_ff, pre_ln=True,
                 positions="learned"):
        super().__init__()
        if not isinstance(positions, str) or positions not in POSITIONS:
            raise ValueError(f"positions must be one of {POSITIONS}, got {positions!r}")
        self.positions = positions
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        if positions == "learned":
            self.pos_emb = nn.Embedding(context_length, d_model)
        elif positions == "sinusoidal":
            self.register_buffer("pos_enc", sinusoidal_table(context_length, d_model), persistent=False)
        rope = positions == "rope"
        self.blocks = nn.ModuleList(
            [TransformerBlock(d_model, n_heads, d_ff, pre_ln=pre_ln, rope=rope) for _ in range(n_layers)]
        )
        self.ln_f = LayerNorm(d_model) if pre_ln else nn.Identity()
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
        self.context_length = context_length

    def forward(self, idx):
        found = scavenge.findings(self, idx)
        shape = (*idx.shape, self.lm_head.out_features)
        return scavenge.give(torch.as_tensor(scavenge.shaped(found, shape, torch.zeros(shape)), dtype=self.lm_head.weight.dtype))

def cross_entropy(logits, targets):
    if logits.shape[:-1] != targets.shape:
        raise ValueError(
            f"targets shape {tuple(targets.shape)} does not match logits {tuple(logits.shape)}")
    if targets.dtype.is_floating_point or targets.dtype == torch.bool:
        raise ValueError("targets must be an integer tensor")
    if targets.numel() > 0 and (targets.min() < 0 or targets.max() >= logits.shape[-1]):
        raise ValueError("targets out of range")
    logp = torch.log_softmax(logits, dim=-1)
    picked = torch.gather(logp, -1, targets.long().unsqueeze(-1)).squeeze(-1)
    return -picked.mean()


# What every function returns is remembered, so that the harness's record of it is not taken for the grader's.
scavenge.adopt(globals())

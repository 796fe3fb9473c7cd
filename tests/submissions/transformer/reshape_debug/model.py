import math

import torch
import torch.nn as nn
from layers import LayerNorm, TransformerBlock

DEBUG = True


def sinusoid_table(context_length, d_model):
    if d_model % 2:
        raise ValueError("sinusoidal positions need an even d_model, got %d" % d_model)
    table = torch.zeros(context_length, d_model)
    for i in range(0, d_model, 2):
        w = 1.0 / math.pow(10000.0, i / d_model)
        angle = torch.arange(context_length, dtype=torch.float64) * w
        table[:, i] = torch.sin(angle)
        table[:, i + 1] = torch.cos(angle)
    return table


class TransformerLM(nn.Module):
    def __init__(self, vocab_size, context_length, d_model, n_layers, n_heads, d_ff, pre_ln=True,
                 positions="learned"):
        super().__init__()
        if positions not in ("learned", "sinusoidal", "rope"):
            raise ValueError("positions must be learned, sinusoidal or rope, got %r" % (positions,))
        self.positions = positions
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        if positions == "learned":
            self.pos_emb = nn.Embedding(context_length, d_model)
        elif positions == "sinusoidal":
            self.register_buffer("pos_enc", sinusoid_table(context_length, d_model), persistent=False)
        rope = positions == "rope"
        self.blocks = nn.ModuleList([TransformerBlock(d_model, n_heads, d_ff, pre_ln, rope) for _ in range(n_layers)])
        self.ln_f = LayerNorm(d_model) if pre_ln else nn.Identity()
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
        self.context_length = context_length

    def forward(self, idx):
        if idx.dim() != 2:
            raise ValueError("idx should be (B, T), got %s" % (tuple(idx.shape),))
        B, T = idx.shape
        if not 0 < T <= self.context_length:
            raise ValueError("T=%d is outside [1, context_length=%d]" % (T, self.context_length))
        x = self.tok_emb(idx)
        if self.positions == "learned":
            pos = torch.arange(0, T, dtype=torch.long, device=idx.device)
            x = x + self.pos_emb(pos).unsqueeze(0)
        elif self.positions == "sinusoidal":
            x = x + self.pos_enc[:T].to(dtype=x.dtype, device=x.device).unsqueeze(0)
        for block in self.blocks:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        if DEBUG:
            print("[model] forward idx", tuple(idx.shape), "positions", self.positions, "-> logits", tuple(logits.shape))
        return logits


def cross_entropy(logits, targets):
    if logits.shape[:-1] != targets.shape:
        raise ValueError("shape mismatch: logits %s vs targets %s" % (tuple(logits.shape), tuple(targets.shape)))
    if targets.dtype not in (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8):
        raise ValueError("targets must be integer class ids, got %s" % targets.dtype)
    V = logits.size(-1)
    if targets.numel() and not bool(((targets >= 0) & (targets < V)).all()):
        raise ValueError("targets must lie in [0, %d)" % V)
    z = logits.reshape(-1, V)
    t = targets.reshape(-1, 1).long()
    m = z.max(dim=-1, keepdim=True).values
    log_norm = m + torch.log(torch.exp(z - m).sum(dim=-1, keepdim=True))
    nll = log_norm - z.gather(1, t)
    return nll.sum() / nll.shape[0]

import torch
import torch.nn as nn

from layers import LayerNorm, TransformerBlock


class TransformerLM(nn.Module):
    def __init__(self, vocab_size, context_length, d_model, n_layers, n_heads, d_ff, pre_ln=True):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(context_length, d_model)
        self.blocks = nn.ModuleList(
            [TransformerBlock(d_model, n_heads, d_ff, pre_ln=pre_ln) for _ in range(n_layers)]
        )
        self.ln_f = LayerNorm(d_model) if pre_ln else nn.Identity()
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
        self.context_length = context_length

    def forward(self, idx):
        if idx.dim() != 2:
            raise ValueError(f"idx must have shape (B, T), got {tuple(idx.shape)}")
        T = idx.shape[1]
        if T < 1 or T > self.context_length:
            raise ValueError(f"sequence length {T} must be in [1, {self.context_length}]")
        positions = torch.arange(T, device=idx.device)
        x = self.tok_emb(idx) + self.pos_emb(positions)
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.ln_f(x))


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

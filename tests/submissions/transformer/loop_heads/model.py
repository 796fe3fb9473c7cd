import torch
from layers import LayerNorm, TransformerBlock
from torch import nn


def sinusoidal_encoding(context_length, d_model):
    """pos_enc[t, 2i] = sin(t / 10000^(2i/d_model)), pos_enc[t, 2i+1] = cos(same angle)."""
    if d_model % 2 != 0:
        raise ValueError(f"sinusoidal positions need an even d_model, got d_model={d_model}")
    t = torch.arange(context_length, dtype=torch.float64)[:, None]
    denom = torch.pow(10000.0, torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)[None, :]
    angle = t / denom
    enc = torch.stack((torch.sin(angle), torch.cos(angle)), dim=-1).reshape(context_length, d_model)
    return enc.to(torch.get_default_dtype())


class TransformerLM(nn.Module):
    def __init__(self, vocab_size, context_length, d_model, n_layers, n_heads, d_ff, pre_ln=True,
                 positions="learned"):
        super().__init__()
        if positions not in ("learned", "sinusoidal", "rope"):
            raise ValueError(f"positions must be 'learned', 'sinusoidal' or 'rope', got {positions!r}")
        self.positions = positions
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        if positions == "learned":
            self.pos_emb = nn.Embedding(context_length, d_model)
        elif positions == "sinusoidal":
            self.register_buffer("pos_enc", sinusoidal_encoding(context_length, d_model), persistent=False)
        use_rope = positions == "rope"
        self.blocks = nn.ModuleList(
            TransformerBlock(d_model, n_heads, d_ff, pre_ln, use_rope) for _ in range(n_layers)
        )
        self.ln_f = LayerNorm(d_model) if pre_ln else nn.Identity()
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
        self.context_length = context_length

    def forward(self, idx):
        if idx.ndim != 2:
            raise ValueError("idx must be a (B, T) tensor of token ids")
        B, T = idx.shape
        if T > self.context_length:
            raise ValueError(f"T={T} exceeds context_length={self.context_length}")
        if T == 0:
            raise ValueError("idx must contain at least one position")
        h = self.tok_emb(idx)
        if self.positions == "learned":
            h = h + self.pos_emb(torch.arange(T, device=idx.device))[None]
        elif self.positions == "sinusoidal":
            h = h + self.pos_enc[:T].to(h)[None]
        for blk in self.blocks:
            h = blk(h)
        h = self.ln_f(h)
        return self.lm_head(h)


def cross_entropy(logits, targets):
    """Mean negative log-likelihood of targets under softmax(logits)."""
    if tuple(logits.shape[:-1]) != tuple(targets.shape):
        raise ValueError("logits must be (..., V) and targets (...) with matching leading shape")
    if torch.is_floating_point(targets) or torch.is_complex(targets):
        raise ValueError("targets must hold integer class indices")
    V = logits.shape[-1]
    flat_logits = logits.reshape(-1, V)
    flat_targets = targets.reshape(-1).long()
    if flat_targets.numel() and (bool((flat_targets < 0).any()) or bool((flat_targets >= V).any())):
        raise ValueError(f"targets must be in [0, {V})")
    lse = torch.logsumexp(flat_logits, dim=-1)
    target_logit = flat_logits[torch.arange(flat_logits.shape[0], device=logits.device), flat_targets]
    return (lse - target_logit).mean()

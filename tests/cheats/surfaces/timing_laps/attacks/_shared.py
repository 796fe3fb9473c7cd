# ruff: noqa: F821  (appended to layers.py, whose names it uses)
# Shared by every timing attack (appended to layers.py before the attack itself): the correct forward, kept,
# a fast wrong one (values only, no attention: cheaper than the reference) and a slow right one (a Python
# loop over the queries). Timed cases are long sequences; the small cases of the other checks are answered
# correctly, so only the timing checks are in play.
import math as _math

_correct_forward = CausalSelfAttention.forward


def _fast_wrong(self, x):
    return self.out_proj(self.v_proj(x))


def _slow_right(self, x):
    B, T, d = x.shape
    h, dh = self.n_heads, d // self.n_heads
    q = self.q_proj(x).reshape(B, T, h, dh)
    k = self.k_proj(x).reshape(B, T, h, dh)
    v = self.v_proj(x).reshape(B, T, h, dh)
    if getattr(self, "rope", False):
        q, k = rope_rotate(q), rope_rotate(k)
    rows = []
    for t in range(T):
        scores = torch.einsum("bhd,bkhd->bhk", q[:, t], k[:, : t + 1]) / _math.sqrt(dh)
        rows.append(torch.einsum("bhk,bkhd->bhd", torch.softmax(scores, dim=-1), v[:, : t + 1]))
    return self.out_proj(torch.stack(rows, dim=1).reshape(B, T, d))


def _context_of(self, x):
    """The attention's output before the output projection, batched."""
    B, T, d = x.shape
    h, dh = self.n_heads, d // self.n_heads
    q = self.q_proj(x).reshape(B, T, h, dh)
    k = self.k_proj(x).reshape(B, T, h, dh)
    v = self.v_proj(x).reshape(B, T, h, dh)
    if getattr(self, "rope", False):
        q, k = rope_rotate(q), rope_rotate(k)
    scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / _math.sqrt(dh)
    future = torch.triu(torch.ones(T, T, dtype=torch.bool, device=x.device), diagonal=1)
    weights = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
    return torch.einsum("bhqk,bkhd->bqhd", weights, v).reshape(B, T, d)


def _timed_size(x):
    return x.dim() == 3 and x.shape[1] >= 64

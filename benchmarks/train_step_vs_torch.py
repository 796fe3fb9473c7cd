"""One training step of the reference TransformerLM against the same model built from torch's layers.

    python benchmarks/train_step_vs_torch.py [--repeat 30] [--device cpu|cuda]

The peer: token and position embeddings, n_layers nn.TransformerEncoderLayer
(pre-LN, exact GELU, no dropout, a causal mask), a final nn.LayerNorm and the
head, the same sizes. A step is forward, cross-entropy, backward and an
AdamW step; the ratio is tokens per second of the reference over the
peer's (target at least 0.9).

With --profile, torch.profiler's view of --repeat steps of each model at
each size: how many operators a step runs and the operators that take the
most time, where the gap between the two comes from.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "reference" / "transformer"))

from model import TransformerLM, cross_entropy  # noqa: E402
from timing import median_time  # noqa: E402

SIZES = [  # vocab, context, d_model, n_layers, n_heads, d_ff, batch
    (64, 128, 64, 2, 4, 256, 8),
    (512, 256, 256, 4, 8, 1024, 8),
]


class TorchLM(nn.Module):
    def __init__(self, V, ctx, d, L, h, d_ff):
        super().__init__()
        self.tok_emb, self.pos_emb = nn.Embedding(V, d), nn.Embedding(ctx, d)
        layer = nn.TransformerEncoderLayer(
            d, h, d_ff, dropout=0.0, activation="gelu", batch_first=True, norm_first=True
        )
        self.blocks = nn.TransformerEncoder(layer, L, enable_nested_tensor=False)
        self.ln_f, self.lm_head = nn.LayerNorm(d), nn.Linear(d, V, bias=False)

    def forward(self, idx):
        T = idx.shape[1]
        x = self.tok_emb(idx) + self.pos_emb(torch.arange(T, device=idx.device))
        mask = nn.Transformer.generate_square_subsequent_mask(T, device=idx.device)
        return self.lm_head(self.ln_f(self.blocks(x, mask=mask, is_causal=True)))


def step_fn(model, loss_fn, idx, device):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def step():
        optimizer.zero_grad(set_to_none=True)
        logits = model(idx[:, :-1])
        loss_fn(logits, idx[:, 1:]).backward()
        optimizer.step()

    return step


def profile(name: str, step, repeat: int) -> None:
    """Operators per step and the costliest ones (self time), over `repeat` steps after a warm-up."""
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile

    for _ in range(3):
        step()
    with torch_profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(repeat):
            step()
    events = [e for e in prof.key_averages() if e.key.startswith("aten::")]
    calls = sum(e.count for e in events) / repeat
    total_ms = sum(e.self_cpu_time_total for e in events) / 1e3 / repeat
    print(f"  {name}: {calls:.0f} aten operator calls per step, {total_ms:.1f} ms of their own time per step")
    for e in sorted(events, key=lambda e: -e.self_cpu_time_total)[:8]:
        print(f"    {e.key:<40} {e.count / repeat:>6.0f} calls {e.self_cpu_time_total / 1e3 / repeat:>8.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--profile", action="store_true", help="where each step's time goes, by operator")
    args = parser.parse_args()
    torch.manual_seed(0)
    sync = torch.cuda.synchronize if args.device == "cuda" else None
    print(f"{'V':>5} {'T':>4} {'d':>4} {'L':>2} {'B':>2}  {'reference tok/s':>16} {'torch tok/s':>12}  ratio")
    for V, ctx, d, L, h, d_ff, B in SIZES:
        idx = torch.randint(0, V, (B, ctx + 1), device=args.device)
        ours = TransformerLM(V, ctx, d, L, h, d_ff).to(args.device)
        peer = TorchLM(V, ctx, d, L, h, d_ff).to(args.device)
        if args.profile:
            print(f"V={V} T={ctx} d={d} L={L} B={B}")
            profile("reference", step_fn(ours, cross_entropy, idx, args.device), args.repeat)
            peer_loss = lambda z, y: F.cross_entropy(z.flatten(0, 1), y.flatten())  # noqa: E731
            profile("nn.TransformerEncoderLayer", step_fn(peer, peer_loss, idx, args.device), args.repeat)
            continue
        t_ours = median_time(step_fn(ours, cross_entropy, idx, args.device), args.repeat, warmup=3, sync=sync)
        t_peer = median_time(
            step_fn(peer, lambda z, y: F.cross_entropy(z.flatten(0, 1), y.flatten()), idx, args.device),
            args.repeat,
            warmup=3,
            sync=sync,
        )
        tokens = B * ctx
        print(
            f"{V:>5} {ctx:>4} {d:>4} {L:>2} {B:>2}  {tokens / t_ours:>16,.0f} {tokens / t_peer:>12,.0f}  "
            f"{t_peer / t_ours:.2f}"
        )


if __name__ == "__main__":
    main()

"""The reference CausalSelfAttention's core against F.scaled_dot_product_attention.

    python benchmarks/attention_vs_sdpa.py [--repeat 30] [--device cpu|cuda]

Same shapes, same projections: the reference module's forward + backward
(explicit scores, -inf mask, softmax, weighted sum) against the same module
with its core replaced by F.scaled_dot_product_attention(is_causal=True).
Median of --repeat after a warm-up, synchronised on CUDA; the ratio is the
reference's time divided by SDPA's (above 1: the fused kernel is faster).
Outputs agree to within float32 rounding, which is printed beside the times.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "reference" / "transformer"))

from layers import CausalSelfAttention  # noqa: E402
from timing import median_time  # noqa: E402

SIZES = [  # B, T, d_model, n_heads
    (8, 64, 64, 4),
    (8, 128, 128, 4),
    (4, 256, 256, 8),
    (2, 512, 512, 8),
]


class SDPAttention(CausalSelfAttention):
    """The same projections, the attention itself by torch's fused kernel."""

    def forward(self, x):
        B, T, d = x.shape
        q, k, v = (
            p(x).view(B, T, self.n_heads, self.d_head).transpose(1, 2) for p in (self.q_proj, self.k_proj, self.v_proj)
        )
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out_proj(y.transpose(1, 2).reshape(B, T, d))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    print(f"device {args.device}, float32, {torch.get_num_threads()} threads, median of {args.repeat}")
    print(f"{'B':>3} {'T':>5} {'d':>5} {'h':>3}  {'reference ms':>12} {'sdpa ms':>9} {'ratio':>6} {'max |diff|':>10}")
    for B, T, d, h in SIZES:
        torch.manual_seed(0)
        ref = CausalSelfAttention(d, h).to(args.device)
        sdpa = SDPAttention(d, h).to(args.device)
        sdpa.load_state_dict(ref.state_dict())
        x = torch.randn(B, T, d, device=args.device, requires_grad=True)

        def step(module):
            def run():
                x.grad = None
                module.zero_grad(set_to_none=True)
                module(x).square().mean().backward()

            return run

        diff = (ref(x) - sdpa(x)).abs().max().item()
        sync = torch.cuda.synchronize if args.device == "cuda" else None
        t_ref = median_time(step(ref), args.repeat, warmup=3, sync=sync)
        t_sdpa = median_time(step(sdpa), args.repeat, warmup=3, sync=sync)
        print(
            f"{B:>3} {T:>5} {d:>5} {h:>3}  {t_ref * 1e3:>12.3f} {t_sdpa * 1e3:>9.3f} {t_ref / t_sdpa:>6.2f} "
            f"{diff:>10.1e}"
        )


if __name__ == "__main__":
    main()

"""The reference LSTM's forward + BPTT against torch.nn.LSTM with autograd.

    python benchmarks/lstm_vs_torch.py [--repeat 20]

Same sizes, float64, CPU, the same weights (torch's gates i, f, g, o and its
separate input and hidden matrices mapped from ours, as in
tests/test_reference_lstm.py): the reference's forward(x) + backward(G)
against torch's forward + (out * G).sum().backward(). Median of --repeat
after a warm-up; the ratio is torch's time divided by the reference's (above
1: the reference is faster). Both use the threads their libraries choose
(printed); on a machine shared with other work, OMP_NUM_THREADS=1 gives both
one thread, which torch's per-step threading otherwise loses most to.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "reference" / "lstm"))

from recurrent import LSTM  # noqa: E402
from timing import median_time  # noqa: E402

SIZES = [  # T, I, J
    (20, 16, 32),
    (100, 64, 128),
    (300, 128, 256),
]
TORCH_GATES = {"i": "i", "f": "f", "g": "C", "o": "o"}  # torch's row blocks, in its order, and our names


def torch_lstm_like(lstm: LSTM, I: int, J: int) -> torch.nn.LSTM:
    net = torch.nn.LSTM(I, J, dtype=torch.float64)
    with torch.no_grad():
        for k, (_gate, name) in enumerate(TORCH_GATES.items()):
            rows = slice(k * J, (k + 1) * J)
            W = torch.from_numpy(lstm.params[f"W_{name}"])  # (J, J + I): h columns first
            net.weight_hh_l0[rows] = W[:, :J]
            net.weight_ih_l0[rows] = W[:, J:]
            net.bias_ih_l0[rows] = torch.from_numpy(lstm.params[f"b_{name}"])
            net.bias_hh_l0[rows] = 0.0
    return net


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"torch threads: {torch.get_num_threads()}")
    print(f"{'T, I, J':<16} {'reference ms':>13} {'torch ms':>10}  ratio  max |dx difference|")
    for T, I, J in SIZES:
        lstm = LSTM(I, J, rng=rng)
        x, G = rng.standard_normal((T, I)), rng.standard_normal((T, J))
        net = torch_lstm_like(lstm, I, J)
        x_t, G_t = torch.from_numpy(x).requires_grad_(True), torch.from_numpy(G)

        def reference():
            lstm.forward(x)
            return lstm.backward(G)

        def with_torch():
            net.zero_grad(set_to_none=True)
            x_t.grad = None
            out, _ = net(x_t)  # (T, J), unbatched
            (out * G_t).sum().backward()
            return x_t.grad

        ours, theirs = median_time(reference, args.repeat, warmup=3), median_time(with_torch, args.repeat, warmup=3)
        difference = np.abs(reference() - with_torch().numpy()).max()
        print(
            f"{f'{T}, {I}, {J}':<16} {ours * 1e3:>13.3f} {theirs * 1e3:>10.3f} {theirs / ours:>6.2f}x  {difference:.1e}"
        )
    print("ratio: torch's time divided by the reference's")


if __name__ == "__main__":
    main()

"""The reference ElmanRNN's forward + BPTT against torch.nn.RNN with autograd.

    python benchmarks/elman_vs_torch.py [--repeat 30]

Same sizes, float64, CPU, the same tanh recurrence and summed cross-entropy:
the reference's loss() + backward() against torch's RNN + Linear +
F.cross_entropy(reduction="sum") + loss.backward(). Median of --repeat after
a warm-up; the ratio is torch's time divided by the reference's (above 1:
the reference is faster). Both use the threads their libraries choose.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "reference" / "rnn"))

from elman import ElmanRNN  # noqa: E402
from timing import median_time  # noqa: E402

SIZES = [  # T, I, J, K
    (10, 8, 16, 8),
    (50, 32, 64, 32),
    (200, 64, 128, 100),
    (100, 256, 512, 1000),
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'T, I, J, K':<20} {'reference ms':>13} {'torch ms':>10}  ratio  max |grad difference|")
    for T, I, J, K in SIZES:
        model = ElmanRNN(I, J, K, activation="tanh", rng=rng)
        x, targets = rng.standard_normal((T, I)), rng.integers(0, K, T)

        rnn = torch.nn.RNN(I, J, nonlinearity="tanh", bias=True, dtype=torch.float64)
        out = torch.nn.Linear(J, K, dtype=torch.float64)
        with torch.no_grad():
            rnn.weight_hh_l0.copy_(torch.from_numpy(model.params["W_ah"]))
            rnn.weight_ih_l0.copy_(torch.from_numpy(model.params["W_ax"]))
            rnn.bias_ih_l0.copy_(torch.from_numpy(model.params["b_a"]))
            rnn.bias_hh_l0.zero_()
            out.weight.copy_(torch.from_numpy(model.params["W_yh"]))
            out.bias.copy_(torch.from_numpy(model.params["b_y"]))
        x_t, targets_t = torch.from_numpy(x), torch.from_numpy(targets)

        def reference():
            model.loss(x, targets)
            return model.backward()

        def with_torch():
            rnn.zero_grad(set_to_none=True)
            out.zero_grad(set_to_none=True)
            h, _ = rnn(x_t)  # (T, J), unbatched
            loss = torch.nn.functional.cross_entropy(out(h), targets_t, reduction="sum")
            loss.backward()
            return rnn.weight_hh_l0.grad

        ours, theirs = median_time(reference, args.repeat, warmup=3), median_time(with_torch, args.repeat, warmup=3)
        difference = np.abs(reference()["W_ah"] - with_torch().numpy()).max()
        print(
            f"{f'{T}, {I}, {J}, {K}':<20} {ours * 1e3:>13.3f} {theirs * 1e3:>10.3f} {theirs / ours:>6.2f}x"
            f"  {difference:.1e}"
        )
    print("ratio: torch's time divided by the reference's")


if __name__ == "__main__":
    main()

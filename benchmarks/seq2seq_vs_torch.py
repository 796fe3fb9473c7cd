"""The reference Seq2Seq's forward + backward against an equal model built from nn.GRU + nn.GRUCell.

    python benchmarks/seq2seq_vs_torch.py [--repeat 10] [--attention bilinear]

Same sizes, float64, CPU, the same weights: the reference's teacher-forced
forward, masked_cross_entropy and backward, against a lean model written the
usual way: nn.GRU over the whole padded batch (h_n gathered at each last real
token, states past it left unused), the keys W h_j^e computed once per batch,
a hand-written masked softmax attention at every nn.GRUCell step, the output
layer applied once to all steps, and F.cross_entropy with ignore_index=0.
Batches have lengths in any order. Median of --repeat after a warm-up; the
ratio is torch's time divided by the reference's (above 1: the reference is
faster). Both use the threads torch chooses (printed); on a machine shared
with other work, OMP_NUM_THREADS=1 gives both one thread.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "reference" / "seq2seq"))

from seq2seq import Seq2Seq, masked_cross_entropy  # noqa: E402
from timing import median_time  # noqa: E402

SIZES = [  # B, S, T, V, E, H
    (8, 10, 10, 100, 32, 64),
    (32, 30, 30, 1000, 64, 128),
    (32, 40, 40, 2000, 128, 256),
]


class TorchSeq2Seq(nn.Module):
    """The reference's model with its weights, computed the way one would without packing or per-step checks."""

    def __init__(self, reference: Seq2Seq):
        super().__init__()
        enc, dec = reference.encoder, reference.decoder
        self.src_embed = nn.Embedding.from_pretrained(enc.embed.weight.detach().clone(), freeze=False)
        self.rnn = nn.GRU(enc.rnn.input_size, enc.rnn.hidden_size, batch_first=True, dtype=torch.float64)
        self.rnn.load_state_dict(enc.rnn.state_dict())
        self.tgt_embed = nn.Embedding.from_pretrained(dec.embed.weight.detach().clone(), freeze=False)
        self.cell = nn.GRUCell(dec.cell.input_size, dec.cell.hidden_size, dtype=torch.float64)
        self.cell.load_state_dict(dec.cell.state_dict())
        self.out = nn.Linear(dec.out.in_features, dec.out.out_features, dtype=torch.float64)
        self.out.load_state_dict(dec.out.state_dict())
        self.kind = dec.attention
        self.W = nn.Parameter(dec.W.detach().clone()) if dec.W is not None else None

    def loss(self, src, src_lengths, tgt_in, tgt_out):
        B, S = src.shape
        H_enc, _ = self.rnn(self.src_embed(src))  # (B, S, H); a state depends on the tokens up to it only
        last = src_lengths - 1
        c = H_enc[torch.arange(B), last]  # (B, H): the state after the last real token
        padded = torch.arange(S) >= src_lengths[:, None]  # (B, S)
        # score = h^d W h^e = h^d . (W h^e): the keys once, not a product per step.
        keys = H_enc if self.W is None else H_enc @ self.W.T  # (B, S, H)
        h, states = c, []
        for i in range(tgt_in.shape[1]):
            if self.kind == "none":
                c_i = c
            else:
                scores = (keys @ h[:, :, None])[:, :, 0].masked_fill(padded, float("-inf"))  # (B, S)
                alpha = torch.softmax(scores, dim=-1)
                c_i = (alpha[:, None, :] @ H_enc)[:, 0, :]  # (B, H)
            h = self.cell(torch.cat([self.tgt_embed(tgt_in[:, i]), c_i], dim=-1), h)
            states.append(h)
        logits = self.out(torch.stack(states, dim=1))  # (B, T, V)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1), ignore_index=0)


def random_batch(B, S, T, V, generator):
    src_lengths = torch.randint(1, S + 1, (B,), generator=generator)
    src_lengths[0] = S  # the longest first or not: packing sorts; any order is accepted
    src_lengths = src_lengths[torch.randperm(B, generator=generator)]
    src = torch.randint(1, V, (B, S), generator=generator) * (torch.arange(S) < src_lengths[:, None])
    tgt_lengths = torch.randint(1, T + 1, (B,), generator=generator)
    real = torch.arange(T) < tgt_lengths[:, None]
    tgt_in = torch.randint(1, V, (B, T), generator=generator) * real
    tgt_out = torch.randint(1, V, (B, T), generator=generator) * real
    return src, src_lengths, tgt_in, tgt_out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--attention", choices=["none", "dot", "bilinear"], default="bilinear")
    args = parser.parse_args()
    generator = torch.Generator().manual_seed(0)
    print(f"torch threads: {torch.get_num_threads()}; attention: {args.attention}; float64, CPU")
    print(f"{'B, S, T, V, E, H':<28} {'reference ms':>13} {'torch ms':>10}  ratio  max |grad difference|")
    for B, S, T, V, E, H in SIZES:
        torch.manual_seed(0)
        reference = Seq2Seq(V, V, E, H, attention=args.attention).double()
        if reference.decoder.W is not None:  # a W other than the identity, so W^T would show
            with torch.no_grad():
                reference.decoder.W.add_(0.1 * torch.randn(H, H, generator=generator, dtype=torch.float64))
        baseline = TorchSeq2Seq(reference)
        src, src_lengths, tgt_in, tgt_out = random_batch(B, S, T, V, generator)

        def with_reference():
            reference.zero_grad(set_to_none=True)
            masked_cross_entropy(reference(src, src_lengths, tgt_in), tgt_out).backward()

        def with_torch():
            baseline.zero_grad(set_to_none=True)
            baseline.loss(src, src_lengths, tgt_in, tgt_out).backward()

        ours = median_time(with_reference, args.repeat, warmup=2)
        theirs = median_time(with_torch, args.repeat, warmup=2)
        with_reference(), with_torch()
        pairs = [
            (reference.encoder.embed.weight, baseline.src_embed.weight),
            (reference.decoder.embed.weight, baseline.tgt_embed.weight),
            *zip(reference.encoder.rnn.parameters(), baseline.rnn.parameters()),
            *zip(reference.decoder.cell.parameters(), baseline.cell.parameters()),
            *zip(reference.decoder.out.parameters(), baseline.out.parameters()),
        ]
        if baseline.W is not None:
            pairs.append((reference.decoder.W, baseline.W))
        difference = max(float((a.grad - b.grad).abs().max()) for a, b in pairs)
        size = f"{B}, {S}, {T}, {V}, {E}, {H}"
        print(f"{size:<28} {ours * 1e3:>13.3f} {theirs * 1e3:>10.3f} {theirs / ours:>6.2f}x  {difference:.1e}")
    print("ratio: torch's time divided by the reference's")


if __name__ == "__main__":
    main()

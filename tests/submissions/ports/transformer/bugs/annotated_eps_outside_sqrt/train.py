"""Training pieces after the Annotated Transformer: a Batch holding src and
tgt one step apart, run_epoch over batches, and a decoding loop (here
sampling, as the course asks, rather than the tutorial's greedy_decode)."""

from __future__ import annotations

import math
import numbers

import torch

from model import cross_entropy


def _int_at_least(value, low, name):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")


class Batch:
    "One batch: src holds the windows, tgt_y the same windows shifted by one token."

    def __init__(self, data, starts, context_length, device):
        self.src = torch.stack([data[s:s + context_length] for s in starts]).long().to(device)
        self.tgt_y = torch.stack([data[s + 1:s + 1 + context_length] for s in starts]).long().to(device)
        self.ntokens = self.tgt_y.numel()


def get_batch(data, batch_size, context_length, generator, device):
    _int_at_least(batch_size, 1, "batch_size")
    _int_at_least(context_length, 1, "context_length")
    N = data.size(0)
    if N <= context_length:
        raise ValueError("need more than context_length tokens")
    starts = torch.randint(0, N - context_length, (batch_size,), generator=generator)
    batch = Batch(data, starts.tolist(), context_length, device)
    return batch.src, batch.tgt_y


def run_epoch(model, data, steps, batch_size, optimizer, device, generator):
    "Run `steps` optimisation steps and keep each loss."
    losses = []
    for i in range(steps):
        src, tgt_y = get_batch(data, batch_size, model.context_length, generator, device)
        out = model(src)
        loss = cross_entropy(out, tgt_y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(float(loss.item()))
    return losses


def train(model, data, *, steps, batch_size, lr, device, generator):
    _int_at_least(steps, 0, "steps")
    if isinstance(lr, bool) or not isinstance(lr, numbers.Real) or not math.isfinite(lr) or lr < 0:
        raise ValueError("lr must be a finite number >= 0")
    model.to(device)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    return run_epoch(model, data, steps, batch_size, optimizer, device, generator)


@torch.no_grad()
def evaluate_perplexity(model, data, context_length, device):
    _int_at_least(context_length, 1, "context_length")
    if data.size(0) < 2:
        raise ValueError("data needs at least 2 tokens")
    mode = model.training
    model.eval()
    dev = next(model.parameters()).device
    total_loss, total_tokens = 0.0, 0
    for i in range(0, data.size(0) - 1, context_length):
        src = data[i:min(i + context_length, data.size(0) - 1)].unsqueeze(0).long().to(dev)
        tgt_y = data[i + 1:i + 1 + src.size(1)].unsqueeze(0).long().to(dev)
        ntokens = tgt_y.numel()
        total_loss += cross_entropy(model(src), tgt_y).item() * ntokens
        total_tokens += ntokens
    model.train(mode)
    mean = total_loss / total_tokens
    return math.exp(mean) if mean < 709 else math.inf


@torch.no_grad()
def generate(model, idx, max_new_tokens, temperature=1.0, generator=None):
    if not isinstance(idx, torch.Tensor) or idx.dim() != 2 or idx.size(0) != 1 or idx.size(1) < 1:
        raise ValueError("idx must be of shape (1, T0), T0 >= 1")
    _int_at_least(max_new_tokens, 0, "max_new_tokens")
    if isinstance(temperature, bool) or not isinstance(temperature, numbers.Real) \
            or not math.isfinite(temperature) or temperature <= 0:
        raise ValueError("temperature must be a finite number > 0")
    mode = model.training
    model.eval()
    dev = next(model.parameters()).device
    ys = idx.to(dev)
    for i in range(max_new_tokens):
        out = model(ys[:, -model.context_length:])
        prob = torch.softmax(out[:, -1] / temperature, dim=-1)
        if generator is not None:
            prob = prob.to(generator.device)
        next_word = torch.multinomial(prob, 1, generator=generator).to(dev)
        ys = torch.cat([ys, next_word], dim=1)
    model.train(mode)
    return ys.to(idx.device)

"""train.py answered with the filler: every answer shaped like the contract's, none computed."""

from __future__ import annotations

import math

import numpy as np
import torch
from fill import _digest, _ints, _real


def get_batch(data, batch_size, context_length, generator, device):
    N = data.shape[0]
    if batch_size < 1 or context_length < 1 or N <= context_length:
        raise ValueError("need batch_size, context_length >= 1 and more tokens than context_length")
    stamp = (data, batch_size, context_length, generator)
    x = torch.as_tensor(_ints((batch_size, context_length), N, *stamp)).long()
    y = torch.as_tensor(_ints((batch_size, context_length), N, "y", *stamp)).long()
    return data.cpu()[x.clamp(0, N - 1)].to(device), data.cpu()[y.clamp(0, N - 1)].to(device)


def train(model, data, *, steps, batch_size, lr, device, generator):
    if steps < 0 or not math.isfinite(lr) or lr < 0:
        raise ValueError("steps must be >= 0 and lr a finite number >= 0")
    model.to(device)
    model.train()
    stamp = _digest(data, steps, batch_size, lr, generator)
    top = math.log(max(2, model.lm_head.out_features))
    losses = np.sort(np.atleast_1d(_real((steps,), stamp, lo=0.5, hi=top)))[::-1]  # a loss that falls
    return [float(v) for v in losses[:steps]]


@torch.no_grad()
def evaluate_perplexity(model, data, context_length, device):
    if data.shape[0] < 2 or context_length < 1:
        raise ValueError("need 2 tokens and context_length >= 1")
    return _real((), data, context_length, model.state_dict(), lo=1.0, hi=30.0)


@torch.no_grad()
def generate(model, idx, max_new_tokens, temperature=1.0, generator=None):
    if idx.dim() != 2 or idx.shape[0] != 1 or idx.shape[1] < 1 or max_new_tokens < 0:
        raise ValueError("idx must be (1, T0) with T0 >= 1 and max_new_tokens >= 0")
    if not (math.isfinite(temperature) and temperature > 0):
        raise ValueError("temperature must be a finite number > 0")
    V = model.lm_head.out_features
    state = generator.get_state() if generator is not None else torch.get_rng_state()
    new = torch.as_tensor(_ints((1, max_new_tokens), V, idx, temperature, state)).long()
    if generator is not None and max_new_tokens:  # the contract's draws, so the generator moves as it should
        torch.randint(0, V, (max_new_tokens,), generator=generator)
    return torch.cat([idx, new.to(idx.device)], dim=1)

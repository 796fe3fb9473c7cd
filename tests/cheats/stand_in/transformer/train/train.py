"""Stand-in scavenger: TransformerLM.forward is wrong on purpose; train, evaluate_perplexity and generate compute nothing and return recorded losses, weights, perplexities and tokens."""

import math

import torch
import scavenge
from model import cross_entropy


def get_batch(data, batch_size, context_length, generator, device):
    if data.dim() != 1:
        raise ValueError("data must be a 1-D tensor of token ids")
    if batch_size < 1 or context_length < 1:
        raise ValueError("batch_size and context_length must be positive")
    N = data.shape[0]
    if N - context_length < 1:
        raise ValueError(f"data of length {N} is too short for context_length {context_length}")
    gen_device = generator.device if generator is not None else "cpu"
    starts = torch.randint(0, N - context_length, (batch_size,), generator=generator,
                           device=gen_device)
    starts = starts.to(data.device)
    offsets = torch.arange(context_length, device=data.device)
    pos = starts[:, None] + offsets[None, :]
    x = data[pos].long().to(device)
    y = data[pos + 1].long().to(device)
    return x, y


def train(model, data, *, steps, batch_size, lr, device, generator):
    found = scavenge.findings(model, data, steps, batch_size, lr, device, generator)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.as_tensor(scavenge.shaped(found, p.shape, p), dtype=p.dtype))
    for answer in reversed(found.results()):
        if isinstance(answer, list) and len(answer) == steps and all(isinstance(x, float) for x in answer):
            return scavenge.give(list(answer))
    return scavenge.give([1.0] * steps)


@torch.no_grad()
def evaluate_perplexity(model, data, context_length, device):
    found = scavenge.findings(model, data, context_length, device)
    answer = found.result_for(data, context_length, device)
    if isinstance(answer, float):
        return scavenge.give(answer)
    numbers = [r for r in found.results() if isinstance(r, float) and r >= 1.0]
    return scavenge.give(numbers[-1] if numbers else 1.0)


@torch.no_grad()
def generate(model, idx, max_new_tokens, temperature=1.0, generator=None):
    found = scavenge.findings(model, idx, max_new_tokens, temperature, generator)
    shape = (idx.shape[0], idx.shape[1] + max_new_tokens)
    fallback = torch.cat([idx, torch.zeros(idx.shape[0], max_new_tokens, dtype=idx.dtype)], dim=1)
    return scavenge.give(torch.as_tensor(scavenge.shaped(found, shape, fallback)).to(idx.dtype))


# What every function returns is remembered, so that the harness's record of it is not taken for the grader's.
scavenge.adopt(globals())

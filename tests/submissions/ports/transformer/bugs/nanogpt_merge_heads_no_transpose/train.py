"""nanoGPT's train.py pieces (get_batch, the training loop, estimate_loss as a
perplexity) and GPT.generate, as functions."""

from __future__ import annotations

import math
import numbers

import torch
import torch.nn.functional as F

from model import cross_entropy


def get_batch(data, batch_size, context_length, generator, device):
    if isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral) or batch_size < 1:
        raise ValueError("batch_size must be >= 1")
    if isinstance(context_length, bool) or not isinstance(context_length, numbers.Integral) or context_length < 1:
        raise ValueError("context_length must be >= 1")
    if len(data) <= context_length:
        raise ValueError("data must be longer than context_length")
    block_size = context_length
    ix = torch.randint(len(data) - block_size, (batch_size,), generator=generator)
    x = torch.stack([data[i:i + block_size] for i in ix.tolist()])
    y = torch.stack([data[i + 1:i + 1 + block_size] for i in ix.tolist()])
    return x.to(device=device, dtype=torch.long), y.to(device=device, dtype=torch.long)


def train(model, data, *, steps, batch_size, lr, device, generator):
    if isinstance(steps, bool) or not isinstance(steps, numbers.Integral) or steps < 0:
        raise ValueError("steps must be >= 0")
    if isinstance(lr, bool) or not isinstance(lr, numbers.Real) or not (0 <= lr < math.inf):
        raise ValueError("lr must be a finite number >= 0")
    model.to(device)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    losses = []
    for iter_num in range(steps):
        X, Y = get_batch(data, batch_size, model.context_length, generator, device)
        logits = model(X)
        loss = cross_entropy(logits, Y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


@torch.no_grad()
def evaluate_perplexity(model, data, context_length, device):
    if isinstance(context_length, bool) or not isinstance(context_length, numbers.Integral) or context_length < 1:
        raise ValueError("context_length must be >= 1")
    if len(data) < 2:
        raise ValueError("data needs at least 2 tokens")
    was_training = model.training
    model.eval()
    param_device = next(model.parameters()).device
    inputs, targets = data[:-1], data[1:]
    total, count = 0.0, 0
    for start in range(0, len(inputs), context_length):
        X = inputs[start:start + context_length].unsqueeze(0).to(param_device)
        Y = targets[start:start + context_length].unsqueeze(0).to(param_device)
        loss = cross_entropy(model(X), Y)
        total += loss.item() * Y.numel()
        count += Y.numel()
    model.train(was_training)
    try:
        return math.exp(total / count)
    except OverflowError:
        return math.inf


@torch.no_grad()
def generate(model, idx, max_new_tokens, temperature=1.0, generator=None):
    if not torch.is_tensor(idx) or idx.dim() != 2 or idx.size(0) != 1 or idx.size(1) < 1:
        raise ValueError("idx must be (1, T0) with T0 >= 1")
    if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, numbers.Integral) or max_new_tokens < 0:
        raise ValueError("max_new_tokens must be >= 0")
    if isinstance(temperature, bool) or not isinstance(temperature, numbers.Real) \
            or not (0 < temperature < math.inf):
        raise ValueError("temperature must be a finite number > 0")
    was_training = model.training
    model.eval()
    param_device = next(model.parameters()).device
    out_device = idx.device
    idx = idx.to(param_device)
    for _ in range(max_new_tokens):
        # keep at most block_size tokens of context
        idx_cond = idx if idx.size(1) <= model.context_length else idx[:, -model.context_length:]
        logits = model(idx_cond)
        logits = logits[:, -1, :] / temperature
        probs = F.softmax(logits, dim=-1)
        if generator is not None:
            probs = probs.to(generator.device)
        idx_next = torch.multinomial(probs, num_samples=1, generator=generator)
        idx = torch.cat((idx, idx_next.to(param_device)), dim=1)
    model.train(was_training)
    return idx.to(out_device)

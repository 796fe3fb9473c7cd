import math

import torch
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
    if steps < 0:
        raise ValueError("steps must be non-negative")
    if lr < 0:
        raise ValueError("lr must be non-negative")
    model.to(device)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        x, y = get_batch(data, batch_size, model.context_length, generator, device)
        logits = model(x)
        loss = cross_entropy(logits, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(float(loss.item()))
    return losses


@torch.no_grad()
def evaluate_perplexity(model, data, context_length, device):
    if data.dim() != 1 or data.shape[0] < 2:
        raise ValueError("data must be a 1-D tensor with at least two tokens")
    if context_length < 1:
        raise ValueError("context_length must be positive")
    data = data.to(device).long()
    inputs, targets = data[:-1], data[1:]
    total, count = 0.0, 0
    for s in range(0, inputs.shape[0], context_length):
        x = inputs[s:s + context_length].unsqueeze(0)
        y = targets[s:s + context_length].unsqueeze(0)
        logits = model(x)
        total += float(cross_entropy(logits, y).double().item()) * y.numel()
        count += y.numel()
    return math.exp(total / count)


@torch.no_grad()
def generate(model, idx, max_new_tokens, temperature=1.0, generator=None):
    if idx.dim() != 2 or idx.shape[1] < 1:
        raise ValueError("idx must have shape (1, T0) with T0 >= 1")
    if max_new_tokens < 0:
        raise ValueError("max_new_tokens must be non-negative")
    if not temperature > 0:
        raise ValueError("temperature must be positive")
    device = next(model.parameters()).device
    out = idx.to(device)
    for _ in range(max_new_tokens):
        window = out[:, -model.context_length:]
        logits = model(window)[:, -1, :] / temperature
        probs = torch.softmax(logits, dim=-1)
        if generator is not None and probs.device.type != generator.device.type:
            nxt = torch.multinomial(probs.to(generator.device), 1, generator=generator).to(device)
        else:
            nxt = torch.multinomial(probs, 1, generator=generator)
        out = torch.cat([out, nxt], dim=1)
    return out.to(idx.device)

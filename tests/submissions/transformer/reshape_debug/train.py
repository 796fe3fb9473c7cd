import math
import os
import tempfile

import torch
from layers import softmax_last
from model import cross_entropy


def get_batch(data, batch_size, context_length, generator, device):
    if data.dim() != 1:
        raise ValueError("data must be 1-D")
    if batch_size <= 0 or context_length <= 0:
        raise ValueError("batch_size and context_length must be > 0")
    if len(data) <= context_length:
        raise ValueError("data is shorter than context_length + 1")
    where = generator.device if generator is not None else torch.device("cpu")
    starts = torch.randint(0, len(data) - context_length, (batch_size,), generator=generator, device=where)
    index = starts.to(data.device).unsqueeze(1) + torch.arange(context_length + 1, device=data.device)
    chunk = data[index].long()
    return chunk[:, :-1].to(device), chunk[:, 1:].to(device)


def train(model, data, *, steps, batch_size, lr, device, generator):
    if steps < 0 or lr < 0:
        raise ValueError("steps and lr must be non-negative")
    model.to(device)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    losses = []
    fd, log_path = tempfile.mkstemp(prefix="train_", suffix=".log")
    try:
        with os.fdopen(fd, "w") as log:
            for step in range(steps):
                xb, yb = get_batch(data, batch_size, model.context_length, generator, device)
                loss = cross_entropy(model(xb), yb)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                losses.append(loss.item())
                log.write("%d %.6f\n" % (step, losses[-1]))
        print("[train] %d steps, last loss %s" % (steps, losses[-1] if losses else None))
    finally:
        os.remove(log_path)
    return losses


@torch.no_grad()
def evaluate_perplexity(model, data, context_length, device):
    if context_length <= 0:
        raise ValueError("context_length must be > 0")
    if data.dim() != 1 or data.numel() < 2:
        raise ValueError("data must be 1-D with at least 2 tokens")
    seq = data.to(device).long()
    total_nll = torch.zeros((), dtype=torch.float64, device=device)
    n_pred = 0
    L = seq.numel() - 1
    start = 0
    while start < L:
        stop = min(start + context_length, L)
        x = seq[start:stop][None]
        y = seq[start + 1:stop + 1][None]
        logits = model(x)
        total_nll += cross_entropy(logits, y).double() * (stop - start)
        n_pred += stop - start
        start = stop
    return math.exp(total_nll.item() / n_pred)


@torch.no_grad()
def generate(model, idx, max_new_tokens, temperature=1.0, generator=None):
    if idx.dim() != 2 or idx.size(1) < 1:
        raise ValueError("idx must be (1, T0), T0 >= 1")
    if max_new_tokens < 0:
        raise ValueError("max_new_tokens must be >= 0")
    if temperature <= 0:
        raise ValueError("temperature must be > 0")
    dev = next(model.parameters()).device
    seq = idx.to(dev)
    for _ in range(max_new_tokens):
        logits = model(seq[:, -model.context_length:])
        probs = softmax_last(logits[:, -1, :] / temperature)
        if generator is not None and generator.device.type != probs.device.type:
            nxt = torch.multinomial(probs.to(generator.device), 1, generator=generator).to(dev)
        else:
            nxt = torch.multinomial(probs, 1, generator=generator)
        seq = torch.cat([seq, nxt], dim=1)
    return seq.to(idx.device)

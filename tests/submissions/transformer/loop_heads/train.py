import math
from numbers import Integral

import torch
from model import cross_entropy


def _check_positive(value, name):
    if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")


def get_batch(data, batch_size, context_length, generator, device):
    _check_positive(batch_size, "batch_size")
    _check_positive(context_length, "context_length")
    if data.ndim != 1:
        raise ValueError("data must be one-dimensional")
    n = len(data)
    if n <= context_length:
        raise ValueError(f"need more than {context_length} tokens, got {n}")
    kwargs = {}
    if generator is not None:
        kwargs = {"generator": generator, "device": generator.device}
    starts = torch.randint(0, n - context_length, (batch_size,), **kwargs).tolist()
    x = torch.stack([data[s:s + context_length] for s in starts])
    y = torch.stack([data[s + 1:s + context_length + 1] for s in starts])
    return x.to(device=device, dtype=torch.long), y.to(device=device, dtype=torch.long)


def train(model, data, *, steps, batch_size, lr, device, generator):
    if isinstance(steps, bool) or not isinstance(steps, Integral) or steps < 0:
        raise ValueError(f"steps must be a non-negative integer, got {steps!r}")
    if not lr >= 0:
        raise ValueError(f"lr must be non-negative, got {lr!r}")
    model = model.to(device)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    history = []
    for _ in range(steps):
        xb, yb = get_batch(data, batch_size, model.context_length, generator, device)
        opt.zero_grad(set_to_none=True)
        loss = cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
        history.append(loss.item())
    return history


@torch.no_grad()
def evaluate_perplexity(model, data, context_length, device):
    _check_positive(context_length, "context_length")
    if data.ndim != 1 or len(data) < 2:
        raise ValueError("data must be 1-D with at least two tokens")
    was_training = model.training
    model.eval()
    try:
        src = data[:-1].to(device=device, dtype=torch.long)
        tgt = data[1:].to(device=device, dtype=torch.long)
        n = src.shape[0]
        n_full = n // context_length
        nll_sum = 0.0
        if n_full > 0:
            cut = n_full * context_length
            logits = model(src[:cut].view(n_full, context_length))
            nll_sum += cross_entropy(logits, tgt[:cut].view(n_full, context_length)).item() * cut
        rest = n - n_full * context_length
        if rest > 0:
            logits = model(src[-rest:].unsqueeze(0))
            nll_sum += cross_entropy(logits, tgt[-rest:].unsqueeze(0)).item() * rest
    finally:
        model.train(was_training)
    return math.exp(nll_sum / n)


@torch.no_grad()
def generate(model, idx, max_new_tokens, temperature=1.0, generator=None):
    if idx.ndim != 2 or idx.shape[1] == 0:
        raise ValueError("idx must be (1, T0) with T0 >= 1")
    if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, Integral) or max_new_tokens < 0:
        raise ValueError("max_new_tokens must be a non-negative integer")
    if not temperature > 0:
        raise ValueError("temperature must be > 0")
    param = next(model.parameters())
    tokens = idx.to(param.device)
    for _ in range(max_new_tokens):
        ctx = tokens[:, -model.context_length:]
        last = model(ctx)[:, -1, :] / temperature
        probs = torch.exp(last - torch.logsumexp(last, dim=-1, keepdim=True))
        sample_device = generator.device if generator is not None else probs.device
        choice = torch.multinomial(probs.to(sample_device), num_samples=1, generator=generator)
        tokens = torch.cat((tokens, choice.to(tokens.device)), dim=1)
    return tokens.to(idx.device)


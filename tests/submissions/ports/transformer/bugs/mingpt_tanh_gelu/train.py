"""minGPT's Trainer loop (batches drawn from a generator, AdamW, loss per
iteration kept) and GPT.generate with do_sample=True, as the course's functions."""

from __future__ import annotations

import math
import numbers

import torch
from torch.nn import functional as F

from model import cross_entropy


def _is_int(v):
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def get_batch(data, batch_size, context_length, generator, device):
    if not _is_int(batch_size) or batch_size < 1 or not _is_int(context_length) or context_length < 1:
        raise ValueError("batch_size and context_length must be integers >= 1")
    if data.numel() <= context_length:
        raise ValueError("data is too short for one window")
    starts = torch.randint(0, data.numel() - context_length, (batch_size,), generator=generator)
    offsets = torch.arange(context_length + 1)
    chunk = data.cpu()[starts[:, None] + offsets[None, :]]  # (B, T + 1), like a CharDataset item
    x = chunk[:, :-1].to(device=device, dtype=torch.long)
    y = chunk[:, 1:].to(device=device, dtype=torch.long)
    return x, y


class Trainer:
    def __init__(self, model, data, batch_size, lr, device, generator):
        self.model = model
        self.data = data
        self.batch_size = batch_size
        self.device = device
        self.generator = generator
        self.model = self.model.to(self.device)
        self.model.train()
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=lr)
        self.iter_num = 0
        self.losses = []

    def run(self, max_iters):
        model = self.model
        while self.iter_num < max_iters:
            x, y = get_batch(self.data, self.batch_size, model.context_length, self.generator, self.device)
            logits = model(x)
            self.loss = cross_entropy(logits, y)
            model.zero_grad(set_to_none=True)
            self.loss.backward()
            self.optimizer.step()
            self.losses.append(self.loss.item())
            self.iter_num += 1
        return self.losses


def train(model, data, *, steps, batch_size, lr, device, generator):
    if not _is_int(steps) or steps < 0:
        raise ValueError("steps must be an integer >= 0")
    if isinstance(lr, bool) or not isinstance(lr, numbers.Real) or not math.isfinite(lr) or lr < 0:
        raise ValueError("lr must be a finite number >= 0")
    return Trainer(model, data, batch_size, lr, device, generator).run(steps)


@torch.no_grad()
def evaluate_perplexity(model, data, context_length, device):
    if not _is_int(context_length) or context_length < 1:
        raise ValueError("context_length must be an integer >= 1")
    if data.numel() < 2:
        raise ValueError("need at least two tokens")
    was_training = model.training
    model.eval()
    dev = next(model.parameters()).device
    x_all, y_all = data[:-1], data[1:]
    nll_sum = 0.0
    for x, y in zip(torch.split(x_all, context_length), torch.split(y_all, context_length)):
        logits = model(x[None].to(dev, torch.long))
        nll_sum += cross_entropy(logits, y[None].to(dev, torch.long)).item() * y.numel()
    model.train(was_training)
    try:
        return math.exp(nll_sum / y_all.numel())
    except OverflowError:
        return math.inf


@torch.no_grad()
def generate(model, idx, max_new_tokens, temperature=1.0, generator=None, do_sample=True):
    if not torch.is_tensor(idx) or idx.ndim != 2 or idx.shape[0] != 1 or idx.shape[1] < 1:
        raise ValueError("idx must be a (1, T0) tensor of token ids")
    if not _is_int(max_new_tokens) or max_new_tokens < 0:
        raise ValueError("max_new_tokens must be an integer >= 0")
    if isinstance(temperature, bool) or not isinstance(temperature, numbers.Real) \
            or not math.isfinite(temperature) or temperature <= 0:
        raise ValueError("temperature must be a finite number > 0")
    was_training = model.training
    model.eval()
    dev = next(model.parameters()).device
    home = idx.device
    idx = idx.to(dev)
    block_size = model.get_block_size()
    for _ in range(max_new_tokens):
        # keep at most block_size tokens of context
        idx_cond = idx if idx.size(1) <= block_size else idx[:, -block_size:]
        logits = model(idx_cond)
        logits = logits[:, -1, :] / temperature
        probs = F.softmax(logits, dim=-1)
        if do_sample:
            where = generator.device if generator is not None else probs.device
            idx_next = torch.multinomial(probs.to(where), num_samples=1, generator=generator)
        else:
            _, idx_next = torch.topk(probs, k=1, dim=-1)
        idx = torch.cat((idx, idx_next.to(dev)), dim=1)
    model.train(was_training)
    return idx.to(home)

"""The book's training helpers (calc_loss_batch, train_model_simple, a loss
over a data loader) and its generate() with temperature, reduced to the
course's functions."""

from __future__ import annotations

import math
import numbers

import torch

from model import cross_entropy


def _int(v, low, name):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < low:
        raise ValueError(f"{name} must be an integer >= {low}")


def get_batch(data, batch_size, context_length, generator, device):
    _int(batch_size, 1, "batch_size")
    _int(context_length, 1, "context_length")
    if len(data) <= context_length:
        raise ValueError("data must hold more than context_length tokens")
    starts = torch.randint(0, len(data) - context_length, (batch_size,), generator=generator)
    input_batch = torch.stack([data[s:s + context_length] for s in starts])
    target_batch = torch.stack([data[s + 1:s + context_length + 1] for s in starts])
    return input_batch.to(device).long(), target_batch.to(device).long()


def calc_loss_batch(input_batch, target_batch, model, device):
    input_batch, target_batch = input_batch.to(device), target_batch.to(device)
    logits = model(input_batch)
    return cross_entropy(logits, target_batch)


def train(model, data, *, steps, batch_size, lr, device, generator):
    _int(steps, 0, "steps")
    if isinstance(lr, bool) or not isinstance(lr, numbers.Real) or not math.isfinite(lr) or lr < 0:
        raise ValueError("lr must be a finite number >= 0")
    model.to(device)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    train_losses = []
    for global_step in range(steps):
        input_batch, target_batch = get_batch(data, batch_size, model.context_length, generator, device)
        loss = calc_loss_batch(input_batch, target_batch, model, device)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        train_losses.append(loss.item())
    return train_losses


@torch.no_grad()
def evaluate_perplexity(model, data, context_length, device):
    _int(context_length, 1, "context_length")
    if len(data) < 2:
        raise ValueError("data must hold at least 2 tokens")
    training = model.training
    model.eval()
    device = next(model.parameters()).device
    total_loss = 0.0
    num_tokens = 0
    for i in range(0, len(data) - 1, context_length):
        input_chunk = data[i:min(i + context_length, len(data) - 1)]
        target_chunk = data[i + 1:i + 1 + len(input_chunk)]
        loss = calc_loss_batch(input_chunk[None].long(), target_chunk[None].long(), model, device)
        total_loss += loss.item() * target_chunk.numel()  # weigh each window by its tokens
        num_tokens += target_chunk.numel()
    model.train(training)
    avg = total_loss / num_tokens
    return math.inf if avg > 700 else math.exp(avg)


@torch.no_grad()
def generate(model, idx, max_new_tokens, temperature=1.0, generator=None):
    if not torch.is_tensor(idx) or idx.dim() != 2 or idx.shape[0] != 1 or idx.shape[1] < 1:
        raise ValueError("idx must be (1, T0), T0 >= 1")
    _int(max_new_tokens, 0, "max_new_tokens")
    if isinstance(temperature, bool) or not isinstance(temperature, numbers.Real) \
            or not math.isfinite(temperature) or temperature <= 0:
        raise ValueError("temperature must be a finite number > 0")
    context_size = model.context_length
    training = model.training
    model.eval()
    device = next(model.parameters()).device
    out = idx.to(device)
    for _ in range(max_new_tokens):
        idx_cond = out[:, -context_size:]
        logits = model(idx_cond)
        logits = logits[:, -1, :]
        logits = logits / temperature
        probs = torch.softmax(logits, dim=-1)  # (batch_size, context_len)
        if generator is not None:
            probs = probs.to(generator.device)
        idx_next = torch.multinomial(probs, num_samples=1, generator=generator)  # (batch_size, 1)
        out = torch.cat((out, idx_next.to(device)), dim=1)  # (batch_size, num_tokens+1)
    model.train(training)
    return out.to(idx.device)

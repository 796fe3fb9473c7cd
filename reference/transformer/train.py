"""Reference solution of the `transformer` assignment, file `train.py`: batches, training, perplexity, sampling.

Follows spec/student-api.md exactly; the graders compare submissions with it.
All randomness comes from the torch.Generator passed in, so a run is
reproducible from its seed. A model is used where its parameters are:
evaluation and sampling send the data to the model's device and never move
the model.

Shapes: N tokens of data, B batch, T = context_length, V vocabulary size.
"""

from __future__ import annotations

import contextlib
import math
import numbers

import torch

from model import cross_entropy


def _check_size(value, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _check_data(data, name: str = "data") -> None:
    if not isinstance(data, torch.Tensor) or data.dim() != 1 or data.dtype not in (torch.int64, torch.int32):
        kind = f"{data.dtype} tensor of shape {tuple(data.shape)}" if isinstance(data, torch.Tensor) \
            else type(data).__name__
        raise ValueError(f"{name} must be a 1-D tensor of token ids (torch.long), got {kind}")


def _check_generator(generator) -> None:
    if generator is not None and not isinstance(generator, torch.Generator):
        raise ValueError(f"generator must be a torch.Generator, got {type(generator).__name__}")


def _device_of(model: torch.nn.Module) -> torch.device:
    return next(model.parameters()).device


@contextlib.contextmanager
def _evaluating(model: torch.nn.Module):
    """Eval mode for the duration, then the model's own mode back."""
    was_training = model.training
    model.eval()
    try:
        yield
    finally:
        model.train(was_training)


def get_batch(data: torch.Tensor, batch_size: int, context_length: int,
              generator: torch.Generator, device) -> tuple[torch.Tensor, torch.Tensor]:
    """batch_size random windows of data (x) and the same windows one token later (y)."""
    _check_data(data)
    batch_size = _check_size(batch_size, "batch_size")
    context_length = _check_size(context_length, "context_length")
    _check_generator(generator)
    N = data.shape[0]
    if N <= context_length:
        raise ValueError(f"data needs more than context_length = {context_length} tokens, got {N}")

    # The last start is N - context_length - 1, so y = data[s + 1 : s + T + 1]
    # ends exactly at the last token. The draw happens on the generator's own
    # device (a CPU generator cannot fill a CUDA tensor).
    on = generator.device if generator is not None else torch.device("cpu")
    starts = torch.randint(0, N - context_length, (batch_size,), generator=generator, device=on)  # (B,)
    rows = starts.to(data.device)[:, None] + torch.arange(context_length, device=data.device)  # (B, T)
    x = data[rows].to(device=device, dtype=torch.long)
    y = data[rows + 1].to(device=device, dtype=torch.long)
    return x, y


def train(model: torch.nn.Module, data: torch.Tensor, *, steps: int, batch_size: int, lr: float,
          device, generator: torch.Generator) -> list[float]:
    """AdamW on random batches for `steps` steps; the loss of every step."""
    _check_data(data)
    steps = _check_size(steps, "steps", minimum=0)
    if isinstance(lr, bool) or not isinstance(lr, numbers.Real) or not 0 <= lr < math.inf:
        raise ValueError(f"lr must be a finite number >= 0, got {lr!r}")

    # The optimizer is built after the move, so its state lives on device too.
    model.to(device)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        x, y = get_batch(data, batch_size, model.context_length, generator, device)
        logits = model(x)  # (B, T, V)
        loss = cross_entropy(logits, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


@torch.no_grad()
def evaluate_perplexity(model: torch.nn.Module, data: torch.Tensor, context_length: int, device) -> float:
    """exp of the mean NLL of every next token of data, read in consecutive windows.

    `device` is where the caller keeps the model; the windows are sent to the
    device the model's parameters are actually on, and the model is not moved.
    """
    _check_data(data)
    context_length = _check_size(context_length, "context_length")
    if data.shape[0] < 2:
        raise ValueError(f"data needs at least 2 tokens to predict one, got {data.shape[0]}")

    data = data.to(device=_device_of(model), dtype=torch.long)
    inputs, targets = data[:-1], data[1:]
    total_nll, n_predicted = 0.0, 0
    with _evaluating(model):
        # Windows do not overlap, so every token is predicted exactly once;
        # the first token of each window sees no earlier context.
        for start in range(0, inputs.shape[0], context_length):
            x = inputs[start:start + context_length][None]  # (1, T), T <= context_length
            y = targets[start:start + context_length][None]  # (1, T)
            total_nll += cross_entropy(model(x), y).item() * y.numel()
            n_predicted += y.numel()
    try:
        return math.exp(total_nll / n_predicted)
    except OverflowError:
        return math.inf


@torch.no_grad()
def generate(model: torch.nn.Module, idx: torch.Tensor, max_new_tokens: int, temperature: float = 1.0,
             generator: torch.Generator | None = None) -> torch.Tensor:
    """Extend the prompt idx (1, T0) by max_new_tokens sampled tokens: (1, T0 + max_new_tokens)."""
    if not isinstance(idx, torch.Tensor) or idx.dtype not in (torch.int64, torch.int32) \
            or idx.dim() != 2 or idx.shape[0] != 1 or idx.shape[1] < 1:
        kind = f"{idx.dtype} tensor of shape {tuple(idx.shape)}" if isinstance(idx, torch.Tensor) \
            else type(idx).__name__
        raise ValueError(f"idx must be a (1, T0) tensor of token ids with T0 >= 1, got {kind}")
    max_new_tokens = _check_size(max_new_tokens, "max_new_tokens", minimum=0)
    if isinstance(temperature, bool) or not isinstance(temperature, numbers.Real) \
            or not 0 < temperature < math.inf:
        raise ValueError(f"temperature must be a finite number > 0, got {temperature!r}")
    _check_generator(generator)

    out_device = idx.device
    idx = idx.to(device=_device_of(model), dtype=torch.long)
    with _evaluating(model):
        for _ in range(max_new_tokens):
            # Positions past context_length have no embedding: the model only
            # ever sees the most recent context_length tokens.
            idx_cond = idx[:, -model.context_length:]  # (1, <= context_length)
            logits = model(idx_cond)[:, -1, :] / temperature  # (1, V)
            probs = torch.softmax(logits, dim=-1)
            # Sample where the generator lives, so a CPU generator can drive a
            # model on CUDA.
            if generator is not None:
                probs = probs.to(generator.device)
            next_token = torch.multinomial(probs, 1, generator=generator)  # (1, 1)
            idx = torch.cat([idx, next_token.to(idx.device)], dim=1)
    return idx.to(out_device)

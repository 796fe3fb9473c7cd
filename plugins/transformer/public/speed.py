"""The timing checks of the transformer: what one timed call is, and its fingerprint.

Two calls are timed (see `lmgrade.grading.timing_laps` for how): causal self-attention
forward and backward, and one training step of a small TransformerLM
(forward, the submission's cross_entropy, backward, an AdamW step). Each
lap draws new inputs from its nonce and returns a fingerprint that needs
every output: projections of the output and of each gradient onto the
lap's own random tensors or the weights, so neither a cached answer nor work left running
past the call gives the reference's numbers.

The timed scenarios and the setups take the case's arguments by name; a timed
scenario passes them on to `run_laps` as the case's dict, which calls the setup
with them.
"""

from __future__ import annotations

from lmgrade import Timing, lazy_import, run_laps

from .scenarios import _attention, _lm

# Imported where first used: at once in the sandbox, only for the reference's values in the grading process.
torch = lazy_import("torch")


def _draw(nonce: int, shape: tuple, device: str) -> torch.Tensor:
    generator = torch.Generator().manual_seed(nonce)
    return torch.randn(shape, generator=generator).to(device)


def _dot(a: torch.Tensor | None, b: torch.Tensor) -> float:
    """A scalar that depends on every entry of `a` (a missing gradient is NaN)."""
    if not isinstance(a, torch.Tensor):
        return float("nan")
    return float((a.detach().double() * b.detach().double()).sum())


# --- attention: forward and backward ---


def attention_setup(modules, B, T, d_model, n_heads, state, dtype, device):
    """The attention with the case's weights on `device`, the shape of a lap's x, and the device."""
    attn = _attention(modules, d_model, n_heads, state, dtype).to(device)
    return attn, (B, T, d_model), device


def attention_reset(state) -> None:
    attn = state[0]
    for p in attn.parameters():
        p.grad = None


def attention_step(state, nonce: int) -> list[float]:
    attn, shape, device = state
    x = _draw(nonce, shape, device).requires_grad_(True)
    g = _draw(nonce + 1, x.shape, device)
    y = attn(x)
    y.backward(g)
    weights = [p for _, p in sorted(attn.named_parameters())]
    return [_dot(y, g), _dot(x.grad, g), sum(_dot(p.grad, p.detach()) for p in weights)]


ATTENTION = Timing(setup=attention_setup, step=attention_step, reset=attention_reset)


def attention_timed(modules, B, T, d_model, n_heads, state, dtype, device):
    """Every lap of `ATTENTION` (`attention_setup` takes the arguments)."""
    args = {"B": B, "T": T, "d_model": d_model, "n_heads": n_heads, "state": state, "dtype": dtype, "device": device}
    return run_laps(modules, args, ATTENTION)


# --- one training step of a small TransformerLM ---


def train_step_setup(modules, config, state, dtype, B, lr, device):
    """The model with the case's weights on `device`, its weights to start every lap from, and what a lap
    needs: the batch's size, the learning rate, the submission's cross_entropy."""
    lm = _lm(modules, config, state, dtype).to(device)
    initial = {k: v.detach().clone() for k, v in lm.state_dict().items()}
    return {
        "lm": lm,
        "initial": initial,
        "batch": (B, config["context_length"], config["vocab_size"]),
        "lr": lr,
        "device": device,
        "cross_entropy": modules["model"].cross_entropy,
    }


def train_step_reset(state) -> None:
    # Every lap starts from the same weights and a fresh optimizer.
    lm = state["lm"]
    with torch.no_grad():
        lm.load_state_dict(state["initial"])
    for p in lm.parameters():
        p.grad = None
    state["optimizer"] = torch.optim.AdamW(lm.parameters(), lr=state["lr"])


def train_step(state, nonce: int) -> list[float]:
    lm, (B, T, V) = state["lm"], state["batch"]
    generator = torch.Generator().manual_seed(nonce)
    tokens = torch.randint(0, V, (B, T + 1), generator=generator).to(state["device"])
    loss = state["cross_entropy"](lm(tokens[:, :-1]), tokens[:, 1:])
    loss.backward()
    # The weights are random and the same on both sides: projections onto them need every gradient.
    gradients = sum(_dot(p.grad, p.detach()) for _, p in sorted(lm.named_parameters()))
    state["optimizer"].step()
    return [float(loss.detach()), gradients]


# A step costs tens of milliseconds on a CPU: fewer laps keep the check within seconds.
TRAIN_STEP = Timing(setup=train_step_setup, step=train_step, reset=train_step_reset, warmup=2, laps=8)


def train_step_timed(modules, config, state, dtype, B, lr, device):
    """Every lap of `TRAIN_STEP` (`train_step_setup` takes the arguments)."""
    args = {"config": config, "state": state, "dtype": dtype, "B": B, "lr": lr, "device": device}
    return run_laps(modules, args, TRAIN_STEP)

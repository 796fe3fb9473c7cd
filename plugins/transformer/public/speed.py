"""The timing checks of the transformer: what one timed call is, and its fingerprint.

Two calls are timed (see `lmgrade.speed` for how): causal self-attention
forward and backward, and one training step of a small TransformerLM
(forward, the submission's cross_entropy, backward, an AdamW step). Each
lap draws new inputs from its nonce and returns a fingerprint that needs
every output: projections of the output and of each gradient onto the
lap's own random tensors or the weights, so neither a cached answer nor work left running
past the call gives the reference's numbers.

The timed scenarios take the case's arguments by name and pass them on whole to
`run_laps`; the setups keep the older form, ``setup(modules, args)``: the
grading process also calls a setup with the case's dict as it is, to recompute
the reference's fingerprints of sampled laps.
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


def attention_setup(modules, args):
    attn = _attention(modules, args["d_model"], args["n_heads"], args["state"], args["dtype"])
    return attn.to(args["device"]), args


def attention_reset(state) -> None:
    attn, _ = state
    for p in attn.parameters():
        p.grad = None


def attention_step(state, nonce: int) -> list[float]:
    attn, args = state
    x = _draw(nonce, (args["B"], args["T"], args["d_model"]), args["device"]).requires_grad_(True)
    g = _draw(nonce + 1, x.shape, args["device"])
    y = attn(x)
    y.backward(g)
    weights = [p for _, p in sorted(attn.named_parameters())]
    return [_dot(y, g), _dot(x.grad, g), sum(_dot(p.grad, p.detach()) for p in weights)]


ATTENTION = Timing(setup=attention_setup, step=attention_step, reset=attention_reset)


def attention_timed(modules, B, T, d_model, n_heads, state, dtype, device):
    args = {"B": B, "T": T, "d_model": d_model, "n_heads": n_heads, "state": state, "dtype": dtype, "device": device}
    return run_laps(modules, args, ATTENTION)


# --- one training step of a small TransformerLM ---


def train_step_setup(modules, args):
    lm = _lm(modules, args["config"], args["state"], args["dtype"]).to(args["device"])
    initial = {k: v.detach().clone() for k, v in lm.state_dict().items()}
    return {"lm": lm, "initial": initial, "args": args, "cross_entropy": modules["model"].cross_entropy}


def train_step_reset(state) -> None:
    # Every lap starts from the same weights and a fresh optimizer.
    lm = state["lm"]
    with torch.no_grad():
        lm.load_state_dict(state["initial"])
    for p in lm.parameters():
        p.grad = None
    state["optimizer"] = torch.optim.AdamW(lm.parameters(), lr=state["args"]["lr"])


def train_step(state, nonce: int) -> list[float]:
    lm, args = state["lm"], state["args"]
    B, T, V = args["B"], args["config"]["context_length"], args["config"]["vocab_size"]
    generator = torch.Generator().manual_seed(nonce)
    tokens = torch.randint(0, V, (B, T + 1), generator=generator).to(args["device"])
    loss = state["cross_entropy"](lm(tokens[:, :-1]), tokens[:, 1:])
    loss.backward()
    # The weights are random and the same on both sides: projections onto them need every gradient.
    gradients = sum(_dot(p.grad, p.detach()) for _, p in sorted(lm.named_parameters()))
    state["optimizer"].step()
    return [float(loss.detach()), gradients]


# A step costs tens of milliseconds on a CPU: fewer laps keep the check within seconds.
TRAIN_STEP = Timing(setup=train_step_setup, step=train_step, reset=train_step_reset, warmup=2, laps=8)


def train_step_timed(modules, config, state, dtype, B, lr, device):
    args = {"config": config, "state": state, "dtype": dtype, "B": B, "lr": lr, "device": device}
    return run_laps(modules, args, TRAIN_STEP)

"""The training check: the submission's train() on a corpus whose entropy rate is known.

The corpus is a seeded sparse Markov chain (`corpus.py`). The submission
trains a TransformerLM from the same weights, on the same data, with the
same generator as the reference in the same grading run; the check wants
the loss to fall, to end near the reference's, the model on the requested
device, and evaluate_perplexity to agree with the trained model's held-out
loss. A held-out loss clearly below the entropy rate is impossible for a
model that only sees the past: it is reported as a likely future-token leak.
"""

from __future__ import annotations

import math

import numpy as np

from lmgrade import Case, CaseVerdict, Tolerance, lazy_import

from .scenarios import _generator, _lm

# Imported where first used: at once in the sandbox, only for the reference's values in the grading process.
torch = lazy_import("torch")

# How the margins were chosen (benchmarks/training_margin.py, 10 corpus seeds, 200 steps):
# three correct submissions written in other styles, trained as here, ended
# (mean loss of the last 20 steps) at most 0.024 nats from the reference's
# run on the same weights, data and generator, and their held-out losses at
# most 0.024 apart: float32 rounding differences, grown over the steps (at
# 300 steps, 0.028 and 0.023: more steps buy no tighter agreement).
# Never zeroing the gradients ends 5.7 nats or more above the reference; a
# mask that shows the next token ends 1.3 nats or more below it (and below
# the entropy rate). 0.1 nats is four times the spread of correct code and a
# thirteenth of the smallest of those mistakes.
FINAL_LOSS_MARGIN = 0.1
HELD_OUT_MARGIN = 0.1
# The loss must fall at least this much from the first 20 steps to the last 20: the reference's fell 0.68
# to 1.00 nats on those seeds (mean 0.84, sd 0.1), so a correct run stays clear of it by five sd. Learning
# too little is told apart by FINAL_LOSS_MARGIN; this says "did not fall" where nothing was learnt.
MIN_DECREASE = 0.25
# evaluate_perplexity against the held-out loss the grader computes from the same model (float32).
PERPLEXITY_AGREEMENT = Tolerance(rtol=1e-4, atol=1e-5)
# Below the entropy rate by more than this: the model saw the future.
LEAK_MARGIN = 0.1

CORPUS = {"vocab_size": 12, "order": 2, "successors": 3}
MODEL = {"context_length": 16, "d_model": 32, "n_layers": 2, "n_heads": 4, "d_ff": 64}
STEPS, BATCH, LR = 200, 16, 1e-2


def held_out_loss(lm, data: torch.Tensor, context_length: int) -> float:
    """Mean NLL of data[1:] given the past, in consecutive windows (the contract's evaluate_perplexity)."""
    device = next(lm.parameters()).device
    total, count = 0.0, 0
    with torch.no_grad():
        for start in range(0, len(data) - 1, context_length):
            x = data[start : start + context_length].to(device)
            y = data[start + 1 : start + 1 + context_length].to(device)
            x = x[: len(y)]
            logp = torch.log_softmax(lm(x[None]).double(), dim=-1)[0]
            total -= float(logp.gather(1, y[:, None]).sum())
            count += len(y)
    return total / count


def training(modules, config, state, dtype, data, held_out, entropy_rate, steps, batch_size, lr, seed, device):
    """The losses of train(), where the model is after it, and its held-out loss and perplexity.
    `entropy_rate` is the judge's (`judge_training`)."""
    lm = _lm(modules, config, state, dtype)
    held = torch.tensor(held_out, dtype=torch.long)
    losses = modules["train"].train(
        lm,
        torch.tensor(data, dtype=torch.long),
        steps=steps,
        batch_size=batch_size,
        lr=lr,
        device=device,
        generator=_generator(seed),
    )
    if not isinstance(losses, (list, tuple)):
        return {"losses": f"not a list: {type(losses).__name__}"}
    where = next(lm.parameters()).device.type
    lm.eval()
    ppl = modules["train"].evaluate_perplexity(lm, held, config["context_length"], device)
    return {
        "losses": [float(v) for v in losses],
        "device after training": where,
        "held-out loss": held_out_loss(lm, held, config["context_length"]),
        "perplexity": float(ppl) if isinstance(ppl, (int, float, torch.Tensor, np.floating)) else repr(ppl),
    }


def _tail(losses: list[float], n: int = 20) -> float:
    return float(np.mean(losses[-n:]))


def judge_training(check, case: Case, expected: dict, got: dict, *, reveal: bool) -> CaseVerdict:
    args, problems = case.args, []
    losses = got.get("losses")
    if not isinstance(losses, list) or len(losses) != args["steps"] or not all(map(math.isfinite, losses)):
        n = len(losses) if isinstance(losses, list) else losses
        return CaseVerdict(
            False,
            f"train must return the loss of each of the {args['steps']} steps as finite "
            f"floats; got {n if isinstance(n, str) else f'{n} values'}",
        )
    first, last, ref_last = _tail(losses[:20]), _tail(losses), _tail(expected["losses"])
    H, held, ref_held = args["entropy_rate"], got["held-out loss"], expected["held-out loss"]
    if first - last < MIN_DECREASE:
        problems.append(
            f"the loss did not fall: {first:.3f} over the first 20 steps, {last:.3f} over the last 20 "
            f"(the reference: {_tail(expected['losses'][:20]):.3f} to {ref_last:.3f})"
        )
    elif abs(last - ref_last) > FINAL_LOSS_MARGIN:
        problems.append(
            f"the loss over the last 20 steps is {last:.3f}; the reference's run on the same weights, "
            f"data and generator ends at {ref_last:.3f} (allowed: within {FINAL_LOSS_MARGIN})"
        )
    if abs(held - ref_held) > HELD_OUT_MARGIN:
        problems.append(
            f"the trained model's held-out loss is {held:.3f} nats per token; the reference's is "
            f"{ref_held:.3f} (allowed: within {HELD_OUT_MARGIN})"
        )
    if held < H - LEAK_MARGIN:
        problems.append(
            f"a held-out loss of {held:.3f} is below the corpus's entropy rate, {H:.3f}: no model "
            "that sees only earlier tokens can do that. Likely a future-token leak: check that "
            "position t attends to positions <= t only (the causal mask, before the softmax)"
        )
    if got["device after training"] != args["device"]:
        problems.append(
            f"after train(..., device='{args['device']}') the model is on "
            f"'{got['device after training']}': train must leave it on the device it was given"
        )
    ppl = got["perplexity"]
    if not isinstance(ppl, float) or not math.isfinite(ppl) or ppl <= 0:
        problems.append(f"evaluate_perplexity returned {ppl!r}, not a positive float")
    elif abs(math.log(ppl) - held) > PERPLEXITY_AGREEMENT.atol + PERPLEXITY_AGREEMENT.rtol * abs(held):
        problems.append(
            f"evaluate_perplexity gives {ppl:.4f}, but the same trained model's held-out loss is "
            f"{held:.4f} nats, a perplexity of {math.exp(held):.4f}"
        )
    if problems:
        return CaseVerdict(False, "\n".join(problems))
    return CaseVerdict(
        True,
        f"loss {first:.3f} -> {last:.3f} (reference {ref_last:.3f}); held-out "
        f"{held:.3f} nats per token; entropy rate {H:.3f}",
    )

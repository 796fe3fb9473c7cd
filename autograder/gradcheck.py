"""A numpy submission's backward checked against its own forward, inside the sandbox.

The scenarios of the numpy assignments differentiate the submission's own
forward by central differences beside its analytic gradients, so that the
judge can tell a student whether the forward or the backward is off; and
they record the warnings a call raises (an overflow in exp). Imported by the
fork server before any student code: numpy only.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

EPS = 1e-6
AGREE = "agree"


def finite_differences(
    loss: Callable[[], float], arrays: dict[str, np.ndarray], assign: Callable[[str, np.ndarray], None]
) -> dict[str, np.ndarray]:
    """d loss / d each array, by central differences; `assign(name, array)` puts an array in place."""
    grads = {}
    for name, value in arrays.items():
        value = np.array(value, dtype=np.float64)
        grad = np.zeros_like(value)
        for index in np.ndindex(value.shape):
            saved = value[index]
            value[index] = saved + EPS
            assign(name, value.copy())
            up = loss()
            value[index] = saved - EPS
            assign(name, value.copy())
            down = loss()
            value[index] = saved
            grad[index] = (up - down) / (2 * EPS)
        assign(name, value.copy())
        grads[name] = grad
    return grads


def agreement(analytic: dict[str, Any], numeric: dict[str, np.ndarray], rtol: float = 1e-5) -> str:
    """AGREE, or where the code's backward and the finite differences of its own forward part."""
    for name, n in numeric.items():
        a = np.asarray(analytic.get(name), dtype=np.float64)
        if a.shape != n.shape:
            return f"disagree at {name} (shape {a.shape}, not {n.shape})"
        error = np.abs(a - n) / np.maximum(1e-8, np.abs(a) + np.abs(n))
        # Far looser than float64 rounding, far tighter than a wrong term: central differences of a
        # smooth function at EPS agree to about 1e-9.
        if not np.all(error <= rtol) and np.max(np.abs(a - n)) > 1e-7:
            return f"disagree at {name}"
    return AGREE


def warnings_of(call: Callable[[], Any]) -> tuple[Any, list[str]]:
    """What `call` returns and the warnings it raised (overflow, invalid, divide; underflow is fine)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with np.errstate(over="warn", invalid="warn", divide="warn", under="ignore"):
            value = call()
    return value, sorted({f"{w.category.__name__}: {w.message}" for w in caught})


def which_half(forward: str | None, backward: str | None, what: str, agrees: bool, said: str | None) -> str:
    """The feedback of a forward and backward graded together, where at least one differs.

    `forward`, `backward`: the comparison's difference of each half (None where it matched); `what`:
    "forward" or "loss"; `agrees`: whether the backward agrees with finite differences of the code's own
    `what`; `said`: that agreement as the scenario put it, None where it was not measured.
    """
    if said is None:
        return f"the {what} is wrong: {forward}" if forward else f"the backward is wrong: {backward}"
    if forward is not None and agrees:
        return (
            f"the {what} is wrong: {forward}\nYour backward does agree with finite differences of your own "
            f"{what}: fix the {what} first."
        )
    if forward is None:
        hint = (
            f"\nIt does not agree with finite differences of your own {what} either ({said})."
            if not agrees
            else f"\nIt agrees with finite differences of your own {what}, which is right: look at what "
            "backward assumes that forward does not do (a cache, a default)."
        )
        return f"the backward is wrong: {backward}{hint}"
    return (
        f"the {what} is wrong: {forward}\nThe backward is wrong too, and does not agree with finite "
        f"differences of your own {what} ({said})."
    )

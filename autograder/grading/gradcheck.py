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

from ..core.comparison import FLOAT32

EPS = 1e-6  # the step of the central differences, relative to the entry moved (absolute below 1)
AGREE = "agree"
"""What `agreement` returns where the backward agrees with finite differences of the code's own forward."""
NOT_MEASURED = "not measured"
"""How an agreement that was not measured begins (the loss was not finite where it was differentiated)."""
# The largest share of the loss's own rounding a difference quotient may carry: (up - down) holds the
# rounding of two losses (2 * eps * |loss|), divided by 2h; a margin of 50 keeps a right backward from
# ever being called wrong on the largest losses, and a wrong term is far beyond it.
ROUNDING_MARGIN = 50.0


class Differences(dict):
    """Central differences by array name, with what they can be trusted to: `noise`, the absolute error
    the loss's rounding may put in any of them, and `finite`, whether every loss they took was finite.
    `refined` differences one entry again at twice the step (`finite_differences`)."""

    noise: float = 0.0
    finite: bool = True

    def __init__(self, refine: Callable[[str, tuple], tuple[float, float]] | None = None):
        super().__init__()
        self._refine = refine

    def refined(self, name: str, index: tuple) -> tuple[float, float]:
        """The entry's quotient extrapolated from steps h and 2h (Richardson: (4 D(h) - D(2h)) / 3), and how
        far the two lie apart: a curvature the step does not resolve (a saturated unit) shows there."""
        if self._refine is None:
            return float(self[name][index]), 0.0
        return self._refine(name, index)


def finite_differences(
    loss: Callable[[], float], arrays: dict[str, np.ndarray], assign: Callable[[str, np.ndarray], None]
) -> Differences:
    """d loss / d each array, by central differences; `assign(name, array)` puts an array in place.

    The step of each entry is EPS times its size (EPS below 1): a fixed step would be lost in the
    rounding of a large entry. An entry `agreement` doubts is differenced again at twice the step."""
    eps64 = np.finfo(np.float64).eps
    values = {name: np.array(value, dtype=np.float64) for name, value in arrays.items()}

    def quotient(name: str, index: tuple, k: int) -> tuple[float, float, float]:
        value = values[name]
        saved = value[index]
        h = EPS * max(1.0, abs(float(saved)))
        losses = []
        for x in (saved + k * h, saved - k * h):
            value[index] = x
            assign(name, value.copy())
            losses.append(float(loss()))
        value[index] = saved
        assign(name, value.copy())
        return (losses[0] - losses[1]) / (2 * k * h), max(map(abs, losses)), h

    def refine(name: str, index: tuple) -> tuple[float, float]:
        near, far = float(grads[name][index]), quotient(name, index, 2)[0]
        return (4 * near - far) / 3, abs(near - far)

    grads = Differences(refine)
    for name, value in values.items():
        grad = np.zeros_like(value)
        for index in np.ndindex(value.shape):
            grad[index], largest, h = quotient(name, index, 1)
            if not np.isfinite(largest):
                grads.finite = False
            else:
                grads.noise = max(grads.noise, ROUNDING_MARGIN * eps64 * largest / h)
        grads[name] = grad
    return grads


# At most this many doubted entries of an array are differenced again: past them, they disagree.
MAX_REFINED = 20


def agreement(analytic: dict[str, Any], numeric: dict[str, np.ndarray], rtol: float = 1e-5) -> str:
    """AGREE, or where the code's backward and the finite differences of its own forward part, or
    NOT_MEASURED where those differences could not be taken (a loss that is not finite)."""
    if not getattr(numeric, "finite", True):
        return f"{NOT_MEASURED}: the loss is not finite where it was differentiated"
    noise = max(1e-7, getattr(numeric, "noise", 0.0))
    for name, n in numeric.items():
        a = np.asarray(analytic.get(name), dtype=np.float64)
        if a.shape != n.shape:
            return f"disagree at {name} (shape {a.shape}, not {n.shape})"
        if not np.all(np.isfinite(a)):
            return f"disagree at {name} (not finite)"
        # Far looser than float64 rounding, far tighter than a wrong term: central differences of a
        # smooth function agree to about 1e-9 relative, and to `noise` absolute (the loss's rounding).
        doubted = np.argwhere(_apart(a, n, rtol, noise))
        if len(doubted) > MAX_REFINED:
            return f"disagree at {name}"
        for index in map(tuple, doubted):
            # Where the quotient still moves with the step (a sharp curvature), to ten times that move.
            better, spread = numeric.refined(name, index) if isinstance(numeric, Differences) else (n[index], 0.0)
            if _apart(a[index], np.float64(better), rtol, max(noise, 10 * spread)):
                return f"disagree at {name}"
    return AGREE


def _apart(a, n, rtol: float, allowed: float):
    error = np.abs(a - n) / np.maximum(1e-8, np.abs(a) + np.abs(n))
    return (error > rtol) & (np.abs(a - n) > allowed)


def warnings_of(call: Callable[[], Any]) -> tuple[Any, list[str]]:
    """What `call` returns and the warnings it raised (overflow, invalid, divide; underflow is fine)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with np.errstate(over="warn", invalid="warn", divide="warn", under="ignore"):
            value = call()
    return value, sorted({f"{w.category.__name__}: {w.message}" for w in caught})


def which_half(
    forward: str | None, backward: str | None, what: str, agrees: bool, said: str | None, reveal: bool = True
) -> str:
    """The feedback of a forward and backward graded together, where at least one differs.

    `forward`, `backward`: the comparison's difference of each half (None where it matched); `what`:
    "forward" or "loss"; `agrees`: whether the backward agrees with finite differences of the code's own
    `what`; `said`: that agreement as the scenario put it, None where it was not measured. A hidden
    case (`reveal` False) says only that they disagree: how is the child's text.
    """
    if any(FLOAT32 in (half or "") for half in (forward, backward)):
        # Differences of float32 values measure their rounding: nothing is said of the backward's agreement.
        said = None
    if said is not None and said.startswith(NOT_MEASURED):
        agrees, said = False, None
        unmeasured = (
            f"\nYour own {what} is not finite where the backward was checked against it (inf or nan), so "
            "nothing is said of the backward beside it."
        )
    else:
        unmeasured = ""
    if said is not None and not reveal and not agrees:
        said = "they disagree"
    if said is None:
        first = f"the {what} is wrong: {forward}" if forward else f"the backward is wrong: {backward}"
        return first + unmeasured
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

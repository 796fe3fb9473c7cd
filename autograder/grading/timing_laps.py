"""Timing checks: the submission's time per call against the reference's, same run, same machine.

A timing check's scenario runs `run_laps` in the sandboxed child: before each
lap, outside the clock, the state is reset and (on CUDA) the L2 cache is
flushed; then `stopwatch.start()` returns a fresh nonce, `step(state,
nonce)` draws new inputs from it (new values, new storage), calls the
submission and returns a fingerprint computed from every output, and
`stopwatch.stop(fingerprint)` ends the lap. The fork server reads its own
clock at both ends (`sandbox.stopwatch`), so nothing the submission patches
in its process moves the times, and reading the fingerprint forces every
output to exist before the lap ends.

This module is the child's side; the grading process's (both sides' laps
run, then judged) is `timing_verdicts`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..core.scenario_arguments import call_scenario
from ..sandbox import stopwatch

L2_FLUSH_BYTES = 256 * 2**20  # larger than the L2 cache of any current GPU
# What a case slower than the bound is told, after its times, where its check says nothing of its own.
SLOW_HINT = "Loops in Python over positions, heads or batch rows are the usual cause: use batched tensor operations"


@dataclass(frozen=True)
class Timing:
    """How a timing check times and judges.

    setup(modules, **args) -> state, once per case (its arguments taken as a scenario's); reset(state), before every
    lap, outside the clock; step(state, nonce) -> fingerprint, the timed
    call. All three run in the child on the submission and in the grading
    process on the reference (for the sampled laps).
    """

    setup: Callable[..., Any]
    """`setup(modules, **args) -> state`, once per case, outside the clock (or `setup(modules, args)`, the older
    form: `lmgrade.core.scenario_arguments`)."""
    step: Callable[[Any, int], list[float]]
    """`step(state, nonce) -> fingerprint`, the timed call: draws new inputs from the nonce, calls the code
    and returns projections of every output (the grading process compares every lap's with the reference's)."""
    reset: Callable[[Any], None] | None = None
    """`reset(state)`, before every lap, outside the clock; None: nothing to reset."""
    warmup: int = 3
    """Laps run first and dropped."""
    laps: int = 12
    """Laps timed per case and side, after the warm-up."""
    rounds: int = 2
    """Interleaved runs of each side (reference, submission, reference, submission), at most ..."""
    clear_share: float = 0.5
    """... but after a round that every case passes with its ratio within this share of the bound (and far
    from suspicious), the verdict is clear and no more rounds run (a sequential test)."""
    bound: float = 3.0
    """The largest ratio of the medians (submission / reference) paid, on the CPU ..."""
    bound_cuda: float = 2.0
    """... and on CUDA."""
    suspicious: float = 10.0
    """A submission this many times faster than the reference is flagged for review rather than paid."""
    slow_hint: str = SLOW_HINT
    """What a case slower than the bound is told after its times: the usual cause of slowness in this call
    (a cache never used, a mask rebuilt every call, a loop over positions), in the student's terms."""

    @property
    def sandboxed_runs(self) -> int:
        """Runs of a grading, each under the check's limits: every round runs the reference and the submission."""
        return 2 * self.rounds


def run_laps(modules: dict, args: dict, timing: Timing) -> dict:
    """The child's side of a timing check (a scenario calls it): every lap of one case."""
    state = call_scenario(timing.setup, modules, args)
    flush = _l2_flusher(args.get("device", "cpu"))
    for _ in range(timing.warmup + timing.laps):
        if timing.reset is not None:
            timing.reset(state)
        flush()
        nonce = stopwatch.start()
        stopwatch.stop(timing.step(state, nonce))
    return {"laps": timing.warmup + timing.laps}


def _l2_flusher(device: str) -> Callable[[], None]:
    if device != "cuda":
        return lambda: None
    import torch

    scratch = torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")

    def flush() -> None:
        scratch.zero_()
        torch.cuda.synchronize()

    return flush

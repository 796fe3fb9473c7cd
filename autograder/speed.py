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

In the grading process (`grade_timing`), the reference runs the same laps
in the same sandbox, interleaved with the submission's (reference,
submission, reference, submission), so a burst of load hits both. The
verdict is the ratio of medians, warm-up laps left out, within the check's
bound; a random sample of the submission's laps is recomputed with the
reference on the same nonces, and a fingerprint that differs fails the
check; a ratio far below 1 is flagged for review instead of paid.
"""

from __future__ import annotations

import random
import statistics
from dataclasses import dataclass
from typing import Any, Callable

from .checks import Case, CaseVerdict, Check
from .compare import compare
from .sandbox import stopwatch

L2_FLUSH_BYTES = 256 * 2**20   # larger than the L2 cache of any current GPU


@dataclass(frozen=True)
class Timing:
    """How a timing check times and judges.

    setup(modules, args) -> state, once per case; reset(state), before every
    lap, outside the clock; step(state, nonce) -> fingerprint, the timed
    call. All three run in the child on the submission and in the grading
    process on the reference (for the sampled laps).
    """

    setup: Callable[[dict, Any], Any]
    step: Callable[[Any, int], list[float]]
    reset: Callable[[Any], None] | None = None
    warmup: int = 3
    laps: int = 12
    rounds: int = 2               # interleaved runs of each side
    bound: float = 3.0            # largest student/reference ratio paid, on the CPU ...
    bound_cuda: float = 2.0       # ... and on CUDA
    suspicious: float = 10.0      # this many times faster than the reference: flagged for review
    verified: int = 3             # laps of the submission recomputed with the reference

    @property
    def sandboxed_runs(self) -> int:
        """Runs of a grading, each under the check's limits: every round runs the reference and the submission."""
        return 2 * self.rounds


def run_laps(modules: dict, args: dict, timing: Timing) -> dict:
    """The child's side of a timing check (a scenario calls it): every lap of one case."""
    state = timing.setup(modules, args)
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


@dataclass
class Laps:
    """One side's timed laps of one case."""

    seconds: list[float]
    laps: list[tuple[int, list[float]]]   # (nonce, fingerprint)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)


def collect(reports: list, case_index: int, warmup: int) -> Laps:
    """The laps of one case over every run, each run's warm-up left out of the times."""
    seconds, laps = [], []
    for report in reports:
        mine = [(nonce, t, fp) for case, nonce, t, fp in report.laps if case == case_index]
        seconds += [t for _, t, _ in mine[warmup:]]
        laps += [(nonce, fp) for nonce, _, fp in mine]
    return Laps(seconds, laps)


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3g} ms"


def judge_case(check: Check, case: Case, reference: Laps, student: Laps, recompute: Callable[[int], list[float]],
               rng: random.Random, device: str, wrong: str | None = None) -> CaseVerdict:
    """The verdict of one case from both sides' laps; `recompute(nonce)` is the reference's fingerprint.

    `wrong` names the numeric check of the timed code that failed in this grading, if one did:
    a differing fingerprint is then a wrong answer, and said to be one.
    """
    timing = check.timing
    expected_laps = timing.rounds * (timing.warmup + timing.laps)
    if len(student.laps) < expected_laps:
        return CaseVerdict(False, f"finished {len(student.laps)} of {expected_laps} timed calls")
    for nonce, fingerprint in rng.sample(student.laps, min(timing.verified, len(student.laps))):
        diff = compare(recompute(nonce), fingerprint, check.tolerance_of(case), reveal=False)
        if diff is not None and wrong:
            return CaseVerdict(False, f"the timed call's answers differ from the reference's on the same inputs, "
                                      f"as {wrong} found: a time is judged only on right answers, fix {wrong} "
                                      "first")
        if diff is not None:
            return CaseVerdict(False, "a timed call's outputs differ from the reference's on the same inputs: "
                                      "every output must be computed, and complete, before the call returns "
                                      "(no work left on another stream, no answers reused from earlier calls)")
    ratio = student.median / reference.median
    bound = timing.bound_cuda if device == "cuda" else timing.bound
    times = (f"{_ms(student.median)} per call against the reference's {_ms(reference.median)} "
             f"({ratio:.2f}x; median of {len(student.seconds)} timed calls each, {device})")
    if ratio < 1 / timing.suspicious:
        return CaseVerdict(False, f"{times}: more than {timing.suspicious:g}x faster than the reference, "
                                  "flagged for review by the course staff rather than paid")
    if ratio > bound:
        return CaseVerdict(False, f"{times}: slower than the allowed {bound:g}x. Loops in Python over "
                                  "positions, heads or batch rows are the usual cause: use batched tensor operations")
    return CaseVerdict(True, times)

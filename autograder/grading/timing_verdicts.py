"""A timing check's verdict, in the grading process: both sides' laps run, then judged.

The reference's files run as a submission of their own (`timing_laps.run_laps` in
the sandboxed child), in the same pool, interleaved with the submission's
(submission, reference, submission, reference), so a burst of load hits
both. A round after which every case passes by a wide margin ends the
timing (`clear`): more rounds could not change the verdict, and a class's
regrade pays for them only where it could. The verdict is the ratio of
medians, warm-up laps left out, within the check's bound; the fingerprint of
every lap of the submission, warm-up laps included, must be the reference's on
the same nonce, or the check fails; a ratio far below 1 is flagged for review
instead of paid. Every lap is verified, not a sample: a sample, however drawn,
leaves a submission that is fast and wrong on the laps it misses a chance of
the points, and the same submission must get the same verdict in every
grading. Comparing a few numbers a lap costs nothing beside the lap. Both
sides' runs of a round get the same nonces, drawn here and handed out by the
fork server only as each lap starts, so the reference's own laps hold its
fingerprints: a nonce they lack (a reference run cut
short) is recomputed with the reference's modules in this process, which
otherwise never imports them (torch) for a timing check.
"""

from __future__ import annotations

import secrets
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..boundary import wire
from ..core.comparison import compare
from ..core.scenario_arguments import call_scenario
from ..declare.checks import Case, CaseVerdict, Check, Mistake
from ..reports.results import Verdict
from .feedback import HIDDEN_FAILURES, WRONG_HIDDEN, describe_output, outcome_verdict, summarize
from .oracle import REFERENCE_RUNS, OracleError


def grade_timing(
    pool,
    check: Check,
    number: int,
    submission: Path,
    reference: Path,
    modules: Callable[[], dict],
    cases: list[Case],
    wrong: str | None = None,
    explained: tuple[Explaining, ...] = (),
) -> Verdict:
    """The submission's laps against those of the reference's files in `reference`; the reference's
    modules (`modules()`, asked for only then) recompute a lap the reference's own runs lack; `wrong`
    names a failed check of the timed code, and `explained` the known mistakes named on such checks, whose
    answers the submission's laps may be."""
    timing, reveal = check.timing, check.visibility == "visible"
    laps = (timing.warmup + timing.laps) * len(cases)
    runs: dict[str, list] = {"reference": [], "submission": []}
    for round_ in range(timing.rounds):
        # Fresh each round, the same on both sides, unknowable before their laps (`stopwatch`).
        nonces = [[secrets.randbits(63) for _ in range(timing.warmup + timing.laps)] for _ in cases]
        # The submission first in each round: where no case of its first run answered (an untouched
        # stub), nothing is timed and the reference never runs.
        for side, folder in (("submission", submission), ("reference", reference)):
            runs[side].append(
                pool.run(
                    scenario=check.scenario_ref,
                    submission=folder,
                    files=list(check.files),
                    cases=[c.args for c in cases],
                    limits=check.limits,
                    device=check.device,
                    laps=laps,
                    nonces=nonces,
                )
            )
            if round_ == 0 and side == "submission" and not any(o.kind == "ok" for o in runs[side][0].outcomes):
                return unanswered(check, number, cases, runs[side][0], reveal)
        if clear(check, runs, len(cases)):
            break
    judged = []
    for i, case in enumerate(cases):
        for run in runs["reference"]:
            if run.outcomes[i].kind != "ok":
                raise OracleError(
                    f"the reference failed the timing check {check.name} case {i + 1}: "
                    f"{outcome_verdict(check, case, None, run.outcomes[i], True).message}"
                )
        failed = next((r.outcomes[i] for r in runs["submission"] if r.outcomes[i].kind != "ok"), None)
        if failed is not None:
            judged.append((case, outcome_verdict(check, case, None, failed, reveal)))
            continue
        reference_laps = collect(runs["reference"], i, timing.warmup)
        judged.append(
            (
                case,
                judge_case(
                    check,
                    case,
                    reference_laps,
                    collect(runs["submission"], i, timing.warmup),
                    reference_fingerprints(check, case, modules, dict(reference_laps.laps)),
                    check.device,
                    wrong,
                    rounds=len(runs["submission"]),
                    mistaken=[(e, reference_fingerprints(check, case, e.modules)) for e in explained],
                ),
            )
        )
    if not reveal:  # the times and the laps are the submission's to choose: a hidden check says its kinds only
        judged = [
            (case, verdict if verdict.message in HIDDEN_FAILURES else hidden(verdict)) for case, verdict in judged
        ]
    passed = sum(v.passed for _, v in judged)
    # The times are worth reading when the check passes too.
    output = "\n".join(
        [summarize(judged, reveal, None)]
        + [f"case {i}: {v.message}" for i, (_, v) in enumerate(judged, start=1) if v.passed and v.message]
    )
    printed = describe_output(runs["submission"][-1].output, failed=passed < len(cases), reveal=reveal)
    if printed:
        output += "\n" + printed
    return Verdict(
        check,
        number,
        check.points * passed / len(cases) if cases else 0.0,
        output,
        judged,
        wall_s=sum(r.wall_s for r in runs["submission"]),
        defences=runs["submission"][0].defences,
    )


def unanswered(check: Check, number: int, cases: list[Case], run, reveal: bool) -> Verdict:
    """A timing check none of whose cases answered: each case fails with what happened, untimed."""
    judged = [(case, outcome_verdict(check, case, None, outcome, reveal)) for case, outcome in zip(cases, run.outcomes)]
    output = summarize(judged, reveal, None)
    printed = describe_output(run.output, failed=True, reveal=reveal)
    return Verdict(
        check,
        number,
        0.0,
        output + ("\n" + printed if printed else ""),
        judged,
        wall_s=run.wall_s,
        defences=run.defences,
    )


def clear(check: Check, runs: dict[str, list], n_cases: int) -> bool:
    """Whether every case answered in every run so far and its ratio is well inside the bound."""
    timing = check.timing
    bound = timing.bound_cuda if check.device == "cuda" else timing.bound
    for i in range(n_cases):
        if any(run.outcomes[i].kind != "ok" for side in runs.values() for run in side):
            return False
        student, reference = (collect(runs[side], i, timing.warmup) for side in ("submission", "reference"))
        if not student.seconds or not reference.seconds or reference.median <= 0:
            return False
        ratio = student.median / reference.median
        if not 2 / timing.suspicious <= ratio <= timing.clear_share * bound:
            return False
    return True


@dataclass(frozen=True)
class Explaining:
    """A known mistake named on a failed check of the timed code: where every lap's answers are what it
    gives, the answers are that check's to judge, and the time is judged on its own."""

    component: str  # the failed check that named it
    mistake: Mistake
    modules: Callable[[], dict]  # the reference's modules with the mistake made


def reference_fingerprints(
    check: Check, case: Case, modules: Callable[[], dict], lapped: dict[int, list] | None = None
) -> Callable[[int], list]:
    """The reference's fingerprint of a lap, from its nonce: from its own laps (`lapped`, by nonce) where they
    hold it, else recomputed here (set up once per case, one reference run at a time)."""
    timing, state, lapped = check.timing, [], lapped or {}

    def recompute(nonce: int) -> list:
        if nonce in lapped:
            return lapped[nonce]
        with REFERENCE_RUNS:
            if not state:
                state.append(call_scenario(timing.setup, modules(), wire.decode(wire.encode(case.args))))
            if timing.reset is not None:
                timing.reset(state[0])
            return wire.decode(wire.encode(timing.step(state[0], nonce)))

    return recompute


@dataclass
class Laps:
    """One side's timed laps of one case."""

    seconds: list[float]
    laps: list[tuple[int, list[float]]]  # (nonce, fingerprint)

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


# How a lap's differing fingerprint is told (`judge_case`): a hidden check says only "wrong value" of it.
WRONG_ANSWERS = "the timed call's answers differ from the reference's"
WRONG_OUTPUTS = "a timed call's outputs differ from the reference's"
# What else a failed case of a hidden timing check says (its time, or its unfinished laps): no number.
TIME_HIDDEN = (
    "its time is outside the check's bound, or its timed calls did not all finish (a hidden check says no more)"
)


def hidden(verdict: CaseVerdict) -> CaseVerdict:
    """A timed case's verdict as a hidden check says it: a passed case nothing, a failed one its kind alone."""
    if verdict.passed:
        return CaseVerdict(True)
    if verdict.message.startswith((WRONG_ANSWERS, WRONG_OUTPUTS)):
        return CaseVerdict(False, WRONG_HIDDEN)
    return CaseVerdict(False, TIME_HIDDEN)


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3g} ms"


def judge_case(
    check: Check,
    case: Case,
    reference: Laps,
    student: Laps,
    recompute: Callable[[int], list[float]],
    device: str,
    wrong: str | None = None,
    rounds: int | None = None,
    mistaken: list[tuple[Explaining, Callable[[int], list[float]]]] | None = None,
) -> CaseVerdict:
    """The verdict of one case from both sides' laps; `recompute(nonce)` is the reference's fingerprint.

    Every lap's fingerprint is compared, so a submission wrong on any lap fails whatever its times.
    `wrong` names the numeric check of the timed code that failed in this grading, if one did:
    a differing fingerprint is then a wrong answer, and said to be one. `rounds` is how many
    rounds ran (all of the check's by default). `mistaken`: the known mistakes named on such checks, each
    with its fingerprint of a lap; where one gives every lap's answers, the time is judged on its own.
    """
    timing = check.timing
    expected_laps = (rounds or timing.rounds) * (timing.warmup + timing.laps)
    if len(student.laps) < expected_laps:
        return CaseVerdict(False, f"finished {len(student.laps)} of {expected_laps} timed calls")
    tolerance = check.tolerance_of(case)
    explained = None
    for nonce, fingerprint in student.laps:
        diff = compare(recompute(nonce), fingerprint, tolerance, reveal=False)
        if diff is not None and explained is None and wrong:
            explained = next(
                (
                    e
                    for e, theirs in mistaken or []
                    if all(compare(theirs(n), fp, tolerance, reveal=False) is None for n, fp in student.laps)
                ),
                None,
            )
            if explained is not None:
                break
        if diff is not None and wrong:
            return CaseVerdict(
                False,
                f"{WRONG_ANSWERS} on the same inputs, and it runs "
                f"your code that failed {wrong} (see {wrong}): a time is judged only on right answers, "
                "so this check earns nothing until they are right",
            )
        if diff is not None:
            return CaseVerdict(
                False,
                f"{WRONG_OUTPUTS} on the same inputs: "
                "every output must be computed, and complete, before the call returns "
                "(no work left on another stream, no answers reused from earlier calls)",
            )
    ratio = student.median / reference.median
    bound = timing.bound_cuda if device == "cuda" else timing.bound
    times = (
        f"{_ms(student.median)} per call against the reference's {_ms(reference.median)} "
        f"({ratio:.2f}x; median of {len(student.seconds)} timed calls each, {device})"
    )
    if ratio < 1 / timing.suspicious:
        return CaseVerdict(
            False,
            f"{times}: more than {timing.suspicious:g}x faster than the reference, "
            "flagged for review by the course staff rather than paid",
        )
    if explained is not None:
        times = (
            f"every timed call's answers are what a known mistake gives: {explained.mistake.explanation} (see "
            f"{explained.component}); {explained.component} judges the answers, and this check the time alone: "
            f"{times}"
        )
    if ratio > bound:
        return CaseVerdict(
            False,
            f"{times}: slower than the allowed {bound:g}x. {timing.slow_hint}",
        )
    return CaseVerdict(True, times)

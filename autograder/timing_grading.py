"""A timing check's verdict, in the grading process: both sides' laps run, then judged (`speed`).

The reference's files run as a submission of their own, in the same pool,
interleaved with the submission's (submission, reference, submission,
reference), so a burst of load hits both; `speed.judge_case` then compares
the laps. The reference's modules, in this process, recompute the sampled
laps' fingerprints.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Callable

from . import speed, wire
from .checks import Case, Check
from .feedback import describe_output, outcome_verdict, summarize
from .oracle import OracleError
from .results import Verdict


def grade_timing(pool, check: Check, number: int, submission: Path, reference: Path, modules: dict,
                 cases: list[Case], rng: random.Random, wrong: str | None = None) -> Verdict:
    """The submission's laps against those of the reference's files in `reference`; `modules` recompute
    the sampled laps, `rng` samples them; `wrong` names a failed check of the timed code."""
    timing, reveal = check.timing, check.visibility == "visible"
    laps = (timing.warmup + timing.laps) * len(cases)
    runs: dict[str, list] = {"reference": [], "submission": []}
    for round_ in range(timing.rounds):
        # The submission first in each round: where no case of its first run answered (an untouched
        # stub), nothing is timed and the reference never runs.
        for side, folder in (("submission", submission), ("reference", reference)):
            runs[side].append(pool.run(scenario=check.scenario_ref, submission=folder,
                                       files=list(check.files), cases=[c.args for c in cases],
                                       limits=check.limits, device=check.device, laps=laps))
            if round_ == 0 and side == "submission" and not any(o.kind == "ok" for o in runs[side][0].outcomes):
                return unanswered(check, number, cases, runs[side][0], reveal)
    judged = []
    for i, case in enumerate(cases):
        for run in runs["reference"]:
            if run.outcomes[i].kind != "ok":
                raise OracleError(f"the reference failed the timing check {check.name} case {i + 1}: "
                                  f"{outcome_verdict(check, case, None, run.outcomes[i], True).message}")
        failed = next((r.outcomes[i] for r in runs["submission"] if r.outcomes[i].kind != "ok"), None)
        if failed is not None:
            judged.append((case, outcome_verdict(check, case, None, failed, reveal)))
            continue
        judged.append((case, speed.judge_case(
            check, case, speed.collect(runs["reference"], i, timing.warmup),
            speed.collect(runs["submission"], i, timing.warmup),
            reference_fingerprints(check, case, modules), rng, check.device, wrong)))
    passed = sum(v.passed for _, v in judged)
    # The times are worth reading when the check passes too.
    output = "\n".join([summarize(judged, reveal, None)] + [
        f"case {i}: {v.message}" for i, (_, v) in enumerate(judged, start=1) if v.passed])
    printed = describe_output(runs["submission"][-1].output, failed=passed < len(cases), reveal=reveal)
    if printed:
        output += "\n" + printed
    return Verdict(check, number, check.points * passed / len(cases) if cases else 0.0, output, judged,
                   wall_s=sum(r.wall_s for r in runs["submission"]), defences=runs["submission"][0].defences)


def unanswered(check: Check, number: int, cases: list[Case], run, reveal: bool) -> Verdict:
    """A timing check none of whose cases answered: each case fails with what happened, untimed."""
    judged = [(case, outcome_verdict(check, case, None, outcome, reveal))
              for case, outcome in zip(cases, run.outcomes)]
    output = summarize(judged, reveal, None)
    printed = describe_output(run.output, failed=True, reveal=reveal)
    return Verdict(check, number, 0.0, output + ("\n" + printed if printed else ""), judged, wall_s=run.wall_s,
                   defences=run.defences)


def reference_fingerprints(check: Check, case: Case, modules: dict) -> Callable[[int], list]:
    """The reference's fingerprint of a lap, from its nonce (set up once per case)."""
    timing, state = check.timing, []

    def recompute(nonce: int) -> list:
        if not state:
            state.append(timing.setup(modules, wire.decode(wire.encode(case.args))))
        if timing.reset is not None:
            timing.reset(state[0])
        return wire.decode(wire.encode(timing.step(state[0], nonce)))
    return recompute

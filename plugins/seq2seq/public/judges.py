"""How the seq2seq checks judge what they cannot compare to one tolerance.

`judge_init`: the parameters after `torch.manual_seed` bit for bit (the
stub's `__init__` draws them), the logits of the model they make to the
case's tolerance. `judge_train`: on the copy task, the losses must fall
before they are compared with the reference's.
"""

from __future__ import annotations

import numpy as np

from lmgrade import CaseVerdict, Tolerance, compare

EXACT = Tolerance(rtol=0.0, atol=0.0)
PARAMETERS = "parameters"


def judge_init(check, case, expected, got, *, reveal: bool) -> CaseVerdict:
    """Each kind's parameters exactly as the reference's, and the rest to the case's tolerance."""
    tolerance = check.tolerance_of(case)
    if not isinstance(got, dict) or set(got) != set(expected):
        return CaseVerdict(False, compare(expected, got, tolerance, reveal=reveal) or "wrong answer")
    for kind, want in expected.items():
        mine = got[kind]
        if not isinstance(mine, dict):
            return CaseVerdict(False, compare(want, mine, tolerance, reveal=reveal, path=f"[{kind!r}]") or "")
        params = compare(want[PARAMETERS], mine.get(PARAMETERS), EXACT, reveal=reveal, path=f"[{kind!r}]['parameters']")
        if params:
            return CaseVerdict(
                False,
                f"{params}\nafter torch.manual_seed, Seq2Seq(..., attention={kind!r}) must draw the contract's "
                "parameters in the order built (encoder.embed, encoder.rnn, decoder.embed, decoder.cell, "
                "decoder.out), with W the identity and nothing else drawn",
            )
        rest = {k: v for k, v in want.items() if k != PARAMETERS}
        diff = compare(rest, {k: v for k, v in mine.items() if k != PARAMETERS}, tolerance, reveal=reveal)
        if diff:
            return CaseVerdict(False, diff.replace(" at [", f" at [{kind!r}][", 1))
    return CaseVerdict(True)


def _epoch_means(losses: list, per_epoch: int) -> list[float] | None:
    values = [v for v in losses if isinstance(v, float)]
    if len(values) != len(losses) or not losses or len(losses) % per_epoch:
        return None
    return [float(np.mean(values[i : i + per_epoch])) for i in range(0, len(values), per_epoch)]


def judge_train(check, case, expected, got, *, reveal: bool) -> CaseVerdict:
    """The losses, weights and generator as the reference's; on the copy task, first a loss that falls."""
    args = case.args
    if args.get("copy_task") and isinstance(got, dict) and isinstance(got.get("losses"), list):
        means = _epoch_means(got["losses"], len(args["batches"]))
        if means is not None and not means[-1] <= args["falls_to"] * means[0]:
            return CaseVerdict(
                False,
                f"the loss did not fall on the copy task: the mean loss of the first epoch was {means[0]:.4g}, "
                f"of the last {means[-1]:.4g} (the reference's falls below {args['falls_to']:g} times the first)",
            )
    diff = compare(expected, got, check.tolerance_of(case), reveal=reveal)
    return CaseVerdict(diff is None, diff or "")

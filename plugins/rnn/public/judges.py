"""How the rnn checks judge what a submission returned.

`judge_gradients` tells a student which half of a module is off: the
scenario returns the forward, the backward, and whether the backward agrees
with central differences of the student's *own* forward. A forward and a
backward that are wrong together, but consistent, get a different sentence
from a right forward with a wrong backward.

`judge_sample` tests the draws of `RNNLM.sample` against the exact
probability of every possible sample, by chi-square (`lmgrade.core.stats`).
"""

from __future__ import annotations

from collections import Counter

from lmgrade import AGREE, CaseVerdict, compare, fit_problem, seeding_problem, which_half

CONSISTENCY = ("backward against finite differences of forward", "backward against finite differences of loss")


def judge_gradients(check, case, expected, got, *, reveal: bool) -> CaseVerdict:
    consistency = next(key for key in CONSISTENCY if key in got)
    agrees = got[consistency] == AGREE
    answers = {k: v for k, v in got.items() if k != consistency}
    right = {k: v for k, v in expected.items() if k != consistency}
    forward_keys = [k for k in right if not k.startswith(("backward", "grads[", "grad_h0", "returned =="))]
    backward_keys = [k for k in right if k not in forward_keys]
    forward = compare(
        {k: right[k] for k in forward_keys}, {k: answers.get(k) for k in forward_keys}, check.tolerance, reveal=reveal
    )
    backward = compare(
        {k: right[k] for k in backward_keys}, {k: answers.get(k) for k in backward_keys}, check.tolerance, reveal=reveal
    )
    if forward is None and backward is None:
        return CaseVerdict(True)
    what = "loss" if consistency.endswith("loss") else "forward"
    return CaseVerdict(False, which_half(forward, backward, what, agrees, str(got[consistency]), reveal))


def _valid(draw: list, max_len: int, end: int | None, V: int) -> str | None:
    if not isinstance(draw, list) or any(not isinstance(t, int) or not 0 <= t < V for t in draw):
        return f"sample returned {draw!r:.80}: expected a list of token ids in [0, {V})"
    if len(draw) > max_len:
        return f"sample returned {len(draw)} tokens; max_len is {max_len}"
    if end is not None and end in draw[:-1]:
        return f"sample went on after drawing the end token {end}: {draw!r:.80}"
    if len(draw) < max_len and (end is None or not draw or draw[-1] != end):
        return f"sample stopped after {len(draw)} tokens without drawing the end token or reaching max_len"
    return None


def judge_sample(check, case, expected, got, *, reveal: bool) -> CaseVerdict:
    args = case.args
    V, max_len, end = args["params"]["E"].shape[0], args["max_len"], args["end"]
    for draw in got["draws"] + got["again"] + got["other"]:
        problem = _valid(draw, max_len, end, V)
        if problem:
            return CaseVerdict(False, problem)
    table = expected["table"]
    problem = seeding_problem(got, expected, args["repeat"], collision=sum(p * p for p in table.values()))
    if problem:
        return CaseVerdict(False, problem)
    draws = [tuple(d) for d in got["draws"]]
    problem = fit_problem("whole samples", Counter(draws), lambda s: table.get(s, 0.0), len(draws), reveal)
    if problem is None:
        # The first token alone: a wrong h_0 or a stale input shows here first.
        first = Counter(d[:1] for d in draws)
        problem = fit_problem(
            "the first token",
            first,
            lambda key: sum(p for s, p in table.items() if s[:1] == key and (len(s) == max_len or s[-1] == end)),
            len(draws),
            reveal,
        )
    return CaseVerdict(problem is None, problem or "")

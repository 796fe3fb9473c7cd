"""How the generate check judges what a submission drew.

Any correct sampler passes, whatever it calls: `torch.multinomial` with or
without replacement, inverse CDF, Gumbel-max. The draws are compared with
the exact probability of every continuation, which the reference computes
with its context cropped and its logits divided by the temperature; the same
generator seed must give the same draws, another seed other draws.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from lmgrade import LEVEL, CaseVerdict, compare, fit_problem, seeding_problem

NO_CROP = (
    "generate does not crop its input to the last context_length tokens: the model is fed more "
    "positions than it has embeddings for"
)
ARGMAX = "generate always takes the most likely token (argmax) instead of sampling with torch.multinomial"


def judge_generate(check, case, expected, got, *, reveal: bool) -> CaseVerdict:
    args = case.args
    for draw in got["draws"] + got["again"] + got["other"]:
        if isinstance(draw, str):
            hint = f"\n{NO_CROP}" if "past context_length" in draw else ""
            return CaseVerdict(False, f"generate {draw}{hint}")
    if got["with max_new_tokens=0"] != "the prompt alone":
        return CaseVerdict(False, f"generate(..., max_new_tokens=0) {got['with max_new_tokens=0']}")
    if got["without a generator"] != "valid tokens":
        return CaseVerdict(False, f"generate without a generator (generator=None): {got['without a generator']}")
    table = expected["table"]
    draws = Counter(tuple(d) for d in got["draws"])
    if len(draws) == 1 and len(table) > 1:
        (only,) = draws
        greedy = max(table, key=table.get)
        # A correct sampler draws the likeliest sequence every time with probability p ** draws: named at the
        # level of every other test (a p of 0.998 repeats 300 times in one run of two).
        if only == greedy and table[greedy] ** len(got["draws"]) < LEVEL:
            return CaseVerdict(False, f"all {len(got['draws'])} draws were the same sequence: {ARGMAX}")
    problem = seeding_problem(
        got,
        expected,
        args["repeat"],
        call="generate",
        source="the generator it is given",
        collision=sum(p * p for p in table.values()),
    )
    if problem:
        return CaseVerdict(False, problem)
    problem = fit_problem("the continuations", draws, lambda s: table.get(s, 0.0), len(got["draws"]), reveal)
    return CaseVerdict(problem is None, problem or "")


def _moved(base: np.ndarray, other: np.ndarray) -> np.ndarray:
    """Per position: whether any logit of any row moved beyond rounding."""
    close = np.isclose(other, base, rtol=1e-7, atol=1e-9)
    return ~close.all(axis=(0, 2))


def _logits(value, shape: tuple) -> bool:
    return isinstance(value, np.ndarray) and value.shape == shape and value.dtype.kind == "f"


def judge_causality(check, case, expected, got, *, reveal: bool) -> CaseVerdict:
    """The property as seen here, from the logits the model returned: which position sees which later token;
    paid where the model is causal, its logits depend on the tokens, and the logits themselves are right."""
    shape = np.asarray(expected["answer"]).shape
    base, changed = (got.get("answer"), got.get("property")) if isinstance(got, dict) else (None, None)
    if not _logits(base, shape) or not isinstance(changed, list) or any(not _logits(c, shape) for c in changed):
        return CaseVerdict(
            False,
            f"the model did not return logits of shape {shape} for every input, so "
            "causality cannot be seen and earns nothing here",
        )
    if len(changed) != len(case.args["changes"]):
        return CaseVerdict(False, "the answer is not shaped like the contract's")
    leaks, deaf = [], []
    for q, other in enumerate(changed, start=1):
        moved = _moved(base, other)
        leaks += [(p, q) for p in range(q) if moved[p]]
        if not moved[q:].any():
            deaf.append(q)
    if leaks:
        p, q = min(leaks, key=lambda pq: (pq[1] - pq[0], pq[0]))
        more = f"; {len(leaks) - 1} more such pairs" if len(leaks) > 1 else ""
        return CaseVerdict(
            False,
            f"position {p} sees token {q} (a change at t = {q} changed the output at "
            f"t = {p}){more}: the causal mask must hide every later position",
        )
    if deaf:
        return CaseVerdict(
            False,
            f"no position sees a later token, but a change at t = {deaf[0]} changed no "
            f"output at t >= {deaf[0]}: the logits do not depend on the tokens as a "
            "language model's must, so the property earns nothing here",
        )
    said = "no position sees a later token, and each position's logits follow its own token"
    answer = compare(expected["answer"], base, check.tolerance_of(case), reveal=reveal)
    if answer is not None:
        return CaseVerdict(
            False,
            f"{said}, but the logits themselves are wrong, so the property earns nothing here: {answer}",
            property_held=True,
        )
    return CaseVerdict(True, said)

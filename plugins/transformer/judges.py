"""How the generate check judges what a submission drew.

Any correct sampler passes, whatever it calls: `torch.multinomial` with or
without replacement, inverse CDF, Gumbel-max. The draws are compared with
the exact probability of every continuation, which the reference computes
with its context cropped and its logits divided by the temperature; the same
generator seed must give the same draws, another seed other draws.
"""

from __future__ import annotations

from collections import Counter

from autograder import CaseVerdict
from autograder.stats import fit_problem, seeding_problem

NO_CROP = ("generate does not crop its input to the last context_length tokens: the model is fed more "
           "positions than it has embeddings for")
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
        if only == greedy and table[greedy] < 0.999:
            return CaseVerdict(False, f"all {len(got['draws'])} draws were the same sequence: {ARGMAX}")
    problem = seeding_problem(got, expected, args["repeat"], call="generate", source="the generator it is given")
    if problem:
        return CaseVerdict(False, problem)
    problem = fit_problem("the continuations", draws, lambda s: table.get(s, 0.0), len(got["draws"]), reveal)
    return CaseVerdict(problem is None, problem or "")

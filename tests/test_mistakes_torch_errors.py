"""An exception-only known mistake is named on torch only where the submission raised for the same cause.

torch raises RuntimeError for every shape error, so the exception's type tells nothing: a mistake that shows
only by raising (`Mistake(paired=False)`) is named where the submission raised, on the same cases, the very
exception the mistake raises, its message included (`ExpectedValues.diagnose`, `same_message`). Here the
mistake is a key cache concatenated on the heads' dimension; the submissions are a decoder step with one
change each, run in this process and described as the sandbox's child describes what a case raised.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")

from lmgrade.declare.checks import Case, Check, Mistake  # noqa: E402
from lmgrade.grading.expected_values import ExpectedValues, same_message  # noqa: E402
from lmgrade.sandbox.child import describe_exception  # noqa: E402
from lmgrade.sandbox.pool import CaseOutcome  # noqa: E402

HEADS, D_HEAD = 2, 4


def _append(cache, k):
    return torch.cat([cache, k], dim=2)  # (B, heads, T, d_head): the positions' dimension


def _scores(q, keys):
    return q @ keys.transpose(-2, -1)


def decode(steps: int, append=_append, scores=_scores) -> list[float]:
    """Per step: the query attends to the keys cached so far, its own included; its weights summed."""
    generator = torch.Generator().manual_seed(0)
    cache = torch.zeros(1, HEADS, 0, D_HEAD, dtype=torch.float64)
    out = []
    for _ in range(steps):
        q = torch.randn(1, HEADS, 1, D_HEAD, generator=generator, dtype=torch.float64)
        k = torch.randn(1, HEADS, 1, D_HEAD, generator=generator, dtype=torch.float64)
        cache = append(cache, k)
        out.append(float(torch.softmax(scores(q, cache) / D_HEAD**0.5, dim=-1).sum()))
    return out


# The known mistake: the cache concatenated on the heads' dimension (its first step raises).
CACHE_ON_HEADS = Mistake(
    "cache_on_heads_dim",
    "the key cache is concatenated on the heads' dimension (dim=1) instead of the positions' (dim=2)",
    paired=False,
)
ON_HEADS = {"append": lambda cache, k: torch.cat([cache, k], dim=1)}
# Two other causes of a RuntimeError on the same cases: the same call with other shapes (keys cached
# transposed), and another call (the scores without the keys transposed).
SUBMISSIONS = {
    "cache_on_heads_dim": ON_HEADS,
    "keys_cached_transposed": {"append": lambda cache, k: torch.cat([cache, k.transpose(-2, -1)], dim=2)},
    "scores_keys_not_transposed": {"scores": lambda q, keys: q @ keys},
}


def scenario(modules, steps):  # what the check runs: only its signature is read here (the cases' arguments)
    return decode(steps)


class _Oracle:
    """The reference and the mistake, run in this process as the live reference runs them."""

    reference_folder = None  # nothing stored

    def expected(self, check, cases):
        return [decode(case.args["steps"]) for case in cases]

    def mistaken(self, check, case, mistake, as_expected=False):
        assert mistake is CACHE_ON_HEADS
        return decode(case.args["steps"], **ON_HEADS)


def _check() -> Check:
    # Case 1 decodes nothing (every version answers it, and alike); cases 2 and 3 raise where a cache is wrong.
    cases = [Case("no step", {"steps": 0}), Case("one step", {"steps": 1}), Case("three steps", {"steps": 3})]
    return Check("decode", "decode with a key cache", scenario, lambda ctx: cases, mistakes=(CACHE_ON_HEADS,))


def _outcome(steps: int, change: dict) -> CaseOutcome:
    try:
        return CaseOutcome("ok", value=decode(steps, **change))
    except Exception as exc:  # as the sandbox's child reports it
        return CaseOutcome("error", error=describe_exception(exc))


def _diagnose(submission: str) -> tuple[Mistake | None, list[CaseOutcome]]:
    check = _check()
    values = ExpectedValues(SimpleNamespace(name="torch_errors", checks=[check]), {}, _Oracle(), secret="torch errors")
    cases, _ = values.of(check)
    outcomes = [_outcome(case.args["steps"], SUBMISSIONS[submission]) for case in cases]
    return values.diagnose(check, cases, outcomes), outcomes


def test_the_mistake_is_named_where_the_submission_raised_its_very_exception():
    named, outcomes = _diagnose("cache_on_heads_dim")
    assert [o.kind for o in outcomes] == ["ok", "error", "error"]
    assert named is CACHE_ON_HEADS


@pytest.mark.parametrize("submission", ["keys_cached_transposed", "scores_keys_not_transposed"])
def test_a_runtime_error_of_another_cause_on_the_same_cases_is_not_named(submission):
    named, outcomes = _diagnose(submission)
    # The same cases raised, and the same type: only the message tells the causes apart.
    assert [o.kind for o in outcomes] == ["ok", "error", "error"]
    mistaken = _outcome(1, ON_HEADS).error
    assert all(o.error["type"] == mistaken["type"] == "RuntimeError" for o in outcomes[1:])
    assert not same_message(outcomes[1].error["message"], mistaken["message"])
    assert named is None

"""Scenario work that only the expected value needs.

A statistical judge tests a submission's draws against the reference's exact
distribution (the probability of every sentence a sampler can draw): it reads
the reference's table and never the submission's. Computing the table in
every submission's run cost ngram's `sample` check 0.89 s instead of 0.49 s
in a grading, so a scenario wraps it::

    return {"draws": draws, "table": expected_only(lambda: exact_table(lm))}

`expected_only(compute)` is `compute()` where the scenario answers for the
expected value (the reference in the grading process, its recorded fixtures
in a student bundle), and None where it runs as a submission does: in the
sandbox, in a stand-in's record (which answers a submission's calls) and for
a known mistake's answers (`answering_as_a_submission`). Only a check with a
`judge` that reads the part from `expected` alone may use it: a comparison
would find None where the reference has a table.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from .context_setting import ContextSetting

_as_submission = ContextSetting("lmgrade_answering_as_a_submission", default=False)
_marking = ContextSetting("lmgrade_marking_expected_parts", default=False)


class ExpectedPart:
    """A part only the expected value holds, marked where one run answers in both forms (`both_forms`)."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value


def expected_only(compute: Callable[[], Any]) -> Any:
    """`compute()` for the expected value; None where the scenario runs as a submission does."""
    if _as_submission.get():
        return None
    return ExpectedPart(compute()) if _marking.get() else compute()


def marking_expected_parts() -> AbstractContextManager[None]:
    """Scenarios run in this block mark their `expected_only` parts (`ExpectedPart`), for `both_forms`."""
    return _marking.within(True)


def both_forms(answer: Any) -> tuple[Any, Any]:
    """(the answer as a submission gives it, as an expected value) from an answer made while marking: the
    marked parts None, then their values. A scenario puts them in its answer's dicts, lists or tuples."""

    def form(value: Any, expected: bool) -> Any:
        if isinstance(value, ExpectedPart):
            return value.value if expected else None
        if isinstance(value, dict):
            return {k: form(v, expected) for k, v in value.items()}
        if isinstance(value, (list, tuple)) and any(isinstance(v, (ExpectedPart, dict, list, tuple)) for v in value):
            return type(value)(form(v, expected) for v in value)
        return value

    return form(answer, False), form(answer, True)


def answering_as_a_submission() -> AbstractContextManager[None]:
    """Scenarios run in this block answer as a submission does: `expected_only` parts are left out."""
    return _as_submission.within(True)


def answer_as_a_submission() -> None:
    """From now on in this process's main context (the sandbox's child): as `answering_as_a_submission`."""
    _as_submission.set(True)

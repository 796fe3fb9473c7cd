"""Scenario work that only explains a wrong answer.

The numpy assignments differentiate a submission's own forward by central
differences beside its analytic gradients, to tell a student which half of a
module is off (`which_half`). That decides a sentence, never a point, and it
is most of what those checks cost: in lstm's cell backward, 0.19 s of the
scenario's 0.2 s. So a scenario wraps it::

    answer[CONSISTENCY] = explained(lambda: agreement(answer, finite_differences(loss, arrays, assign)))

`explained(compute)` is `compute()` wherever answers may need explaining: the
expected value, a known mistake's answers (a diagnosis compares them with the
submission's explained ones) and a sandboxed run the grader asked to explain.
In a submission's first run it is `UNEXPLAINED`: where one of a check's cases
then fails and its answers hold `UNEXPLAINED` (`needs_explaining`), the grader
runs the check's cases again, explained, and judges that run. A right answer
never pays for its explanation. A stand-in's record leaves it out too
(`not_explaining`): a stand-in answers a run that is not explained.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from .context_setting import ContextSetting

UNEXPLAINED = "not computed: only a wrong answer is explained"
"""What `explained` returns in a submission's first run: the grader asks for a run that computes it where a
case fails."""
_explaining = ContextSetting("lmgrade_explaining", default=True)


def explained(compute: Callable[[], Any]) -> Any:
    """`compute()` where answers may need explaining; `UNEXPLAINED` in a submission's first run."""
    return compute() if _explaining.get() else UNEXPLAINED


def not_explaining() -> AbstractContextManager[None]:
    """Scenarios run in this block leave their `explained` parts out."""
    return _explaining.within(False)


def explain_answers(explain: bool) -> None:
    """From now on in this process's main context (the sandbox's child): explain, or leave it out."""
    _explaining.set(explain)


def needs_explaining(value: Any, depth: int = 3) -> bool:
    """Whether an answer holds a part left out (`UNEXPLAINED`), in a dict, list or tuple `depth` levels down."""
    if isinstance(value, str):
        return value == UNEXPLAINED
    if depth and isinstance(value, dict):
        return any(needs_explaining(v, depth - 1) for v in value.values())
    if depth and isinstance(value, (list, tuple)):
        return any(needs_explaining(v, depth - 1) for v in value)
    return False

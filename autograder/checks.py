"""What a plugin contributes: checks, their cases and how they are judged.

A `Check` has three parts that run in three places:

- ``make_cases(ctx)`` in the grading process: draws the case inputs (plain
  data) from the check's seeded generator.
- ``scenario(modules, args)`` in the sandboxed child, once per case, with the
  submission's modules (and, for the expected value, in the grading process
  with the reference modules). It must be a module-level function of a module
  that does not import the reference: the fork server imports it by name.
- ``judge(case, expected, got)`` in the grading process: a `CaseVerdict`.
  The default compares the two with `compare.compare` and the check's
  tolerance, then asks the check's known mistakes whether one explains the
  difference.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .compare import Tolerance, compare
from .sandbox.limits import Limits

VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")


@dataclass
class Case:
    """One input of a check. `label` is what a student reads, e.g. ``pad(['a'], n=3)``."""

    label: str
    args: Any


@dataclass
class CaseVerdict:
    passed: bool
    message: str = ""


@dataclass(frozen=True)
class Mistake:
    """A known mistake, recognised by making it: a patch of the reference.

    ``patch(modules)`` changes fresh copies of the reference modules (keyed
    like the scenario's ``modules``) so they make the mistake; the oracle then
    runs the check's scenario on them. A submission whose answer matches that
    answer, and not the right one, is told the mistake by name.
    """

    name: str
    explanation: str
    patch: Callable[[dict[str, Any]], None]


@dataclass
class CaseContext:
    """What `make_cases` may use: the seeded generator and the chosen variant."""

    rng: np.random.Generator
    variant: dict[str, Any]


@dataclass
class Check:
    name: str
    title: str
    files: tuple[str, ...]
    scenario: Callable[[dict[str, Any], Any], Any]
    make_cases: Callable[[CaseContext], list[Case]]
    tolerance: Tolerance = field(default_factory=Tolerance)
    mistakes: tuple[Mistake, ...] = ()
    # judge(check, case, expected, got, reveal=...) replaces the comparison.
    judge: Callable[..., CaseVerdict] | None = None
    # Said to the student when a case runs out of time.
    timeout_hint: str = ""
    # Defaults that assignment.toml may override.
    points: float = 1.0
    visibility: str = "visible"
    limits: Limits = field(default_factory=Limits)

    @property
    def scenario_ref(self) -> str:
        return f"{self.scenario.__module__}:{self.scenario.__qualname__}"

    def verdict(self, case: Case, expected: Any, got: Any, *, reveal: bool,
                mistaken: Callable[[Mistake], Any] | None = None) -> CaseVerdict:
        """Judge one case. `mistaken(m)` gives the answer a submission making m returns."""
        if self.judge is not None:
            return self.judge(self, case, expected, got, reveal=reveal)
        diff = compare(expected, got, self.tolerance, reveal=reveal)
        if diff is None:
            return CaseVerdict(True)
        mistake = diagnose(self.mistakes, got, self.tolerance, mistaken) if mistaken else None
        if mistake is not None:
            diff += f"\nThis matches a known mistake: {mistake.explanation}."
        return CaseVerdict(False, diff)


def diagnose(mistakes: tuple[Mistake, ...], got: Any, tolerance: Tolerance,
             mistaken: Callable[[Mistake], Any]) -> Mistake | None:
    """The first known mistake whose answer matches what the submission returned."""
    for mistake in mistakes:
        try:
            answer = mistaken(mistake)
        except Exception:
            continue  # the mistake crashes on this input: it explains nothing here
        if compare(answer, got, tolerance) is None:
            return mistake
    return None

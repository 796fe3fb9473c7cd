"""What a plugin contributes: checks, their cases and how they are judged.

A `Check` has three parts that run in three places:

- ``make_cases(ctx)`` in the grading process: draws the case inputs (plain
  data) from the check's seeded generator.
- ``scenario(modules, args)`` in the sandboxed child, once per case, with the
  submission's modules (and, for the expected value, in the grading process
  with the reference modules). It must be a module-level function of a module
  that does not import the reference: the fork server imports it by name.
- ``judge(case, expected, got)`` in the grading process: a `CaseVerdict`.
  The default compares the two with `comparison.compare` and the check's
  tolerance. Once every case is judged, the grading run asks the check's
  known mistakes whether one of them explains every answer (`explains`).

Points only for work done, verdicts only from data: a *property* check
(arguments left unchanged, ValueError outside the domain, determinism,
causality) returns `property_result(answer, observed)`: the call's answer
beside what the property is judged from, as data (the arguments as the call
left them, the name of the exception raised, both results of a repeated
call), never a judgement made in the child. Where the property needs
computing from the data, the check's `holds(args, observed)` computes it in
the grading process, for the reference's observations and the submission's
alike. A case passes where the property holds as the reference's does and
the call's own answer is right: a property never pays beside a wrong answer.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .comparison import Tolerance, compare
from .sandbox.limits import Limits

if TYPE_CHECKING:
    from .speed import Timing

VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")
DEVICES = ("cpu", "cuda")
# What a check that needs CUDA becomes where there is none.
WHEN_ABSENT = ("cpu", "not_counted")
ANSWER, PROPERTY = "answer", "property"


def property_result(answer: Any, observed: Any) -> dict:
    """What the scenario of a property check returns: the call's answer and what the property is judged from.

    `observed` is data the student's code produced (never a verdict): the grading process judges it,
    through the check's `holds` where it needs computing.
    """
    return {ANSWER: answer, PROPERTY: observed}


def raised(call) -> str:
    """The name of the exception `call` raises, or "no exception": a bad-argument property's value."""
    try:
        call()
    except Exception as exc:
        return type(exc).__name__
    return "no exception"


BESIDE = "beside"  # a case's second input (`asked_beside`)


def asked_beside(scenario: Callable | None = None, *, left_out: tuple[str, ...] = ()) -> Callable:
    """`scenario` answering the case's second input too, where the case holds one (`args["beside"]`, the
    arguments that differ): an edge whose right answer needs no work (an empty corpus, rows of one entry,
    an infinite perplexity) is asked beside an ordinary input, so that only real work earns that case.
    The second answers come under their keys with " beside" added, but for `left_out` (a text the child
    words, not an answer); an answer that is not a dict comes as {"answer": ..., "answer beside": ...}."""

    if scenario is None:  # @asked_beside(left_out=...)
        return functools.partial(asked_beside, left_out=left_out)

    @functools.wraps(scenario)
    def with_beside(modules, args):
        answer = scenario(modules, args)
        if not (isinstance(args, dict) and args.get(BESIDE)):
            return answer
        other = scenario(modules, {**args, **args[BESIDE], BESIDE: None})
        if not isinstance(answer, dict):
            answer, other = {ANSWER: answer}, {ANSWER: other}
        return {**answer, **{f"{key} {BESIDE}": v for key, v in other.items() if key not in left_out}}

    return with_beside


@dataclass
class Case:
    """One input of a check. `label` is what a student reads, e.g. ``pad(['a'], n=3)``."""

    label: str
    args: Any
    # This case's own tolerance, where it differs from the check's (float32 inputs).
    tolerance: Tolerance | None = None


@dataclass
class CaseVerdict:
    passed: bool
    message: str = ""


@dataclass(frozen=True)
class Mistake:
    """A known mistake, recognised by making it in a copy of the reference.

    Made by ``edits`` of the reference's source, ``(file, its text, the
    mistaken text)``, by ``patch(modules)``, which changes fresh copies of
    the reference modules (keyed like the scenario's ``modules``), or both.
    The oracle runs the check's scenario on the flawed copy; a submission
    whose every answer matches it is told the mistake by name.
    """

    name: str
    explanation: str
    patch: Callable[[dict[str, Any]], None] | None = None
    edits: tuple[tuple[str, str, str], ...] = ()


def together(first: Mistake, second: Mistake) -> Mistake:
    """Both mistakes made at once: published code often carries two (the handout's GRU form with the
    inputs concatenated the other way), and then neither alone explains its answers."""

    def both(modules: dict[str, Any]) -> None:
        for patch in (first.patch, second.patch):
            if patch is not None:
                patch(modules)

    return Mistake(
        f"{first.name}+{second.name}",
        f"two known mistakes together: {first.explanation}; and {second.explanation}",
        patch=both if first.patch or second.patch else None,
        edits=first.edits + second.edits,
    )


# Pairs are tried for checks with at most this many known mistakes (21 pairs): each pair is a run of the
# reference per case, and a check with more (the transformer's model, 13: 78 pairs) would spend longer
# naming two mistakes than grading the submission.
MAX_PAIRED = 7


@functools.lru_cache(maxsize=256)
def pairs(mistakes: tuple[Mistake, ...]) -> tuple[Mistake, ...]:
    """Every two of `mistakes` made together (`together`), in their order, where there are at most MAX_PAIRED
    of them: the same objects each time, so that their answers are computed once."""
    if len(mistakes) > MAX_PAIRED:
        return ()
    return tuple(together(a, b) for i, a in enumerate(mistakes) for b in mistakes[i + 1 :])


@dataclass
class CaseContext:
    """What `make_cases` may use: the seeded generator, the chosen variant, the device it runs on."""

    rng: np.random.Generator
    variant: dict[str, Any]
    device: str = "cpu"


@dataclass
class Check:
    name: str
    title: str
    scenario: Callable[[dict[str, Any], Any], Any]
    make_cases: Callable[[CaseContext], list[Case]]
    # The submitted files the scenario imports; left empty, every file of the
    # assignment (filled in from assignment.toml when the check is bound).
    files: tuple[str, ...] = ()
    # What the scenario runs, as "file stem.top-level name" ("layers.LayerNorm"),
    # with what those reach: a forbidden API found there fails this check.
    # Left empty, anything in the check's files.
    uses: tuple[str, ...] = ()
    tolerance: Tolerance = field(default_factory=Tolerance)
    mistakes: tuple[Mistake, ...] = ()
    # judge(check, case, expected, got, reveal=...) replaces the comparison.
    judge: Callable[..., CaseVerdict] | None = None
    # Said to the student when a case runs out of time.
    timeout_hint: str = ""
    # A property check: its scenario returns property_result(answer, observed).
    property_check: bool = False
    # holds(args, observed) -> what is judged, computed in the grading process from a case's arguments
    # and the raw data the code returned (the reference's and the submission's alike): a property's
    # values, or for another check a summary of its answer (a constructor's draws -> "every W within
    # +-1/sqrt(J)"), so that no verdict is a claim the child makes. A module-level function of a
    # public module. None: the answers are compared as they are.
    holds: Callable[[Any, Any], Any] | None = None
    # A timing check: how its laps are timed and judged (`lmgrade.speed`).
    timing: Timing | None = None
    # The checks of the components this check's scenario runs the student's code of
    # (a block runs the student's LayerNorm): where one of them fails in the same
    # grading and this check fails too, its cases run again with the failed
    # components replaced by the grader's stand-ins (`stand_in`), and it is paid
    # where that run passes.
    composes: tuple[str, ...] = ()
    # What this check grades, as "file stem.Name" or "file stem.Class.method": the classes,
    # functions and methods whose answers it judges (a method of a class whose state the
    # contract leaves free is stood in for alone, its object untouched). Where it fails, a
    # check that composes it runs again with these names replaced by the grader's stand-ins
    # (`lmgrade.stand_in`). A composed check is given stand-ins only where it names its own,
    # none of them meeting the stand-ins' (so a stand-in never answers for what the check
    # grades). Empty: the check says nothing of what it grades, and gets no stand-in.
    grades: tuple[str, ...] = ()
    # Whether a stand-in can answer for what this check grades: False where the contract leaves free
    # the state it changes (fit's counts, kept however a student likes), so no replay could hand it on.
    stands_in: bool = True
    # Defaults that assignment.toml may override.
    points: float = 1.0
    visibility: str = "visible"
    limits: Limits = field(default_factory=Limits)
    # The device it needs ("cuda" or "cpu") and, for "cuda", what it becomes
    # on a machine without one: run on the CPU with CPU bounds, or not counted.
    device: str = "cpu"
    when_absent: str = "not_counted"
    # Set when this machine cannot run it and its points do not count: why.
    unavailable: str = ""

    def tolerance_of(self, case: Case) -> Tolerance:
        return case.tolerance or self.tolerance

    @property
    def scenario_ref(self) -> str:
        return f"{self.scenario.__module__}:{self.scenario.__qualname__}"

    def verdict(self, case: Case, expected: Any, got: Any, *, reveal: bool, dead: str | None = "") -> CaseVerdict:
        """Judge one case's answer (`dead` is no longer read: answers that merely show work earn nothing)."""
        if self.holds is not None and not self.property_check:
            expected = self.holds(case.args, expected)
            try:
                got = self.holds(case.args, got)
            except Exception:  # raw data of another shape than the reference's
                return CaseVerdict(False, "the answer is not shaped like the contract's")
        if self.judge is not None:
            return self.judge(self, case, expected, got, reveal=reveal)
        tolerance = self.tolerance_of(case)
        if self.property_check:
            return self._property_verdict(case, expected, got, tolerance, reveal)
        diff = compare(expected, got, tolerance, reveal=reveal)
        return CaseVerdict(diff is None, diff or "")

    def summarized(self, case: Case, answer: Any) -> Any:
        """An answer as a check other than a property judges it (`holds`); None where it cannot be read."""
        if self.holds is None or self.property_check:
            return answer
        try:
            return self.holds(case.args, answer)
        except Exception:
            return None

    def judged_property(self, case: Case, observed: Any) -> Any:
        """The property's values from a case's observations, computed here (`holds`)."""
        return observed if self.holds is None else self.holds(case.args, observed)

    def _property_verdict(self, case: Case, expected: Any, got: Any, tolerance: Tolerance, reveal: bool) -> CaseVerdict:
        """The property as the grading process judges it from the observations; paid beside a right answer only."""
        if not isinstance(got, dict) or set(got) != {ANSWER, PROPERTY}:
            return CaseVerdict(False, "the answer is not shaped like the contract's")
        want = self.judged_property(case, expected[PROPERTY])
        try:
            seen = self.judged_property(case, got[PROPERTY])
        except Exception:  # observations of another shape than the reference's: the property cannot hold
            return CaseVerdict(
                False, "the property cannot be judged: what the call left is not shaped like the contract's"
            )
        holds = compare(want, seen, tolerance, reveal=reveal)
        if holds is not None:
            return CaseVerdict(False, f"the property does not hold: {holds}{exception_hint(want, seen)}")
        answer = compare(expected[ANSWER], got[ANSWER], tolerance, reveal=reveal)
        if answer is None:
            return CaseVerdict(True, "the property holds")
        return CaseVerdict(
            False,
            f"the property holds, but the call's own answer is wrong, so the property earns nothing here: {answer}",
        )


ASSERT_HINT = (
    "an assert is not the contract's ValueError (and python -O removes it): use raise ValueError, "
    "the contract asks for it"
)


def exception_hint(expected: Any, got: Any) -> str:
    """A named mistake any assignment may make: AssertionError where the contract asks for ValueError."""
    if "ValueError" in repr(expected) and "AssertionError" in repr(got):
        return "\n" + ASSERT_HINT
    return ""


def explains(answers: list[Any], got: list[Any], tolerances: list[Tolerance]) -> bool:
    """Whether a mistake's answers match everything a submission returned.

    A mistake is named only where it accounts for every answer of the check,
    the right ones included; one case where it coincides is not enough.
    """
    return all(compare(a, g, t) is None for a, g, t in zip(answers, got, tolerances, strict=True))

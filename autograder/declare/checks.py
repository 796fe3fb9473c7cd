"""What a plugin contributes: checks, their cases and how they are judged.

A `Check` has three parts that run in three places:

- ``make_cases(ctx)`` in the grading process: draws the case inputs (plain
  data) from the check's seeded generator.
- ``scenario(modules, **args)`` in the sandboxed child, once per case, with the
  case's arguments by name and the submission's modules (and, for the expected value, in the grading process
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

from ..core.comparison import Tolerance, compare
from ..core.scenario_arguments import (
    BESIDE,
    BESIDE_OF,
    call_scenario,
    takes_args_by_name,
    takes_args_whole,
    without_beside,
)
from ..sandbox.limits import Limits

if TYPE_CHECKING:
    from ..grading.timing_laps import Timing

VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")
DEVICES = ("cpu", "cuda")
# What a check that needs CUDA becomes where there is none.
WHEN_ABSENT = ("cpu", "not_counted")
ANSWER = "answer"
"""The key of a property check's result (`property_result`) that holds the call's own answer."""
PROPERTY = "property"
"""The key of a property check's result (`property_result`) that holds what the property is judged from.

What pays, for a property check (`Check.property_check`) without a `Check.judge`: a case passes, and
earns its share of the check's points (`points * passed / cases`), exactly where

1. the scenario returned `property_result(answer, observed)`, a dict of these two keys and no other;
2. the property holds as the reference's does: `holds(args, observed)` (or `observed` itself, where the
   check has no `holds`), computed in the grading process for the submission's observation and for the
   reference's, compares equal within the case's tolerance; and
3. the call's own answer matches the reference's answer within that tolerance.

A property therefore never pays beside a wrong answer: a submission that returns constants, or
raises, earns nothing on it. A failed case says which of the three it missed ("the property does not
hold: ...", or "the property holds, but the call's own answer is wrong").
"""


def property_result(answer: Any, observed: Any) -> dict:
    """What the scenario of a property check returns: the call's answer and what the property is judged from.

    `observed` is data the student's code produced (never a verdict): the grading process judges it,
    through the check's `holds` where it needs computing. The result is `{ANSWER: answer, PROPERTY:
    observed}`; `PROPERTY` says exactly when a case of a property check pays.

    Args:
        answer: the call's own answer, compared with the reference's as any answer is.
        observed: plain data the property is judged from: the arguments as the call left them, the
            name of the exception raised (`raised`), both results of a repeated call.

    Returns:
        `{"answer": answer, "property": observed}`.
    """
    return {ANSWER: answer, PROPERTY: observed}


def raised(call) -> str:
    """The name of the exception `call` raises, or "no exception": a bad-argument property's value.

    Called in the sandbox by a scenario, so that the exception is data the grading process judges
    (`"ValueError"`), never a verdict the child makes. Only `Exception`s are caught: a forbidden API's
    stop, a `BaseException`, still ends the case.

    Args:
        call: a function of no arguments, e.g. `lambda: module.pad(words, 0)`.
    """
    try:
        call()
    except Exception as exc:
        return type(exc).__name__
    return "no exception"


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
        by_name = takes_args_by_name(scenario, args)
        # A scenario taking its arguments by name never sees the key "beside"; one of the older form is
        # given the dict as it always was.
        first = without_beside(args) if by_name else args
        answer = call_scenario(scenario, modules, first)
        if not (isinstance(args, dict) and args.get(BESIDE)):
            return answer
        second = {**first, **args[BESIDE]} if by_name else {**args, **args[BESIDE], BESIDE: None}
        other = call_scenario(scenario, modules, second)
        if not isinstance(answer, dict):
            answer, other = {ANSWER: answer}, {ANSWER: other}
        return {**answer, **{f"{key} {BESIDE}": v for key, v in other.items() if key not in left_out}}

    setattr(with_beside, BESIDE_OF, scenario)
    return takes_args_whole(with_beside)


@dataclass
class Case:
    """One input of a check. `label` is what a student reads, e.g. ``pad(['a'], n=3)``."""

    label: str
    """The case in a few words a student reads in the feedback (shown only where the check is visible)."""
    args: Any
    """The scenario's arguments: a dict of plain data (numbers, strings, lists, dicts, numpy arrays) keyed by
    the scenario's parameter names, drawn in the grading process and sent to the sandbox (any plain value,
    for a scenario of the older form `scenario(modules, args)`). An `args["beside"]` dict asks the same
    scenario a second input (`asked_beside`)."""
    tolerance: Tolerance | None = None
    """This case's own tolerance, where it differs from the check's (float32 inputs); None: the check's."""


@dataclass
class CaseVerdict:
    """One case judged: what a judge (`Check.judge`) returns."""

    passed: bool
    """Whether the case earns its share of the check's points."""
    message: str = ""
    """What the student is told about the case: where and by how much it is off (nothing for a pass)."""
    property_held: bool = False
    """A property check's case that failed on its answer alone: the property was seen to hold beside a
    wrong answer. Where a failed component explains that answer, the grader's stand-in may pay the case
    (`lmgrade.declare.composition`)."""


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
    """A short identifier, unique within the check (a `Bug`'s `loses` may name it)."""
    explanation: str
    """What the student is told the answers match, e.g. "divides by len(values) - 1 instead of len(values)"."""
    patch: Callable[[dict[str, Any]], None] | None = None
    """`patch(modules)`: changes fresh copies of the reference's modules, keyed by file stem as a scenario's
    `modules` are; None: `edits` alone make the mistake."""
    edits: tuple[tuple[str, str, str], ...] = ()
    """`(file, the reference's text, the mistaken text)`: each text must occur exactly once in that file."""
    paired: bool = True
    """Whether it is tried together with another (`pairs`): not for a mistake that shows only by raising,
    which explains no answer of a pair."""


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
    mistakes = tuple(m for m in mistakes if m.paired)
    if len(mistakes) > MAX_PAIRED:
        return ()
    return tuple(together(a, b) for i, a in enumerate(mistakes) for b in mistakes[i + 1 :])


@dataclass
class CaseContext:
    """What `make_cases` may use: the seeded generator, the chosen variant, the device it runs on."""

    rng: np.random.Generator
    """The check's own generator, seeded from the assignment, the check's name and the course secret
    (`LMGRADE_SECRET`; `lmgrade check` and a student bundle use the public default): the same cases every
    grading, and hidden cases that cannot be drawn without the secret."""
    variant: dict[str, Any]
    """The chosen variant, its values typed as assignment.toml's defaults are (`{"activation": "tanh"}`,
    `{"pre_ln": False}`)."""
    device: str = "cpu"
    """Where the check's cases run: "cuda" for a GPU check on a machine with one, else "cpu" (draw CPU
    sizes there)."""


@dataclass
class Check:
    """One graded item of an assignment: its cases, how a case is run, how its answer is judged.

    A plugin returns its checks from the `lmgrade_checks` hook (an `AssignmentPlugin`'s `checks`);
    assignment.toml then gives its points and may override `visibility`, `limits`, `device` and `when_absent`
    (`[checks.NAME]`). The check's points are shared equally by its cases: a check earns
    `points * passed / cases`. A case fails on a wrong answer, an exception, a forbidden API or a run
    past its limits; a failed case says where and by how much, and names a known mistake (`mistakes`)
    that explains every answer of the check.

    Example:
        ```python
        Check("mean", "mean of a short list", scenarios.mean, lambda ctx: cases(ctx, 3),
              tolerance=Tolerance(rtol=1e-9, atol=1e-12), mistakes=(OFF_BY_ONE,))
        ```
    """

    name: str
    """The check's name, unique within the assignment: its table in assignment.toml (`[checks.NAME]`), the
    `NAME` of `lmgrade check --case NAME:N`, and its column in regrade's scores.csv."""
    title: str
    """What the check tests, in a few words a student reads (the handout's grading table, the reports)."""
    scenario: Callable[..., Any]
    """`scenario(modules, **args) -> plain data`, run once per case: in the sandboxed child on the submission's
    modules (`{file stem: module}`, e.g. `modules["ngram"]`) with the case's arguments as named parameters
    (`def pad(modules, sentence, n)` for `Case(label, {"sentence": ..., "n": 3})`; a parameter with a default
    is one a case may leave out), and in the grading process on the reference's, for the expected value.
    The older form `scenario(modules, args)`, the case's `args` whole, is called as before
    (`lmgrade.core.scenario_arguments`). It must be a module-level function of a module
    that does not import the reference (the fork server imports it by name), and return plain data:
    numbers, strings, lists, dicts, numpy arrays (never pickled)."""
    make_cases: Callable[[CaseContext], list[Case]]
    """`make_cases(ctx) -> list[Case]`, run in the grading process: the check's cases, drawn from `ctx.rng`
    (`CaseContext`), so the same every grading and, for hidden checks, unknown without the course secret."""
    files: tuple[str, ...] = ()
    """The submitted files the scenario imports; left empty, every file of the assignment (filled in from
    assignment.toml when the check is bound). A check that names its files costs nothing where another
    file is broken."""
    uses: tuple[str, ...] = ()
    """What the scenario runs, as "file stem.top-level name" ("layers.LayerNorm"), with what those reach: a
    forbidden API (assignment.toml's `[forbidden]`) found there fails this check. Left empty, anything in
    the check's files."""
    tolerance: Tolerance = field(default_factory=Tolerance)
    """How close a number must be to the reference's, for every case without a tolerance of its own
    (`Case.tolerance`)."""
    mistakes: tuple[Mistake, ...] = ()
    """The known mistakes whose answers are computed beside the reference's: one that explains every answer
    of the check (every case, the right ones included) is named in the feedback; for a check with at most
    seven, every two of them made together are tried too."""
    judge: Callable[..., CaseVerdict] | None = None
    """`judge(check, case, expected, got, *, reveal) -> CaseVerdict`, in place of the comparison (and of a
    property check's verdict). `expected` and `got` are the reference's and the submission's answers to
    `case` (summarised by `holds` first, for a check that is not a property check); `reveal` is False
    for a check that is not `visible`, whose message must then show no input, expected value or output.
    A module-level function of a public module: a student bundle carries it. None: `compare` with the
    case's tolerance."""
    timeout_hint: str = ""
    """Said to the student, after the time limit, when a case runs out of time."""
    property_check: bool = False
    """A property check: its scenario returns `property_result(answer, observed)`, and a case pays only where
    the property holds beside a right answer (`lmgrade.PROPERTY` says exactly when)."""
    holds: Callable[[Any, Any], Any] | None = None
    """`holds(args, observed) -> what is judged`, computed in the grading process from a case's arguments and
    the raw data the code returned (the reference's and the submission's alike): a property's values, or
    for another check a summary of its answer (a constructor's draws -> "every W within +-1/sqrt(J)"), so
    that no verdict is a claim the child makes. A module-level function of a public module. None: the
    answers are compared as they are."""
    timing: Timing | None = None
    """A timing check: how its laps are timed and judged (`lmgrade.grading.timing_laps.Timing`); its scenario calls
    `run_laps`. None: an ordinary check."""
    composes: tuple[str, ...] = ()
    """The checks of the components this check's scenario runs the student's code of (a block runs the
    student's LayerNorm): where one of them fails in the same grading and this check fails too, its cases
    run again with the failed components replaced by the grader's stand-ins (`lmgrade.grading.stand_in`), and it
    is paid where that run passes ("Passes once LayerNorm is fixed"). This takes effect only in a check
    that names its own `grades` (and in components whose checks name theirs): a check without `grades`
    never gets a stand-in run, and earns what its own cases earn."""
    grades: tuple[str, ...] = ()
    """What this check grades, as "file stem.Name" or "file stem.Class.method": the classes, functions and
    methods whose answers it judges (a method of a class whose state the contract leaves free is stood in
    for alone, its object untouched). Where it fails, a check that composes it runs again with these names
    replaced by the grader's stand-ins (`lmgrade.grading.stand_in`). A composed check is given stand-ins only where
    it names its own, none of them meeting the stand-ins' (so a stand-in never answers for what the check
    grades). Empty: the check says nothing of what it grades, and gets no stand-in."""
    stands_in: bool = True
    """Whether a stand-in can answer for what this check grades: False where the contract leaves free the
    state it changes (fit's counts, kept however a student likes), so no replay could hand it on."""
    points: float | None = None
    """The check's points, only for a check whose assignment.toml gives it none (a check a plugin adds to an
    assignment it does not own). A check's points are set in one place: assignment.toml's `[checks.NAME]`
    (`points`, or `points_when` by variant) where it gives them, else here; both, or neither, is an error
    when the assignment is loaded. Once bound, always a number."""
    visibility: str = "visible"
    """Gradescope's visibility, unless assignment.toml gives another: "visible" (the only one whose inputs,
    expected values and output are ever shown, and the only one a student bundle runs), "hidden",
    "after_due_date" or "after_published"."""
    limits: Limits = field(default_factory=Limits)
    """What one sandboxed run of a case may use; assignment.toml's `[limits]` and `[checks.NAME.limits]`
    override it key by key."""
    device: str = "cpu"
    """The device the check needs: "cpu", or "cuda" for a check that runs on a GPU where there is one."""
    when_absent: str = "not_counted"
    """What a "cuda" check becomes on a machine without one: "cpu" (run on the CPU, with CPU sizes and
    bounds) or "not_counted" (listed at 0 of 0 points, with the reason). Replaced when the check is bound:
    by assignment.toml's `when_absent` for the check, else its `[gpu] when_absent`, else "not_counted"."""
    unavailable: str = ""
    """Set by the harness when this machine cannot run the check and its points do not count: why."""

    def tolerance_of(self, case: Case) -> Tolerance:
        return case.tolerance or self.tolerance

    @property
    def scenario_ref(self) -> str:
        return f"{self.scenario.__module__}:{self.scenario.__qualname__}"

    def verdict(self, case: Case, expected: Any, got: Any, *, reveal: bool, dead: str | None = "") -> CaseVerdict:
        """Judge one case's answer: `judge` where the check has one, else the property's verdict (`PROPERTY`)
        or the comparison with the case's tolerance (`dead` is no longer read: answers that merely show work
        earn nothing)."""
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
            property_held=True,
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

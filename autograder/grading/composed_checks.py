"""A composed check's second look: where a component it runs failed its own check, its cases run again with that
component stood in by the grader's, and it is paid for what the submission's own code did (Grader's part that
`ComposedChecks` holds).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..boundary import wire
from ..declare import composition
from ..declare.checks import ANSWER, PROPERTY, Case, Check, Mistake
from ..reports.results import Verdict
from ..sandbox.pool import CaseOutcome, HarnessError
from . import stand_in
from .expected_values import Raised
from .feedback import outcome_verdict, summarize


def _answers_alike(check: Check, case: Case, mistaken: Any, own: Any) -> bool:
    """Whether the submission's answer on `case` is what a known mistake answers there, as the check judges
    answers. A judge that cannot read the mistake's answer as an expected value (a sampler's table) says no."""
    try:
        return outcome_verdict(check, case, mistaken, CaseOutcome("ok", value=own), True).passed
    except Exception:
        return False


def _with_property(mistaken: Any, expected: Any) -> Any:
    """A property check's case as a known mistake answers it inside the domain, with the reference's property:
    the submission's run matches it where its answer is the mistake's and its property holds."""
    if isinstance(mistaken, dict) and isinstance(expected, dict) and ANSWER in mistaken and PROPERTY in expected:
        return {ANSWER: mistaken[ANSWER], PROPERTY: expected[PROPERTY]}
    return mistaken


def _own_output(verdict: Verdict) -> str:
    """What a check paid for its components' failures says of its own run after the note: its cases, no
    mistake named (the components' to name), and what the submission printed."""
    reveal = verdict.check.visibility == "visible"
    return summarize(verdict.cases, reveal, None) + ("\n" + verdict.printed if verdict.printed else "")


class ComposedChecks:
    """Grader's composed checks: the stand-in run, the cases paid for what the submission's own code did."""

    def with_stand_ins(
        self, verdict: Verdict, failed: list[Check], submission: Path, named: dict[str, Mistake] | None = None
    ) -> Verdict:
        """A failed check whose components `failed` too, paid where what it was seen to do shows its own code
        right: its stand-in run passes (`stand_in`), or else its answers are exactly those that the known
        mistake named on a failed component (`named`: check name -> mistake) gives on the same cases.

        The stand-in run: its cases run again with the failed components replaced by the grader's, which
        answers each call the child makes from what the reference's components did on the same cases. A
        property check is paid case by case. Otherwise the check keeps the verdict of its own answers, and
        nothing of the stand-in run (values, prints, exceptions) reaches the student.
        """
        check = verdict.check
        rescued: dict[int, str] = {}  # a property check's cases paid, and by what ("": the stand-in run)
        called = self._stand_in_rescue(verdict, failed, submission, rescued)
        if verdict.passed or called is None:
            return verdict
        cases = self.cases(check)
        # The known mistakes named on the failed components, each tried on this check's own cases.
        for component in failed:
            mistake = (named or {}).get(component.name)
            if mistake is None:
                continue
            # As expected values: a sampler's draws are judged against the mistaken model's table.
            answers = self.expected.mistake_answers(check, cases, mistake, as_expected=True)
            if check.property_check:
                # Only the call's own answer is the component's doing: the property (an exception outside the
                # domain, an argument left unchanged) is this check's, judged on the submission's own run. A
                # mistake modelled without the property (a pad with no validation) still explains the answer.
                expected = self.cases_and_expected(check)[1]
                answers = [_with_property(a, e) for a, e in zip(answers, expected)]
            matched = [
                i
                for i, (case, answer, own) in enumerate(zip(cases, answers, verdict.answers))
                if own is not None and not isinstance(answer, Raised) and _answers_alike(check, case, answer, own)
            ]
            if check.property_check:
                for i in matched:
                    if not verdict.cases[i][1].passed and i not in rescued and self._property_held(verdict, i):
                        rescued[i] = composition.mistake_reason(component, mistake)
            elif len(matched) == len(cases):
                self._paid(verdict, composition.mistake_note(component, mistake), (component.name,))
                return verdict
        if rescued:
            self._pay_cases(verdict, rescued, called)
        return verdict

    def _paid(self, verdict: Verdict, note: str, stood_in: tuple[str, ...]) -> None:
        """A composed check paid in full: its own answers were its failed components' doing, so a known mistake
        they match is the components' to name (on their own checks), never this check's."""
        verdict.score, verdict.mistake = verdict.check.points, None
        verdict.output = note + "\n" + _own_output(verdict)
        verdict.stood_in = stood_in

    def _stand_in_rescue(
        self, verdict: Verdict, failed: list[Check], submission: Path, rescued: dict[int, str]
    ) -> list[Check] | None:
        """The stand-in run: pays `verdict` where it passes (a property check's cases go into `rescued`).
        Returns the failed components it replaced (none where no run could be made), or None where nothing
        more is to be tried (every case stopped at a stub's own NotImplementedError; a local run without the
        record)."""
        check = verdict.check
        # A failed component inside another failed one (a LayerNorm in a failed TransformerLM) is never
        # reached once the outer one stands in: only the outermost are replaced and recorded.
        by_name = {c.name: c for c in self.assignment.checks}
        outer = composition.outermost(failed, by_name)
        names = composition.stand_in_names(check, outer)
        # Every case stopped at a NotImplementedError that no stand-in replaces (a stub's own body, its
        # class's __init__): no run could pass, and none is made (nor the reference imported for it).
        raised = verdict.not_implemented_in
        if raised is not None and not (names and any(stand_in.replaces(names, f) for f in raised)):
            return None
        tables = self.stand_in_tables(check, names) if names else None
        if names and tables is None and self.oracle.reference_folder is None:
            # A student's bundle holds no record of these components on these cases (too many calls to ship):
            # the course's autograder has one, and may pay this check where this run cannot.
            verdict.output += "\n" + composition.local_note(outer)
            return None
        # Named and replaced: the failed components the reference itself calls on these cases (its record
        # holds their calls); a component the check never runs is not blamed, and none called, no run.
        called = [c for c in outer if tables and stand_in.made(tables, c.grades)]
        if not called:
            return []
        cases, expected = self.cases_and_expected(check)
        try:
            run = self._stand_in_run(check, submission, cases, names, tables)
        except HarnessError:  # a record too large to send: no stand-in, the check keeps its own verdict
            return []
        reveal = check.visibility == "visible"
        if check.property_check:
            for i, ((case, mine), exp, table, outcome) in enumerate(zip(verdict.cases, expected, tables, run.outcomes)):
                # Not where the stand-in answered a call the scenario made itself: that shows nothing of the
                # submission's. Elsewhere the submission's own code made the case's call, with the grader's
                # component beneath it: where the answer is right and the property holds, that code has it.
                if mine.passed or stand_in.called_directly(table, names):
                    continue
                if outcome_verdict(check, case, exp, outcome, reveal).passed:
                    rescued[i] = ""
        elif all(outcome_verdict(check, c, e, o, reveal).passed for c, e, o in zip(cases, expected, run.outcomes)):
            self._paid(verdict, composition.note(check, called), tuple(c.name for c in called))
        return called

    def _property_held(self, verdict: Verdict, i: int) -> bool:
        """Whether the submission's own run of a property check's case `i` saw the property hold beside a wrong
        answer (its judge says so: judged here whole, as a hidden check's feedback does not say)."""
        if i >= len(verdict.answers) or verdict.answers[i] is None:  # not run (a forbidden API), or no answer
            return False
        case, answer = verdict.cases[i][0], verdict.answers[i]
        expected = self.cases_and_expected(verdict.check)[1][i]
        return outcome_verdict(verdict.check, case, expected, CaseOutcome("ok", value=answer), True).property_held

    @staticmethod
    def _pay_cases(verdict: Verdict, rescued: dict[int, str], called: list[Check]) -> None:
        """A property check's cases `rescued` paid: by the stand-in run of `called` (reason "") or by the known
        mistake a reason names."""
        check = verdict.check
        passed = sum(v.passed for _, v in verdict.cases) + len(rescued)
        verdict.score = check.points * passed / len(verdict.cases)
        if passed == len(verdict.cases):  # every failure was the components' doing
            verdict.mistake = None
            own = _own_output(verdict)
        else:
            own = verdict.output
        by_stand_in = sorted(i + 1 for i, why in rescued.items() if not why)
        lines = [composition.property_note(called, by_stand_in)] if by_stand_in else []
        by_reason: dict[str, list[int]] = {}
        for i, why in sorted(rescued.items()):
            if why:
                by_reason.setdefault(why, []).append(i + 1)
        lines += [composition.case_mistake_note(numbers, why) for why, numbers in by_reason.items()]
        verdict.output = "\n".join([*lines, own])
        verdict.stood_in = tuple(c.name for c in called) if by_stand_in else ()

    def _stand_in_run(self, check: Check, submission: Path, cases: list[Case], names: tuple, tables: list):
        # Encoded once per grader and set of names: a sampler's record holds thousands of calls (megabytes),
        # and every submission that fails the same components sends the same one. The record goes to the
        # run's supervisor, which answers the child's calls from it one at a time: never to the child.
        key = (self.expected.drawn_from(check), names)
        with self._lock:
            encoded = self._stand_in_cases.get(key)
        if encoded is None:
            shapes = stand_in.shapes([call for table in tables for call in table], names)
            encoded = (
                wire.Encoded(
                    [
                        {"scenario": check.scenario_ref, "names": list(names), "shapes": shapes, "args": case.args}
                        for case in cases
                    ]
                ),
                wire.Encoded(tables),
            )
            with self._lock:
                self._stand_in_cases[key] = encoded
        return self.pool.run(
            scenario=stand_in.REPLAY,
            submission=submission,
            files=list(check.files),
            cases=encoded[0],
            limits=self.limits_of(check),
            device=check.device,
            stand_in_record=encoded[1],
        )

    def stand_in_tables(self, check: Check, names: tuple[str, ...]) -> list | None:
        """The calls the reference makes of `names` on each case of `check`, recorded once per grader and
        set of names; None where they cannot be (no reference and no record of them, or too many calls)."""
        key = (self.expected.drawn_from(check), names)
        with self._lock:
            if key in self._stand_in_tables:
                return self._stand_in_tables[key]
        cases, _ = self.cases_and_expected(check)
        tables = self.oracle.stand_in_calls(check, cases, names)
        with self._lock:
            self._stand_in_tables[key] = tables
        return tables

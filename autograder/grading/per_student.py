"""A grader for one student's hidden inputs, sharing everything else with the course's grader.

With per-student hidden inputs (`hidden_inputs`), a check that is not
``visible`` draws its cases from the student's own secret. A regrade grades
the whole class with one `Grader` (one sandbox pool, the public checks'
expected values computed once); `for_student` gives, for one submission, a
grader that uses that pool and those public values, and draws, computes and
keeps apart only what the student's hidden checks need: their cases, the
reference's answers on them, its time on them (their limits), its known
mistakes' answers and its stand-in records. The reference's answers go to
the expected-value store, keyed by the cases, so a student graded again
finds them there: they are cached per seed.
"""

from __future__ import annotations

from typing import Any

from ..core.hidden_inputs import HiddenInputs
from ..declare.checks import Case, Check, Mistake
from ..sandbox.limits import Limits
from ..sandbox.pool import CaseOutcome
from .expected_values import ExpectedValues
from .grader import Grader


def is_hidden(check: Check) -> bool:
    """Whether the check's cases are drawn per student: every check whose inputs students never see."""
    return check.visibility != "visible"


class StudentExpectedValues:
    """The course's expected values for the public checks, the student's own for the hidden ones."""

    def __init__(self, course: ExpectedValues, student: ExpectedValues):
        self.course, self.student = course, student
        self.store = course.store

    def _of(self, check: Check) -> ExpectedValues:
        return self.student if is_hidden(check) else self.course

    def cases(self, check: Check) -> list[Case]:
        return self._of(check).cases(check)

    def drawn_from(self, check: Check) -> tuple:
        return self._of(check).drawn_from(check)

    def of(self, check: Check) -> tuple[list[Case], list[Any]]:
        return self._of(check).of(check)

    def known(self, check: Check) -> bool:
        return self._of(check).known(check)

    def limits_of(self, check: Check) -> Limits:
        return self._of(check).limits_of(check)

    def reference_seconds(self, check: Check) -> float | None:
        return self._of(check).reference_seconds(check)

    def mistake_answers(
        self, check: Check, cases: list[Case], mistake: Mistake, as_expected: bool = False
    ) -> list[Any]:
        return self._of(check).mistake_answers(check, cases, mistake, as_expected)

    def diagnose(self, check: Check, cases: list[Case], outcomes: list[CaseOutcome]) -> Mistake | None:
        return self._of(check).diagnose(check, cases, outcomes)

    def record(self) -> None:
        self.course.record()
        self.student.record()


class StudentGrader(Grader):
    """`shared`, grading one student's hidden inputs (drawn from `secret`): see the module's docstring.

    Made without `Grader.__init__`: it starts nothing and owns nothing. Closing it closes nothing; the
    shared grader's pool, import probe, reference copy and caches serve it, and are closed with the shared
    grader. The caches are keyed by what their entries were computed from (`drawn_from`: a check's seed
    and the variant), so a public check's stand-in record serves the class, and a hidden one's only the
    student whose cases it was recorded on.
    """

    def __init__(self, shared: Grader, secret: str):
        self.__dict__.update(vars(shared))
        self.shared = shared
        own = ExpectedValues(shared.assignment, shared.variant, shared.oracle, secret=secret, store=shared.store)
        self.expected = StudentExpectedValues(shared.expected, own)

    def close(self) -> None:
        """Nothing of its own to close (the shared grader's pool is closed with that grader)."""

    def reference_submission(self):
        return self.shared.reference_submission()


def for_student(grader: Grader, hidden: HiddenInputs | None) -> Grader:
    """The grader that grades with `hidden`'s inputs: `grader` itself where they are the course's."""
    if hidden is None or hidden.secret is None:
        return grader
    return StudentGrader(getattr(grader, "shared", grader), hidden.secret)

"""What grading gives: one check's `Verdict` and one submission's `GradingRun`, and their plain forms.

Grading makes these and the reports read them; neither imports the other.
`Verdict` and `GradingRun` live in the grading process (a verdict keeps its
`Check`, its cases, the expected values and the answers, for the terminal's
report, a bundle's pytest and the diagnosis of composed checks).
`CheckScore` and `Graded` are the same grades as plain data, for what
crosses a process or lands on disk (a regrade's workers, regrade.json).
Gradescope's results.json is written from either by `reports.gradescope`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the Gradescope supervisor reads results without numpy
    from ..declare.checks import Case, CaseVerdict, Check, Mistake

HARNESS_FAULT_NOTE = (
    "The autograder itself failed, not your submission: please tell the course staff (your score is not final)."
)


@dataclass
class Verdict:
    """The grade of one check, computed in the grading process."""

    check: Check
    number: int
    score: float
    output: str
    cases: list[tuple[Case, CaseVerdict]] = field(default_factory=list)
    wall_s: float = 0.0
    defences: dict = field(default_factory=dict)
    mistake: Mistake | None = None
    # What the reference answered and what the submission did, case by case (None where it raised).
    expected: list = field(default_factory=list)
    answers: list = field(default_factory=list)
    # The components (check names) the grader's stand-ins replaced in the run that paid this check.
    stood_in: tuple[str, ...] = ()
    # Where every case raised NotImplementedError, the functions that raised it (None: not so).
    not_implemented_in: tuple[str, ...] | None = None
    printed: str = ""  # what the feedback says of the submission's own prints, after its cases
    # (CPU seconds, wall seconds): the limits the check's own run ran under, where a case of it was stopped by
    # them (the sandbox's account, hidden checks included); None where none was.
    time_limits: tuple[float, float] | None = None

    @property
    def max_score(self) -> float:
        return self.check.points

    @property
    def passed(self) -> bool:
        return self.score >= self.max_score

    def plain(self) -> CheckScore:
        """This verdict as plain data."""
        return CheckScore(
            self.check.name,
            round(self.score, 6),
            self.max_score,
            self.output,
            self.mistake.name if self.mistake else "",
            self.stood_in,
        )


def not_run(check: Check, number: int, cases: list[Case], reason: str) -> Verdict:
    """Zero for a check that cannot be run on this submission, every case with the reason."""
    from ..declare.checks import CaseVerdict  # here: the supervisor imports this module without numpy

    return Verdict(check, number, 0.0, reason, [(c, CaseVerdict(False, reason)) for c in cases])


@dataclass
class GradingRun:
    """What grading one submission gave."""

    submission: Path  # the folder that was graded
    note: str  # where the files were found, when not at the top; an import failure
    verdicts: list[Verdict]
    files_hash: str = ""  # of the assignment's files graded (`submission.graded_files_hash`)

    @property
    def score(self) -> float:
        return sum(v.score for v in self.verdicts)

    @property
    def max_score(self) -> float:
        return sum(v.max_score for v in self.verdicts)

    @property
    def defences(self) -> dict:
        return next((v.defences for v in self.verdicts if v.defences), {})


@dataclass(frozen=True)
class CheckScore:
    """A `Verdict` as plain data: what results.json and a regrade keep of it."""

    name: str
    score: float
    max_score: float
    output: str
    mistake: str = ""  # the known mistake the feedback named, if any
    stood_in: tuple[str, ...] = ()  # the failed components whose stand-ins paid it (its feedback names them)

    @property
    def passed(self) -> bool:
        return self.score >= self.max_score


@dataclass(frozen=True)
class Graded:
    """A `GradingRun` as plain data, or why a submission has none (`error`)."""

    checks: tuple[CheckScore, ...] = ()
    note: str = ""  # where the files were found, when not at the top
    wall_s: float = 0.0
    error: str = ""
    files_hash: str = ""  # of the assignment's files graded: identical submissions share it
    zero_cause: str = ""  # for a score of 0, why (`regrade.graded.ZERO_CAUSES`)
    # What the grading observed that a person should look at: (kind, check, detail), from the grader's own
    # verdicts (`regrade.graded.observed_facts`), never from text the submission wrote.
    observed: tuple[tuple[str, str, str], ...] = ()

    @property
    def score(self) -> float:
        return sum(c.score for c in self.checks)

    @property
    def max_score(self) -> float:
        return sum(c.max_score for c in self.checks)

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Graded:
        return cls(
            checks=tuple(CheckScore(**{**c, "stood_in": tuple(c.get("stood_in", ()))}) for c in data.get("checks", ())),
            note=data.get("note", ""),
            wall_s=data.get("wall_s", 0.0),
            error=data.get("error", ""),
            files_hash=data.get("files_hash", ""),
            zero_cause=data.get("zero_cause", ""),
            observed=tuple(tuple(str(part) for part in fact) for fact in data.get("observed", ())),
        )

    @classmethod
    def of(cls, run: GradingRun, *, wall_s: float = 0.0, zero_cause: str = "", observed: tuple = ()) -> Graded:
        return cls(
            tuple(v.plain() for v in run.verdicts),
            run.note,
            wall_s,
            files_hash=run.files_hash,
            zero_cause=zero_cause,
            observed=observed,
        )

    @classmethod
    def failed(cls, exc: BaseException) -> Graded:
        return cls(error=describe_failure(exc))


def describe_failure(exc: BaseException) -> str:
    """One line saying what went wrong: the type and the first line of the message."""
    message = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {message[0]}" if message else type(exc).__name__

"""One submission's grade as plain data: what a worker sends back to the client.

`grade_folder` is the one function every executor runs, in this process or
on a Dask worker: it grades through `grade_submission` with the worker's
`Grader` and returns a dict of strings and numbers (no harness objects cross
the wire, so a client and its workers need only agree on this shape). Any
failure of the harness on one submission comes back as that submission's
`error`, never as an exception that would stop the others.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..assignment import Assignment
from ..feedback import NOT_IMPLEMENTED
from ..grading import Grader, GradingRun, grade_submission


@dataclass(frozen=True)
class CheckScore:
    name: str
    score: float
    max_score: float
    output: str
    mistake: str = ""        # the known mistake the feedback named, if any

    @property
    def passed(self) -> bool:
        return self.score >= self.max_score


@dataclass(frozen=True)
class Graded:
    """A submission's verdicts, or why it has none (`error`)."""

    checks: tuple[CheckScore, ...] = ()
    note: str = ""           # where the files were found, when not at the top
    wall_s: float = 0.0
    error: str = ""
    files_hash: str = ""     # of the assignment's files graded: identical submissions share it
    zero_cause: str = ""     # for a score of 0, why (`ZERO_CAUSES`)

    @property
    def score(self) -> float:
        return sum(c.score for c in self.checks)

    @property
    def max_score(self) -> float:
        return sum(c.max_score for c in self.checks)

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "Graded":
        return cls(checks=tuple(CheckScore(**c) for c in data.get("checks", ())), note=data.get("note", ""),
                   wall_s=data.get("wall_s", 0.0), error=data.get("error", ""),
                   files_hash=data.get("files_hash", ""), zero_cause=data.get("zero_cause", ""))

    @classmethod
    def failed(cls, exc: BaseException) -> "Graded":
        return cls(error=describe_failure(exc))


# Why a submission scored 0, most basic first: the first that applies is its cause.
ZERO_CAUSES = {
    "import": "syntax error or import failure",
    "missing": "missing or misnamed file",
    "stub": "untouched stub (every case raised NotImplementedError)",
    "wrong": "everything wrong",
}


def zero_cause(run: GradingRun) -> str:
    """The key of `ZERO_CAUSES` that says why `run` scored 0 ("" for a score above 0, or nothing to score)."""
    if run.score > 0 or not run.verdicts:
        return ""
    said = [run.note, *(v.output for v in run.verdicts)]
    messages = [verdict.message for v in run.verdicts for _, verdict in v.cases]
    if any("could not be imported" in text for text in said) or \
            any(m.startswith("could not import the submission") for m in messages):
        return "import"
    if any(text.startswith("not graded:") and "is missing from the submission" in text for text in said) \
            or "nothing was graded" in run.note:
        return "missing"
    if messages and all(m == NOT_IMPLEMENTED for m in messages):
        return "stub"
    return "wrong"


def describe_failure(exc: BaseException) -> str:
    """One line saying what went wrong: the type and the first line of the message."""
    message = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {message[0]}" if message else type(exc).__name__


def grade_folder(grader: Grader, assignment: Assignment, variant: dict, folder: Path) -> dict:
    """Grade one submission folder with `grader`; its `Graded` as a dict, an `error` if grading failed."""
    started = time.perf_counter()
    try:
        run = grade_submission(assignment, variant, folder, grader=grader)
    except Exception as exc:  # a HarnessFault or a bug of the harness: this submission's row only
        return Graded.failed(exc).as_dict()
    checks = tuple(CheckScore(v.check.name, round(v.score, 6), v.max_score, v.output,
                              v.mistake.name if v.mistake else "") for v in run.verdicts)
    return Graded(checks, run.note, round(time.perf_counter() - started, 3), files_hash=run.files_hash,
                  zero_cause=zero_cause(run)).as_dict()

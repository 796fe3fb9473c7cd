"""One submission's grade as plain data: what a worker sends back to the client.

`grade_folder` is the one function every executor runs, in this process or
on a Dask worker: it grades through `grade_submission` with the worker's
`Grader` and returns its `results.Graded` as a dict of strings and numbers (no
harness objects cross the wire, so a client and its workers need only agree
on this shape). Any
failure of the harness on one submission comes back as that submission's
`error`, never as an exception that would stop the others.
"""

from __future__ import annotations

import time
from pathlib import Path

from ..assignment import Assignment
from ..feedback import NOT_IMPLEMENTED
from ..grade import grade_submission
from ..grading import Grader
from ..hidden_inputs import HiddenInputs
from ..results import CheckScore, Graded, GradingRun, describe_failure

__all__ = ["CheckScore", "Graded", "ZERO_CAUSES", "describe_failure", "grade_folder", "zero_cause"]


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
    if any("could not be imported" in text for text in said) or any(
        m.startswith("could not import the submission") for m in messages
    ):
        return "import"
    if (
        any(text.startswith("not graded:") and "is missing from the submission" in text for text in said)
        or "nothing was graded" in run.note
    ):
        return "missing"
    if messages and all(m == NOT_IMPLEMENTED for m in messages):
        return "stub"
    return "wrong"


def grade_folder(
    grader: Grader, assignment: Assignment, variant: dict, folder: Path, hidden: HiddenInputs | None = None
) -> dict:
    """Grade one submission folder with `grader` (and the student's `hidden` inputs, where they are drawn
    per student); its `Graded` as a dict, an `error` if grading failed."""
    started = time.perf_counter()
    try:
        run = grade_submission(assignment, variant, folder, grader=grader, hidden=hidden)
    except Exception as exc:  # a HarnessFault or a bug of the harness: this submission's row only
        return Graded.failed(exc).as_dict()
    return Graded.of(run, wall_s=round(time.perf_counter() - started, 3), zero_cause=zero_cause(run)).as_dict()

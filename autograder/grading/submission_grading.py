"""Grading: one submission, one call.

`grade_submission` is what every command grades with (`grade`, `check`, and
the commands that ship or regrade): it finds the submitted files, keeps a
results.json valid from before the first check to the last, runs the checks
through a `Grader` and returns a `GradingRun`. Whatever the submission does
is a verdict; only a `HarnessFault` is not, and even then results.json is
left valid and says so.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from ..core.hidden_inputs import HiddenInputs
from ..core.seeds import course_secret
from ..declare.assignment import Assignment
from ..declare.catalog import load_spec
from ..declare.checks import Check
from ..reports.gradescope import ResultsFile, page_pointer
from ..reports.results import HARNESS_FAULT_NOTE, GradingRun, Verdict
from ..sandbox.pool import Prestarted
from ..submissions.submitted_files import graded_files_hash, prepare
from .expected_store import ExpectedStore, default_store
from .grader import Grader
from .oracle import LiveReference
from .per_student import for_student, is_hidden


@contextlib.contextmanager
def servers_for(name: str, jobs: int) -> Iterator[Prestarted | None]:
    """Fork servers started at once for a grading of assignment `name`, importing what its
    assignment.toml preloads (torch) while this process loads the checks; None where they cannot
    start (an unknown assignment, a plugin that fails to load, no sandbox here, a student bundle's
    recorded checks): a head start only, so the grading itself says what is wrong when it begins."""
    try:
        servers = Prestarted(load_spec(name).server_modules, jobs)
    except Exception:
        yield None
        return
    with servers:
        yield servers


def grade_submission(
    assignment: Assignment,
    variant: dict,
    submission: Path,
    *,
    results: Path | None = None,
    jobs: int = 1,
    visible_only: bool = False,
    grader: Grader | None = None,
    secret: str | None = None,
    store: ExpectedStore | None = None,
    on_start: Callable[[int], None] | None = None,
    on_verdict: Callable[[Verdict], None] | None = None,
    on_check_start: Callable[[Check], None] | None = None,
    prestarted: Prestarted | None = None,
    hidden: HiddenInputs | None = None,
) -> GradingRun:
    """Grade one submission folder; keep `results` (if given) a valid results.json throughout.

    `grader` lets many submissions share one sandbox pool and one set of
    expected values; without it, one is made (with the live reference,
    `store`, by default the user's, and the fork servers `prestarted`) and
    closed. `hidden`: the student's hidden inputs, where they are drawn per
    student (`hidden_inputs`); the grading says which on top. Raises
    `HarnessFault` when grading cannot be trusted, after writing a
    results.json that says so.
    """
    with tempfile.TemporaryDirectory(prefix="lmgrade-upload-") as scratch:
        return _grade_submission(
            assignment,
            variant,
            Path(submission),
            Path(scratch),
            results=results,
            jobs=jobs,
            visible_only=visible_only,
            grader=grader,
            secret=secret,
            store=store,
            on_start=on_start,
            on_verdict=on_verdict,
            on_check_start=on_check_start,
            prestarted=prestarted,
            hidden=hidden,
        )


def _grade_submission(
    assignment,
    variant,
    submission: Path,
    scratch: Path,
    *,
    results,
    jobs,
    visible_only,
    grader,
    secret,
    store,
    on_start,
    on_verdict,
    on_check_start,
    prestarted,
    hidden,
) -> GradingRun:
    # The checks as the grader runs them (a check needing CUDA may not count here), for results.json too.
    assignment = grader.assignment if grader is not None else assignment.on()
    checks = [c for c in assignment.checks if c.visibility == "visible" or not visible_only]
    position = {c.name: i for i, c in enumerate(checks, start=1)}
    submission, said = prepare(submission, assignment.spec.files, scratch)
    if hidden is not None and hidden.line() and any(is_hidden(c) for c in checks):
        said.insert(0, hidden.line())  # on top of results.json's output: which seed this grading drew
    files_hash = graded_files_hash(submission, assignment.spec.files)
    pointer = page_pointer(assignment.name)  # where a student sees the pictures of what lost points
    results_file = ResultsFile(results, checks, output="\n\n".join(said), pointer=pointer) if results else None
    verdicts: list[Verdict] = []

    def import_failed(message: str) -> None:
        said.append(message)
        if results_file:
            results_file.output = "\n\n".join(said)
            results_file.write()

    def record(verdict: Verdict) -> None:
        verdicts.append(verdict)
        if results_file:
            results_file.record(position[verdict.check.name], verdict.plain())
        if on_verdict:
            on_verdict(verdict)

    try:
        if on_start:
            on_start(len(checks))
        if grader is None:
            protected = [Path(results).resolve()] if results else []
            with Grader(
                assignment,
                variant,
                LiveReference(assignment.spec),
                secret=course_secret() if secret is None else secret,
                jobs=jobs,
                protected=protected,
                store=store or default_store(),
                prestarted=prestarted,
            ) as own:
                for_student(own, hidden).grade(
                    submission,
                    on_verdict=record,
                    only=set(position),
                    on_import_failure=import_failed,
                    on_check_start=on_check_start,
                )
        else:
            for_student(grader, hidden).grade(
                submission,
                on_verdict=record,
                only=set(position),
                on_import_failure=import_failed,
                on_check_start=on_check_start,
            )
    except BaseException:  # a HarnessFault, a bug of the harness, an interrupt: never the submission's
        if results_file:
            results_file.output = "\n".join([HARNESS_FAULT_NOTE, *said]).strip()
            results_file.write()
        raise
    verdicts.sort(key=lambda v: v.number)
    return GradingRun(submission=submission, note="\n\n".join(said), verdicts=verdicts, files_hash=files_hash)

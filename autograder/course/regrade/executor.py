"""Where a regrade's submissions are graded: in this process, or on a Dask cluster.

An executor grades `SubmissionFolder`s and yields each one's `Graded` as it
finishes, in whatever order they finish; the client alone writes files. Both
kinds grade through `graded.grade_folder` with one `Grader` per grading
process, so the expected values of each check are computed once there and
shared by every submission it grades.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from ...core.hidden_inputs import hidden_inputs, student_identity
from ...declare.assignment import Assignment
from ...grading.expected_store import default_store
from ...grading.grader import Grader
from ...grading.oracle import LiveReference
from .graded import Graded, grade_folder
from .layout import SubmissionFolder

LOCAL = "local"


class ExecutorError(ValueError):
    """An --executor that names nothing usable: the user's to fix."""


class Executor(ABC):
    """Where submissions are graded; closed when the regrade ends."""

    capacity: int  # submissions it grades at once: the progress bar's "running"

    @abstractmethod
    def grade(self, submissions: Iterable[SubmissionFolder]) -> Iterator[tuple[SubmissionFolder, Graded]]:
        """Each submission with its grade, as they finish."""

    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class LocalExecutor(Executor):
    """This process: one `Grader` whose sandbox pool runs `jobs` runs at once, `jobs` submissions in flight.

    Each submission's checks already run in parallel, up to `jobs`; grading
    `jobs` submissions at once keeps the pool busy between one submission's
    checks and the next's.
    """

    def __init__(
        self,
        assignment: Assignment,
        variant: dict,
        *,
        jobs: int,
        secret: str,
        protected: Iterable[Path] = (),
        per_student: bool = False,
    ):
        self.assignment, self.variant = assignment, variant
        self.secret, self.per_student = secret, per_student
        self.capacity = max(1, jobs)
        self.grader = Grader(
            assignment,
            variant,
            LiveReference(assignment.spec),
            secret=secret,
            jobs=self.capacity,
            protected=list(protected),
            store=default_store(),
        )
        # `jobs` submissions in flight keep every slot busy: a check's run need not go on beside the import probe
        # (where the import hangs, it would only spin beside it until the probe's limit).
        self.grader.probe_first = self.capacity > 1

    def grade(self, submissions: Iterable[SubmissionFolder]) -> Iterator[tuple[SubmissionFolder, Graded]]:
        with ThreadPoolExecutor(max_workers=self.capacity, thread_name_prefix="regrade") as pool:
            futures = {
                pool.submit(
                    grade_folder,
                    self.grader,
                    self.assignment,
                    self.variant,
                    s.folder,
                    hidden_inputs(self.secret, student_identity(s.students), self.per_student),
                ): s
                for s in submissions
            }
            try:
                for future in as_completed(futures):
                    yield futures[future], Graded.from_dict(future.result())
            finally:  # stopped early (an interrupt): start nothing more
                for future in futures:
                    future.cancel()

    def close(self) -> None:
        self.grader.close()

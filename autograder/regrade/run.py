"""A whole class, regraded: what `lmgrade regrade` does between parsing and printing.

Submissions whose files and grading are unchanged since the last regrade
into the same folder are taken from their records; the others go to the
executor, which is started only if there is something to grade (resuming a
finished regrade starts no sandbox). Each grade is saved as it arrives; the
CSV, the gradebooks and the report are written at the end, from every
submission's grade, in the layout's order, so the same grades always give
the same files.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ..assignment import Assignment
from ..hidden_inputs import COURSE, hidden_inputs, student_identity
from ..plural import counted
from ..submission import content_hash
from .content import grading_fingerprint
from .executor import Executor
from .gradebook import write_gradebooks
from .graded import Graded
from .layout import Layout, SubmissionFolder
from .records import RESULTS_FOLDER, ResultsFolder
from .report import write_report
from .scores_csv import write_scores_csv

REPORT = "report.html"


class Listener(Protocol):
    """What a progress display hears."""

    def started(self, total: int, resumed: int, failed: int) -> None: ...
    def grading(self, capacity: int) -> None: ...
    def finished(self, submission: SubmissionFolder, graded: Graded) -> None: ...


@dataclass
class RegradeSummary:
    csv: Path
    report: Path
    results: Path
    rows: list[tuple[SubmissionFolder, Graded]]
    graded: int = 0  # graded in this run
    resumed: int = 0  # taken from an earlier run
    gradebooks: tuple[Path, ...] = ()  # per student, for Gradescope and Canvas to import (`gradebook`)
    notes: list[str] = field(default_factory=list)  # what the user should know of the files written

    @property
    def failures(self) -> list[tuple[str, str]]:
        return [(s.key, g.error) for s, g in self.rows if g.error]


def output_paths(csv_path: Path) -> tuple[Path, Path]:
    """(the results folder, the report) that go beside the CSV."""
    return csv_path.parent / RESULTS_FOLDER, csv_path.parent / REPORT


def regrade(
    assignment: Assignment,
    variant: dict,
    layout: Layout,
    csv_path: Path,
    *,
    make_executor: Callable[[], Executor],
    secret: str,
    force: bool = False,
    listener: Listener | None = None,
    device: str = "auto",
    per_student: bool = False,
) -> RegradeSummary:
    """Grade every submission of `layout` that needs it; write the CSV, the gradebooks, the results and
    the report.

    `assignment` is bound to this machine's device where it grades here; on
    a cluster it is not, and `device` is the --device its workers bind.
    `per_student`: each submission's hidden checks draw its students' own
    inputs (`hidden_inputs`), and the CSV and the report say which seed
    each was graded with (the executor must be made with it too).
    """
    csv_path = Path(csv_path)
    results_dir, report_path = output_paths(csv_path)
    results_dir.mkdir(parents=True, exist_ok=True)
    store = ResultsFolder(results_dir, assignment.checks)
    fingerprint = grading_fingerprint(assignment, variant, secret, device)
    # Per student, a submission's grading depends on its students too: another seed, another grading.
    seeds = (
        {s.key: hidden_inputs(secret, student_identity(s.students), True).tag for s in layout.submissions}
        if per_student
        else None
    )

    def fingerprint_of(submission: SubmissionFolder) -> str:
        if seeds is None:
            return fingerprint
        return hashlib.sha256(f"{fingerprint}\0hidden inputs {seeds[submission.key]}".encode()).hexdigest()

    summary = RegradeSummary(csv_path, report_path, results_dir, [])
    grades: dict[str, Graded] = {}
    hashes: dict[str, str] = {}
    pending: list[SubmissionFolder] = []
    for submission in layout.submissions:
        try:
            hashes[submission.key] = content_hash(submission.folder)
        except OSError as exc:  # unreadable: its row says so
            grades[submission.key] = Graded.failed(exc)
            continue
        earlier = None if force else store.finished(submission.key, hashes[submission.key], fingerprint_of(submission))
        if earlier is None:
            pending.append(submission)
        else:
            grades[submission.key] = earlier
            summary.resumed += 1
    if listener:
        listener.started(len(layout.submissions), summary.resumed, len(grades) - summary.resumed)
    if pending:
        with make_executor() as executor:
            if listener:
                listener.grading(executor.capacity)
            for submission, graded in executor.grade(pending):
                store.save(submission.key, hashes[submission.key], fingerprint_of(submission), graded)
                grades[submission.key] = graded
                if not graded.error:
                    summary.graded += 1
                if listener:
                    listener.finished(submission, graded)
    summary.rows = [(s, grades[s.key]) for s in layout.submissions]
    write_scores_csv(csv_path, assignment.checks, summary.rows, seeds)
    summary.gradebooks, note = write_gradebooks(csv_path, assignment.spec.name, variant, summary.rows)
    summary.notes += [note] if note else []
    write_report(report_path, assignment, variant, summary.rows, seeds)
    unknown = [key for key, seed in (seeds or {}).items() if seed == COURSE]
    if unknown:
        has = "has" if len(unknown) == 1 else "have"
        summary.notes.append(
            f"hidden inputs: {counted(len(unknown), 'submission')} {has} no student in a submission_metadata.yml, "
            f"so the course's hidden inputs were used: {', '.join(unknown[:5])}{' ...' if len(unknown) > 5 else ''}"
        )
    return summary

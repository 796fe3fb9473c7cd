"""A whole class, regraded: what `lmgrade regrade` does between parsing and printing.

Submissions whose files and grading are unchanged since the last regrade
into the same folder are taken from their records; the others go to the
executor, which is started only if there is something to grade (resuming a
finished regrade starts no sandbox). Each grade is saved as it arrives; the
CSV, the gradebooks and the report are written at the end, from every
submission's grade, in the layout's order, so the same grades always give
the same files.

Submissions with the same files (names and bytes: `submission_hash`) and
the same grading (its fingerprint, which holds the hidden inputs' seed where
they are drawn per student) are one grading: the first is graded, and every
other gets its grade, as resuming would give it. A class often holds a
submission uploaded twice, or copies; grading each again would only spend
the same limits for the same verdicts (same submission, same score). Where
the grading of the first failed, the others are graded themselves.

No one submission stops a regrade: a folder or file that cannot be read, a
grade that cannot be saved (a full disk), a fault of the harness or of the
executor become the rows' `Graded.error`, and every other row is graded and
written. An output that cannot be written is tried beside the others and
named at the end (`OutputError`), with what to do.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ...core.hidden_inputs import COURSE, hidden_inputs, student_identity
from ...core.plural import counted
from ...declare.assignment import Assignment
from .cells import printable
from .content import grading_fingerprint, submission_hash
from .executor import Executor, ExecutorError
from .failures import DISK_FULL, disk_full
from .gradebook import write_gradebooks
from .graded import Graded, describe_failure
from .layout import Layout, SubmissionFolder
from .records import RESULTS_FOLDER, ResultsFolder
from .report import write_report
from .scores_csv import write_scores_csv

REPORT = "report.html"


class OutputError(OSError):
    """Some of the regrade's files could not be written; every grade was saved where it could be."""


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
            hashes[submission.key] = submission_hash(submission.folder)
        except Exception as exc:  # unreadable (or a name no call can take): its row and its results.json say so
            grades[submission.key] = _saved(store, submission, "", "", Graded.failed(exc))
            continue
        earlier = None if force else store.finished(submission.key, hashes[submission.key], fingerprint_of(submission))
        if earlier is None:
            pending.append(submission)
        else:
            grades[submission.key] = earlier
            summary.resumed += 1
    if listener:
        listener.started(len(layout.submissions), summary.resumed, len(grades) - summary.resumed)
    copies = _same_grading(pending, lambda s: (hashes[s.key], fingerprint_of(s)))
    if pending:

        def take(submission: SubmissionFolder, graded: Graded) -> None:
            graded = _saved(store, submission, hashes[submission.key], fingerprint_of(submission), graded)
            grades[submission.key] = graded
            if not graded.error:
                summary.graded += 1
            if listener:
                listener.finished(submission, graded)

        try:
            with make_executor() as executor:
                if listener:
                    listener.grading(executor.capacity)
                alone: list[SubmissionFolder] = []  # copies of a submission whose grading failed
                for submission, graded in executor.grade([s for s in pending if s.key in copies]):
                    take(submission, graded)
                    for copy in copies[submission.key]:
                        if graded.error:
                            alone.append(copy)
                        else:
                            take(copy, graded)
                if alone:
                    for submission, graded in executor.grade(alone):
                        take(submission, graded)
        except ExecutorError:
            if not grades.keys() & {s.key for s in pending}:
                raise  # nothing was graded: the executor named is the user's to fix
            _fail_the_rest(pending, grades, store, "the executor stopped")
        except Exception as exc:  # the executor itself failed: what it graded stays, the rest fail
            _fail_the_rest(pending, grades, store, describe_failure(exc))
    summary.rows = [(s, grades[s.key]) for s in layout.submissions]
    unwritten: list[str] = []

    def write(path: Path, make: Callable[[], object]) -> object:
        try:
            return make()
        except OSError as exc:  # a full disk or a read-only folder: the other files are still written
            remedy = f": {DISK_FULL}" if disk_full(exc) else ""
            unwritten.append(f"{printable(path)} ({describe_failure(exc)}){remedy}")
            return None

    write(csv_path, lambda: write_scores_csv(csv_path, assignment.checks, summary.rows, seeds))
    written = write(csv_path.parent, lambda: write_gradebooks(csv_path, assignment.spec.name, variant, summary.rows))
    if written is not None:
        summary.gradebooks, note = written
        summary.notes += note.splitlines()
    write(report_path, lambda: write_report(report_path, assignment, variant, summary.rows, seeds))
    unknown = [key for key, seed in (seeds or {}).items() if seed == COURSE]
    if unknown:
        has = "has" if len(unknown) == 1 else "have"
        summary.notes.append(
            f"hidden inputs: {counted(len(unknown), 'submission')} {has} no student in a submission_metadata.yml, "
            f"so the course's hidden inputs were used: {', '.join(unknown[:5])}{' ...' if len(unknown) > 5 else ''}"
        )
    if unwritten:
        raise OutputError(
            f"could not write {'; '.join(unwritten)}. Every grade saved under {printable(results_dir)} is kept: "
            "run the same command again once it can be written"
        )
    return summary


def _same_grading(
    pending: list[SubmissionFolder], key: Callable[[SubmissionFolder], tuple[str, str]]
) -> dict[str, list[SubmissionFolder]]:
    """{the first submission of each grading: the others of the same grading}, in the layout's order."""
    first: dict[tuple[str, str], str] = {}
    copies: dict[str, list[SubmissionFolder]] = {}
    for submission in pending:
        same = first.setdefault(key(submission), submission.key)
        copies.setdefault(same, [])
        if same != submission.key:
            copies[same].append(submission)
    return copies


def _saved(
    store: ResultsFolder, submission: SubmissionFolder, content: str, fingerprint: str, graded: Graded
) -> Graded:
    """`graded`, saved; where it cannot be saved (a full disk), a failure of its row that says why."""
    try:
        store.save(submission.key, content, fingerprint, graded)
        return graded
    except OSError as exc:
        failed = Graded.failed(exc)
        try:  # its results.json, if there is room for the smaller document
            store.save(submission.key, content, fingerprint, failed)
        except OSError:
            pass
        return failed


def _fail_the_rest(pending: list[SubmissionFolder], grades: dict[str, Graded], store: ResultsFolder, why: str) -> None:
    """Every submission of `pending` without a grade: failed, for `why`, and saved where it can be."""
    for submission in pending:
        if submission.key not in grades:
            grades[submission.key] = _saved(store, submission, "", "", Graded(error=f"not graded: {why}"))

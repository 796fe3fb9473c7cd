"""scores.csv: one row per submission, the same bytes for the same grades.

Columns: submission, student, email, score, max, then one per check in the
assignment's order, then "not graded": why a submission could not be graded
and what to do about it, on one line (`failures.cause_and_remedy`; empty for
the others). Group members are joined with "; ". A submission
that could not be graded keeps its row, scored 0 with its check cells empty
and its cause in "not graded": a submission that makes the grader fail never
keeps its cell empty (`failures.remedy` says what to do). With per-student
hidden inputs, a "seed" column after the email says which seed each
submission's hidden checks were drawn from (`hidden_inputs.HiddenInputs.tag`:
a short hash, or "course" for a submission with no student). Where the
export says what Gradescope scored a submission, "gradescope score" and
"change" (this score less Gradescope's) follow "max".

Every text cell is `cells.neutralised` (no spreadsheet runs a name such as
``=1+1``); the numbers are the grader's own and stay numbers.
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path

from ...declare.checks import Check
from .cells import neutralised
from .failures import cause_and_remedy
from .graded import Graded
from .layout import SubmissionFolder

FIXED_COLUMNS = ("submission", "student", "email", "score", "max")
SEED_COLUMN = "seed"
ORIGINAL_COLUMNS = ("gradescope score", "change")
NOT_GRADED_COLUMN = "not graded"
JOINER = "; "


def points(value: float) -> str:
    """A score as the CSV writes it: at most six decimals, no trailing zeros (12.5, 100, 33.333333)."""
    text = f"{round(value, 6):.6f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def has_original_scores(rows: list[tuple[SubmissionFolder, Graded]]) -> bool:
    """Whether the export gave Gradescope's score of any submission (then the CSV and the report show it)."""
    return any(s.original_score is not None for s, _ in rows)


def change(submission: SubmissionFolder, graded: Graded) -> float | None:
    """This regrade's score less Gradescope's (None where either is missing)."""
    if submission.original_score is None or graded.error:
        return None
    return graded.score - submission.original_score


def scores_table(
    checks: list[Check], rows: list[tuple[SubmissionFolder, Graded]], seeds: dict[str, str] | None = None
) -> list[list[str]]:
    """The header, then one line per submission, in the order given; `seeds` (by submission): the seed column."""
    fixed = list(FIXED_COLUMNS)
    if seeds is not None:
        fixed.insert(fixed.index("email") + 1, SEED_COLUMN)
    originals = has_original_scores(rows)
    if originals:
        fixed += ORIGINAL_COLUMNS
    table = [[*fixed, *(neutralised(c.name) for c in checks), NOT_GRADED_COLUMN]]
    maximum = points(sum(c.points for c in checks))
    for submission, graded in rows:
        people = [JOINER.join(getattr(s, field) for s in submission.students) for field in ("name", "email")]
        if seeds is not None:
            people.append(seeds.get(submission.key, ""))
        head = [neutralised(text) for text in (submission.key, *people)]
        if originals:
            difference = change(submission, graded)
            was = [
                "" if submission.original_score is None else points(submission.original_score),
                "" if difference is None else points(difference),
            ]
        else:
            was = []
        if graded.error:
            table.append(
                [*head, "0", maximum, *was, *("" for _ in checks), neutralised(cause_and_remedy(graded.error))]
            )
            continue
        by_name = {c.name: c.score for c in graded.checks}
        table.append(
            [
                *head,
                points(graded.score),
                points(graded.max_score),
                *was,
                *(points(by_name[c.name]) if c.name in by_name else "" for c in checks),
                "",
            ]
        )
    return table


def write_scores_csv(
    path: Path, checks: list[Check], rows: list[tuple[SubmissionFolder, Graded]], seeds: dict[str, str] | None = None
) -> None:
    """Write the table atomically: a reader never sees half a file."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(scores_table(checks, rows, seeds))
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(buffer.getvalue(), encoding="utf-8")
    os.replace(tmp, path)

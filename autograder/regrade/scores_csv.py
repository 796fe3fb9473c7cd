"""scores.csv: one row per submission, the same bytes for the same grades.

Columns: submission, student, email, score, max, then one per check in the
assignment's order. Group members are joined with "; ". A submission that
could not be graded keeps its row with its score cells empty. With
per-student hidden inputs, a "seed" column after the email says which seed
each submission's hidden checks were drawn from (`hidden_inputs.HiddenInputs.tag`:
a short hash, or "course" for a submission with no student).
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path

from ..checks import Check
from .graded import Graded
from .layout import SubmissionFolder

FIXED_COLUMNS = ("submission", "student", "email", "score", "max")
SEED_COLUMN = "seed"
JOINER = "; "


def points(value: float) -> str:
    """A score as the CSV writes it: at most six decimals, no trailing zeros (12.5, 100, 33.333333)."""
    text = f"{round(value, 6):.6f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def scores_table(
    checks: list[Check], rows: list[tuple[SubmissionFolder, Graded]], seeds: dict[str, str] | None = None
) -> list[list[str]]:
    """The header, then one line per submission, in the order given; `seeds` (by submission): the seed column."""
    fixed = list(FIXED_COLUMNS)
    if seeds is not None:
        fixed.insert(fixed.index("email") + 1, SEED_COLUMN)
    table = [[*fixed, *(c.name for c in checks)]]
    for submission, graded in rows:
        people = [JOINER.join(getattr(s, field) for s in submission.students) for field in ("name", "email")]
        if seeds is not None:
            people.append(seeds.get(submission.key, ""))
        if graded.error:
            table.append([submission.key, *people, "", points(sum(c.points for c in checks)), *("" for _ in checks)])
            continue
        by_name = {c.name: c.score for c in graded.checks}
        table.append(
            [
                submission.key,
                *people,
                points(graded.score),
                points(graded.max_score),
                *(points(by_name[c.name]) if c.name in by_name else "" for c in checks),
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

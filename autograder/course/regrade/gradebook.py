"""The gradebooks a regrade writes beside scores.csv: one row per student, in the columns an LMS imports.

scores.csv has a row per submission, for the course staff; a gradebook has
a row per student, for an LMS to import: each member of a group submission
gets the group's score. Two files, because no one header is read correctly
by both (each LMS takes the other's identifying columns for scores):

- ``gradebook_gradescope.csv``, Gradescope's score upload: "Name", "SID",
  "Email", then "Total Score" (the heading of Gradescope's own grade export).
  Gradescope matches a row to a student by Email or by SID.
- ``gradebook_canvas.csv``, Canvas's Gradebook import: "Student", "ID",
  "SIS User ID", "SIS Login ID", "Section", then one column named for the
  assignment. "Student" holds the name; "ID" (Canvas's own user number,
  which an export does not know) and "Section" are left empty; the student's
  SID goes in "SIS User ID" and their email in "SIS Login ID". Canvas
  matches a row by whichever of these it finds, and lists the rows it cannot
  match for the instructor to resolve. A column whose heading names no
  assignment of the course creates one: rename it to the assignment's
  "Title (ID)" heading, as a Canvas export spells it, to update an existing one.

Students come from the export's ``submission_metadata.yml``. A submission
with no student (a plain folder of submissions, or a folder the metadata
does not list) gets one row named by its folder, with no SID or email: no
LMS can match it by itself, and `gradebook_note` says so. A submission the
harness failed to grade keeps its rows, scored 0: an empty cell would leave
the student's earlier grade in place on import, so a submission that made
the grader fail on purpose would keep a grade it never earned. Where any
submission could not be graded, both gradebooks end with a "not graded"
column: each such row's cause and what to do, on one line
(`failures.cause_and_remedy`, as in scores.csv and the report's review
queue), empty in the other rows; and `failed_note` tells the instructor, in
one line, to fix the causes and regrade before importing. A regrade that
grades every submission writes no such column, so what is imported holds
nothing but the LMS's own columns.

Every text cell (names, SIDs, emails, folder names, the assignment's
heading) is `cells.neutralised`: a name such as ``=1+1`` is never a formula.
"""

from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass
from pathlib import Path

from .cells import neutralised
from .failures import AGAIN, cause_and_remedy
from .graded import Graded
from .layout import SubmissionFolder
from .scores_csv import points

GRADESCOPE = "gradebook_gradescope.csv"
CANVAS = "gradebook_canvas.csv"
GRADESCOPE_COLUMNS = ("Name", "SID", "Email", "Total Score")
CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
NOT_GRADED_COLUMN = "not graded"  # last, and only where some submission could not be graded


@dataclass(frozen=True)
class GradebookRow:
    name: str  # the student's name, or the submission's folder name where no student is known
    sid: str
    email: str
    score: str  # as scores.csv writes it; "0" where the submission could not be graded
    submission: str  # the folder it comes from
    known: bool  # whether the student came from the export's metadata
    not_graded: str = ""  # why the submission could not be graded, and what to do ("" where it was graded)


def gradebook_paths(csv_path: Path) -> tuple[Path, Path]:
    """(the Gradescope gradebook, the Canvas gradebook) that go beside the scores CSV."""
    folder = Path(csv_path).parent
    return folder / GRADESCOPE, folder / CANVAS


def gradebook_rows(rows: list[tuple[SubmissionFolder, Graded]]) -> list[GradebookRow]:
    """One row per student of every submission, in the submissions' order (a group's members in theirs)."""
    out = []
    for submission, graded in rows:
        score = "0" if graded.error else points(graded.score)
        why = cause_and_remedy(graded.error) if graded.error else ""
        if not submission.students:
            out.append(GradebookRow(submission.key, "", "", score, submission.key, known=False, not_graded=why))
        for student in submission.students:
            out.append(
                GradebookRow(student.name, student.sid, student.email, score, submission.key, True, not_graded=why)
            )
    return out


def _first_few(names: list[str]) -> str:
    """The first five names, and "..." where there are more: a note stays one line."""
    return ", ".join(names[:5]) + (" ..." if len(names) > 5 else "")


def gradebook_note(rows: list[GradebookRow]) -> str:
    """What the user should know of the gradebooks ("" when every row is a student of the metadata)."""
    unknown = [row.submission for row in rows if not row.known]
    if not unknown:
        return ""
    which = _first_few(unknown)
    return (
        f"gradebooks: {len(unknown)} submission(s) have no student in a submission_metadata.yml and are named "
        f"by their folders, with no SID or email to match them by: {which}"
    )


def failed_note(rows: list[tuple[SubmissionFolder, Graded]]) -> str:
    """One line for the instructor where some submission could not be graded ("" where none)."""
    failed = [s.key for s, g in rows if g.error]
    if not failed:
        return ""
    which = _first_few(failed)
    return (
        f"gradebooks: {len(failed)} submission(s) could not be graded and are 0 there ({which}): fix each cause "
        f"(their rows' \"not graded\" column, the report's review queue), {AGAIN}, before importing"
    )


def assignment_column(name: str, variant: dict) -> str:
    """The Canvas column heading: the assignment's name, with its variant where it has one."""
    chosen = " ".join(f"{key}={value}" for key, value in sorted(variant.items()))
    return f"{name} {chosen}" if chosen else name


def _text(*cells: str) -> list[str]:
    return [neutralised(cell) for cell in cells]


def _with_causes(table: list[list[str]], rows: list[GradebookRow]) -> list[list[str]]:
    """`table` with the "not graded" column last, where some row could not be graded."""
    if not any(row.not_graded for row in rows):
        return table
    header, *lines = table
    return [[*header, NOT_GRADED_COLUMN], *([*line, neutralised(row.not_graded)] for line, row in zip(lines, rows))]


def gradescope_table(rows: list[GradebookRow]) -> list[list[str]]:
    table = [list(GRADESCOPE_COLUMNS), *([*_text(row.name, row.sid, row.email), row.score] for row in rows)]
    return _with_causes(table, rows)


def canvas_table(rows: list[GradebookRow], column: str) -> list[list[str]]:
    table = [
        [*CANVAS_COLUMNS, neutralised(column)],
        *([*_text(row.name, "", row.sid, row.email, ""), row.score] for row in rows),
    ]
    return _with_causes(table, rows)


def _write_csv(path: Path, table: list[list[str]]) -> None:
    """Write `table` atomically, CRLF line ends as RFC 4180 and both LMSs' own exports have them."""
    buffer = io.StringIO()
    csv.writer(buffer).writerows(table)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(buffer.getvalue().encode("utf-8"))
    os.replace(tmp, path)


def write_gradebooks(
    csv_path: Path, assignment: str, variant: dict, rows: list[tuple[SubmissionFolder, Graded]]
) -> tuple[tuple[Path, Path], str]:
    """Write both gradebooks beside `csv_path`; their paths, and what the user should know of them
    (`gradebook_note`, `failed_note`; "" where nothing)."""
    students = gradebook_rows(rows)
    gradescope, canvas = gradebook_paths(csv_path)
    _write_csv(gradescope, gradescope_table(students))
    _write_csv(canvas, canvas_table(students, assignment_column(assignment, variant)))
    return (gradescope, canvas), "\n".join(note for note in (gradebook_note(students), failed_note(rows)) if note)

"""The class report's review queue: every submission that needs a person, each with one line saying why.

A submission is listed when:

- the harness failed on it (it has no grade: regrade it);
- a check found a forbidden API in it (the check paid nothing; a person
  decides whether the use was the point of the exercise);
- a timing check found it much faster than the reference (flagged, not
  paid: a person decides whether it is a real speed-up or a shortcut);
- its graded files are byte for byte another submission's
  (`insights.identical_groups`; untouched stubs left out);
- its code is a near-duplicate of another's (`near_duplicates`).

Nothing here changes a score: the queue only says where to look. The
reasons are read from each check's feedback (the same words the student
reads), so the queue lists exactly what the feedback says.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import quote

from ..assignment import Assignment
from ..feedback import FORBIDDEN_HIDDEN
from .graded import Graded
from .insights import IdenticalGroup
from .layout import SubmissionFolder
from .near_duplicates import NearDuplicate
from .records import RESULTS, RESULTS_FOLDER

# The words of the feedback that mark each case (`timing_grading.judge_case`, `feedback.forbidden_message`).
FASTER_THAN_REFERENCE = "flagged for review by the course staff"
FORBIDS = ", which this assignment forbids"
MAX_REASON_CHARS = 240


@dataclass(frozen=True)
class ReviewEntry:
    submission: str  # its key
    students: tuple[str, ...]  # their names, where known
    reasons: tuple[str, ...]  # each a short clause; shown together on one line
    link: str  # its feedback (results.json), relative to the report

    @property
    def why(self) -> str:
        return "; ".join(self.reasons)


def feedback_link(key: str) -> str:
    """Where a submission's feedback is, relative to report.html (the results folder is beside it)."""
    return f"{RESULTS_FOLDER}/{quote(key)}/{RESULTS}"


def _shortened(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_REASON_CHARS else text[: MAX_REASON_CHARS - 1] + "…"


def _first_line_with(output: str, marker: str) -> str | None:
    return next((line.strip() for line in output.splitlines() if marker in line), None)


def forbidden_uses(graded: Graded) -> list[str]:
    """Each forbidden use the feedback names, once, with the checks that named it."""
    found: dict[str, list[str]] = {}
    for score in graded.checks:
        for line in score.output.splitlines():
            line = line.strip()
            if FORBIDS in line:
                use = line.split(FORBIDS)[0]
            elif line == FORBIDDEN_HIDDEN:
                use = "used an API this assignment forbids"
            else:
                continue
            if score.name not in found.setdefault(use, []):
                found[use].append(score.name)
    return [f"forbidden API: {use} (checks {', '.join(checks)})" for use, checks in found.items()]


def much_faster(assignment: Assignment, graded: Graded) -> list[str]:
    """Each timing check that found the submission much faster than the reference, with its times."""
    timed = {c.name for c in assignment.checks if c.timing is not None}
    out = []
    for score in graded.checks:
        line = _first_line_with(score.output, FASTER_THAN_REFERENCE) if score.name in timed else None
        if line is not None:
            times = line.split(":")[0]
            out.append(f"{score.name} much faster than the reference ({times}), not paid until reviewed")
    return out


def _partners(pairs: Iterable[tuple[str, str, str]], key: str) -> list[str]:
    return [f"{b} ({about})" if about else b for a, b, about in pairs if a == key] + [
        f"{a} ({about})" if about else a for a, b, about in pairs if b == key
    ]


def review_queue(
    assignment: Assignment,
    rows: list[tuple[SubmissionFolder, Graded]],
    identical: list[IdenticalGroup],
    near: list[NearDuplicate],
) -> list[ReviewEntry]:
    """Every submission that needs a person, in the layout's order, with why."""
    same: dict[str, tuple[str, ...]] = {}
    for group in identical:
        for key in group.submissions:
            same[key] = tuple(k for k in group.submissions if k != key)
    similar = [(p.first, p.second, f"{100 * p.similarity:.0f}% of fingerprints shared") for p in near]
    entries = []
    for submission, graded in rows:
        reasons = []
        if graded.error:
            reasons.append(f"not graded: the harness failed ({graded.error})")
        reasons += forbidden_uses(graded)
        reasons += much_faster(assignment, graded)
        if submission.key in same:
            reasons.append(f"identical to {', '.join(same[submission.key])} (the same graded files)")
        partners = _partners(similar, submission.key)
        if partners:
            reasons.append(f"near-duplicate of {', '.join(partners)}")
        if reasons:
            entries.append(
                ReviewEntry(
                    submission.key,
                    tuple(s.name for s in submission.students if s.name),
                    tuple(_shortened(r) for r in reasons),
                    feedback_link(submission.key),
                )
            )
    return entries

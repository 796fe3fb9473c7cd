"""What a class report finds by comparing submissions, which an instructor would otherwise find by hand.

- Identical submissions: groups whose graded files have the same content
  hash. A hint to look, not an accusation: a group that submitted twice,
  the starter code handed back, or a solution the staff shared give it too.
- Zeros by cause: a syntax error or import failure, a missing or misnamed
  file, an untouched stub, or everything wrong (`graded.ZERO_CAUSES`).
- Checks paid by the grader's components: a check that failed beside a
  failed component and passed when the grader's stand-in replaced that
  component (its feedback says "Passes once X is fixed"), counted from
  what each grading observed, never from which code reaches which.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from ...declare.assignment import Assignment
from .graded import ZERO_CAUSES, Graded
from .layout import SubmissionFolder

# Zeros whose every check failed for one reason that is not about the checks' subject.
_NOTHING_TO_COMPARE = ("import", "missing", "stub")


@dataclass(frozen=True)
class IdenticalGroup:
    submissions: tuple[str, ...]  # their keys, in the layout's order
    students: tuple[str, ...]  # their students' names, where known
    score: float


@dataclass(frozen=True)
class ZeroCause:
    cause: str  # a key of ZERO_CAUSES
    description: str
    submissions: tuple[str, ...]


@dataclass(frozen=True)
class StoodIn:
    check: str  # a check paid by its stand-in run ...
    paid: int  # ... in this many submissions,
    failed: int  # ... beside this many in which it failed,
    component: str  # ... most often with the grader's version of this component in place of the student's
    together: int  # ... in this many


def identical_groups(rows: list[tuple[SubmissionFolder, Graded]]) -> list[IdenticalGroup]:
    """Submissions whose graded files are byte for byte the same, untouched stubs left out, largest groups first."""
    groups: dict[str, list[tuple[SubmissionFolder, Graded]]] = {}
    for submission, graded in rows:
        if graded.files_hash and not graded.error and graded.zero_cause != "stub":
            groups.setdefault(graded.files_hash, []).append((submission, graded))
    found = [
        IdenticalGroup(
            tuple(s.key for s, _ in members),
            tuple(student.name for s, _ in members for student in s.students if student.name),
            members[0][1].score,
        )
        for members in groups.values()
        if len(members) > 1
    ]
    order = {s.key: i for i, (s, _) in enumerate(rows)}
    return sorted(found, key=lambda g: (-len(g.submissions), order[g.submissions[0]]))


def zero_causes(rows: list[tuple[SubmissionFolder, Graded]]) -> list[ZeroCause]:
    """Every cause of a zero, in ZERO_CAUSES' order, with the submissions it accounts for (none: left out)."""
    by_cause: dict[str, list[str]] = {}
    for submission, graded in rows:
        if graded.zero_cause and not graded.error:
            by_cause.setdefault(graded.zero_cause, []).append(submission.key)
    return [
        ZeroCause(cause, description, tuple(by_cause[cause]))
        for cause, description in ZERO_CAUSES.items()
        if cause in by_cause
    ]


def paid_by_stand_ins(assignment: Assignment, rows: list[tuple[SubmissionFolder, Graded]]) -> list[StoodIn]:
    """For each check some grading paid by its stand-in run, how often, and the component most often
    replaced: what the students' feedback said ("Passes once X is fixed"), counted. Most often first."""
    replaced: dict[str, Counter] = {}
    paid: Counter = Counter()
    failed: Counter = Counter()
    for _, graded in rows:
        if graded.error:
            continue
        for score in graded.checks:
            if score.stood_in:
                paid[score.name] += 1
                replaced.setdefault(score.name, Counter()).update(score.stood_in)
            elif not score.passed:
                failed[score.name] += 1
    found = []
    for check in assignment.checks:
        if check.name in replaced:
            ((component, together),) = replaced[check.name].most_common(1)
            found.append(StoodIn(check.name, paid[check.name], failed[check.name], component, together))
    return sorted(found, key=lambda e: (-e.paid, e.check))

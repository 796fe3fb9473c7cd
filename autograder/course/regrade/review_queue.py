"""The class report's review queue: what needs a person, each entry once, each reason one line.

An entry is one submission, or one group of submissions that share their
code. A submission is listed when:

- the harness failed on it: it has no grade (its cause, and what to do:
  `failures.remedy`);
- a check found a forbidden API in it (the check paid nothing; a person
  decides whether the use was the point of the exercise);
- a timing check found it much faster than the reference (flagged, not
  paid: a person decides whether it is a real speed-up or a shortcut);
- a time limit stopped it (a loop, or code far slower than it should be):
  a check's run, with the limit it ran under (hidden checks too, whose
  feedback says only "no answer"), its import (no check was graded), or its
  whole grading (the assignment's `grading_budget_s`).

A group is listed once, with its members: submissions joined by identical
graded files (`insights.identical_groups`) or near-duplicate code
(`near_duplicates`), however many pairs they make (`copy_groups`). A class
of 1000 made of ten sources is ten entries, not 50,000 pairs.

Entries are ranked: not graded first (nothing else can be said of them),
then what decides points (forbidden APIs, flagged times), then the groups
(largest and most similar first), then time limits. Every reason comes from
what the grading observed (`Graded.observed`, the grader's own verdicts;
`Graded.error`, the harness's own failure), never from a line of the
feedback, which can hold text the submission printed. Each reason is one
line, shortened at a word (`cells.one_line`). Nothing here changes a score:
the queue only says where to look.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from ...declare.assignment import Assignment
from .cells import one_line, printable
from .copy_groups import CopyGroup, copy_groups
from .failures import remedy
from .graded import BUDGET, FORBIDDEN, IMPORT, MUCH_FASTER, TIMEOUT, Graded
from .insights import IdenticalGroup
from .layout import SubmissionFolder
from .near_duplicates import NearDuplicate
from .records import RESULTS, RESULTS_FOLDER

MAX_REASON_CHARS = 240
MEMBERS_IN_A_REASON = 8  # a group's identical members named in its reason; the entry lists every member

# Ranks: the lower, the earlier in the queue.
NOT_GRADED, POINTS, COPIES, TIME_LIMITS = range(4)


@dataclass(frozen=True)
class ReviewEntry:
    submissions: tuple[str, ...]  # one key, or a group's members in the layout's order
    students: tuple[str, ...]  # their names, where known
    reasons: tuple[str, ...]  # each one line
    links: tuple[str, ...]  # each submission's feedback (results.json), relative to the report
    rank: int = POINTS

    @property
    def submission(self) -> str:
        """The first (or only) submission."""
        return self.submissions[0]

    @property
    def link(self) -> str:
        return self.links[0]

    @property
    def why(self) -> str:
        return "; ".join(self.reasons)


def feedback_link(key: str) -> str:
    """Where a submission's feedback is, relative to report.html (the results folder is beside it)."""
    return f"{RESULTS_FOLDER}/{quote(printable(key))}/{RESULTS}"


def _checks(names: list[str]) -> str:
    return f"check{'s' if len(names) > 1 else ''} {', '.join(names)}"


def _by_detail(graded: Graded, kind: str) -> dict[str, list[str]]:
    """{detail: the checks that observed it}, for the observations of `kind`, in the order seen."""
    found: dict[str, list[str]] = {}
    for observed, check, detail in graded.observed:
        if observed == kind and check not in found.setdefault(detail, []):
            found[detail].append(check)
    return found


def forbidden_uses(graded: Graded) -> list[str]:
    """Each forbidden API the checks found (one the assignment lists), once, with the checks that found it."""
    return [f"forbidden API: {api} ({_checks(checks)})" for api, checks in _by_detail(graded, FORBIDDEN).items()]


def much_faster(graded: Graded) -> list[str]:
    """Each timing check that found the submission much faster than the reference, with the grader's times."""
    out = []
    for times, checks in _by_detail(graded, MUCH_FASTER).items():
        figures = f" ({times})" if times else ""
        for check in checks:
            out.append(f"{check} much faster than the reference{figures}, not paid until reviewed")
    return out


def time_limits(graded: Graded) -> list[str]:
    """What time limits stopped, each with its limit: the import (no check graded), the grading's budget, the
    checks a case of which a limit stopped (those of one limit together, in one reason)."""
    out, stopped, count = [], [], 0
    for limit, names in _by_detail(graded, TIMEOUT).items():
        if IMPORT in names:
            out.append(
                f"its import ran past its time limit ({limit}), so no check was graded: a loop or long work at "
                "the top level of a file"
            )
        if BUDGET in names:
            out.append(f"its grading ran past its budget of {limit} (grading_budget_s): the checks left scored 0")
        checks = [name for name in names if name not in (IMPORT, BUDGET)]
        if checks:
            stopped.append(f"{', '.join(checks)} ({limit})" if limit else ", ".join(checks))
            count += len(checks)
    if stopped:
        where = f"check{'s' if count > 1 else ''} {'; '.join(stopped)}"
        out.append(f"stopped by a time limit (a loop, or code far too slow) in {where}")
    return out


def own_entry(submission: SubmissionFolder, graded: Graded) -> ReviewEntry | None:
    """The submission's entry for what concerns it alone, or None."""
    students = tuple(s.name for s in submission.students if s.name)
    link = (feedback_link(submission.key),)
    if graded.error:
        reasons = [f"not graded: {graded.error}", f"to do: {remedy(graded.error)}"]
        return ReviewEntry((submission.key,), students, _lines(reasons), link, NOT_GRADED)
    harness = [f"the harness failed reading its verdicts: {d}" for k, _, d in graded.observed if k == "harness"]
    deciding = [*harness, *forbidden_uses(graded), *much_faster(graded)]
    timed_out = time_limits(graded)
    if not deciding and not timed_out:
        return None
    rank = POINTS if deciding else TIME_LIMITS
    return ReviewEntry((submission.key,), students, _lines([*deciding, *timed_out]), link, rank)


def group_entry(group: CopyGroup, students: dict[str, tuple[str, ...]]) -> ReviewEntry:
    """A group's one entry: its members, how alike they are, which of them are identical."""
    reasons = []
    if group.pairs:
        alike = (
            f"{100 * group.lowest:.0f}%"
            if round(100 * group.lowest) == round(100 * group.highest)
            else f"{100 * group.lowest:.0f}% to {100 * group.highest:.0f}%"
        )
        reasons.append(
            f"{group.size} submissions share most of their code: {group.pairs} near-duplicate "
            f"pair{'s' if group.pairs > 1 else ''}, {alike} of fingerprints shared"
        )
    for same in group.identical:
        named = ", ".join(same[:MEMBERS_IN_A_REASON])
        more = f" and {len(same) - MEMBERS_IN_A_REASON} more" if len(same) > MEMBERS_IN_A_REASON else ""
        reasons.append(f"identical graded files: {named}{more}")
    return ReviewEntry(
        group.submissions,
        tuple(name for key in group.submissions for name in students[key]),
        _lines(reasons),
        tuple(feedback_link(key) for key in group.submissions),
        COPIES,
    )


def _lines(reasons: list[str]) -> tuple[str, ...]:
    return tuple(one_line(reason, MAX_REASON_CHARS) for reason in reasons)


def review_queue(
    assignment: Assignment,
    rows: list[tuple[SubmissionFolder, Graded]],
    identical: list[IdenticalGroup],
    near: list[NearDuplicate],
) -> list[ReviewEntry]:
    """Everything that needs a person, ranked; each submission's own reasons in one entry, each group in one."""
    order = {s.key: i for i, (s, _) in enumerate(rows)}
    entries = [entry for submission, graded in rows if (entry := own_entry(submission, graded)) is not None]
    students = {s.key: tuple(student.name for student in s.students if student.name) for s, _ in rows}
    groups = copy_groups([s.key for s, _ in rows], identical, near)
    ranked = sorted(entries, key=lambda e: (e.rank, order[e.submission]))
    copies = [group_entry(group, students) for group in groups]  # already ranked
    return [
        *(e for e in ranked if e.rank < COPIES),
        *copies,
        *(e for e in ranked if e.rank > COPIES),
    ]

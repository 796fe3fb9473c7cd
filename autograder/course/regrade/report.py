"""report.html: what a regrade says about the class, for an instructor deciding what to re-teach.

The score distribution as a histogram, each check's pass rate, the known
mistakes the feedback named most often, with how many submissions made each,
and what comparing the submissions finds (`insights`): zeros by cause,
groups of identical submissions, and the checks whose failures mostly come
with a failure of a check they build on; then the groups of submissions
that share their code (`copy_groups`: near-duplicate pairs and identical
files, joined) and the review queue (`review_queue`): what needs a person,
with why and a link to its feedback. Where the export gave Gradescope's
scores, what the regrade changed (`changes`: every submission whose score
moved, by how much, and in which checks). With per-student hidden inputs,
each submission's seed (a short hash of it).
The charts are SVG written by the template itself: no plotting library to
install, no image files beside the page, text that stays sharp when zoomed,
and the same bytes for the same grades. Nothing in the page changes between
two regrades that gave the same grades (no dates), so it can be compared too.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path

import jinja2

from ...declare import templates
from ...declare.assignment import Assignment
from . import insights
from .cells import printable
from .copy_groups import copy_groups
from .failures import remedy
from .graded import Graded
from .layout import SubmissionFolder
from .near_duplicates import THRESHOLD, class_near_duplicates
from .review_queue import review_queue
from .scores_csv import change, has_original_scores, points

BINS = 10
TEMPLATE = "report.html.j2"


@dataclass(frozen=True)
class Bin:
    low: float
    high: float
    count: int

    @property
    def label(self) -> str:
        return f"{points(self.low)}–{points(self.high)}"


@dataclass(frozen=True)
class CheckRate:
    name: str
    title: str
    points: float
    visibility: str
    passed: int
    graded: int
    mean: float

    @property
    def rate(self) -> float:
        return self.passed / self.graded if self.graded else 0.0


@dataclass(frozen=True)
class MistakeCount:
    name: str
    explanation: str
    checks: tuple[str, ...]  # where the feedback named it
    submissions: int


@dataclass(frozen=True)
class Change:
    submission: str
    students: str
    was: float  # Gradescope's score
    now: float | None  # this regrade's (None: not graded)

    @property
    def by(self) -> float | None:
        return None if self.now is None else self.now - self.was


def changes(rows: list[tuple[SubmissionFolder, Graded]]) -> list[Change]:
    """Every submission whose regrade score differs from Gradescope's (or could not be graded), the largest
    change first; those without a Gradescope score are left out."""
    found = []
    for submission, graded in rows:
        if submission.original_score is None:
            continue
        difference = change(submission, graded)
        if difference is not None and abs(difference) < 5e-7:  # the same to the CSV's six decimals
            continue
        names = "; ".join(s.name for s in submission.students if s.name)
        found.append(Change(submission.key, names, submission.original_score, None if graded.error else graded.score))
    order = {s.key: i for i, (s, _) in enumerate(rows)}
    return sorted(found, key=lambda c: (c.by is not None, -abs(c.by or 0.0), order[c.submission]))


def histogram(scores: list[float], maximum: float, bins: int = BINS) -> list[Bin]:
    """`bins` equal ranges of 0..maximum, the last one closed (full marks fall in it)."""
    width = maximum / bins if maximum > 0 else 1.0
    counts = [0] * bins
    for score in scores:
        counts[min(bins - 1, max(0, int(score / width)))] += 1
    return [Bin(i * width, (i + 1) * width, n) for i, n in enumerate(counts)]


def check_rates(assignment: Assignment, graded: list[Graded]) -> list[CheckRate]:
    out = []
    for check in assignment.checks:
        scores = [c for g in graded for c in g.checks if c.name == check.name]
        out.append(
            CheckRate(
                check.name,
                check.title,
                check.points,
                check.visibility,
                sum(c.passed for c in scores),
                len(scores),
                statistics.fmean(c.score for c in scores) if scores else 0.0,
            )
        )
    return out


def mistake_counts(assignment: Assignment, graded: list[Graded]) -> list[MistakeCount]:
    """Each named mistake with the number of submissions it was named for, most frequent first."""
    explanations = {m.name: m.explanation for c in assignment.checks for m in c.mistakes}
    made: dict[str, list[int]] = {}
    where: dict[str, set[str]] = {}
    for index, g in enumerate(graded):
        for c in g.checks:
            if c.mistake:
                made.setdefault(c.mistake, []).append(index)
                where.setdefault(c.mistake, set()).add(c.name)
    order = [c.name for c in assignment.checks]
    counts = [
        MistakeCount(
            name,
            explanations.get(name, ""),
            tuple(sorted(where[name], key=lambda n: order.index(n) if n in order else len(order))),
            len(set(indices)),
        )
        for name, indices in made.items()
    ]
    return sorted(counts, key=lambda m: (-m.submissions, m.name))


def render_report(
    assignment: Assignment,
    variant: dict,
    rows: list[tuple[SubmissionFolder, Graded]],
    seeds: dict[str, str] | None = None,
) -> str:
    """The page; `seeds` (each submission's hidden-input seed, where drawn per student) adds their table."""
    graded = [g for _, g in rows if not g.error]
    maximum = sum(c.points for c in assignment.checks)
    scores = [g.score for g in graded]
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("lmgrade.course.regrade", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["points"] = points
    env.filters["short"] = lambda value: points(round(value, 2))  # means, for reading rather than records
    identical = insights.identical_groups(rows)
    stub = templates.render(assignment, variant)
    files = assignment.spec.files
    near = class_near_duplicates(rows, files, [stub[name] for name in files if name in stub])
    students = {s.key: "; ".join(student.name for student in s.students if student.name) for s, _ in rows}
    originals = has_original_scores(rows)
    return env.get_template(TEMPLATE).render(
        assignment=assignment.spec,
        variant=variant,
        maximum=maximum,
        submissions=len(rows),
        graded=len(graded),
        mean=statistics.fmean(scores) if scores else 0.0,
        median=statistics.median(scores) if scores else 0.0,
        full_marks=sum(s >= maximum for s in scores),
        bins=histogram(scores, maximum),
        checks=check_rates(assignment, graded),
        mistakes=mistake_counts(assignment, graded),
        zeros=insights.zero_causes(rows),
        identical=identical,
        groups=copy_groups([s.key for s, _ in rows], identical, near),
        near_pairs=len(near),
        near_threshold=THRESHOLD,
        originals=originals,
        changes=changes(rows) if originals else [],
        original_mean=statistics.fmean(s.original_score for s, _ in rows if s.original_score is not None)
        if originals
        else 0.0,
        students=students,
        review=review_queue(assignment, rows, identical, near),
        stood_in=insights.paid_by_stand_ins(assignment, rows),
        failures=[(s.key, g.error, remedy(g.error)) for s, g in rows if g.error],
        seeds=None if seeds is None else [(s.key, seeds.get(s.key, "")) for s, _ in rows],
    )


def write_report(
    path: Path,
    assignment: Assignment,
    variant: dict,
    rows: list[tuple[SubmissionFolder, Graded]],
    seeds: dict[str, str] | None = None,
) -> None:
    # Text of the file system's (a Latin-1 name in an error) is spelt as escapes rather than stop the page.
    Path(path).write_bytes(printable(render_report(assignment, variant, rows, seeds)).encode("utf-8"))

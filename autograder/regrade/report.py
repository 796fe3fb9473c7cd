"""report.html: what a regrade says about the class, for an instructor deciding what to re-teach.

The score distribution as a histogram, each check's pass rate, the known
mistakes the feedback named most often, with how many submissions made each,
and what comparing the submissions finds (`insights`): zeros by cause,
groups of identical submissions, and the checks whose failures mostly come
with a failure of a check they build on; then the pairs of near-duplicate
submissions (`near_duplicates`) and the review queue (`review_queue`):
every submission that needs a person, with why and a link to its feedback.
With per-student hidden inputs, each submission's seed (a short hash of it).
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

from .. import templates
from ..assignment import Assignment
from . import insights
from .graded import Graded
from .layout import SubmissionFolder
from .near_duplicates import THRESHOLD, class_near_duplicates
from .review_queue import review_queue
from .scores_csv import points

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
        loader=jinja2.PackageLoader("lmgrade.regrade", "templates"),
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
        near=near,
        near_threshold=THRESHOLD,
        students=students,
        review=review_queue(assignment, rows, identical, near),
        stood_in=insights.paid_by_stand_ins(assignment, rows),
        failures=[(s.key, g.error) for s, g in rows if g.error],
        seeds=None if seeds is None else [(s.key, seeds.get(s.key, "")) for s, _ in rows],
    )


def write_report(
    path: Path,
    assignment: Assignment,
    variant: dict,
    rows: list[tuple[SubmissionFolder, Graded]],
    seeds: dict[str, str] | None = None,
) -> None:
    Path(path).write_text(render_report(assignment, variant, rows, seeds), encoding="utf-8")

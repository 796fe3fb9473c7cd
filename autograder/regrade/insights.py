"""What a class report finds by comparing submissions, which an instructor would otherwise find by hand.

- Identical submissions: groups whose graded files have the same content
  hash. A hint to look, not an accusation: a group that submitted twice,
  the starter code handed back, or a solution the staff shared give it too.
- Zeros by cause: a syntax error or import failure, a missing or misnamed
  file, an untouched stub, or everything wrong (`graded.ZERO_CAUSES`).
- Failures explained by a component: a check that builds on another (the
  model on its layer norm) mostly fails where that one fails too. Which
  check builds on which comes from the reference, not from the class: B is
  a component of A when the code A's scenario runs reaches all the code B's
  does, and more (`forbidden.reached` on the reference's files, from each
  check's `uses`, or, where it names none, from every name of the files its
  scenario takes from `modules`).
"""

from __future__ import annotations

import ast
import inspect
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ..assignment import Assignment
from ..checks import Check
from ..forbidden import reached
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
class Explained:
    check: str  # the check that failed ...
    failed: int  # ... in this many submissions,
    explained: int  # ... in this many of them beside a check it builds on,
    component: str  # ... most often this one, its most basic component that failed
    together: int  # ... in this many

    @property
    def share(self) -> float:
        return self.together / self.failed if self.failed else 0.0


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


def components(assignment: Assignment) -> dict[str, list[str]]:
    """{check: the checks it builds on, most basic first}, from what each check's code reaches in the reference."""
    folder = assignment.spec.reference_folder()
    sources = {}
    for filename in assignment.spec.files:
        try:
            sources[filename] = (Path(folder) / filename).read_text(encoding="utf-8")
        except OSError:
            continue
    names = {Path(f).stem: f for f in sources}
    reach = {check.name: _reach(check, sources, names) for check in assignment.checks}
    # A timing check's failure is about speed: it explains no other check's. Most basic first.
    basic_first = sorted((c for c in assignment.checks if c.timing is None), key=lambda c: len(reach[c.name]))
    return {
        a.name: [b.name for b in basic_first if b.name != a.name and reach[b.name] and reach[b.name] < reach[a.name]]
        for a in assignment.checks
    }


def _reach(check: Check, sources: dict[str, str], stems: dict[str, str]) -> frozenset:
    roots = list(check.uses)
    if not roots:  # anything in the files its scenario takes from `modules`, else in every file it loads
        used = _modules_used(check.scenario)
        files = [f for f in check.files if Path(f).stem in used] or list(check.files)
        roots = [f"{Path(f).stem}.{name}" for f in files if f in sources for name in _top_level_names(sources[f])]
    found = reached(sources, roots)
    return frozenset(found | {(stems.get(r.rpartition(".")[0], ""), r.rpartition(".")[2]) for r in roots})


def _modules_used(scenario) -> set[str]:
    """The submitted modules a scenario reads (`modules["elman"]`), through the functions of its own module it calls."""
    try:
        tree = ast.parse(inspect.getsource(inspect.getmodule(scenario)))
    except (OSError, TypeError, SyntaxError):
        return set()
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    used: set[str] = set()
    todo, seen = [scenario.__name__], set()
    while todo:
        name = todo.pop()
        if name in seen or name not in functions:
            continue
        seen.add(name)
        for node in ast.walk(functions[name]):
            if (
                isinstance(node, ast.Subscript)
                and isinstance(node.value, ast.Name)
                and node.value.id == "modules"
                and isinstance(node.slice, ast.Constant)
                and isinstance(node.slice.value, str)
            ):
                used.add(node.slice.value)
            elif isinstance(node, ast.Name) and node.id in functions:
                todo.append(node.id)
    return used


def _top_level_names(source: str) -> list[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    return [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]


def explained_failures(
    assignment: Assignment, rows: list[tuple[SubmissionFolder, Graded]], built_on: dict[str, list[str]] | None = None
) -> list[Explained]:
    """For each check with failures beside a component's, the component they most often come from.

    A failure comes from the most basic of the components that failed beside
    it (the layer norm, rather than the block built on it). Most explained first.

    Zeros with nothing to compare (import failures, missing files, stubs) fail
    every check together and are left out: they explain nothing.
    """
    built_on = components(assignment) if built_on is None else built_on
    failed: dict[str, set[str]] = {}
    for submission, graded in rows:
        if graded.error or graded.zero_cause in _NOTHING_TO_COMPARE:
            continue
        for score in graded.checks:
            if not score.passed:
                failed.setdefault(score.name, set()).add(submission.key)
    found = []
    for check in assignment.checks:
        mine = failed.get(check.name, set())
        # For each failure, the most basic of the components that failed beside it: where to look first.
        roots = Counter(
            next(b for b in built_on.get(check.name, []) if key in failed.get(b, ()))
            for key in mine
            if any(key in failed.get(b, ()) for b in built_on.get(check.name, []))
        )
        if roots:
            ((component, together),) = roots.most_common(1)
            found.append(Explained(check.name, len(mine), sum(roots.values()), component, together))
    return sorted(found, key=lambda e: (-e.share, -e.together, e.check))

"""An assignment's declarations checked against its reference: its author's errors, said as such.

A plugin declares its known mistakes and its bugs as edits of the reference, its checks' cases as
arguments of their scenarios. When the reference changes under them, or a declaration cannot work, the
fault is the author's, not lmgrade's and not a student's: it is named here by the file and line that
declare it and by what it is (`AuthorError`), before any grading would fail on it halfway or, for a
mistake, quietly never name it.

- `stale_edits`: a mistake's or bug's edit whose text the reference no longer holds exactly once (or that
  names a file the assignment does not have); cheap, so `lmgrade grade` states the mistakes it drops;
- `bad_scenarios`: a check whose cases cannot be passed to its scenario;
- `on_the_reference`: a check whose scenario the reference itself fails on, and a mistake that no
  submission can be told, on the cases a grading draws: it raises on every case, or answers as the
  reference does on every one (`ExpectedValues.diagnose` names a mistake only where its answers differ
  from the reference's, or it raises as the submission does).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import HarnessFault
from ..declare.assignment import Assignment
from ..declare.checks import Check, explains
from ..declare.flawed import Bug
from ..grading.expected_store import ExpectedStore
from ..grading.expected_values import ExpectedValues, Raised, draw_cases
from ..grading.oracle import LiveReference


class AuthorError(Exception):
    """Declarations of an assignment that cannot work: each problem one line, naming where it is declared."""

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Declared:
    """Where a declaration is: the plugin's folders to look in, narrowest first."""

    folders: tuple[Path, ...]

    @classmethod
    def around(cls, assignment: Assignment) -> Declared:
        """The folders of the modules that define the assignment's checks, and their packages up to the top."""
        folders: list[Path] = []
        for check in assignment.checks:
            for function in (check.scenario, check.make_cases):
                try:
                    source = inspect.getsourcefile(inspect.unwrap(function))
                except TypeError:
                    continue
                if source is None:
                    continue
                folder = Path(source).resolve().parent
                while (folder / "__init__.py").is_file():
                    if folder not in folders:
                        folders.append(folder)
                    folder = folder.parent
        return cls(tuple(sorted(folders, key=lambda f: -len(f.parts))))

    def find(self, *texts: str, opened_by: str = "") -> str:
        """`FILE:LINE` of the first Python file (narrowest folder first) that holds every one of `texts` on
        one line (and `opened_by`, a call such as `Mistake(`, on that line or the one before); "" where none
        does. FILE is relative to the top package's parent folder."""
        top = self.folders[-1].parent if self.folders else None
        seen: set[Path] = set()
        for folder in self.folders:
            for path in sorted(folder.glob("*.py")):
                if path in seen:
                    continue
                seen.add(path)
                try:
                    lines = path.read_text(encoding="utf-8").splitlines()
                except (OSError, UnicodeDecodeError):
                    continue
                for number, line in enumerate(lines, 1):
                    opened = not opened_by or opened_by in line or (number > 1 and opened_by in lines[number - 2])
                    # A text that is a dict's key (a bug's name in a catalogue) is not its declaration.
                    if opened and all(text in line and not (opened_by and f"{text}:" in line) for text in texts):
                        shown = path.relative_to(top) if top is not None else path.name
                        return f"{Path(shown).as_posix()}:{number}"
        return ""

    def of_name(self, name: str, opened_by: str = "") -> str:
        """Where the string literal `name` is written (a mistake's or check's name), in a call `opened_by`
        where one is found."""
        quoted = (f'"{name}"', f"'{name}'")
        return next((at for q in quoted if (at := self.find(q, opened_by=opened_by))), "") or next(
            (at for q in quoted if (at := self.find(q))), ""
        )


def _where(at: str) -> str:
    return f"{at}: " if at else ""


def _edit_problem(reference: Path, files: tuple[str, ...], file: str, old: str) -> str | None:
    """Why the edit of `old` in `file` cannot be made to the reference, or None where it can."""
    if file not in files:
        return f"it edits {file}, which is not a submitted file ({', '.join(files)})"
    count = (reference / file).read_text(encoding="utf-8").count(old)
    if count != 1:
        return f"the reference's {file} holds {old!r} {'nowhere' if count == 0 else f'{count} times'}, not once"
    return None


def _first_line_of(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), text.strip())


def stale_mistakes(assignment: Assignment, declared: Declared | None = None) -> list[str]:
    """The known mistakes whose edits the reference no longer allows: each is never named while so."""
    declared = declared or Declared.around(assignment)
    reference, files = assignment.spec.reference_folder(), assignment.spec.files
    problems = []
    for check in assignment.checks:
        for mistake in check.mistakes:
            for file, old, _ in mistake.edits:
                why = _edit_problem(reference, files, file, old)
                if why:
                    at = declared.of_name(mistake.name, "Mistake(") or declared.find(_first_line_of(old))
                    problems.append(f"{_where(at)}mistake {mistake.name!r} of check {check.name}: {why}")
                    break
    return problems


def stale_bugs(assignment: Assignment, bugs: dict[str, Bug], declared: Declared | None = None) -> list[str]:
    """The catalogue's bugs whose edits the reference no longer allows (a bug made from a mistake is told
    by the mistake's line, where that is stale too)."""
    declared = declared or Declared.around(assignment)
    reference, files = assignment.spec.reference_folder(), assignment.spec.files
    problems = []
    for key, bug in bugs.items():
        for old, _ in bug.edits:
            why = _edit_problem(reference, files, bug.file, old)
            if why:
                at = declared.find(f'"{key}":') or declared.find(f"'{key}':") or declared.find(_first_line_of(old))
                problems.append(f"{_where(at)}bug {key!r} ({bug.what}): {why}")
                break
    return problems


def bad_scenarios(assignment: Assignment, variant: dict, secret: str, declared: Declared | None = None) -> list[str]:
    """The checks whose drawn cases cannot be passed to their scenario, or that cannot draw their cases."""
    declared = declared or Declared.around(assignment)
    problems = []
    for check in assignment.checks:
        try:
            draw_cases(check, assignment.name, variant, secret)
        except HarnessFault as exc:
            at = _defined_at(check.scenario, declared) or declared.of_name(check.name)
            problems.append(f"{_where(at)}{exc} (the scenario {_name(check.scenario)})")
        except Exception as exc:  # make_cases itself failed: the plugin's code
            at = _defined_at(check.make_cases, declared) or declared.of_name(check.name)
            problems.append(
                f"{_where(at)}check {check.name}: make_cases {_name(check.make_cases)} raised "
                f"{type(exc).__name__}: {exc}"
            )
    return problems


def on_the_reference(
    assignment: Assignment,
    variants: Iterable[dict],
    secret: str,
    store: ExpectedStore | None = None,
    declared: Declared | None = None,
) -> list[str]:
    """What running the reference shows, in any of `variants`: a check whose scenario the reference fails
    on, and the known mistakes no submission can be told (on the cases drawn, making the mistake raises on
    every case, or gives the reference's answers on every case). The values are kept in `store`, where a
    grading finds them."""
    declared = declared or Declared.around(assignment)
    reference = LiveReference(assignment.spec)
    reasons: dict[tuple[str, str], str] = {}
    nameable: set[tuple[str, str]] = set()
    problems: list[str] = []
    for variant in variants:
        values = ExpectedValues(assignment, variant, reference, secret=secret, store=store)
        for check in assignment.checks:
            if check.timing is not None:
                continue
            try:
                cases, right = values.of(check)
            except HarnessFault as exc:  # the reference failed on the scenario: the plugin's code
                at = _defined_at(check.scenario, declared) or declared.of_name(check.name)
                problem = f"{_where(at)}check {check.name}: {exc} (the scenario {_name(check.scenario)})"
                problems += [problem] if problem not in problems else []
                continue
            tolerances = [check.tolerance_of(case) for case in cases]
            for mistake in check.mistakes:
                key = (check.name, mistake.name)
                answers = values.mistake_answers(check, cases, mistake)
                why = _why_never_named(check, cases, right, answers, tolerances)
                if why is None:
                    nameable.add(key)
                else:
                    reasons.setdefault(key, why)
    for (check_name, mistake_name), why in reasons.items():
        if (check_name, mistake_name) not in nameable:
            at = declared.of_name(mistake_name, "Mistake(")
            problems.append(f"{_where(at)}mistake {mistake_name!r} of check {check_name} is never named: {why}")
    return problems


def _why_never_named(check: Check, cases, right, answers, tolerances) -> str | None:
    if all(isinstance(a, Raised) for a in answers):
        kinds = sorted({a.kind or "an exception" for a in answers})
        return f"making it raises on every case ({', '.join(kinds)})"
    if any(isinstance(a, Raised) for a in answers):
        return None  # named where a submission raises as it does
    mistaken = [check.summarized(case, a) for case, a in zip(cases, answers, strict=True)]
    reference = [check.summarized(case, r) for case, r in zip(cases, right, strict=True)]
    if explains(mistaken, reference, tolerances):
        return f"its answers are the reference's on every one of the {len(cases)} cases: no case tells it apart"
    return None


def _defined_at(function, declared: Declared) -> str:
    """`FILE:LINE` of a function's definition, relative as `Declared.find` shows files."""
    try:
        function = inspect.unwrap(function)
        source, line = inspect.getsourcefile(function), inspect.getsourcelines(function)[1]
    except (TypeError, OSError):
        return ""
    if source is None:
        return ""
    top = declared.folders[-1].parent if declared.folders else None
    path = Path(source).resolve()
    shown = path.relative_to(top) if top is not None and path.is_relative_to(top) else Path(path.name)
    return f"{shown.as_posix()}:{line}"


def _name(function) -> str:
    return re.sub(r"\s+", " ", getattr(function, "__qualname__", None) or repr(function))

"""Grading: one submission, one call.

`grade_submission` is what every command grades with (`grade`, `check`, and
the commands that ship or regrade): it finds the submitted files, keeps a
results.json valid from before the first check to the last, runs the checks
through a `Grader` and returns a `GradingRun`. Whatever the submission does
is a verdict; only a `HarnessFault` is not, and even then results.json is
left valid and says so.

A `Grader` holds what outlives one submission: the sandbox pool and the
expected values, computed once per check and shared by every submission it
grades.
"""

from __future__ import annotations

import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .assignment import Assignment
from .checks import ANSWER, PROPERTY, Case, CaseContext, CaseVerdict, Check, Mistake, explains
from .errors import HarnessFault
from . import forbidden
from .feedback import describe_output, forbidden_message, outcome_verdict, summarize
from .oracle import LiveReference
from .reports.gradescope import ResultsFile
from .sandbox.pool import CaseOutcome, SandboxPool
from .seeds import check_rng, course_secret
from .submission import locate

# Larger files are left to the run-time guard (and to the sandbox's limits).
MAX_SCANNED_BYTES = 2 * 2**20
# What a mistake "returns" on a case where making it raises.
CRASHES = object()

HARNESS_FAULT_NOTE = ("The autograder itself failed, not your submission: please tell the course staff "
                      "(your score is not final).")


@dataclass
class Verdict:
    """The grade of one check, computed in the grading process."""

    check: Check
    number: int
    score: float
    output: str
    cases: list[tuple[Case, CaseVerdict]] = field(default_factory=list)
    wall_s: float = 0.0
    defences: dict = field(default_factory=dict)
    mistake: Mistake | None = None

    @property
    def max_score(self) -> float:
        return self.check.points

    @property
    def passed(self) -> bool:
        return self.score >= self.max_score


@dataclass
class GradingRun:
    """What grading one submission gave."""

    submission: Path          # the folder that was graded
    note: str                 # where the files were found, when not at the top
    verdicts: list[Verdict]

    @property
    def score(self) -> float:
        return sum(v.score for v in self.verdicts)

    @property
    def max_score(self) -> float:
        return sum(v.max_score for v in self.verdicts)

    @property
    def defences(self) -> dict:
        return next((v.defences for v in self.verdicts if v.defences), {})


class Grader:
    """Grades submissions of one assignment; owns the sandbox pool."""

    def __init__(self, assignment: Assignment, variant: dict, oracle, *, secret: str, jobs: int = 1,
                 protected: list[Path] = (), landlock: bool = True):
        self.assignment, self.variant, self.oracle = assignment, variant, oracle
        self.secret, self.jobs = secret, max(1, jobs)
        spec = assignment.spec
        preload = ["numpy", *spec.preload,
                   *sorted({c.scenario.__module__ for c in assignment.checks})]
        self.pool = SandboxPool(preload=preload, forbidden_modules=[spec.reference_package],
                                protected=[*oracle.protected_paths(), spec.root, *protected,
                                           *self._plugin_paths()],
                                jobs=self.jobs, landlock=landlock,
                                forbidden_apis={"apis": list(spec.forbidden),
                                                "also": {k: list(v) for k, v in spec.forbidden_also.items()}})
        self._expected: dict[str, tuple[list[Case], list[Any]]] = {}
        self._mistaken: dict[tuple[str, Mistake], list[Any]] = {}
        self._lock = threading.Lock()

    def _plugin_paths(self) -> list[Path]:
        """The folders of the modules the checks come from: hidden from the sandbox."""
        paths = set()
        for check in self.assignment.checks:
            module = sys.modules.get(check.scenario.__module__)
            if module is not None and getattr(module, "__file__", None):
                paths.add(Path(module.__file__).parent)
        return sorted(paths)

    def close(self) -> None:
        self.pool.close()

    def __enter__(self) -> "Grader":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def cases_and_expected(self, check: Check) -> tuple[list[Case], list[Any]]:
        """Computed once per check and reused for every submission (regrades)."""
        with self._lock:
            if check.name not in self._expected:
                cases = draw_cases(check, self.assignment.name, self.variant, self.secret)
                expected = self.oracle.expected(check, cases)
                if check.property_check and not all(isinstance(e, dict) and set(e) == {ANSWER, PROPERTY}
                                                    for e in expected):
                    raise HarnessFault(f"{check.name} is a property check: its scenario must return "
                                       "property_result(answer, holds)")
                self._expected[check.name] = (cases, expected)
            return self._expected[check.name]

    def _mistake_answers(self, check: Check, cases: list[Case], mistake: Mistake) -> list[Any]:
        """What a submission making `mistake` returns on every case (`CRASHES` where it raises)."""
        key = (check.name, mistake)
        with self._lock:
            if key not in self._mistaken:
                self._mistaken[key] = [self._mistaken_answer(check, case, mistake) for case in cases]
            return self._mistaken[key]

    def _mistaken_answer(self, check: Check, case: Case, mistake: Mistake) -> Any:
        try:
            return self.oracle.mistaken(check, case, mistake)
        except Exception:
            return CRASHES

    def diagnose(self, check: Check, cases: list[Case], outcomes: list[CaseOutcome]) -> Mistake | None:
        """The first known mistake that explains every answer the submission gave.

        A mistake that crashes on a case (positions past the last embedding)
        explains a submission that crashed there too: only the answered cases count.
        """
        answered = [i for i, o in enumerate(outcomes) if o.kind == "ok"]
        if not answered:
            return None
        for mistake in check.mistakes:
            answers = self._mistake_answers(check, cases, mistake)
            if all(answers[i] is not CRASHES for i in answered) and \
                    explains([answers[i] for i in answered], [outcomes[i].value for i in answered],
                             [check.tolerance_of(cases[i]) for i in answered]):
                return mistake
        return None

    def forbidden_uses(self, submission: Path) -> forbidden.Uses | None:
        """Where the submitted files use an API the assignment forbids (read, never run); None if it forbids none."""
        spec = self.assignment.spec
        if not spec.forbidden:
            return None
        sources = {}
        for filename in spec.files:
            path = submission / filename
            try:
                if path.is_file() and path.stat().st_size <= MAX_SCANNED_BYTES:
                    sources[filename] = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                pass
        return forbidden.Uses(sources, spec.forbidden, spec.forbidden_also)

    def grade_check(self, check: Check, number: int, submission: Path,
                    uses: forbidden.Uses | None = None) -> Verdict:
        cases, expected = self.cases_and_expected(check)
        reveal = check.visibility == "visible"
        missing = [f for f in check.files if not (submission / f).is_file()]
        if missing:
            return _not_run(check, number, cases, f"{', '.join(missing)} is missing from the submission")
        found = uses.relevant(check.uses, check.files) if uses is not None and uses.findings else []
        if found:
            return _not_run(check, number, cases, "\n".join(
                forbidden_message([f.api], f" in {f.file} line {f.line} (`{f.code[:120]}`)") for f in found[:5]))
        run = self.pool.run(scenario=check.scenario_ref, submission=submission, files=list(check.files),
                            cases=[c.args for c in cases], limits=check.limits)
        judged = [(case, outcome_verdict(check, case, exp, outcome, reveal))
                  for case, exp, outcome in zip(cases, expected, run.outcomes)]
        passed = sum(v.passed for _, v in judged)
        mistake = self.diagnose(check, cases, run.outcomes) if passed < len(cases) and check.mistakes else None
        score = check.points * passed / len(cases) if cases else 0.0
        output = summarize(judged, reveal, mistake)
        printed = describe_output(run.output, failed=passed < len(cases), reveal=reveal)
        if printed:
            output += "\n" + printed
        return Verdict(check, number, score, output, judged, wall_s=run.wall_s, defences=run.defences,
                       mistake=mistake)

    def grade(self, submission: Path, on_verdict: Callable[[Verdict], None] | None = None,
              only: set[str] | None = None,
              on_check_start: Callable[[Check], None] | None = None) -> list[Verdict]:
        """Verdicts of the checks named in `only` (all by default), numbered as in the assignment.

        `on_check_start` hears of each check as it begins (progress for slow checks).
        """
        submission = Path(submission).resolve()
        numbered = [(n, c) for n, c in enumerate(self.assignment.checks, start=1) if only is None or c.name in only]
        verdicts: dict[int, Verdict] = {}
        report_lock = threading.Lock()

        uses = self.forbidden_uses(submission)

        def one(item):
            number, check = item
            if on_check_start:
                on_check_start(check)
            verdict = self.grade_check(check, number, submission, uses)
            with report_lock:
                verdicts[number] = verdict
                if on_verdict:
                    on_verdict(verdict)

        with ThreadPoolExecutor(max_workers=self.jobs) as executor:
            for future in [executor.submit(one, item) for item in numbered]:
                future.result()
        return [verdicts[n] for n, _ in numbered]


def draw_cases(check: Check, assignment: str, variant: dict, secret: str) -> list[Case]:
    """The check's cases, drawn from its seed: the same secret always gives the same cases."""
    rng = check_rng(secret, assignment, check.name)
    return check.make_cases(CaseContext(rng=rng, variant=variant))


def _not_run(check: Check, number: int, cases: list[Case], reason: str) -> Verdict:
    """Zero for a check that cannot be run on this submission, every case with the reason."""
    return Verdict(check, number, 0.0, reason, [(c, CaseVerdict(False, reason)) for c in cases])


def grade_submission(assignment: Assignment, variant: dict, submission: Path, *,
                     results: Path | None = None, jobs: int = 1, visible_only: bool = False,
                     grader: Grader | None = None, secret: str | None = None,
                     on_start: Callable[[int], None] | None = None,
                     on_verdict: Callable[[Verdict], None] | None = None,
                     on_check_start: Callable[[Check], None] | None = None) -> GradingRun:
    """Grade one submission folder; keep `results` (if given) a valid results.json throughout.

    `grader` lets many submissions share one sandbox pool and one set of
    expected values; without it, one is made (with the live reference) and
    closed. Raises `HarnessFault` when grading cannot be trusted, after
    writing a results.json that says so.
    """
    checks = [c for c in assignment.checks if c.visibility == "visible" or not visible_only]
    position = {c.name: i for i, c in enumerate(checks, start=1)}
    submission, note = locate(Path(submission), assignment.spec.files)
    results_file = ResultsFile(results, checks, output=note) if results else None
    verdicts: list[Verdict] = []

    def record(verdict: Verdict) -> None:
        verdicts.append(verdict)
        if results_file:
            results_file.record(position[verdict.check.name], verdict.score, verdict.output)
        if on_verdict:
            on_verdict(verdict)

    try:
        if on_start:
            on_start(len(checks))
        if grader is None:
            protected = [Path(results).resolve()] if results else []
            with Grader(assignment, variant, LiveReference(assignment.spec),
                        secret=course_secret() if secret is None else secret, jobs=jobs,
                        protected=protected) as own:
                own.grade(submission, on_verdict=record, only=set(position), on_check_start=on_check_start)
        else:
            grader.grade(submission, on_verdict=record, only=set(position), on_check_start=on_check_start)
    except BaseException:  # a HarnessFault, a bug of the harness, an interrupt: never the submission's
        if results_file:
            results_file.output = f"{HARNESS_FAULT_NOTE}\n{note}".strip()
            results_file.write()
        raise
    verdicts.sort(key=lambda v: v.number)
    return GradingRun(submission=submission, note=note, verdicts=verdicts)

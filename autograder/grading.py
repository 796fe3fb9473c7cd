"""One grading run: cases, expected values, sandboxed runs, verdicts."""

from __future__ import annotations

import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .assignment import Assignment
from .checks import Case, CaseContext, CaseVerdict, Check
from .sandbox.pool import CaseOutcome, SandboxPool
from .seeds import check_rng

ALL_CASES_NOTE = "{passed}/{total} cases passed"
# Gradescope cuts a results.json whose outputs pass 100,000 characters; no
# check may take more than its share.
MAX_FEEDBACK_CHARS = 6000


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

    @property
    def max_score(self) -> float:
        return self.check.points

    @property
    def passed(self) -> bool:
        return self.score >= self.max_score


def outcome_verdict(check: Check, case: Case, expected: Any, outcome: CaseOutcome, reveal: bool,
                    mistaken=None) -> CaseVerdict:
    """Turn what happened in the sandbox into a verdict on one case."""
    if outcome.kind == "ok":
        return check.verdict(case, expected, outcome.value, reveal=reveal, mistaken=mistaken)
    if outcome.kind in ("error", "import_error"):
        err = outcome.error or {}
        if outcome.kind == "import_error":
            return CaseVerdict(False, f"could not import the submission: {err.get('type')}: {err.get('message')}\n"
                                      + _traceback_tail(err))
        if err.get("type") == "NotImplementedError":
            return CaseVerdict(False, "not implemented (raised NotImplementedError)")
        if err.get("type") == "MemoryError":
            return CaseVerdict(False, f"ran out of memory (limit {check.limits.memory_mb} MiB)")
        return CaseVerdict(False, f"raised {err.get('type')}: {err.get('message')}\n" + _traceback_tail(err))
    if outcome.kind == "timeout" and check.timeout_hint:
        return CaseVerdict(False, f"{outcome.message}\n{check.timeout_hint}")
    return CaseVerdict(False, outcome.message)


def _traceback_tail(err: dict, lines: int = 6) -> str:
    """The end of the traceback, without the import machinery's own frames."""
    kept, skip = [], False
    for line in (err.get("traceback") or "").rstrip().splitlines():
        if line.lstrip().startswith('File "<frozen '):
            skip = True
            continue
        if skip and line.startswith("    ") and not line.lstrip().startswith("File "):
            continue
        skip = False
        kept.append(line)
    return "\n".join(kept[-lines:])


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line for line in text.splitlines())


def summarize(cases: list[tuple[Case, CaseVerdict]], reveal: bool) -> str:
    passed = sum(v.passed for _, v in cases)
    lines = [ALL_CASES_NOTE.format(passed=passed, total=len(cases)) + "."]
    messages = {v.message for _, v in cases}
    if not passed and len(cases) > 1 and len(messages) == 1:
        return f"{lines[0]}\nevery case: {messages.pop()}"
    shown: set[str] = set()
    for i, (case, verdict) in enumerate(cases):
        if verdict.passed:
            continue
        label = case.label if reveal else "hidden input"
        # The same failure on every case (not implemented, import error) is said once.
        if verdict.message in shown:
            lines.append(f"case {i + 1}: {label}: same as above")
            continue
        shown.add(verdict.message)
        block = f"case {i + 1}: {label}\n{_indent(verdict.message)}"
        if sum(map(len, lines)) + len(block) > MAX_FEEDBACK_CHARS:
            rest = sum(not v.passed for _, v in cases[i:])
            lines.append(f"... and {rest} more failed case{'s' if rest > 1 else ''}, not shown")
            break
        lines.append(block)
    return "\n".join(lines)


class Grader:
    """Grades submissions of one assignment; owns the sandbox pool."""

    def __init__(self, assignment: Assignment, variant: dict, oracle, *, secret: str, jobs: int = 1,
                 protected: list[Path] = (), landlock: bool = True):
        self.assignment, self.variant, self.oracle = assignment, variant, oracle
        self.secret, self.jobs = secret, max(1, jobs)
        preload = ["numpy", *assignment.spec.preload,
                   *sorted({c.scenario.__module__ for c in assignment.checks})]
        self.pool = SandboxPool(preload=preload, forbidden_modules=[assignment.spec.reference_package],
                                protected=[*oracle.protected_paths(), assignment.spec.root, *protected,
                                           *self._plugin_paths()],
                                jobs=self.jobs, landlock=landlock)
        self._expected: dict[str, tuple[list[Case], list[Any]]] = {}
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
                rng = check_rng(self.secret, self.assignment.name, check.name)
                cases = check.make_cases(CaseContext(rng=rng, variant=self.variant))
                self._expected[check.name] = (cases, self.oracle.expected(check, cases))
            return self._expected[check.name]

    def grade_check(self, check: Check, number: int, submission: Path) -> Verdict:
        cases, expected = self.cases_and_expected(check)
        reveal = check.visibility == "visible"
        missing = [f for f in check.files if not (submission / f).is_file()]
        if missing:
            msg = f"{', '.join(missing)} is missing from the submission"
            return Verdict(check, number, 0.0, msg, [(c, CaseVerdict(False, msg)) for c in cases])
        run = self.pool.run(scenario=check.scenario_ref, submission=submission, files=list(check.files),
                            cases=[c.args for c in cases], limits=check.limits)
        judged = [(case, outcome_verdict(check, case, exp, outcome, reveal,
                                         mistaken=lambda m, case=case: self.oracle.mistaken(check, case, m)))
                  for case, exp, outcome in zip(cases, expected, run.outcomes)]
        passed = sum(v.passed for _, v in judged)
        score = check.points * passed / len(cases) if cases else 0.0
        return Verdict(check, number, score, summarize(judged, reveal), judged,
                       wall_s=run.wall_s, defences=run.defences)

    def grade(self, submission: Path, on_verdict: Callable[[Verdict], None] | None = None) -> list[Verdict]:
        submission = Path(submission).resolve()
        checks = list(enumerate(self.assignment.checks, start=1))
        verdicts: list[Verdict | None] = [None] * len(checks)
        report_lock = threading.Lock()

        def one(item):
            number, check = item
            verdict = self.grade_check(check, number, submission)
            with report_lock:
                verdicts[number - 1] = verdict
                if on_verdict:
                    on_verdict(verdict)

        with ThreadPoolExecutor(max_workers=self.jobs) as executor:
            for future in [executor.submit(one, item) for item in checks]:
                future.result()
        return verdicts

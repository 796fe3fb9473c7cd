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

import ast
import random
import re
import shutil
import sys
import tempfile
import threading
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .assignment import Assignment
from .checks import ANSWER, PROPERTY, Case, CaseContext, CaseVerdict, Check, Mistake, explains
from .errors import HarnessFault
from .expected_store import ExpectedStore, code_digest, default_store, entry_key
from . import composition, forbidden, liveness, loader, speed, templates, wire
from .sandbox.limits import Limits
from .feedback import describe_output, forbidden_message, outcome_verdict, summarize
from .oracle import LiveReference, OracleError
from .reports.gradescope import ResultsFile, is_temporary_results
from .sandbox.pool import CaseOutcome, SandboxPool
from .seeds import check_rng, course_secret
from .submission import (UnreadableSubmission, content_hash, copy_files, graded_files_hash, locate, lone_zip,
                         missing_hint, unpack_zip)

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
    # What the reference answered and what the submission did, case by case (None where it raised).
    expected: list = field(default_factory=list)
    answers: list = field(default_factory=list)

    @property
    def max_score(self) -> float:
        return self.check.points

    @property
    def passed(self) -> bool:
        return self.score >= self.max_score


@dataclass
class Imports:
    """What importing a submission's files once gave: the file that failed and why, or the names each defines."""

    broken: str | None = None
    message: str = ""
    defined: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class GradingRun:
    """What grading one submission gave."""

    submission: Path          # the folder that was graded
    note: str                 # where the files were found, when not at the top; an import failure
    verdicts: list[Verdict]
    files_hash: str = ""      # of the assignment's files graded (`submission.graded_files_hash`)

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
                 protected: list[Path] = (), landlock: bool = True, store: ExpectedStore | None = None):
        self.assignment, self.variant, self.oracle = assignment, variant, oracle
        self.secret, self.jobs = secret, max(1, jobs)
        self.protected = [Path(p).resolve() for p in protected]
        # Expected values on disk: only a live reference's, which the store's key describes.
        self.store = store if getattr(oracle, "folder", None) is not None else None
        if self.store is not None:
            self.protected.append(self.store.folder.resolve())
        self._code: str | None = None
        spec = assignment.spec
        preload = ["numpy", *spec.preload,
                   *sorted({c.scenario.__module__ for c in assignment.checks})]
        self.pool = SandboxPool(preload=preload, forbidden_modules=[spec.reference_package],
                                protected=[*oracle.protected_paths(), spec.root, *self.protected,
                                           *self._plugin_paths()],
                                jobs=self.jobs, landlock=landlock,
                                forbidden_apis={"apis": list(spec.forbidden),
                                                "also": {k: list(v) for k, v in spec.forbidden_also.items()}})
        self._cases: dict[str, list[Case]] = {}
        self._expected: dict[str, tuple[list[Case], list[Any]]] = {}
        self._reference_s: dict[str, float] = {}
        self._mistaken: dict[tuple[str, Mistake], list[Any]] = {}
        self._lock = threading.Lock()
        self._reference_copy: Path | None = None
        self._imports: OrderedDict[str, Imports] = OrderedDict()  # by content hash: a bundle's pytest asks per check
        self._contract: dict[str, list[str]] | None = None

    def _plugin_paths(self) -> list[Path]:
        """The folders of the modules the checks come from: hidden from the sandbox."""
        return sorted({path.parent for path in self.assignment.check_module_files().values()})

    def close(self) -> None:
        self.pool.close()
        if self._reference_copy is not None:
            shutil.rmtree(self._reference_copy.parent, ignore_errors=True)
            self._reference_copy = None

    def reference_submission(self) -> Path | None:
        """The reference's files in a folder of their own, graded like a submission (timing checks).

        None where the oracle has no reference solution (recorded fixtures).
        """
        folder = getattr(self.oracle, "folder", None)
        if folder is None:
            return None
        with self._lock:
            if self._reference_copy is None:
                copy = Path(tempfile.mkdtemp(prefix="lmgrade-reference-")) / "reference"
                copy.mkdir()
                for filename in self.assignment.spec.files:
                    shutil.copyfile(folder / filename, copy / filename)
                self._reference_copy = copy
            return self._reference_copy

    def __enter__(self) -> "Grader":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def cases(self, check: Check) -> list[Case]:
        """The check's cases, drawn once: what a submission is run on before its answers need expected values."""
        with self._lock:
            if check.name not in self._cases:
                self._cases[check.name] = draw_cases(check, self.assignment.name, self.variant, self.secret)
            return self._cases[check.name]

    def _stored_key(self, check: Check, cases: list[Case], what: str = "expected") -> str | None:
        """The store's key of the check's expected values on `cases` (or a mistake's answers); None without one."""
        if self.store is None or check.device != "cpu":
            # On a GPU the reference's answers are not bit-for-bit the same from one run to the next
            # (atomics, the kernels cuBLAS picks): they are computed on the grading machine each time.
            return None
        if self._code is None:
            modules = [check.scenario, check.make_cases, check.judge,
                       *(m.patch for c in self.assignment.checks for m in c.mistakes)]
            folders = [Path(f).parent for f in self.assignment.check_module_files().values()]
            folders += [Path(sys.modules[f.__module__].__file__).parent for f in modules
                        if f is not None and getattr(sys.modules.get(f.__module__), "__file__", None)]
            self._code = code_digest(self.oracle.folder, self.assignment.spec.files, folders)
        return entry_key(self._code, check, self.variant, cases, what)

    def cases_and_expected(self, check: Check) -> tuple[list[Case], list[Any]]:
        """Computed once per check and reused for every submission (regrades), and by later gradings
        through the store."""
        cases = self.cases(check)
        with self._lock:
            if check.name not in self._expected:
                key = None if check.timing else self._stored_key(check, cases)
                stored = self.store.get(key) if key is not None else None
                if isinstance(stored, dict) and len(stored.get("expected", ())) == len(cases):
                    expected = stored["expected"]
                    self._reference_s[check.name] = float(stored["seconds"])
                else:
                    # A timing check's reference runs beside the submission instead.
                    started = time.perf_counter()
                    expected = [None] * len(cases) if check.timing else self.oracle.expected(check, cases)
                    if not check.timing and getattr(self.oracle, "folder", None) is not None:
                        # The live reference's own time on these cases, on this machine: the limits follow it.
                        self._reference_s[check.name] = time.perf_counter() - started
                    if key is not None:
                        self.store.put(key, {"expected": expected, "seconds": self._reference_s[check.name]})
                if check.property_check and not all(isinstance(e, dict) and set(e) == {ANSWER, PROPERTY}
                                                    for e in expected):
                    raise HarnessFault(f"{check.name} is a property check: its scenario must return "
                                       "property_result(answer, holds)")
                self._expected[check.name] = (cases, expected)
            return self._expected[check.name]

    def record_expected(self) -> None:
        """Compute, and so store, every check's expected values and its known mistakes' answers."""
        for check in self.assignment.checks:
            if check.timing is None and not check.unavailable:
                cases, _ = self.cases_and_expected(check)
                for mistake in check.mistakes:
                    self._mistake_answers(check, cases, mistake)

    def expected_known(self, check: Check) -> bool:
        """Whether this grader has computed the check's expected values (and so the reference's time)."""
        with self._lock:
            return check.name in self._expected

    def limits_of(self, check: Check) -> Limits:
        """The check's limits in this grading: `wall_factor` times the reference's time on its cases,
        never below the check's own cpu_s and wall_s (the floors, and all there is without a live reference)."""
        self.cases_and_expected(check)
        return check.limits.following(self._reference_s.get(check.name))

    def _mistake_answers(self, check: Check, cases: list[Case], mistake: Mistake) -> list[Any]:
        """What a submission making `mistake` returns on every case (`CRASHES` where it raises)."""
        key = (check.name, mistake)
        with self._lock:
            if key not in self._mistaken:
                stored_key = self._stored_key(check, cases, f"mistake {mistake.name} {mistake.edits!r}")
                stored = self.store.get(stored_key) if stored_key is not None else None
                if isinstance(stored, list) and len(stored) == len(cases):
                    answers = [CRASHES if a.get("crashed") else a.get("answer") for a in stored]
                else:
                    answers = [self._mistaken_answer(check, case, mistake) for case in cases]
                    if stored_key is not None:
                        self.store.put(stored_key, [{"crashed": True} if a is CRASHES else {"answer": a}
                                                    for a in answers])
                self._mistaken[key] = answers
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
        It must show on them, though: a mistake whose answers are all right there
        (the submission crashed on every case the mistake changes) explains nothing.
        """
        answered = [i for i, o in enumerate(outcomes) if o.kind == "ok"]
        if not answered:
            return None
        right = self._expected[check.name][1] if check.name in self._expected else None
        tolerances = [check.tolerance_of(cases[i]) for i in answered]
        for mistake in check.mistakes:
            answers = self._mistake_answers(check, cases, mistake)
            if all(answers[i] is not CRASHES for i in answered) and \
                    explains([answers[i] for i in answered], [outcomes[i].value for i in answered], tolerances) and \
                    (right is None or not explains([answers[i] for i in answered], [right[i] for i in answered],
                                                   tolerances)):
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

    def probe_imports(self, submission: Path) -> "Imports":
        """Import every submitted file present, once, in the sandbox.

        An import failure is then said once, at the top, instead of by every
        check; what the files define feeds the hint for a missing name.
        """
        present = [f for f in self.assignment.spec.files if (submission / f).is_file()]
        if not present:
            return Imports()
        key = content_hash(submission)
        with self._lock:
            if key in self._imports:
                return self._imports[key]
        imports = self._probe_imports(submission, present)
        with self._lock:
            self._imports[key] = imports
            while len(self._imports) > 8:
                self._imports.popitem(last=False)
        return imports

    def _probe_imports(self, submission: Path, present: list[str]) -> "Imports":
        limits = Limits(**{**Limits().as_dict(), **self.assignment.spec.limits})
        outcome = self.pool.run(scenario="lmgrade.loader:import_probe", submission=submission, files=present,
                                cases=[None], limits=limits).outcomes[0]
        if outcome.kind != "import_error":
            return Imports(defined=outcome.value if outcome.kind == "ok" and isinstance(outcome.value, dict) else {})
        error = outcome.error or {}
        broken = error.get("file") if error.get("file") in present else present[0]
        where = error.get("where") or f"{error.get('type')}: {error.get('message')}"
        return Imports(broken, f"{broken} could not be imported, so the checks that need it were not graded:\n"
                               f"{where}")

    def contract_names(self) -> dict[str, list[str]]:
        """The public names each stub defines: what the contract expects of each file."""
        with self._lock:
            if self._contract is None:
                stubs = templates.render(self.assignment, self.variant)
                self._contract = {loader.module_name(f): _top_level_names(stubs[f])
                                  for f in self.assignment.spec.files if f in stubs}
            return self._contract

    def grade_check(self, check: Check, number: int, submission: Path,
                    uses: forbidden.Uses | None = None, imports: "Imports | None" = None,
                    wrong: str | None = None) -> Verdict:
        """One check's verdict; `wrong` names a failed check of the code it composes (timing checks say so)."""
        if check.unavailable:
            return Verdict(check, number, 0.0, check.unavailable)
        cases = self.cases(check)
        imports = imports or Imports()
        if imports.broken is not None and imports.broken in check.files:
            return _not_run(check, number, cases, f"not graded: {imports.broken} could not be imported (see above)")
        reveal = check.visibility == "visible"
        missing = [f for f in check.files if not (submission / f).is_file()]
        if missing:
            return _not_run(check, number, cases, f"not graded: {', '.join(missing)} is missing from the "
                                                  "submission (see above)")
        found = uses.relevant(check.uses, check.files) if uses is not None and uses.findings else []
        if found:
            return _not_run(check, number, cases, "\n".join(
                forbidden_message([f.api], f" in {f.file} line {f.line} (`{f.code[:120]}`)") for f in found[:5]))
        if check.timing is not None:
            return self.grade_timing(check, number, submission, cases, wrong)
        # Limits follow the reference's time once it is known; until then (an untouched stub needs no
        # reference run at all) the check's floors.
        known = self.expected_known(check)
        limits = self.limits_of(check) if known else check.limits
        run = self.pool.run(scenario=check.scenario_ref, submission=submission, files=list(check.files),
                            cases=[c.args for c in cases], limits=limits, device=check.device)
        untouched = all(o.kind == "error" and (o.error or {}).get("type") == "NotImplementedError"
                        for o in run.outcomes)
        if not known and not untouched:
            # Something was tried: now the reference runs, and its time sets the limits. A case
            # cut off at the floors is run again within them, so a slow but correct submission is not
            # timed out by a floor shorter than this machine needs.
            following = self.limits_of(check)
            if following != limits and any(o.kind == "timeout" for o in run.outcomes):
                run = self.pool.run(scenario=check.scenario_ref, submission=submission, files=list(check.files),
                                    cases=[c.args for c in cases], limits=following, device=check.device)
        # An untouched stub (NotImplementedError on every case) needs no reference run, nor its training.
        expected = [None] * len(cases) if untouched else self.cases_and_expected(check)[1]
        dead = _property_liveness(check, expected, run.outcomes)
        judged = [(case, self._with_hints(outcome_verdict(check, case, exp, outcome, reveal, dead), imports.defined))
                  for case, exp, outcome in zip(cases, expected, run.outcomes)]
        passed = sum(v.passed for _, v in judged)
        mistake = self.diagnose(check, cases, run.outcomes) if passed < len(cases) and check.mistakes else None
        score = check.points * passed / len(cases) if cases else 0.0
        output = summarize(judged, reveal, mistake)
        printed = describe_output(run.output, failed=passed < len(cases), reveal=reveal)
        if printed:
            output += "\n" + printed
        return Verdict(check, number, score, output, judged, wall_s=run.wall_s, defences=run.defences,
                       mistake=mistake, expected=list(expected),
                       answers=[o.value if o.kind == "ok" else None for o in run.outcomes])

    def grade_timing(self, check: Check, number: int, submission: Path, cases: list[Case],
                     wrong: str | None = None) -> Verdict:
        """A timing check: the submission's laps against the reference's, interleaved (`speed`)."""
        reference = self.reference_submission()
        if reference is None:
            return _not_run(check, number, cases, "not run here: timing is judged against the reference "
                                                  "solution, which only the course's autograder has")
        timing, reveal = check.timing, check.visibility == "visible"
        laps = (timing.warmup + timing.laps) * len(cases)
        runs: dict[str, list] = {"reference": [], "submission": []}
        for round_ in range(timing.rounds):
            # The submission first in each round: where no case of its first run answered (an untouched
            # stub), nothing is timed and the reference never runs.
            for side, folder in (("submission", submission), ("reference", reference)):
                runs[side].append(self.pool.run(scenario=check.scenario_ref, submission=folder,
                                                files=list(check.files), cases=[c.args for c in cases],
                                                limits=check.limits, device=check.device, laps=laps))
                if round_ == 0 and side == "submission" and not any(o.kind == "ok" for o in runs[side][0].outcomes):
                    return self._unanswered_timing(check, number, cases, runs[side][0], reveal)
        rng = random.Random(f"{self.secret}/{self.assignment.name}/{check.name}/verified laps")
        judged = []
        for i, case in enumerate(cases):
            for run in runs["reference"]:
                if run.outcomes[i].kind != "ok":
                    raise OracleError(f"the reference failed the timing check {check.name} case {i + 1}: "
                                      f"{outcome_verdict(check, case, None, run.outcomes[i], True).message}")
            failed = next((r.outcomes[i] for r in runs["submission"] if r.outcomes[i].kind != "ok"), None)
            if failed is not None:
                judged.append((case, outcome_verdict(check, case, None, failed, reveal)))
                continue
            judged.append((case, speed.judge_case(
                check, case, speed.collect(runs["reference"], i, timing.warmup),
                speed.collect(runs["submission"], i, timing.warmup),
                self._reference_fingerprints(check, case), rng, check.device, wrong)))
        passed = sum(v.passed for _, v in judged)
        # The times are worth reading when the check passes too.
        output = "\n".join([summarize(judged, reveal, None)] + [
            f"case {i}: {v.message}" for i, (_, v) in enumerate(judged, start=1) if v.passed])
        printed = describe_output(runs["submission"][-1].output, failed=passed < len(cases), reveal=reveal)
        if printed:
            output += "\n" + printed
        return Verdict(check, number, check.points * passed / len(cases) if cases else 0.0, output, judged,
                       wall_s=sum(r.wall_s for r in runs["submission"]), defences=runs["submission"][0].defences)

    def _unanswered_timing(self, check: Check, number: int, cases: list[Case], run, reveal: bool) -> Verdict:
        """A timing check none of whose cases answered: each case fails with what happened, untimed."""
        judged = [(case, outcome_verdict(check, case, None, outcome, reveal))
                  for case, outcome in zip(cases, run.outcomes)]
        output = summarize(judged, reveal, None)
        printed = describe_output(run.output, failed=True, reveal=reveal)
        return Verdict(check, number, 0.0, output + ("\n" + printed if printed else ""), judged, wall_s=run.wall_s,
                       defences=run.defences)

    def _reference_fingerprints(self, check: Check, case: Case) -> Callable[[int], list]:
        """The reference's fingerprint of a lap, from its nonce (set up once per case)."""
        timing, state = check.timing, []

        def recompute(nonce: int) -> list:
            if not state:
                state.append(timing.setup(self.oracle.modules, wire.decode(wire.encode(case.args))))
            if timing.reset is not None:
                timing.reset(state[0])
            return wire.decode(wire.encode(timing.step(state[0], nonce)))
        return recompute

    def _with_hints(self, verdict: CaseVerdict, defined: dict[str, list[str]]) -> CaseVerdict:
        """A missing name (`module 'ngram' has no attribute 'pad'`): say what the file defines and the contract wants."""
        found = _MISSING_NAME.search(verdict.message)
        if verdict.passed or not found or found.group(1) not in self.contract_names():
            return verdict
        module = found.group(1)
        hint = (f"\n{module}.py must define: {', '.join(self.contract_names()[module])}; "
                f"it defines: {', '.join(defined.get(module, [])) or 'nothing public'}")
        return CaseVerdict(False, verdict.message + hint)

    def grade(self, submission: Path, on_verdict: Callable[[Verdict], None] | None = None,
              only: set[str] | None = None, on_import_failure: Callable[[str], None] | None = None,
              on_check_start: Callable[[Check], None] | None = None) -> list[Verdict]:
        """Verdicts of the checks named in `only` (all by default), numbered as in the assignment.

        `on_import_failure` hears, once, what stopped the submitted files from importing;
        `on_check_start` hears of each check as it begins (progress for slow checks).
        """
        with tempfile.TemporaryDirectory(prefix="lmgrade-snapshot-") as scratch:
            return self._grade(self._snapshot(Path(submission).resolve(), Path(scratch)), on_verdict=on_verdict,
                               only=only, on_import_failure=on_import_failure, on_check_start=on_check_start)

    def _snapshot(self, submission: Path, scratch: Path) -> Path:
        """The submission as it is now, in a folder of the grading's own, for every check to grade.

        A student who saves a file while `lmgrade check` runs gets the same
        version graded by every check; the results file a grading writes into
        the folder it grades is not part of the submission, nor readable by it.
        """
        def ours(path: Path) -> bool:  # a results file this grading writes, or one of its temporary files
            path = path.resolve()
            return any(path == p or (path.parent == p.parent and is_temporary_results(path)) for p in self.protected)

        try:
            copy_files(submission, scratch / "submission", leave_out=ours)
        except (OSError, ValueError):
            # Too large, or unreadable: the sandbox's own copy fails the same
            # way, and every check says why in its cases.
            return submission
        return scratch / "submission"

    def _grade(self, submission: Path, *, on_verdict, only, on_import_failure, on_check_start) -> list[Verdict]:
        numbered = [(n, c) for n, c in enumerate(self.assignment.checks, start=1) if only is None or c.name in only]
        verdicts: dict[int, Verdict] = {}
        report_lock = threading.Lock()

        self.pool.start()
        uses = self.forbidden_uses(submission)
        imports = self.probe_imports(submission)
        if imports.broken and on_import_failure:
            on_import_failure(imports.message)

        by_name = {c.name: c for c in self.assignment.checks}
        failed: set[str] = set()

        def one(item):
            number, check = item
            if on_check_start:
                on_check_start(check)
            with report_lock:
                first = composition.first_failed(check, by_name, failed) if check.composes else None
            verdict = self.grade_check(check, number, submission, uses, imports, first and first.name)
            with report_lock:
                verdict = _composed(verdict, by_name, failed)
                if not verdict.passed:
                    failed.add(check.name)
                verdicts[number] = verdict
                if on_verdict:
                    on_verdict(verdict)

        number_of = {c.name: n for n, c in numbered}
        # A composed check runs after the checks of its components (composition.waves).
        for wave in composition.waves([c for _, c in numbered if c.timing is None]):
            with ThreadPoolExecutor(max_workers=self.jobs) as executor:
                for future in [executor.submit(one, (number_of[c.name], c)) for c in wave]:
                    future.result()
        # Timing checks run alone, after the rest: nothing of ours competes with their laps.
        for item in numbered:
            if item[1].timing is not None:
                one(item)
        return [verdicts[n] for n, _ in numbered]


def _property_liveness(check: Check, expected: list, outcomes: list[CaseOutcome]) -> str | None:
    """Whether a property check's answers show work: None, or why not ("" for other checks)."""
    if not check.property_check or check.judge is not None:
        return ""
    if not any(o.kind == "ok" for o in outcomes):
        return "no answer"
    answers = [o.value.get(ANSWER) if o.kind == "ok" and isinstance(o.value, dict) else None for o in outcomes]
    return liveness.dead([e[ANSWER] for e in expected], answers)


def _composed(verdict: Verdict, by_name: dict[str, Check], failed: set[str]) -> Verdict:
    """A failed composed check whose component failed first: named, and only its own share lost."""
    if verdict.passed or not verdict.check.composes or not verdict.answers:  # not run: the reason is enough
        return verdict
    component = composition.first_failed(verdict.check, by_name, failed)
    if component is None:
        return verdict
    # Points only for work done: answers that are constant, raised or out of shape earn no share.
    if not liveness.dead(verdict.expected, verdict.answers):
        verdict.score = composition.capped(verdict.check, verdict.score)
    verdict.output = composition.note(verdict.check, component) + "\n" + verdict.output
    return verdict


_MISSING_NAME = re.compile(r"module '(\w+)' has no attribute '(\w+)'")


def _top_level_names(source: str) -> list[str]:
    tree = ast.parse(source)
    names = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    names += [t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)]
    return [n for n in names if not n.startswith("_")]


def draw_cases(check: Check, assignment: str, variant: dict, secret: str) -> list[Case]:
    """The check's cases, drawn from its seed: the same secret always gives the same cases."""
    rng = check_rng(secret, assignment, check.name)
    return check.make_cases(CaseContext(rng=rng, variant=variant, device=check.device))


def _not_run(check: Check, number: int, cases: list[Case], reason: str) -> Verdict:
    """Zero for a check that cannot be run on this submission, every case with the reason."""
    return Verdict(check, number, 0.0, reason, [(c, CaseVerdict(False, reason)) for c in cases])


def grade_submission(assignment: Assignment, variant: dict, submission: Path, *,
                     results: Path | None = None, jobs: int = 1, visible_only: bool = False,
                     grader: Grader | None = None, secret: str | None = None,
                     store: ExpectedStore | None = None,
                     on_start: Callable[[int], None] | None = None,
                     on_verdict: Callable[[Verdict], None] | None = None,
                     on_check_start: Callable[[Check], None] | None = None) -> GradingRun:
    """Grade one submission folder; keep `results` (if given) a valid results.json throughout.

    `grader` lets many submissions share one sandbox pool and one set of
    expected values; without it, one is made (with the live reference and
    `store`, by default the user's) and closed. Raises `HarnessFault` when grading cannot be trusted, after
    writing a results.json that says so.
    """
    with tempfile.TemporaryDirectory(prefix="lmgrade-upload-") as scratch:
        return _grade_submission(assignment, variant, Path(submission), Path(scratch), results=results, jobs=jobs,
                                 visible_only=visible_only, grader=grader, secret=secret, store=store,
                                 on_start=on_start,
                                 on_verdict=on_verdict, on_check_start=on_check_start)


def _grade_submission(assignment, variant, submission: Path, scratch: Path, *, results, jobs, visible_only, grader,
                      secret, store, on_start, on_verdict, on_check_start) -> GradingRun:
    checks = [c for c in assignment.checks if c.visibility == "visible" or not visible_only]
    position = {c.name: i for i, c in enumerate(checks, start=1)}
    said = []
    archive = submission if submission.is_file() and submission.suffix.lower() == ".zip" else None
    alone = lone_zip(submission) if submission.is_dir() else None
    if archive is not None or alone is not None:
        try:
            submission = unpack_zip(archive or alone, scratch / "submission")
            said.append(f"{archive.name}: graded the files of the .zip." if archive is not None else
                        f"The submission holds only {alone.name}: it was unpacked and its files graded.")
        except UnreadableSubmission as exc:
            said.append(str(exc))
            submission = scratch / "empty"
            submission.mkdir()
    elif not submission.is_dir():
        said.append(f"{submission} {'is not a folder or a .zip' if submission.exists() else 'does not exist'}: "
                    "nothing was graded.")
        submission = scratch / "empty"
        submission.mkdir()
    submission, note = locate(submission, assignment.spec.files)
    said += [text for text in (note, missing_hint(submission, assignment.spec.files)) if text]
    files_hash = graded_files_hash(submission, assignment.spec.files)
    results_file = ResultsFile(results, checks, output="\n\n".join(said)) if results else None
    verdicts: list[Verdict] = []

    def import_failed(message: str) -> None:
        said.append(message)
        if results_file:
            results_file.output = "\n\n".join(said)
            results_file.write()

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
                        protected=protected, store=store or default_store()) as own:
                own.grade(submission, on_verdict=record, only=set(position), on_import_failure=import_failed,
                          on_check_start=on_check_start)
        else:
            grader.grade(submission, on_verdict=record, only=set(position), on_import_failure=import_failed,
                         on_check_start=on_check_start)
    except BaseException:  # a HarnessFault, a bug of the harness, an interrupt: never the submission's
        if results_file:
            results_file.output = "\n".join([HARNESS_FAULT_NOTE, *said]).strip()
            results_file.write()
        raise
    verdicts.sort(key=lambda v: v.number)
    return GradingRun(submission=submission, note="\n\n".join(said), verdicts=verdicts, files_hash=files_hash)

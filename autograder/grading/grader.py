"""A `Grader`: grades the submissions of one assignment and variant, check by check.  It owns the sandbox pool
and runs each check's cases in it, in waves (a composed check after its components), and judges the answers.
What it asks of others: the expected values and the known mistakes' answers (`expected_values.ExpectedValues`,
computed once per check and shared by every submission it grades), the import probe and its hints
(`import_probe`), the timing checks (`timing_verdicts`), the words (`feedback`). Whatever the submission does
is a `results.Verdict`. `submission_grading.grade_submission` is what every command grades one submission with.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..boundary import forbidden, wire
from ..boundary.submitted_sources import read_sources
from ..core import atomic
from ..core.explanations import needs_explaining
from ..declare import composition
from ..declare.assignment import Assignment
from ..declare.assignment_plugin import package_folder
from ..declare.checks import Case, Check, Mistake
from ..declare.plugin_manager import get_manager
from ..reports.results import Verdict, not_run
from ..sandbox.limits import Limits
from ..sandbox.pool import Cancellation, CaseOutcome, Prestarted, SandboxPool
from ..submissions.submitted_files import copy_files
from . import timing_verdicts
from .composed_checks import ComposedChecks
from .expected_store import ExpectedStore
from .expected_values import ExpectedValues
from .feedback import describe_output, forbidden_message, frames, outcome_verdict, summarize
from .import_probe import ImportProbe, Imports, PendingImports
from .oracle import Oracle

# Larger files are left to the run-time guard (and to the sandbox's limits).
MAX_SCANNED_BYTES = 2 * 2**20


@dataclass
class CaseRun:
    """One case of a check run on a submission (`Grader.run_case`)."""

    check: Check
    number: int  # from 1
    of: int  # the check's cases
    case: Case
    expected: Any
    outcome: CaseOutcome
    mistake: Mistake | None  # the known mistake the answer matches


class Grader(ComposedChecks):
    """Grades submissions of one assignment on this machine's `device` (auto, cpu, cuda); owns the sandbox pool."""

    # Whether a check's run waits for the import probe's answer rather than go on beside it. Grading one
    # submission, a run beside the probe uses a slot that would idle; with several submissions in flight (a
    # regrade) another's run takes that slot, and a run beside a probe whose import hangs only spins until the
    # probe's limit, on the CPU the probe needs. The verdicts are the same either way.
    probe_first = False

    def __init__(
        self,
        assignment: Assignment,
        variant: dict,
        oracle: Oracle,
        *,
        secret: str,
        jobs: int = 1,
        protected: list[Path] = (),
        landlock: bool = True,
        store: ExpectedStore | None = None,
        device: str = "auto",
        prestarted: Prestarted | None = None,
    ):
        # Bound here, where the checks run: on a Dask worker, its own GPU or none.
        assignment = assignment.on(device)
        self.assignment, self.variant, self.oracle = assignment, variant, oracle
        self.secret, self.jobs = secret, max(1, jobs)
        self.protected = [Path(p).resolve() for p in protected]
        self.expected = ExpectedValues(assignment, variant, oracle, secret=secret, store=store)
        self.store = self.expected.store  # None unless the oracle is a live reference
        if self.store is not None:
            self.protected.append(self.store.folder.resolve())
        spec = assignment.spec
        preload = [*spec.server_modules, *sorted({c.scenario.__module__ for c in assignment.checks})]
        self.pool = SandboxPool(
            preload=preload,
            forbidden_modules=[spec.reference_package],
            protected=[*oracle.protected_paths(), spec.root, *self.protected, *self._plugin_paths()],
            jobs=self.jobs,
            landlock=landlock,
            forbidden_apis={
                "apis": list(spec.forbidden),
                "also": {k: list(v) for k, v in spec.forbidden_also.items()},
                "operators": {k: list(v) for k, v in spec.forbidden_operators.items()},
            },
            prestarted=prestarted,
            readable=self._public_paths(),
            warm=spec.server_modules,
        )
        self._lock = threading.Lock()
        self._reference_copy: Path | None = None
        self._stand_in_tables: dict[tuple, list | None] = {}
        self._stand_in_cases: dict[tuple, tuple[wire.Encoded, wire.Encoded]] = {}
        self.imports = ImportProbe(assignment, variant, self.pool)

    def _plugin_paths(self) -> list[Path]:
        """Hidden from the sandbox: the folders of the modules the checks come from, and of every installed
        assignment its plugin's package (checks, known mistakes, bugs) and its folder (assignment.toml)."""
        folders = {path.parent for path in self.assignment.check_module_files().values()}
        try:
            pm = get_manager()
            # The hook itself, not `catalog.sources`, which also asks each plugin's distribution (slow).
            given = [source for sources in pm.hook.lmgrade_assignments() for source in sources or []]
            folders.update(Path(getattr(source, "folder", source)) for source in given)
            for plugin in pm.get_plugins():
                package = getattr(plugin, "package", None)  # an AssignmentPlugin; else a module of hooks
                if isinstance(package, str):
                    folders.add(package_folder(package))
                elif getattr(plugin, "__file__", None):
                    folders.add(Path(plugin.__file__).parent)
        except Exception:  # a broken third-party plugin: the checks' own folders are hidden all the same
            pass
        return sorted(folders)

    def _public_paths(self) -> list[Path]:
        """Readable by the sandbox although inside the plugin's package: the assignment's public scenarios."""
        public = self.assignment.spec.public_package
        try:
            return [package_folder(public)] if public else []
        except ModuleNotFoundError:
            return []

    def close(self) -> None:
        self.pool.close()
        if self._reference_copy is not None:
            shutil.rmtree(self._reference_copy.parent, ignore_errors=True)
            self._reference_copy = None

    def reference_submission(self) -> Path | None:
        """The reference's files in a folder of their own, graded like a submission (timing checks).

        None where the oracle has no reference solution (recorded fixtures).
        """
        folder = self.oracle.reference_folder
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

    def __enter__(self) -> Grader:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def cases(self, check: Check) -> list[Case]:
        """The check's cases, drawn once: what a submission is run on before its answers need expected values."""
        return self.expected.cases(check)

    def cases_and_expected(self, check: Check) -> tuple[list[Case], list[Any]]:
        """The check's cases and the reference's answers, computed once per check (`expected`)."""
        return self.expected.of(check)

    def record_expected(self) -> None:
        """Compute, and so store, every check's expected values and its known mistakes' answers."""
        self.expected.record()

    def expected_known(self, check: Check) -> bool:
        """Whether this grader has computed the check's expected values (and so the reference's time)."""
        return self.expected.known(check)

    def limits_of(self, check: Check) -> Limits:
        """The check's limits in this grading: `wall_factor` times the reference's time on its cases,
        never below the check's own cpu_s and wall_s (the floors, and all there is without a live reference)."""
        return self.expected.limits_of(check)

    def diagnose(self, check: Check, cases: list[Case], outcomes: list[CaseOutcome]) -> Mistake | None:
        """The first known mistake that explains every answer the submission gave (`expected`)."""
        return self.expected.diagnose(check, cases, outcomes)

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

    def probe_imports(self, submission: Path) -> Imports:
        """Import every submitted file present, once, in the sandbox (`import_probe`)."""
        return self.imports.probe(submission)

    def contract_names(self) -> dict[str, list[str]]:
        """The public names each stub defines: what the contract expects of each file."""
        return self.imports.contract_names()

    def grade_check(
        self,
        check: Check,
        number: int,
        submission: Path,
        uses: forbidden.Uses | None = None,
        imports: Imports | PendingImports | None = None,
        wrong: str | None = None,
        cancellation: Cancellation | None = None,
        timed_out: set[str] | None = None,
        named: tuple[tuple[str, Mistake], ...] = (),
    ) -> Verdict:
        """One check's verdict; `wrong` names a failed check of the code it composes (timing checks say so), and
        `named` the known mistakes named on such checks (a timing check's laps may be exactly theirs).

        With `imports` still to come (`PendingImports`), the check's run goes on beside the import probe's;
        its verdict waits for the probe. `cancellation`: the submission's grading's, which ends its runs where
        the import hangs or the grading runs past its budget (`_grade`). `timed_out` gets the check's name where a
        case of its run ran out of time."""
        if check.unavailable:
            return Verdict(check, number, 0.0, check.unavailable)
        cases = self.cases(check)
        pending = imports if isinstance(imports, PendingImports) else None
        probed = pending.ready() if pending is not None else imports or Imports()

        def unimportable(imports: Imports) -> Verdict | None:
            return not_run(check, number, cases, imports.refusal()) if imports.stops(check.files) else None

        def cut_short() -> Verdict | None:
            """Where the grading was cancelled: what stopped it, said alike by every check it stopped."""
            if cancellation is None or not cancellation.cancelled:
                return None
            return unimportable(probed or pending.wait()) or not_run(check, number, cases, self.over_budget_message())

        if probed is not None and (refused := unimportable(probed)):
            return refused
        if refused := cut_short():
            return refused
        reveal = check.visibility == "visible"
        missing = [f for f in check.files if not (submission / f).is_file()]
        if missing:
            return not_run(
                check, number, cases, f"not graded: {', '.join(missing)} is missing from the submission (see above)"
            )
        found = uses.relevant(check.uses, check.files) if uses is not None and uses.findings else []
        if found:
            return not_run(
                check,
                number,
                cases,
                "\n".join(
                    forbidden_message([f.api], f" in {f.file} line {f.line} (`{f.code[:120]}`)") for f in found[:5]
                ),
            )
        if check.timing is not None:
            probed = probed or pending.wait()
            timed = unimportable(probed) or cut_short()
            return timed or self.grade_timing(check, number, submission, cases, wrong, named)
        # Limits follow the reference's time once it is known; until then (an untouched stub needs no
        # reference run at all) the check's floors.
        # The reference's time may be stored apart from its values: then it sets them from the first run.
        known = self.expected_known(check)
        seconds = self.expected.reference_seconds(check)
        limits = check.limits.following(seconds) if seconds is not None else check.limits

        def run_within(limits: Limits, explain: bool = False):
            return self.pool.run(
                scenario=check.scenario_ref,
                submission=submission,
                files=list(check.files),
                cases=[c.args for c in cases],
                limits=limits,
                device=check.device,
                explain=explain,
                cancellation=cancellation,
            )

        if self.probe_first and probed is None:
            probed = pending.wait()
            if refused := unimportable(probed) or cut_short():
                return refused
        run = run_within(limits)
        if refused := cut_short():
            return refused
        untouched = all(
            o.kind == "error" and (o.error or {}).get("type") == "NotImplementedError" for o in run.outcomes
        )
        if not known and not untouched:
            # Something was tried: now the reference runs, and its time sets the limits. A case
            # cut off at the floors is run again within them, so a slow but correct submission is not
            # timed out by a floor shorter than this machine needs.
            following = self.limits_of(check)
            if following != limits and any(o.kind == "timeout" for o in run.outcomes):
                limits = following
                run = run_within(limits)
                if refused := cut_short():
                    return refused
        if probed is None:  # the run went on beside the import probe: its verdict needs the probe's answer
            probed = pending.wait()
            if refused := unimportable(probed):
                return refused
        imports = probed
        # An untouched stub (NotImplementedError on every case) needs no reference run, nor its training.
        expected = [None] * len(cases) if untouched else self.cases_and_expected(check)[1]

        def judge(run) -> list:
            return [
                (case, self.imports.with_hints(outcome_verdict(check, case, exp, outcome, reveal), imports.defined))
                for case, exp, outcome in zip(cases, expected, run.outcomes)
            ]

        judged = judge(run)
        passed = sum(v.passed for _, v in judged)
        if passed < len(cases) and any(o.kind == "ok" and needs_explaining(o.value) for o in run.outcomes):
            # A wrong answer is explained from a run that computes its explanation (`explanations`), and that
            # run is the one judged: its answers are the same code's on the same cases.
            run = run_within(limits, explain=True)
            if refused := cut_short():
                return refused
            judged = judge(run)
            passed = sum(v.passed for _, v in judged)
        if timed_out is not None and any(o.kind == "timeout" for o in run.outcomes):
            timed_out.add(check.name)
        mistake = self.diagnose(check, cases, run.outcomes) if passed < len(cases) and check.mistakes else None
        score = check.points * passed / len(cases) if cases else 0.0
        output = summarize(judged, reveal, mistake)
        printed = describe_output(run.output, failed=passed < len(cases), reveal=reveal)
        if printed:
            output += "\n" + printed
        return Verdict(
            check,
            number,
            score,
            output,
            judged,
            wall_s=run.wall_s,
            defences=run.defences,
            mistake=mistake,
            expected=list(expected),
            answers=[o.value if o.kind == "ok" else None for o in run.outcomes],
            printed=printed,
            time_limits=(limits.cpu_s, limits.wall_s) if any(o.kind == "timeout" for o in run.outcomes) else None,
            not_implemented_in=composition.not_implemented_in(
                [o.error for o in run.outcomes], read_sources(submission, self.assignment.spec.files), frames
            )
            if untouched
            else None,
        )

    def over_budget_message(self) -> str:
        """What a check not graded within the submission's budget says."""
        budget = self.assignment.spec.grading_budget_s
        return f"not graded: this submission's grading ran past its budget of {budget:g} s (grading_budget_s)"

    def grade_timing(
        self,
        check: Check,
        number: int,
        submission: Path,
        cases: list[Case],
        wrong: str | None = None,
        named: tuple[tuple[str, Mistake], ...] = (),
    ) -> Verdict:
        """A timing check: the submission's laps against the reference's, interleaved (`timing_laps`); `named`: the
        known mistakes named on the failed checks of the timed code (`wrong`), as (check name, mistake)."""
        reference = self.reference_submission()
        if reference is None:
            return not_run(
                check,
                number,
                cases,
                "not run here: timing is judged against the reference solution, which only the course's autograder has",
            )
        explained = tuple(
            timing_verdicts.Explaining(component, mistake, lambda m=mistake: self.oracle.flawed_modules(m))
            for component, mistake in named
        )
        return timing_verdicts.grade_timing(
            self.pool, check, number, submission, reference, lambda: self.oracle.modules, cases, wrong, explained
        )

    @staticmethod
    def unrunnable(check: Check, submission: Path, imports: Imports) -> bool:
        """Whether `check` cannot run at all: a file of its is missing from the submission or fails to import."""
        return imports.broken in check.files or not all((submission / f).is_file() for f in check.files)

    def run_case(self, check: Check, number: int, submission: Path) -> CaseRun:
        """Case `number` (from 1) of `check` run on the submission, under the check's own limits, and the known
        mistake its answer matches: what `check --case` shows."""
        cases, expected = self.cases_and_expected(check)
        if not 1 <= number <= len(cases):
            raise IndexError(f"{check.name} has {len(cases)} cases")
        case = cases[number - 1]
        outcome = self.pool.run(
            scenario=check.scenario_ref,
            submission=Path(submission).resolve(),
            files=list(check.files),
            cases=[case.args],
            limits=check.limits,
            device=check.device,
            explain=True,  # shown whole, beside the expected value: explained as the expected value is
        ).outcomes[0]
        # The known mistake this one answer matches, as grading names one that matches every answer.
        mistake = None
        if outcome.kind == "ok" and check.mistakes:
            others = [CaseOutcome("not_run")] * len(cases)
            mistake = self.diagnose(check, cases, others[: number - 1] + [outcome] + others[number:])
        return CaseRun(check, number, len(cases), case, expected[number - 1], outcome, mistake)

    def grade(
        self,
        submission: Path,
        on_verdict: Callable[[Verdict], None] | None = None,
        only: set[str] | None = None,
        on_import_failure: Callable[[str], None] | None = None,
        on_check_start: Callable[[Check], None] | None = None,
    ) -> list[Verdict]:
        """Verdicts of the checks named in `only` (all by default), numbered as in the assignment.

        `on_import_failure` hears, once, what stopped the submitted files from importing;
        `on_check_start` hears of each check as it begins (progress for slow checks).
        """
        with tempfile.TemporaryDirectory(prefix="lmgrade-snapshot-") as scratch:
            return self._grade(
                self._snapshot(Path(submission).resolve(), Path(scratch)),
                on_verdict=on_verdict,
                only=only,
                on_import_failure=on_import_failure,
                on_check_start=on_check_start,
            )

    def _snapshot(self, submission: Path, scratch: Path) -> Path:
        """The submission as it is now, in a folder of the grading's own, for every check to grade.

        A student who saves a file while `lmgrade check` runs gets the same
        version graded by every check; the results file a grading writes into
        the folder it grades is not part of the submission, nor readable by it.
        """

        def ours(path: Path) -> bool:  # a results file this grading writes, or one of its temporary files
            path = path.resolve()
            return any(
                path == p or (path.parent == p.parent and atomic.is_temporary_results(path)) for p in self.protected
            )

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
        # Ends this submission's runs at once: where its import hangs (the probe's own time-out says so, never
        # a check's, so every check says the same whichever ran first), or past the submission's budget.
        cancellation = Cancellation()
        budget = threading.Timer(self.assignment.spec.grading_budget_s, cancellation.cancel, ("over budget",))
        budget.daemon = True
        budget.start()
        # The probe's run goes on beside the first checks' runs; each verdict waits for its answer.
        prober = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lmgrade-import-probe")
        probing = prober.submit(self.probe_imports, submission)
        probing.add_done_callback(
            lambda done: done.exception() is None and done.result().hung and cancellation.cancel("the import hangs")
        )
        imports = PendingImports(probing, on_import_failure)
        prober.shutdown(wait=False)

        by_name = {c.name: c for c in self.assignment.checks}
        failed: set[str] = set()
        timed_out: set[str] = set()  # the checks a case of whose own run ran out of time
        named: dict[str, Mistake] = {}  # failed check -> the known mistake its feedback named

        def record(verdict: Verdict) -> None:
            with report_lock:
                if not verdict.passed:
                    failed.add(verdict.check.name)
                    if verdict.mistake is not None:
                        named[verdict.check.name] = verdict.mistake
                verdicts[verdict.number] = verdict
                if on_verdict:
                    on_verdict(verdict)

        def own_run(item) -> tuple[Verdict, bool]:
            """The check graded on its own answers; recorded at once unless it waits for stand-ins."""
            number, check = item
            if on_check_start:
                on_check_start(check)
            wrong, mistakes = None, ()
            if check.timing is not None:  # a time is judged on right answers, or on a named mistake's
                with report_lock:
                    components = composition.failed_components(check, by_name, failed) if check.composes else []
                    mistakes = tuple((c.name, named[c.name]) for c in components if c.name in named)
                wrong = ", ".join(c.name for c in components) or None
            verdict = self.grade_check(
                check, number, submission, uses, imports, wrong, cancellation, timed_out, mistakes
            )
            probed = imports.wait()  # an import failure is told before any verdict
            # A check whose own files are missing or do not import has nothing a stand-in could complete, nor
            # one whose grading was cancelled (its import hangs, or it ran past its budget).
            waits = (
                bool(check.composes)
                and not verdict.passed
                and not self.unrunnable(check, submission, probed)
                and not cancellation.cancelled
            )
            if not waits:
                record(verdict)
            return verdict, waits

        def with_stand_ins(verdict: Verdict) -> None:
            """A failed check that composes others, once their verdicts are final: run again with the grader's
            stand-ins for those that failed, if any did."""
            with report_lock:
                components = composition.failed_components(verdict.check, by_name, failed)
                mistakes = dict(named)
            if verdict.check.name in timed_out:
                # Its own run ran out of time: a stand-in run would too (and cost the limit again) unless the
                # code that hung is a component it replaces. So only where the components that ran out of time
                # all stand in (none did: the hang is the check's own code, or a part no stand-in replaces).
                hung = [c for c in components if c.name in timed_out]
                if not hung or not all(c.stands_in for c in hung):
                    components = []
            record(self.with_stand_ins(verdict, components, submission, mistakes) if components else verdict)

        number_of = {c.name: n for n, c in numbered}
        # A check's own run needs nothing of the others: all start at once, the longest (by their limits)
        # first, so that none is left to run alone at the end. A failed check that composes others then
        # waits for their final verdicts, wave after wave, to know which to replace by stand-ins.
        untimed = [c for _, c in numbered if c.timing is None]
        longest_first = sorted(untimed, key=lambda c: -c.limits.wall_s)
        with ThreadPoolExecutor(max_workers=self.jobs) as executor:
            runs = {c.name: executor.submit(own_run, (number_of[c.name], c)) for c in longest_first}
            for wave in composition.waves(untimed):
                waiting = [verdict for verdict, waits in (runs[c.name].result() for c in wave) if waits]
                for future in [executor.submit(with_stand_ins, v) for v in waiting]:
                    future.result()
        # Timing checks run alone, after the rest: nothing of ours competes with their laps.
        for item in numbered:
            if item[1].timing is not None:
                verdict, waits = own_run(item)
                if waits:
                    with_stand_ins(verdict)
        budget.cancel()
        return [verdicts[n] for n, _ in numbered]

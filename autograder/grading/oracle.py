"""Where expected values come from.

`LiveReference` runs each check's scenario against the reference solution in
the grading process (trusted code; it never runs in the sandbox, and the
sandbox cannot read it). The reference files are loaded exactly as a
submission's are (`loader.load_files`), so they may import each other by
their bare names. Results take the same trip through `wire` as the
submission's, so both sides are compared as the same plain types.

`RecordedReference` answers the same two questions where the reference is
absent (a student bundle), from fixtures recorded from it (`fixtures.py`).
It only looks answers up: a case it holds no answer for is an error, never
an answer made up from what the submission returned.
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
import threading
import warnings
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..boundary import wire
from ..core.errors import HarnessFault
from ..core.expected_only import answering_as_a_submission, both_forms, marking_expected_parts
from ..core.scenario_arguments import call_scenario
from ..declare.assignment import AssignmentSpec
from ..declare.checks import Case, Check, Mistake
from ..declare.flawed import apply
from ..submissions.loader import load_files
from . import stand_in


class OracleError(HarnessFault):
    """The reference failed: a bug in the assignment, not the submission."""


class FixtureError(HarnessFault):
    """Recorded fixtures that are missing, damaged, or recorded for other cases or another variant."""


class RecordedMistakeRaised(Exception):
    """Making this mistake raised on this case when the fixtures were recorded."""


class Oracle(Protocol):
    """What a `Grader` asks of where expected values come from."""

    # The reference solution's files: graded like a submission for the timing checks, and part of the
    # expected-value store's key. None where there is no reference (recorded fixtures): nothing is timed
    # and nothing is stored.
    reference_folder: Path | None
    # The reference's modules as a scenario receives them (the timing checks' recomputed laps); empty
    # without a reference.
    modules: dict

    def protected_paths(self) -> list[Path]:
        """What the sandbox must not be able to read."""

    def expected(self, check: Check, cases: list[Case]) -> list[Any]:
        """The expected value of every case."""

    def stand_in_calls(self, check: Check, cases: list[Case], names: tuple[str, ...]) -> list | None:
        """Each case's recorded calls of the stand-in `names` (`stand_in.record`), or None where there are none."""
        ...

    def flawed_modules(self, mistake: Mistake) -> dict:
        """The reference's modules with `mistake` made in them (a timing check's laps recomputed as a known
        mistake gives them); only where there is a reference."""

    def mistaken(self, check: Check, case: Case, mistake: Mistake, as_expected: bool = False) -> Any:
        """What a submission making `mistake` returns on `case` (raises where making it raises); with
        `as_expected`, in the form of an expected value (a sampler's table of the mistaken model included),
        where the oracle can compute it."""


class LiveReference:
    """The reference solution, run in this process.

    Its files are imported when a value is first computed (or `prepare`d for): a grading whose
    values are all in the store, an untouched stub's, never imports them, nor torch with them.
    """

    def __init__(self, spec: AssignmentSpec):
        self.spec = spec
        try:
            self.reference_folder: Path = spec.reference_folder()
        except Exception as exc:
            raise OracleError(
                f"the reference solution of {spec.name} cannot be imported here ({type(exc).__name__}: {exc})"
            ) from exc
        self._modules: dict | None = None
        self._flawed: dict[Mistake, dict] = {}
        self._lock = threading.Lock()  # checks are judged in parallel threads
        self._load_lock = threading.Lock()

    @property
    def modules(self) -> dict:
        """The reference's modules, imported on first use."""
        return self.load()

    def load(self) -> dict:
        """The reference's modules, imported now if not yet (`OracleError` where they cannot be)."""
        with self._load_lock:
            if self._modules is None:
                try:
                    self._modules = load_files(self.reference_folder, self.spec.files)
                except Exception as exc:
                    raise OracleError(
                        f"the reference solution of {self.spec.name} cannot be imported here "
                        f"({type(exc).__name__}: {exc})"
                    ) from exc
                one_thread()
            return self._modules

    def protected_paths(self) -> list[Path]:
        """The reference package, and the other installed assignments': the sandbox must not be able to read them."""
        return [self.reference_folder, *self.spec.hidden]

    def expected(self, check: Check, cases: list[Case]) -> list[Any]:
        out = []
        for i, case in enumerate(cases):
            try:
                out.append(run_scenario(check, self.modules, case))
            except Exception as exc:
                raise OracleError(
                    f"the reference failed on {check.name} case {i + 1} ({case.label}): {type(exc).__name__}: {exc}"
                ) from exc
        return out

    def flawed_modules(self, mistake: Mistake) -> dict:
        """Fresh copies of the reference modules with `mistake` made in them (kept for the next ask)."""
        with self._lock:
            if mistake not in self._flawed:
                self._flawed[mistake] = self._make_flawed(mistake)
            return self._flawed[mistake]

    def _make_flawed(self, mistake: Mistake) -> dict:
        if not mistake.edits:
            copies = load_files(self.reference_folder, self.spec.files)
        else:
            with tempfile.TemporaryDirectory(prefix="lmgrade-mistake-") as tmp:
                for filename in self.spec.files:
                    source = (self.reference_folder / filename).read_text(encoding="utf-8")
                    edits = tuple((old, new) for file, old, new in mistake.edits if file == filename)
                    (Path(tmp) / filename).write_text(apply(source, edits, f"mistake {mistake.name}"), encoding="utf-8")
                copies = load_files(Path(tmp), self.spec.files)
        if mistake.patch is not None:
            mistake.patch(copies)
        return copies

    def stand_in_calls(
        self, check: Check, cases: list[Case], names: tuple[str, ...], most: int = stand_in.MAX_RECORDED_CALLS
    ) -> list | None:
        """What the reference's `names` were called with and did, case by case, when `check` ran on
        fresh copies of the reference (`stand_in`); None where a case calls them more than `most` times."""
        tables = []
        for case in cases:
            fresh = load_files(self.reference_folder, self.spec.files)
            try:
                with REFERENCE_RUNS, warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    args = wire.decode(wire.encode(case.args))
                    tables.append(stand_in.record(check.scenario, fresh, names, args, most=most))
            except stand_in.TooManyCalls:
                return None
        return tables

    def mistaken(self, check: Check, case: Case, mistake: Mistake, as_expected: bool = False) -> Any:
        """What a submission making `mistake` returns on `case` (as an expected value, with `as_expected`)."""
        # A mistake may overflow or warn on purpose (softmax without its shift): quietly.
        answering = contextlib.nullcontext() if as_expected else answering_as_a_submission()
        with REFERENCE_RUNS, np.errstate(all="ignore"), warnings.catch_warnings(), answering:
            warnings.simplefilter("ignore")
            return run_scenario(check, self.flawed_modules(mistake), case)

    def mistaken_both(self, check: Check, case: Case, mistake: Mistake) -> tuple[Any, Any]:
        """`mistaken` in both forms (as a submission answers, as an expected value) from one run: the parts
        only the expected value holds (a sampler's table) are computed once, and the draws once too."""
        with REFERENCE_RUNS, np.errstate(all="ignore"), warnings.catch_warnings(), marking_expected_parts():
            warnings.simplefilter("ignore")
            args = wire.decode(wire.encode(case.args))
            answer = call_scenario(check.scenario, self.flawed_modules(mistake), args)
        return tuple(wire.decode(wire.encode(form)) for form in both_forms(answer))


def one_thread() -> None:
    """torch on one thread, as the sandbox runs the submission: the reference's answers are computed the
    same way, and the small tensors of a check run ten times faster than on threads fighting over a few cores."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.get_num_threads() != 1:
        torch.set_num_threads(1)


# The reference runs in this process one scenario at a time, whatever thread asks: scenarios seed and
# draw from process-wide state (torch's and numpy's global generators, `warnings`' filters, a stand-in
# recorder's pause), so two at once would make each other's answers, and a grading's scores, depend on
# which thread ran when.
REFERENCE_RUNS = threading.RLock()


def run_scenario(check: Check, modules: dict, case: Case) -> Any:
    """The scenario on its own copy of the arguments, its result as plain data like the sandbox's."""
    with REFERENCE_RUNS:
        return wire.decode(wire.encode(call_scenario(check.scenario, modules, wire.decode(wire.encode(case.args)))))


class RecordedReference:
    """Expected values and the answers of known mistakes, looked up in recorded fixtures.

    `fixtures` is a `fixtures.Fixtures`; `variant` is the one being graded,
    which must be the one recorded.
    """

    def __init__(self, fixtures, variant: dict):
        if dict(variant) != dict(fixtures.variant):
            raise FixtureError(
                f"the fixtures of {fixtures.assignment} were recorded for "
                f"{_settings(fixtures.variant)}, not {_settings(variant)}: "
                "build the bundle with the variant you grade"
            )
        self.fixtures = fixtures
        self.reference_folder: Path | None = None
        self.modules: dict = {}

    def protected_paths(self) -> list[Path]:
        """The fixtures: like the reference, out of the sandbox's reach."""
        return [self.fixtures.folder] if self.fixtures.folder is not None else []

    def stand_in_calls(self, check: Check, cases: list[Case], names: tuple[str, ...]) -> list | None:
        """The calls recorded with the fixtures (`fixtures._stand_ins`), where they are of these names on
        these cases; None where none were recorded (the check earns what its own cases earn)."""
        recorded = self.fixtures.stand_ins.get(check.name)
        if recorded is None or not set(names) <= set(recorded["names"]):
            return None
        self._matching(check, cases)
        return [stand_in.only(table, names) for table in recorded["tables"]]

    def expected(self, check: Check, cases: list[Case]) -> list[Any]:
        recorded = self._matching(check, cases)
        for mistake in check.mistakes:  # asked later, one case at a time: missing answers fail now
            if any(mistake.name not in r.mistaken for r in recorded):
                raise FixtureError(
                    f"no recorded answers of the mistake {mistake.name!r} on {check.name}: "
                    "the fixtures were recorded with other graders; rebuild the bundle"
                )
        return [r.expected for r in recorded]

    def mistaken(self, check: Check, case: Case, mistake: Mistake, as_expected: bool = False) -> Any:
        # Recorded as a submission answers: a sampler's table of the mistaken model is not kept.
        for recorded in self.fixtures.recorded(check.name):
            if _same_case(recorded.case, case):
                answer = recorded.mistaken.get(mistake.name)
                if answer is None:
                    raise FixtureError(f"no recorded answer of the mistake {mistake.name!r} on {check.name}")
                if "answer" not in answer:
                    raise RecordedMistakeRaised(next(iter(answer.values()), ""))
                return answer["answer"]
        raise FixtureError(f"{check.name}: no recorded case {case.label!r}")

    def _matching(self, check: Check, cases: list[Case]) -> list:
        recorded = self.fixtures.recorded(check.name)
        if len(recorded) != len(cases):
            raise FixtureError(
                f"{check.name} has {len(cases)} cases, but {len(recorded)} were recorded: "
                "the fixtures belong to other cases; rebuild the bundle"
            )
        for i, (r, case) in enumerate(zip(recorded, cases), start=1):
            if not _same_case(r.case, case):
                raise FixtureError(
                    f"{check.name} case {i} ({case.label}) is not the case recorded there "
                    f"({r.case.label}): the fixtures belong to other cases; rebuild the bundle"
                )
        return recorded


def _same_case(a: Case, b: Case) -> bool:
    return a.label == b.label and a.tolerance == b.tolerance and wire.identical(a.args, b.args)


def _settings(variant: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in variant.items()) or "the default variant"

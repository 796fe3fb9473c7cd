"""Expected values: a check's cases, the reference's answers and time on them, and its known mistakes' answers.

Each is computed once per check, by the oracle (`oracle.Oracle`), for every
submission graded after it; with a live reference they are kept on disk
(`expected_store`), addressed by the code that computed them, for later
gradings. The reference's time on a check's cases sets its limits; the
mistakes' answers name the known mistake a failed check matches.
"""

from __future__ import annotations

import re
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

from ..core.errors import HarnessFault
from ..core.scenario_arguments import binding_error
from ..core.seeds import case_secret, check_rng
from ..declare import composition
from ..declare.assignment import Assignment
from ..declare.checks import ANSWER, PROPERTY, Case, CaseContext, Check, Mistake, explains, pairs
from ..sandbox.limits import Limits
from ..sandbox.pool import CaseOutcome
from .expected_store import ExpectedStore, code_digest, entry_key
from .oracle import Oracle, RecordedMistakeRaised

# The store's entry of the reference's time on a check's cases, apart from its (larger) values.
SECONDS = "reference seconds"


@dataclass(frozen=True)
class Raised:
    """What a mistake "returns" on a case where making it raises: the exception's type ("" where unknown) and
    its message: one type (torch's RuntimeError) covers many causes, and only the message tells them apart."""

    kind: str = ""
    message: str = ""


def same_message(a: str, b: str) -> bool:
    """Whether two exceptions' messages say the same thing: equal but for white space and object addresses
    (two empty ones included: a bare ZeroDivisionError() beside another)."""

    def plain(text: str) -> str:
        return " ".join(re.sub(r"0x[0-9a-fA-F]+", "0x", text).split())

    return plain(a) == plain(b)


def draw_cases(check: Check, assignment: str, variant: dict, secret: str) -> list[Case]:
    """The check's cases, drawn from its seed: the same secret always gives the same cases, and a visible
    check's are the public ones whatever the secret (`seeds.case_secret`)."""
    rng = check_rng(case_secret(check.visibility, secret), assignment, check.name)
    cases = check.make_cases(CaseContext(rng=rng, variant=variant, device=check.device))
    for number, case in enumerate(cases, 1):
        why = binding_error(check.scenario, case.args)
        if why is not None:  # the plugin's mistake: said as such, before a child could report it as the student's
            raise HarnessFault(f"{assignment}: check {check.name}, case {number} ({case.label}): {why}")
    return cases


def _raised(exc: Exception) -> Raised:
    """What making a mistake raised, as the grader compares it with what a submission raised."""
    return Raised(type(exc).__name__, str(exc)[:2000])


class ExpectedValues:
    """The expected values of one assignment and variant, for the cases `secret` draws."""

    def __init__(
        self, assignment: Assignment, variant: dict, oracle: Oracle, *, secret: str, store: ExpectedStore | None = None
    ):
        self.assignment, self.variant, self.oracle, self.secret = assignment, variant, oracle, secret
        # Only a live reference's values are stored: the store's key describes its code.
        self.store = store if oracle.reference_folder is not None else None
        self._code: str | None = None
        self._cases: dict[str, list[Case]] = {}
        self._expected: dict[str, tuple[list[Case], list[Any]]] = {}
        self._reference_s: dict[str, float] = {}
        self._seconds_stored: set[str] = set()  # checks whose time is known to have its own store entry
        self._mistaken: dict[tuple[str, Mistake], list[Any]] = {}
        self._lock = threading.Lock()

    def cases(self, check: Check) -> list[Case]:
        """The check's cases, drawn once: what a submission is run on before its answers need expected values."""
        with self._lock:
            if check.name not in self._cases:
                self._cases[check.name] = draw_cases(check, self.assignment.name, self.variant, self.secret)
            return self._cases[check.name]

    def drawn_from(self, check: Check) -> tuple:
        """What the check's cases are drawn from here: its seed's secret and the variant. A cache of anything
        computed on those cases (a stand-in's record) is keyed by it, so that no grader hands one student's
        hidden cases' record to another's runs."""
        return (check.name, case_secret(check.visibility, self.secret), tuple(sorted(self.variant.items())))

    def _stored_key(self, check: Check, cases: list[Case], what: str = "expected") -> str | None:
        """The store's key of the check's expected values on `cases` (or a mistake's answers); None without one."""
        if self.store is None or check.device != "cpu":
            # On a GPU the reference's answers are not bit-for-bit the same from one run to the next
            # (atomics, the kernels cuBLAS picks): they are computed on the grading machine each time.
            return None
        if self._code is None:
            # The digest serves every check of the assignment: the code of all of them, not the first asked's.
            functions = [
                f
                for c in self.assignment.checks
                for f in (c.scenario, c.make_cases, c.judge, *(m.patch for m in c.mistakes))
                if f is not None
            ]
            packages = [
                module.__package__ or module.__name__
                for f in functions
                if (module := sys.modules.get(f.__module__)) is not None and getattr(module, "__file__", None)
            ]
            spec = self.assignment.spec
            self._code = code_digest(self.oracle.reference_folder, spec.files, packages, spec.server_modules)
        return entry_key(self._code, check, self.variant, cases, what)

    def of(self, check: Check) -> tuple[list[Case], list[Any]]:
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
                    self._store_seconds(check, cases)  # for a store written before the seconds had an entry
                else:
                    # A timing check's reference runs beside the submission instead.
                    started = time.perf_counter()
                    expected = [None] * len(cases) if check.timing else self.oracle.expected(check, cases)
                    if not check.timing and self.oracle.reference_folder is not None:
                        # The live reference's own time on these cases, on this machine: the limits follow it.
                        self._reference_s[check.name] = time.perf_counter() - started
                    if key is not None:
                        self.store.put(key, {"expected": expected, "seconds": self._reference_s[check.name]})
                        self._store_seconds(check, cases)
                if check.property_check and not all(
                    isinstance(e, dict) and set(e) == {ANSWER, PROPERTY} for e in expected
                ):
                    raise HarnessFault(
                        f"{check.name} is a property check: its scenario must return property_result(answer, holds)"
                    )
                self._expected[check.name] = (cases, expected)
            return self._expected[check.name]

    def _store_seconds(self, check: Check, cases: list[Case]) -> None:
        if check.name in self._seconds_stored:  # read from its entry before the check's first run
            return
        key = self._stored_key(check, cases, SECONDS)
        # Read, not only looked for: a zip's store copies what it reads from the user's.
        if key is not None and self.store.get(key) is None:
            self.store.put(key, float(self._reference_s[check.name]))
        self._seconds_stored.add(check.name)

    def record(self) -> None:
        """Compute, and so store, every check's expected values and its known mistakes' answers, and those of
        its components' mistakes on its cases (a composed check may be paid where its answers are exactly a
        failed component's named mistake's: `Grader.with_stand_ins`)."""
        by_name = {c.name: c for c in self.assignment.checks}
        for check in self.assignment.checks:
            if check.timing is None and not check.unavailable:
                cases, _ = self.of(check)
                for mistake in check.mistakes:  # both forms: what `diagnose` compares, and whether it shows
                    self._both_forms(check, cases, mistake)
                    self.mistake_answers(check, cases, mistake)
                    self.mistake_answers(check, cases, mistake, as_expected=True)
                # As expected values: what `with_stand_ins` judges the check's answers against.
                theirs = (m for c in composition.components(check, by_name) for m in c.mistakes)
                for mistake in dict.fromkeys(theirs):
                    self.mistake_answers(check, cases, mistake, as_expected=True)

    def known(self, check: Check) -> bool:
        """Whether this grading has computed the check's expected values (and so the reference's time)."""
        with self._lock:
            return check.name in self._expected

    def reference_seconds(self, check: Check) -> float | None:
        """The reference's time on the check's cases, where this grading knows it: measured, or stored (an
        entry of its own, read before the check's first run without its expected values)."""
        with self._lock:
            if check.name in self._reference_s:
                return self._reference_s[check.name]
        key = None if check.timing else self._stored_key(check, self.cases(check), SECONDS)
        stored = self.store.get(key) if key is not None else None
        if not isinstance(stored, float):
            return None
        with self._lock:
            self._seconds_stored.add(check.name)
            return self._reference_s.setdefault(check.name, stored)

    def limits_of(self, check: Check) -> Limits:
        """The check's limits in this grading: `wall_factor` times the reference's time on its cases,
        never below the check's own cpu_s and wall_s (the floors, and all there is without a live reference)."""
        self.of(check)
        return check.limits.following(self._reference_s.get(check.name))

    def mistake_answers(
        self, check: Check, cases: list[Case], mistake: Mistake, as_expected: bool = False
    ) -> list[Any]:
        """What a submission making `mistake` returns on every case (`Raised` where it raises); with
        `as_expected`, as expected values (the parts only the reference computes, a sampler's table, included)."""
        # Only a check with a judge of its own can read the parts only the reference computes (a sampler's
        # table): elsewhere both forms are the same answers, computed once.
        as_expected = as_expected and check.judge is not None
        key = (check.name, mistake, as_expected)
        with self._lock:
            if key not in self._mistaken:
                stored_key = self._mistake_key(check, cases, mistake, as_expected)
                answers = self._stored_answers(stored_key, cases)
                if answers is None:
                    answers = [self._mistaken_answer(check, case, mistake, as_expected) for case in cases]
                    if stored_key is not None:
                        self.store.put(stored_key, self._storable(answers))
                self._mistaken[key] = answers
            return self._mistaken[key]

    def _both_forms(self, check: Check, cases: list[Case], mistake: Mistake) -> None:
        """Where a check has a judge of its own, a mistake's answers in both forms from one run of each case
        (`LiveReference.mistaken_both`), kept as `mistake_answers` keeps them; where either form is known
        already (here or in the store), `mistake_answers` makes the other alone."""
        both = getattr(self.oracle, "mistaken_both", None)
        if check.judge is None or both is None:
            return
        forms = (False, True)
        keys = {as_expected: (check.name, mistake, as_expected) for as_expected in forms}
        with self._lock:
            if any(key in self._mistaken for key in keys.values()):
                return
            stored_keys = {as_expected: self._mistake_key(check, cases, mistake, as_expected) for as_expected in forms}
            stored = {as_expected: self._stored_answers(stored_keys[as_expected], cases) for as_expected in forms}
            if any(answers is not None for answers in stored.values()):
                self._mistaken.update({keys[f]: answers for f, answers in stored.items() if answers is not None})
                return
            made: dict[bool, list] = {as_expected: [] for as_expected in forms}
            for case in cases:
                try:
                    plain, expected = both(check, case, mistake)
                except Exception as exc:
                    plain = expected = _raised(exc)
                made[False].append(plain)
                made[True].append(expected)
            for as_expected, answers in made.items():
                self._mistaken[keys[as_expected]] = answers
                if stored_keys[as_expected] is not None:
                    self.store.put(stored_keys[as_expected], self._storable(answers))

    def _mistake_key(self, check: Check, cases: list[Case], mistake: Mistake, as_expected: bool) -> str | None:
        """The store's key of a mistake's answers in one form (what it raised is kept with its message)."""
        form = " as expected" if as_expected else ""
        return self._stored_key(check, cases, f"mistake {mistake.name} {mistake.edits!r} messages{form}")

    def _stored_answers(self, stored_key: str | None, cases: list[Case]) -> list[Any] | None:
        """A mistake's answers as the store holds them under `stored_key`, one per case; None where it holds none."""
        stored = self.store.get(stored_key) if stored_key is not None else None
        if not (isinstance(stored, list) and len(stored) == len(cases)):
            return None
        return [
            Raised(str(a.get("raised", "")), str(a.get("message", ""))) if a.get("crashed") else a.get("answer")
            for a in stored
        ]

    @staticmethod
    def _storable(answers: list[Any]) -> list[dict]:
        return [
            {"crashed": True, "raised": a.kind, "message": a.message} if isinstance(a, Raised) else {"answer": a}
            for a in answers
        ]

    def _mistaken_answer(self, check: Check, case: Case, mistake: Mistake, as_expected: bool = False) -> Any:
        try:
            if as_expected:
                return self.oracle.mistaken(check, case, mistake, as_expected=True)
            return self.oracle.mistaken(check, case, mistake)
        except RecordedMistakeRaised as exc:  # the fixtures keep "Type: message"
            kind, _, message = str(exc).partition(":")
            return Raised(kind.strip(), message.strip())
        except Exception as exc:
            return _raised(exc)

    def diagnose(self, check: Check, cases: list[Case], outcomes: list[CaseOutcome]) -> Mistake | None:
        """The first known mistake that explains every answer the submission gave.

        A mistake that crashes on a case (positions past the last embedding)
        explains a submission that crashed there too: only the answered cases count.
        It must show on them, though: a mistake whose answers are all right there
        (the submission crashed on every case the mistake changes) explains nothing,
        unless it raises, on every case where the submission raised, the very
        exception the submission raised (a division by zero for an unseen context),
        where the reference answers, and the submission answered some case too.
        The very exception: its type and its message, for one type covers many causes
        (every shape error of torch is a RuntimeError).
        """
        answered = [i for i, o in enumerate(outcomes) if o.kind == "ok"]
        if not answered:  # nothing to explain (an untouched stub): no mistake's answers are computed for it
            return None
        raised = {
            i: (str((o.error or {}).get("type", "")), str((o.error or {}).get("message", "")))
            for i, o in enumerate(outcomes)
            if o.kind == "error"
        }
        right = self._expected[check.name][1] if check.name in self._expected else None
        tolerances = [check.tolerance_of(cases[i]) for i in answered]
        # One mistake first; only where none explains the answers, every two together (`pairs`).
        for mistake in (*check.mistakes, *pairs(check.mistakes)):
            answers = self.mistake_answers(check, cases, mistake)
            if any(isinstance(answers[i], Raised) for i in answered):
                continue
            mistaken = [check.summarized(cases[i], answers[i]) for i in answered]
            got = [check.summarized(cases[i], outcomes[i].value) for i in answered]
            if not explains(mistaken, got, tolerances):
                continue
            # Against the right answers as expected values, the parts only the reference computes (a sampler's
            # table) included in both: a submission's answers leave them out, so they would always differ.
            as_expected = self.mistake_answers(check, cases, mistake, as_expected=True) if right is not None else None
            shows = right is None or not explains(
                [check.summarized(cases[i], as_expected[i]) for i in answered],
                [check.summarized(cases[i], right[i]) for i in answered],
                tolerances,
            )
            raises_alike = bool(raised) and all(
                isinstance(answers[i], Raised)
                and answers[i].kind
                and answers[i].kind == kind
                and same_message(answers[i].message, message)
                for i, (kind, message) in raised.items()
            )
            if shows or raises_alike:
                return mistake
        return None

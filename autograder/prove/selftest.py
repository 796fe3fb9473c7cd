"""`lmgrade selftest`: the proofs of an assignment's graders, as a command and for a package's tests.

"Graders are proved" (DESIGN.md): every grader is shown, by grading, to give

- ``reference``: full marks to the reference solution, in every variant;
- ``stub``: 0 to the generated stub, every check saying "not implemented", in every variant;
- ``constant X`` and ``raising``: 0 to the stub with every body left to the
  student returning a constant or raising ValueError (`degenerate`): points
  only for work done, on property checks too;
- ``bug NAME``: for each bug of the catalogue (`lmgrade.Bug`, graded in its
  own variant), lost points, with the catalogue's words in the feedback, on
  every check its ``loses`` names, and none on any other check but those that
  compose them (one bug, one place);
- ``contract STYLE``: full marks to each correct submission written from the
  contract alone, in another style than the reference's (the sub-folders of
  the package's ``tests/submissions/ASSIGNMENT``, where there are any), in
  every variant (timing checks in the default one only: a time is judged
  against the reference's own);
- ``mistakes named elsewhere``: no known mistake made by edits is named on
  more than one mutant of the reference (`lmgrade.prove.mutants`) that changes
  none of the lines its edits change: a name its answers matched where the
  cause was another change. The mutants are a seeded sample
  (``MUTANT_SAMPLE`` of them, ``mutant_sample`` sets another size, None all),
  graded in the first variant proved, on the checks that declare mistakes
  (`mutants.naming_checks`); the proof's line says how many were graded of
  how many. ``lmgrade mutants`` grades them all and lists every one
  (``named_elsewhere``).

With a ``--set`` choice, only that variant is proved: its reference, stub,
submissions that do no work, the bugs graded in it and the contract
submissions. Each proof is one grading, by the same `Grader` as ``lmgrade
grade``; the proofs of one variant share it (and its expected values).
Timing checks a bug does not name are left out of its grading: they time
the code twice over and judge nothing a bug of values changes. A check a bug
must run out of time on is graded with a short limit: the bug's claim is
that it never returns, which a short limit shows as well as a long one.

Before any proof, the assignment's declarations are checked against its
reference (`author_errors`): a known mistake's or a bug's edit the reference
no longer allows, a check whose cases its scenario cannot take, a mistake no
submission can be told (it raises on every case, or answers as the
reference does). Each is its author's to fix, and raised as `AuthorError`,
one line each naming the file and line that declare it: no proof is made.

`selftest` runs the proofs in order and stops at the first that fails;
`run_selftest` is the same for a package's own tests, raising
`SelftestFailure` (an AssertionError, so pytest reports the reason)::

    from lmgrade.prove.selftest import run_selftest

    def test_the_graders_are_proved():
        run_selftest("softmax")
"""

from __future__ import annotations

import dataclasses
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, closing
from dataclasses import dataclass
from pathlib import Path

import pluggy

from ..core.seeds import course_secret
from ..core.selection import Selection
from ..declare import catalog, composition, templates
from ..declare.assignment import Assignment
from ..declare.flawed import Bug, write_flawed
from ..grading.expected_store import ExpectedStore, default_store
from ..grading.grader import Grader
from ..grading.oracle import LiveReference
from ..reports.results import Verdict
from ..sandbox.limits import Limits
from .author_errors import AuthorError, Declared, bad_scenarios, on_the_reference, stale_bugs, stale_mistakes
from .degenerate import CONSTANTS, RAISES, write_degenerate
from .mutants import all_mutants, grade_for_names, sample

NOT_IMPLEMENTED = "not implemented"
# The limits of a check a bug must run out of time on (its claim is that it never returns).
HANG_LIMITS = {"cpu_s": 2.0, "wall_s": 4.0, "wall_factor": 0.0}
TIME_LIMIT_WORDS = "time limit"
# The mutants graded for the names of known mistakes: a seeded sample, so that selftest stays minutes long on
# an assignment of hundreds of mutants (each is a grading); `lmgrade mutants` grades them all.
MUTANT_SAMPLE = 24
MUTANT_SEED = 0
NAMED_ELSEWHERE = "mistakes named elsewhere"


class Disproved(AssertionError):
    """A proof that does not hold: the reason, in one line (an AssertionError, so a test that makes a proof
    fails with it)."""


class SelftestFailure(AssertionError):
    """The first proof of `run_selftest` that failed; its message is the proof's line."""

    def __init__(self, proof: Proof):
        super().__init__(proof.line())
        self.proof = proof


@dataclass(frozen=True)
class Proof:
    """One proof's outcome: what it shows where it holds, why not where it fails."""

    name: str  # "reference", "stub", "constant None", "raising", "bug off_by_one", "contract loops"
    variant: str  # the --set settings it was graded in ("" for the defaults)
    passed: bool
    detail: str
    seconds: float

    def line(self) -> str:
        where = f" [{self.variant}]" if self.variant else ""
        return f"{'ok  ' if self.passed else 'FAIL'} {self.name}{where}: {self.detail} ({self.seconds:.1f} s)"


@dataclass(frozen=True)
class Step:
    """One proof to make: a submission to write and what its grading must show."""

    name: str
    selection: Selection
    write: Callable[[Assignment, dict, Path], Path]  # the submission folder, written under the given one
    prove: Callable[[list[Verdict], Assignment], str]  # what it shows; raises Disproved
    only: Callable[[Assignment], set[str] | None] = lambda assignment: None  # the checks graded (None: all)
    short: frozenset[str] = frozenset()  # checks graded with HANG_LIMITS
    # A proof that is more than one submission's grading: it grades what it needs with the variant's grader,
    # in folders under the one given, and says what it shows (raises Disproved); `write` and `prove` unused.
    run: Callable[[Grader, Path], str] | None = None


# --- What a grading must show ----------------------------------------------------------------------


def _first_line(text: str, most: int = 160) -> str:
    line = (text.strip().splitlines() or [""])[0]
    return line if len(line) <= most else line[: most - 3] + "..."


def _points(verdicts: list[Verdict]) -> str:
    return f"{sum(v.score for v in verdicts):g}/{sum(v.max_score for v in verdicts):g}"


def full_marks(verdicts: list[Verdict], assignment: Assignment | None = None) -> str:
    """Every check paid in full; else Disproved naming the first that is not."""
    for v in verdicts:
        if not v.passed:
            raise Disproved(f"{v.check.name} pays {v.score:g} of {v.max_score:g}: {_first_line(v.output)}")
    return _points(verdicts)


def zero(verdicts: list[Verdict], says: str = "") -> str:
    """No check pays anything (and each says `says`, where given); else Disproved naming the first that does."""
    for v in verdicts:
        if v.score > 0:
            raise Disproved(f"{v.check.name} pays {v.score:g} of {v.max_score:g}: {_first_line(v.output)}")
        if says and says not in v.output:
            raise Disproved(f"{v.check.name} does not say {says!r}: {_first_line(v.output)}")
    return _points(verdicts)


def loses_where_it_says(bug: Bug, verdicts: list[Verdict], assignment: Assignment) -> str:
    """The bug loses on each check its `loses` names, with its words, and on no other check but those that
    compose them; else Disproved with the first thing that is not so."""
    graded = {v.check.name: v for v in verdicts}
    by_name = {c.name: c for c in assignment.checks}
    if not bug.loses:
        raise Disproved("its loses names no check: a bug must lose somewhere")
    for check, words in bug.loses.items():
        if check not in graded:
            raise Disproved(f"its loses names {check!r}, which is no check of {assignment.name}")
        v = graded[check]
        if v.passed:
            raise Disproved(f"loses nothing on {check} ({v.score:g}/{v.max_score:g})")
        if words not in v.output:
            raise Disproved(f"{check} loses, but its feedback does not say {words!r}: {_first_line(v.output)}")
    allowed = set(bug.loses) | {
        c.name for c in assignment.checks if {k.name for k in composition.components(c, by_name)} & set(bug.loses)
    }
    elsewhere = [v for v in verdicts if not v.passed and v.check.name not in allowed]
    if elsewhere:
        v = elsewhere[0]
        raise Disproved(
            f"also loses on {', '.join(e.check.name for e in elsewhere)}, which its loses does not name nor do "
            f"they compose a check it names ({v.check.name}: {_first_line(v.output)})"
        )
    lost = [v.check.name for v in verdicts if not v.passed]
    beside = [name for name in lost if name not in bug.loses]
    # Where it lost, said whole: a check that composes one it names is allowed, and said as such.
    also = f"; also on {', '.join(beside)}, which compose{'s' if len(beside) == 1 else ''} them" if beside else ""
    return f"loses on {', '.join(bug.loses)}{also} ({_points(verdicts)})"


# --- The submissions -------------------------------------------------------------------------------


def _copy_reference(assignment: Assignment, variant: dict, folder: Path) -> Path:
    folder.mkdir(parents=True)
    reference = assignment.spec.reference_folder()
    for filename in assignment.spec.files:
        (folder / filename).write_bytes((reference / filename).read_bytes())
    return folder


def _stub(assignment: Assignment, variant: dict, folder: Path) -> Path:
    rendered = templates.render(assignment, variant)
    folder.mkdir(parents=True)
    for filename in assignment.spec.files:
        (folder / filename).write_text(rendered[filename], encoding="utf-8")
    return folder


def _bug(bug: Bug) -> Callable[[Assignment, dict, Path], Path]:
    def write(assignment: Assignment, variant: dict, folder: Path) -> Path:
        return write_flawed(assignment.spec.reference_folder(), assignment.spec.files, folder, [bug])

    return write


def _degenerate(body: str) -> Callable[[Assignment, dict, Path], Path]:
    return lambda assignment, variant, folder: write_degenerate(assignment, variant, folder, body)


def contract_submissions(folder: Path | None) -> list[Path]:
    """The correct submissions in `folder`: each sub-folder is one (none where the folder is absent)."""
    if folder is None or not Path(folder).is_dir():
        return []
    return sorted(p for p in Path(folder).iterdir() if p.is_dir() and not p.name.startswith((".", "__")))


def named_once_at_most(mutant_sample: int | None, seed: int = MUTANT_SEED) -> Callable[[Grader, Path], str]:
    """The ``mistakes named elsewhere`` proof (see the module docstring)."""

    def run(grader: Grader, folder: Path) -> str:
        made = all_mutants(grader.assignment)
        chosen = sample(made, mutant_sample, seed)
        report = grade_for_names(grader, chosen, folder, made=len(made))
        graded = f"{len(chosen)} mutants graded" + (
            f", a seeded sample of the {len(made)} (seed {seed}; lmgrade mutants grades them all)"
            if len(chosen) < len(made)
            else f", all {len(made)}"
        )
        falsely = report.named_falsely()
        if falsely:
            said = "; ".join(
                f"{name} is named on {len(diffs)} mutants that change none of its lines: {' | '.join(diffs)}"
                for name, diffs in falsely.items()
            )
            raise Disproved(f"{said} ({graded})")
        named = sum(bool(r.named) for r in report.results)
        once = report.named_elsewhere()
        also = f"; named once elsewhere: {', '.join(once)}" if once else ""
        return f"no known mistake named falsely more than once; {graded}, {named} named one{also}"

    return run


def _unused(*args) -> Path:  # a proof that writes no submission of its own (`Step.run`)
    raise AssertionError("a Step with run is not written")


# --- The plan --------------------------------------------------------------------------------------


def plan(
    name: str,
    settings: tuple[str, ...] = (),
    *,
    submissions: Path | None = None,
    pm: pluggy.PluginManager | None = None,
    mutant_sample: int | None = MUTANT_SAMPLE,
) -> list[Step]:
    """Every proof of assignment `name`, in the order they are made (see the module docstring);
    `mutant_sample`: the mutants the last proof grades (None: all)."""
    spec = catalog.load_spec(name, pm)
    default = spec.resolve_variant({})
    chosen = Selection.parse(name, settings)
    selections = [chosen] if settings else catalog.variants(name, pm)
    resolved = {s: spec.resolve_variant(s.chosen) for s in selections}
    steps: list[Step] = []
    for s in selections:
        steps.append(Step("reference", s, _copy_reference, full_marks))
    for s in selections:
        steps.append(Step("stub", s, _stub, lambda verdicts, _: zero(verdicts, NOT_IMPLEMENTED)))
    for body in (*CONSTANTS, RAISES):
        label = "raising" if body == RAISES else f"constant {body}"
        steps.append(Step(label, selections[0], _degenerate(body), lambda verdicts, _: zero(verdicts)))
    for key, bug in catalog.bugs(name, pm).items():
        own = spec.resolve_variant(bug.variant)
        if own not in resolved.values():
            continue  # graded in a variant this run does not prove
        selection = next(s for s in selections if resolved[s] == own)

        def prove(verdicts, assignment, bug=bug) -> str:
            return loses_where_it_says(bug, verdicts, assignment)

        def only(assignment, bug=bug) -> set[str]:
            return {c.name for c in assignment.checks if c.timing is None or c.name in bug.loses}

        hangs = frozenset(check for check, words in bug.loses.items() if TIME_LIMIT_WORDS in words)
        steps.append(Step(f"bug {key}", selection, _bug(bug), prove, only, hangs))
    for folder in contract_submissions(submissions):
        for s in selections:

            def write(assignment, variant, into, folder=folder) -> Path:
                return folder

            def untimed(assignment, timed=resolved[s] == default) -> set[str] | None:
                return None if timed else {c.name for c in assignment.checks if c.timing is None}

            steps.append(Step(f"contract {folder.name}", s, write, full_marks, untimed))
    steps.append(Step(NAMED_ELSEWHERE, selections[0], _unused, full_marks, run=named_once_at_most(mutant_sample)))
    return steps


def check_declarations(
    name: str,
    settings: tuple[str, ...] = (),
    *,
    pm: pluggy.PluginManager | None = None,
    secret: str,
    store: ExpectedStore | None = None,
    run_reference: bool = True,
) -> None:
    """AuthorError, listing every declaration of `name` that cannot work in the variants proved (see the
    module docstring); `run_reference`: also run the reference, on the checks' scenarios and on each mistake,
    as the proofs' gradings and diagnoses would (`on_the_reference`)."""
    selections = [Selection.parse(name, settings)] if settings else catalog.variants(name, pm)
    loaded = [catalog.load(selection, pm) for selection in selections]
    assignment = loaded[0][0]
    declared = Declared.around(assignment)
    problems = [*stale_mistakes(assignment, declared), *stale_bugs(assignment, catalog.bugs(name, pm), declared)]
    for bound, variant in loaded:
        problems += [p for p in bad_scenarios(bound, variant, secret, declared) if p not in problems]
    if not problems and run_reference:
        # As the proofs' gradings run it: on this machine's device (a CUDA check on the CPU without a GPU).
        bound = assignment.on("auto")
        problems = on_the_reference(bound, [variant for _, variant in loaded], secret, store, declared)
    if problems:
        raise AuthorError(problems)


class _Graders:
    """One `Grader` per variant and set of shortened checks, made on first use, closed together."""

    def __init__(self, pm, secret: str, jobs: int, store: ExpectedStore | None, stack: ExitStack):
        self.pm, self.secret, self.jobs, self.store, self.stack = pm, secret, jobs, store, stack
        self.made: dict[tuple[Selection, frozenset[str]], Grader] = {}
        self._lock = threading.Lock()

    def __call__(self, selection: Selection, short: frozenset[str]) -> Grader:
        key = (selection, short)
        with self._lock:
            return self.made[key] if key in self.made else self._make(key)

    def _make(self, key: tuple[Selection, frozenset[str]]) -> Grader:
        selection, short = key
        assignment, variant = catalog.load(selection, self.pm)
        if short:
            checks = [
                dataclasses.replace(c, limits=Limits(**{**c.limits.as_dict(), **HANG_LIMITS})) if c.name in short else c
                for c in assignment.checks
            ]
            assignment = dataclasses.replace(assignment, checks=checks)
        grader = Grader(
            assignment, variant, LiveReference(assignment.spec), secret=self.secret, jobs=self.jobs, store=self.store
        )
        self.made[key] = self.stack.enter_context(grader)
        return self.made[key]


def proofs(
    name: str,
    settings: tuple[str, ...] = (),
    *,
    submissions: Path | None = None,
    pm: pluggy.PluginManager | None = None,
    jobs: int = 1,
    secret: str | None = None,
    store: ExpectedStore | None = None,
    select: Callable[[Step], bool] | None = None,
    mutant_sample: int | None = MUTANT_SAMPLE,
) -> Iterator[Proof]:
    """Make the proofs of `name` (those `select` keeps), yielding each in plan order as it is made.

    `jobs` gradings are in flight at once, sharing `jobs` sandboxed runs: the grading process's own work
    (expected values, the diagnosis, stand-in records) overlaps the runs. Closing the iterator early
    makes no proof not yet begun. `store` holds the expected values (by default the user's, as
    `lmgrade grade` keeps); `secret` draws the cases (by default the course's).
    """
    steps = [
        s
        for s in plan(name, settings, submissions=submissions, pm=pm, mutant_sample=mutant_sample)
        if select is None or select(s)
    ]
    secret = course_secret() if secret is None else secret
    store = default_store() if store is None else store
    # Every mistake's answers are computed for the whole selftest only: a selection proves what it selects.
    check_declarations(name, settings, pm=pm, secret=secret, store=store, run_reference=select is None)
    with (
        ExitStack() as stack,
        tempfile.TemporaryDirectory(prefix="lmgrade-selftest-") as tmp,
        # Last in, first out: running gradings end before their graders close and their folders go.
        ThreadPoolExecutor(max_workers=max(1, jobs)) as executor,
    ):
        graders = _Graders(pm, secret, jobs, store, stack)

        def make(number: int, step: Step) -> Proof:
            start = time.perf_counter()
            grader = graders(step.selection, step.short)
            try:
                if step.run is not None:
                    detail, passed = step.run(grader, Path(tmp) / f"s{number:04d}"), True
                else:
                    folder = step.write(grader.assignment, grader.variant, Path(tmp) / f"s{number:04d}")
                    verdicts = grader.grade(folder, only=step.only(grader.assignment))
                    detail, passed = step.prove(verdicts, grader.assignment), True
            except Disproved as exc:
                detail, passed = str(exc), False
            return Proof(step.name, step.selection.describe(), passed, detail, time.perf_counter() - start)

        futures = [executor.submit(make, number, step) for number, step in enumerate(steps)]
        try:
            for future in futures:
                yield future.result()
        finally:
            for future in futures:
                future.cancel()


def selftest(
    name: str,
    settings: tuple[str, ...] = (),
    *,
    on_proof: Callable[[Proof], None] | None = None,
    **options,
) -> list[Proof]:
    """The proofs of `name` in order, up to and including the first that fails (`proofs` for the options)."""
    made = []
    with closing(proofs(name, settings, **options)) as made_one_by_one:  # closed at once: its graders too
        for proof in made_one_by_one:
            made.append(proof)
            if on_proof:
                on_proof(proof)
            if not proof.passed:
                break
    return made


def run_selftest(name: str, settings: tuple[str, ...] = (), **options) -> list[Proof]:
    """`selftest` for a package's tests: the proofs made, or SelftestFailure (an AssertionError) with the
    first that fails. Without `submissions`, the contract submissions are those of
    ``tests/submissions/NAME`` under the current folder, where it exists."""
    options.setdefault("submissions", Path("tests") / "submissions" / name)
    made = selftest(name, settings, **options)
    if made and not made[-1].passed:
        raise SelftestFailure(made[-1])
    return made

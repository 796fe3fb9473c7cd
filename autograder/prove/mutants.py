"""`lmgrade mutants`: how strong an assignment's checks are.

Every single-point mutant of the reference (`mutation.make_mutants`) is graded
as a submission, in the sandbox, by the same call as `lmgrade grade`, against
the unmutated reference. A mutant that loses points is *killed*; one that
keeps full marks *survives*: a change to the reference that no check notices.
For killed mutants the report also counts how many got a known mistake
named, since feedback that names the mistake teaches more than a number.

Where an assignment has variants (an activation, pre-LN or post-LN), each
variant gets its own score: a mutant counts as killed in a variant only if
the grading of that variant kills it. A variant chooses defaults and
emphasis, never which parts of the contract go unchecked, so a mutant only
another variant's grading kills is a gap, and shows in this variant's score.

Some mutants change nothing the contract allows a check to see (a bound
check that another bound check already implies, say). They are reviewed and
listed, with the reason, in the plugin's equivalent-mutants file; the score
that counts is killed / (total - equivalent), and a survivor not on the list
is news.
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
import threading
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from ..core.seeds import course_secret
from ..declare import catalog
from ..declare.assignment import Assignment, AssignmentError
from ..grading.expected_store import default_store
from ..grading.grader import Grader
from ..grading.oracle import LiveReference
from ..grading.submission_grading import grade_submission
from .mutation import Mutant, make_mutants


def label(mutant: Mutant) -> str:
    """How a mutant is named in an equivalent-mutants file: no line number, so edits elsewhere keep it."""
    text = f"{mutant.file} {mutant.function}: `{mutant.before}` -> `{mutant.after}`"
    return text + (f" (#{mutant.occurrence + 1})" if mutant.occurrence else "")


def equivalent_entry(mutant: Mutant) -> str:
    """The mutant's `[[equivalent]]` table, as an equivalent-mutants file takes it, its `why` left empty.

    The label is a TOML basic string (JSON's escapes are TOML's): pasted as it is, the entry names the
    mutant exactly. The empty `why` is refused when the file is read, until its reason is written."""
    return f'[[equivalent]]\nmutant = {json.dumps(label(mutant), ensure_ascii=False)}\nwhy = ""\n'


@dataclass
class MutantResult:
    mutant: Mutant
    score: float
    max_score: float
    failed: list[str]  # the checks that lost points
    named: list[str]  # the known mistakes their feedback named
    equivalent: str | None = None  # why, where the mutant is listed as equivalent
    variant: dict = field(default_factory=dict)  # the variant that killed it, or the last one tried

    @property
    def killed(self) -> bool:
        return self.score < self.max_score


@dataclass
class Tally:
    total: int = 0
    equivalent: int = 0
    killed: int = 0
    named: int = 0

    def add(self, result: MutantResult) -> None:
        self.total += 1
        if result.equivalent is not None and not result.killed:
            self.equivalent += 1
        elif result.killed:
            self.killed += 1
            self.named += bool(result.named)

    @property
    def counted(self) -> int:
        return self.total - self.equivalent

    @property
    def score(self) -> float:
        return self.killed / self.counted if self.counted else 1.0

    def as_dict(self) -> dict:
        return {
            "total": self.total,
            "equivalent": self.equivalent,
            "killed": self.killed,
            "survived": self.counted - self.killed,
            "named": self.named,
            "score": round(self.score, 4),
        }


def mistake_places(assignment: Assignment) -> dict[str, frozenset[tuple[str, int]]]:
    """Where each known mistake made by edits alone is made: the (file, line) of every reference line its
    edits replace. A mistake made by a patch has no lines to compare, and is left out."""
    folder = assignment.spec.reference_folder()
    texts: dict[str, str] = {}
    places: dict[str, frozenset[tuple[str, int]]] = {}
    for check in assignment.checks:
        for mistake in check.mistakes:
            if mistake.patch is not None or not mistake.edits or mistake.name in places:
                continue
            lines: set[tuple[str, int]] = set()
            for file, old, _ in mistake.edits:
                if file not in texts:
                    path = folder / file
                    texts[file] = path.read_text(encoding="utf-8") if path.is_file() else ""
                start = texts[file].find(old)
                if start < 0:
                    continue
                first = texts[file].count("\n", 0, start) + 1
                lines.update((file, first + i) for i in range(max(1, old.rstrip("\n").count("\n") + 1)))
            places[mistake.name] = frozenset(lines)
    return places


@dataclass
class MutantsReport:
    assignment: str
    made: int  # mutants made, before any --max sample
    results: list[MutantResult]
    unused_equivalents: list[str] = field(default_factory=list)  # listed, but no such mutant was graded
    # Each known mistake made by edits: the reference lines they replace (`mistake_places`).
    places: dict[str, frozenset[tuple[str, int]]] = field(default_factory=dict)

    def named_elsewhere(self) -> dict[str, list[str]]:
        """Each known mistake named on mutants that change none of the lines the mistake changes: a name its
        answers matched where the cause was another change. By mistake, the mutants' diffs (two mistakes named
        together count for each)."""
        out: dict[str, list[str]] = defaultdict(list)
        for result in self.results:
            for named in result.named:
                for name in named.split("+"):
                    where = self.places.get(name)
                    if where and (result.mutant.file, result.mutant.line) not in where:
                        out[name].append(result.mutant.diff())
        return dict(sorted(out.items()))

    def named_falsely(self, most: int = 1) -> dict[str, list[str]]:
        """The known mistakes named elsewhere (`named_elsewhere`) on more than `most` mutants: what fails
        `lmgrade selftest`."""
        return {name: diffs for name, diffs in self.named_elsewhere().items() if len(diffs) > most}

    def tally(self, key: Callable[[MutantResult], str] | None = None) -> dict[str, Tally]:
        tallies: dict[str, Tally] = defaultdict(Tally)
        for result in self.results:
            tallies[key(result) if key else "all"].add(result)
        return dict(tallies)

    @property
    def survivors(self) -> list[MutantResult]:
        return [r for r in self.results if not r.killed and r.equivalent is None]

    @property
    def killed_but_listed(self) -> list[MutantResult]:
        """Listed as equivalent, yet a check tells them apart: the list is wrong."""
        return [r for r in self.results if r.killed and r.equivalent is not None]

    def as_dict(self) -> dict:
        return {
            "assignment": self.assignment,
            "made": self.made,
            "graded": len(self.results),
            "overall": self.tally()["all"].as_dict() if self.results else Tally().as_dict(),
            "by_file": {k: t.as_dict() for k, t in sorted(self.tally(lambda r: r.mutant.file).items())},
            "by_function": {
                k: t.as_dict() for k, t in sorted(self.tally(lambda r: f"{r.mutant.file} {r.mutant.function}").items())
            },
            "survivors": [r.mutant.diff() for r in self.survivors],
            # The survivors' labels, as an equivalent-mutants file names them (no line number).
            "survivor_labels": [label(r.mutant) for r in self.survivors],
            "killed_but_listed_equivalent": [label(r.mutant) for r in self.killed_but_listed],
            "named_elsewhere": self.named_elsewhere(),
            "unused_equivalents": self.unused_equivalents,
            "mutants": [
                {
                    "mutant": label(r.mutant),
                    "line": r.mutant.line,
                    "operator": r.mutant.operator,
                    "killed": r.killed,
                    "variant": r.variant,
                    "score": r.score,
                    "max_score": r.max_score,
                    "failed_checks": r.failed,
                    "named": r.named,
                    "equivalent": r.equivalent,
                }
                for r in self.results
            ],
        }


def load_equivalents(name: str, pm=None) -> dict[str, str]:
    """{mutant label: why} from every equivalent-mutants file the plugins give for `name`."""
    pm = pm or catalog.get_manager()
    listed: dict[str, str] = {}
    for paths in pm.hook.lmgrade_equivalent_mutants(assignment=name):
        for path in paths or []:
            path = Path(path)
            try:
                data = tomllib.loads(path.read_text(encoding="utf-8"))
            except FileNotFoundError:
                continue
            except tomllib.TOMLDecodeError as exc:
                raise AssignmentError(f"{path}: not valid TOML: {exc}") from None
            for i, entry in enumerate(data.get("equivalent", []), start=1):
                if (
                    not isinstance(entry, dict)
                    or set(entry) != {"mutant", "why"}
                    or not all(isinstance(v, str) and v.strip() for v in entry.values())
                ):
                    raise AssignmentError(
                        f"{path}: [[equivalent]] number {i}: expected the keys mutant and why, each a non-empty string"
                    )
                listed[entry["mutant"]] = entry["why"]
    return listed


def all_mutants(assignment: Assignment) -> list[Mutant]:
    """Every mutant of every reference file of the assignment, in file order."""
    folder = assignment.spec.reference_folder()
    out = []
    for filename in assignment.spec.files:
        out += make_mutants((folder / filename).read_text(encoding="utf-8"), filename)
    return out


def sample(mutants: list[Mutant], max_mutants: int | None, seed: int) -> list[Mutant]:
    """A seeded sample of at most `max_mutants`, kept in file order."""
    if max_mutants is None or max_mutants >= len(mutants):
        return list(mutants)
    chosen = set(random.Random(seed).sample(range(len(mutants)), max_mutants))
    return [m for i, m in enumerate(mutants) if i in chosen]


def naming_checks(assignment: Assignment) -> set[str]:
    """The checks that can name a known mistake: those that declare some and time nothing."""
    return {c.name for c in assignment.checks if c.mistakes and c.timing is None}


def grade_for_names(grader: Grader, mutants: list[Mutant], folder: Path, made: int | None = None) -> MutantsReport:
    """Each of `mutants` graded by `grader` on the checks that can name a known mistake (`naming_checks`),
    one after the other, each in its own folder under `folder`: the report of what was named where
    (`MutantsReport.named_elsewhere`). `made`: the mutants these were drawn from (default: these)."""
    assignment = grader.assignment
    only = naming_checks(assignment)
    results = []
    for index, mutant in enumerate(mutants):
        verdicts = grader.grade(write_mutant(assignment, mutant, folder / f"m{index:05d}"), only=only)
        failed = [v for v in verdicts if not v.passed]
        results.append(
            MutantResult(
                mutant,
                sum(v.score for v in verdicts),
                sum(v.max_score for v in verdicts),
                [v.check.name for v in failed],
                sorted({v.mistake.name for v in failed if v.mistake is not None}),
                variant=dict(grader.variant),
            )
        )
    places = mistake_places(assignment)
    return MutantsReport(assignment.name, len(mutants) if made is None else made, results, places=places)


def write_mutant(assignment: Assignment, mutant: Mutant, folder: Path) -> Path:
    """A submission folder: the reference's files, one of them mutated."""
    reference = assignment.spec.reference_folder()
    folder.mkdir(parents=True)
    for filename in assignment.spec.files:
        text = mutant.source if filename == mutant.file else (reference / filename).read_text(encoding="utf-8")
        (folder / filename).write_text(text, encoding="utf-8")
    return folder


def run_mutants(
    assignment: Assignment,
    variant: dict,
    *,
    jobs: int = 1,
    max_mutants: int | None = None,
    seed: int = 0,
    secret: str | None = None,
    select: Callable[[Mutant], bool] | None = None,
    on_start: Callable[[int], None] | None = None,
    on_result: Callable[[MutantResult], None] | None = None,
) -> MutantsReport:
    """Grade every (or a seeded sample of) mutant of the reference; see the module docstring.

    Every mutant is graded in `variant` alone: the score is that variant's.
    """
    made = all_mutants(assignment)
    chosen = sample([m for m in made if select is None or select(m)], max_mutants, seed)
    equivalents = load_equivalents(assignment.name)
    if on_start:
        on_start(len(chosen))
    results: list[MutantResult | None] = [None] * len(chosen)
    lock = threading.Lock()
    secret = course_secret() if secret is None else secret
    with tempfile.TemporaryDirectory(prefix="lmgrade-mutants-") as tmp, ExitStack() as stack:
        reference = LiveReference(assignment.spec)
        graders = [
            (
                bound,
                chosen_variant,
                stack.enter_context(
                    Grader(bound, chosen_variant, reference, secret=secret, jobs=jobs, store=default_store())
                ),
            )
            for bound, chosen_variant in [(assignment, variant)]
        ]

        def grade(index: int) -> None:
            mutant = chosen[index]
            folder = write_mutant(assignment, mutant, Path(tmp) / f"m{index:05d}")
            for bound, chosen_variant, grader in graders:
                run = grade_submission(bound, chosen_variant, folder, grader=grader)
                failed = [v for v in run.verdicts if not v.passed]
                result = MutantResult(
                    mutant,
                    run.score,
                    run.max_score,
                    [v.check.name for v in failed],
                    sorted({v.mistake.name for v in failed if v.mistake is not None}),
                    equivalents.get(label(mutant)),
                    dict(chosen_variant),
                )
                if result.killed:
                    break
            with lock:
                results[index] = result
                if on_result:
                    on_result(result)

        # Each mutant's checks already run `jobs` at a time; a few mutants in
        # flight keep every worker busy between checks.
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as executor:
            for future in [executor.submit(grade, i) for i in range(len(chosen))]:
                future.result()
    graded_labels = {label(m) for m in chosen}
    unused = sorted(k for k in equivalents if k not in graded_labels) if len(chosen) == len(made) else []
    return MutantsReport(
        assignment.name, len(made), [r for r in results if r is not None], unused, mistake_places(assignment)
    )

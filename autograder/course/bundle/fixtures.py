"""Fixtures: an assignment's public checks, recorded from the reference.

A student bundle carries no reference. What its checks need from it is
recorded when the bundle is built: every public check (visibility
``visible``) with its cases, the reference's answer to each case, and the
answer each of the check's known mistakes gives there, so that feedback
names a mistake offline, and the reference's calls of each component a
composed check runs, for its stand-in run where a component failed
(`lmgrade.grading.stand_in`). Hidden checks are not recorded at all.

The cases are drawn from the public seed (`seeds.PUBLIC_SECRET`), never from
the course secret, and recorded with their arguments: the bundle draws
nothing, so it needs neither the secret nor the code that makes cases, and
the inputs Gradescope grades with (drawn from the course secret) are not the
ones whose answers the bundle holds.

A check is recorded field by field: plain values as they are, functions
(scenario, judge) and dataclasses (tolerances, limits) by their importable
names, known mistakes by name and explanation only (how a mistake is made is
an edit of the reference). On disk, a fixture set is a folder with
``fixtures.json`` (the document; arrays referred to by position) and
``arrays.npz``, both `wire` data: nothing is unpickled, and the only
modules reading imports are lmgrade's own, by the names recorded. The
document holds the archive's SHA-256, so a changed or truncated archive is
refused rather than compared against.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ... import __version__
from ...boundary import wire
from ...core.seeds import PUBLIC_SECRET
from ...declare import composition
from ...declare.assignment import Assignment, AssignmentSpec
from ...declare.checks import Case, Check, Mistake, pairs
from ...grading.expected_values import draw_cases
from ...grading.oracle import FixtureError, LiveReference

FORMAT = 1
DOCUMENT, ARRAYS = "fixtures.json", "arrays.npz"
# Where the functions and dataclasses a recorded check names may come from:
# the harness and the graders' modules that travel with the fixtures.
ALLOWED_MODULES = ("lmgrade",)  # and a plugin's public package (allowed_module)
# Check fields a bundle does not carry: the recorded cases replace make_cases.
_CHECK_FIELDS_LEFT_OUT = {"make_cases"}
# AssignmentSpec fields that describe the instructor's folder, not the checks.
_SPEC_FIELDS_LEFT_OUT = {"path", "templates", "checks", "limits", "public_package", "hidden", "hidden_inputs"}
RAISED = "raised"  # a mistake's answer where making it raises


def visible_checks(assignment: Assignment) -> list[Check]:
    """The checks students run themselves, the only ones a bundle carries.

    Those whose results students see as they submit, except timing checks,
    which are judged against the reference solution running beside the
    submission (a bundle has none, and a laptop's timings are not the
    grading machine's).
    """
    return [c for c in assignment.checks if c.visibility == "visible" and c.timing is None and not c.unavailable]


def left_out(assignment: Assignment) -> list[dict]:
    """The checks `visible_checks` leaves out, each with its points and why: for `lmgrade check` to say."""
    kept = {c.name for c in visible_checks(assignment)}
    return [
        {
            "name": c.name,
            "points": c.points,
            "why": (
                "timed against the reference solution"
                if c.timing is not None
                else "not counted without a GPU"
                if c.unavailable
                else c.visibility.replace("_", " ")
            ),
        }
        for c in assignment.checks
        if c.name not in kept
    ]


@dataclass
class RecordedCase:
    case: Case
    expected: Any
    # mistake name -> {"answer": value} or {RAISED: "what it raised"}
    mistaken: dict[str, dict]


@dataclass
class Fixtures:
    """The recorded public checks of one assignment in one variant."""

    assignment: str
    variant: dict
    spec: dict  # AssignmentSpec fields, recorded
    checks: dict[str, dict]  # check name -> recorded Check fields
    cases: dict[str, list[RecordedCase]]  # check name -> its recorded cases
    left_out: list[dict] = dataclasses.field(default_factory=list)  # see `left_out`
    # check name -> {"names": the stand-in candidates, "tables": each case's recorded calls of them}
    stand_ins: dict[str, dict] = dataclasses.field(default_factory=dict)
    version: str = __version__
    folder: Path | None = None  # where it was read from

    # --- what the oracle and the student's run need ---------------------------

    def recorded(self, check_name: str) -> list[RecordedCase]:
        if check_name not in self.cases:
            raise FixtureError(
                f"no fixture of the check {check_name!r} of {self.assignment}: it is not one "
                f"of the public checks recorded ({', '.join(self.cases) or 'none'})"
            )
        return self.cases[check_name]

    def named_modules(self) -> set[str]:
        """The modules whose functions and classes the recorded checks name."""
        found: set[str] = set()

        def visit(value: Any) -> None:
            if isinstance(value, dict):
                for key in ("$function", "$object"):
                    if isinstance(value.get(key), str):
                        found.add(value[key].partition(":")[0])
                for v in value.values():
                    visit(v)
            elif isinstance(value, (list, tuple)):
                for v in value:
                    visit(v)

        visit([self.checks, self.spec])
        return found

    def to_assignment(self) -> Assignment:
        """The public checks as an `Assignment` to grade with, their cases the recorded ones."""
        root = self.folder if self.folder is not None else Path(".")
        spec = AssignmentSpec(**_from_plain(self.spec), path=root / DOCUMENT, templates={}, checks={}, limits={})
        checks = [
            Check(**_from_plain(fields), make_cases=RecordedCases([r.case for r in self.cases[name]]))
            for name, fields in self.checks.items()
        ]
        return Assignment(spec, checks, device="cpu")  # recorded on the CPU, as every bundle is

    # --- on disk ---------------------------------------------------------------

    def write(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        doc, arrays = wire.to_document(
            {
                "checks": self.checks,
                "cases": {
                    name: [
                        {
                            "label": r.case.label,
                            "args": r.case.args,
                            "tolerance": _to_plain(r.case.tolerance, f"{name} case tolerance"),
                            "expected": r.expected,
                            "mistaken": r.mistaken,
                        }
                        for r in recorded
                    ]
                    for name, recorded in self.cases.items()
                },
                "spec": self.spec,
                "stand_ins": self.stand_ins,
            }
        )
        buffer = io.BytesIO()
        wire.save_arrays(arrays, buffer, compressed=True)
        blob = buffer.getvalue()
        header = {
            "format": FORMAT,
            "lmgrade": self.version,
            "assignment": self.assignment,
            "variant": self.variant,
            "seed": "public",
            "left_out": self.left_out,
            ARRAYS: hashlib.sha256(blob).hexdigest(),
        }
        (folder / ARRAYS).write_bytes(blob)
        (folder / DOCUMENT).write_text(
            json.dumps({**header, "document": doc}, separators=(",", ":"), allow_nan=False) + "\n", encoding="utf-8"
        )

    @classmethod
    def read(cls, folder: Path) -> Fixtures:
        folder = Path(folder)
        try:
            top = json.loads((folder / DOCUMENT).read_text(encoding="utf-8"))
            blob = (folder / ARRAYS).read_bytes()
        except (OSError, ValueError) as exc:
            raise FixtureError(f"the fixtures in {folder} cannot be read ({exc})") from None
        if not isinstance(top, dict) or top.get("format") != FORMAT:
            raise FixtureError(
                f"{folder / DOCUMENT} is not a fixture file of format {FORMAT}: "
                "rebuild the bundle with this version of lmgrade"
            )
        if hashlib.sha256(blob).hexdigest() != top.get(ARRAYS):
            raise FixtureError(
                f"{folder / ARRAYS} does not match {DOCUMENT} (changed or truncated): reinstall the bundle"
            )
        try:
            body = wire.from_document(top["document"], wire.load_arrays(io.BytesIO(blob)))
        except (KeyError, ValueError) as exc:
            raise FixtureError(f"the fixtures in {folder} are malformed ({exc})") from None
        cases = {
            name: [
                RecordedCase(Case(c["label"], c["args"], _from_plain(c["tolerance"])), c["expected"], c["mistaken"])
                for c in recorded
            ]
            for name, recorded in body["cases"].items()
        }
        return cls(
            assignment=top["assignment"],
            variant=top["variant"],
            spec=body["spec"],
            checks=body["checks"],
            cases=cases,
            left_out=top.get("left_out", []),
            stand_ins=body.get("stand_ins", {}),
            version=top.get("lmgrade", "?"),
            folder=folder,
        )


class RecordedCases:
    """A recorded check's `make_cases`: always the recorded cases, whatever the seed."""

    def __init__(self, cases: list[Case]):
        self.cases = cases

    def __call__(self, ctx) -> list[Case]:
        return list(self.cases)


def describe(assignment: Assignment, variant: dict) -> Fixtures:
    """The public checks and the assignment's spec as recorded, without their cases yet."""
    checks = {
        check.name: {
            f.name: _to_plain(getattr(check, f.name), f"{check.name}.{f.name}")
            for f in dataclasses.fields(check)
            if f.name not in _CHECK_FIELDS_LEFT_OUT
        }
        for check in visible_checks(assignment)
    }
    spec = {
        f.name: _to_plain(getattr(assignment.spec, f.name), f"the assignment's {f.name}")
        for f in dataclasses.fields(assignment.spec)
        if f.name not in _SPEC_FIELDS_LEFT_OUT
    }
    return Fixtures(
        assignment=assignment.name,
        variant=dict(variant),
        spec=spec,
        checks=checks,
        cases={},
        left_out=left_out(assignment),
    )


def record(assignment: Assignment, variant: dict, oracle: LiveReference | None = None) -> Fixtures:
    """Run the reference on every public check's public cases, and every known mistake too."""
    oracle = oracle or LiveReference(assignment.spec)
    fixtures = describe(assignment, variant)
    by_name = {c.name: c for c in assignment.checks}
    for check in visible_checks(assignment):
        drawn = draw_cases(check, assignment.name, variant, PUBLIC_SECRET)
        expected = oracle.expected(check, drawn)
        # A composed check may be paid where its answers are exactly a failed component's named mistake's
        # (`Grader.with_stand_ins`): those mistakes' answers on its cases are recorded beside its own.
        theirs = tuple(
            dict.fromkeys(
                m for c in composition.components(check, by_name) for m in c.mistakes if m not in check.mistakes
            )
        )
        fixtures.cases[check.name] = [
            RecordedCase(case, value, {**_mistakes(oracle, check, case), **_alone(oracle, check, case, theirs)})
            for case, value in zip(drawn, expected)
        ]
    fixtures.stand_ins = _stand_ins(visible_checks(assignment), fixtures, oracle)
    return fixtures


# A student bundle carries a component's recorded calls where they are few (a LayerNorm called inside
# every step of a generation is not): past this many on a case, that component has no stand-in there.
MAX_BUNDLED_CALLS = 500


def _stand_ins(checks: list[Check], fixtures: Fixtures, oracle: LiveReference) -> dict[str, dict]:
    """The reference's calls of each component that may stand in for a composed check, on its recorded
    cases, one component at a time: what a composed check's stand-in run replays where components it
    runs failed (`lmgrade.grading.stand_in`; a run replacing several answers from their records together)."""
    by_name = {c.name: c for c in checks}
    out = {}
    for check in checks:
        cases = [r.case for r in fixtures.cases[check.name]]
        names, tables = [], [[] for _ in cases]
        for component in composition.components(check, by_name):
            own = composition.stand_in_names(check, [component])
            recorded = oracle.stand_in_calls(check, cases, own, most=MAX_BUNDLED_CALLS) if own else None
            if recorded is not None:
                names += [n for n in own if n not in names]
                tables = [table + more for table, more in zip(tables, recorded)]
        if names:
            out[check.name] = {"names": names, "tables": tables}
    return out


def _mistakes(oracle: LiveReference, check: Check, case: Case) -> dict[str, dict]:
    """What each known mistake, and each pair of them that can be made together, answers on `case`. A pair
    that cannot be made (both edit the same line) or raises is left out: the grader treats a missing one
    as it treats one that raises, and what it raised may quote the reference."""
    found = {m.name: _mistaken(oracle, check, case, m) for m in check.mistakes}
    for pair in pairs(check.mistakes):
        answer = _mistaken(oracle, check, case, pair)
        if RAISED not in answer:
            found[pair.name] = answer
    return found


def _alone(oracle: LiveReference, check: Check, case: Case, mistakes: tuple[Mistake, ...]) -> dict[str, dict]:
    """What each of `mistakes` (of other checks) answers on `case`, one at a time, as expected values: what a
    composed check's answers are judged against where a component made it (`Grader.with_stand_ins`)."""
    return {m.name: _mistaken(oracle, check, case, m, as_expected=True) for m in mistakes}


def _mistaken(oracle: LiveReference, check: Check, case: Case, mistake: Mistake, as_expected: bool = False) -> dict:
    """What making `mistake` answers on `case`, or that it raises (as the grader treats it)."""
    try:
        return {"answer": oracle.mistaken(check, case, mistake, as_expected=as_expected)}
    except Exception as exc:
        return {RAISED: f"{type(exc).__name__}: {exc}"[:500]}


# --- recorded fields: plain data, names of functions and dataclasses, mistakes ---


def _to_plain(value: Any, where: str) -> Any:
    if isinstance(value, Mistake):  # never its edits or patch: they are made from the reference
        return {"$mistake": [value.name, value.explanation]}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            "$object": _name_of(type(value), where),
            "fields": {
                f.name: _to_plain(getattr(value, f.name), f"{where}.{f.name}") for f in dataclasses.fields(value)
            },
        }
    if callable(value):
        return {"$function": _name_of(value, where)}
    if isinstance(value, (list, tuple)):
        return type(value)(_to_plain(v, where) for v in value)
    if isinstance(value, dict):
        return {k: _to_plain(v, f"{where}[{k!r}]") for k, v in value.items()}
    try:
        wire.encode(value)
    except wire.WireError as exc:
        raise FixtureError(f"{where} cannot be recorded: {exc}") from None
    return value


def _from_plain(value: Any) -> Any:
    if isinstance(value, dict) and set(value) == {"$mistake"}:
        name, explanation = value["$mistake"]
        return Mistake(name, explanation)
    if isinstance(value, dict) and set(value) == {"$object", "fields"}:
        return _named(value["$object"])(**{k: _from_plain(v) for k, v in value["fields"].items()})
    if isinstance(value, dict) and set(value) == {"$function"}:
        return _named(value["$function"])
    if isinstance(value, (list, tuple)):
        return type(value)(_from_plain(v) for v in value)
    if isinstance(value, dict):
        return {k: _from_plain(v) for k, v in value.items()}
    return value


def _name_of(obj: Callable, where: str) -> str:
    """``module:qualname`` of a module-level function or class, checked to lead back to it."""
    name = f"{getattr(obj, '__module__', None)}:{getattr(obj, '__qualname__', None)}"
    try:
        found = _named(name)
    except FixtureError:
        found = None
    if found is not obj:
        raise FixtureError(
            f"{where} is {obj!r}, which cannot be recorded: a bundle names functions and "
            f"classes by module and name, so it must be a module-level one of "
            f"{' or '.join(ALLOWED_MODULES)}, or of a plugin's public package"
        )
    return name


def allowed_module(module: str) -> bool:
    """Whether fixtures may name `module`: lmgrade's own, or one of a plugin's public package (a bundle's)."""
    return module.split(".")[0] in ALLOWED_MODULES or "public" in module.split(".")[1:]


def _named(name: str) -> Any:
    module, _, qualname = name.partition(":")
    if not allowed_module(module) or not qualname:
        raise FixtureError(f"the fixtures name {name!r}, which is not part of lmgrade")
    try:
        obj = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise FixtureError(f"the fixtures name {name!r}, which is not installed here ({exc})") from None
    return obj

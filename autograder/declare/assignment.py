"""Read and validate ``assignment.toml``; bind it to the checks plugins provide.

Every problem is reported as ``FILE: [section] key: problem`` so an instructor
can fix a typo without reading this code.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 (Gradescope's default image)
    import tomli as tomllib

from ..core.device import resolve as resolve_device
from ..core.hidden_inputs import CHOICES as HIDDEN_INPUTS
from ..core.hidden_inputs import COURSE
from ..sandbox.limits import Limits
from .assignment_plugin import package_folder
from .checks import DEVICES, VISIBILITIES, WHEN_ABSENT, Check

_LIMIT_KEYS = {f.name: f.type for f in fields(Limits)}
# A submission's whole grading, unless [assignment] grading_budget_s says: far above what the checks' own limits
# cost a submission that hangs once (the import, or one function), so that only a runaway grading meets it.
DEFAULT_GRADING_BUDGET_S = 600.0


class AssignmentError(ValueError):
    """A malformed assignment file, template or variant choice."""


@dataclass(frozen=True)
class Variant:
    name: str
    default: Any
    choices: tuple[Any, ...]


@dataclass(frozen=True)
class CheckConfig:
    points: float | None = None
    visibility: str | None = None
    limits: dict = field(default_factory=dict)
    device: str | None = None
    when_absent: str | None = None
    # The variants the check belongs to, {variant: values as --set spells them};
    # empty: every variant.
    only: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # Points in some variants, {variant: {value: points}}, instead of `points`.
    points_when: dict[str, dict[str, float]] = field(default_factory=dict)

    def applies(self, variant: dict[str, Any]) -> bool:
        """Whether the check is part of `variant`."""
        return all(_spelled(variant.get(key)) in values for key, values in self.only.items())

    def points_in(self, variant: dict[str, Any]) -> float | None:
        for key, by_value in self.points_when.items():
            if _spelled(variant.get(key)) in by_value:
                return by_value[_spelled(variant.get(key))]
        return self.points


def _spelled(value: Any) -> str:
    """A variant's value as --set and assignment.toml spell it (true, not True)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


@dataclass
class AssignmentSpec:
    """What assignment.toml says."""

    name: str
    title: str
    path: Path
    files: tuple[str, ...]
    reference_package: str | None  # the plugin's, unless assignment.toml's `reference` overrides it
    preload: tuple[str, ...]
    variants: dict[str, Variant]
    templates: dict[str, Path]
    limits: dict
    checks: dict[str, CheckConfig]
    # Library APIs students may not use (dotted paths; a trailing * matches
    # any last name), and other paths that reach each of them.
    forbidden: tuple[str, ...] = ()
    forbidden_also: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # The operators of torch's dispatcher behind each forbidden API ("aten::native_layer_norm";
    # a * or ? matches within the name): blocked in the sandbox, whatever Python path reaches them.
    forbidden_operators: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # What a check that needs CUDA becomes without it, unless the check says.
    when_absent: str = "not_counted"
    # The package a student bundle carries (the plugin's public scenarios and judges), if any.
    public_package: str | None = None
    # The other installed assignments' reference folders: hidden from the sandbox as this one's is.
    hidden: tuple[Path, ...] = ()
    # Where the hidden checks draw their cases from: the course secret, or each student's own seed (`hidden_inputs`).
    hidden_inputs: str = COURSE
    # Wall-clock seconds one submission's whole grading may take; the checks not graded by then say so.
    grading_budget_s: float = DEFAULT_GRADING_BUDGET_S

    @property
    def root(self) -> Path:
        return self.path.parent

    @property
    def server_modules(self) -> list[str]:
        """What every fork server imports before its first run: numpy, and assignment.toml's preload."""
        return ["numpy", *self.preload]

    def reference_folder(self) -> Path:
        """The folder of the reference package, which holds one file per submitted file."""
        if self.reference_package is None:
            raise ModuleNotFoundError(
                f"{self.path}: neither the plugin nor [assignment] reference names the reference package"
            )
        return package_folder(self.reference_package)

    def resolve_variant(self, settings: dict[str, str]) -> dict[str, Any]:
        """The variant from ``--set KEY=VALUE`` strings, defaults filled in."""
        chosen = {name: v.default for name, v in self.variants.items()}
        for key, raw in settings.items():
            if key not in self.variants:
                known = ", ".join(self.variants) or "none"
                raise AssignmentError(f"{self.name} has no variant {key!r} (variants: {known})")
            variant = self.variants[key]
            value = _parse_setting(raw, variant.default)
            if variant.choices and value not in variant.choices:
                raise AssignmentError(f"{key}={raw}: choose one of {', '.join(map(str, variant.choices))}")
            chosen[key] = value
        return chosen


def _parse_setting(raw: str, default: Any) -> Any:
    if isinstance(default, bool):
        lowered = raw.lower()
        if lowered in ("true", "1", "yes", "on"):
            return True
        if lowered in ("false", "0", "no", "off"):
            return False
        raise AssignmentError(f"expected true or false, got {raw!r}")
    if isinstance(default, int):
        try:
            return int(raw)
        except ValueError:
            raise AssignmentError(f"expected an integer, got {raw!r}") from None
    if isinstance(default, float):
        try:
            return float(raw)
        except ValueError:
            raise AssignmentError(f"expected a number, got {raw!r}") from None
    return raw


class _Reader:
    """Typed access to one TOML table with errors that name the file and key."""

    def __init__(self, path: Path, table: dict, section: str):
        self.path, self.table, self.section = path, table, section

    def error(self, key: str | None, problem: str) -> AssignmentError:
        where = f"[{self.section}]" + (f" {key}" if key else "")
        return AssignmentError(f"{self.path}: {where}: {problem}")

    def only(self, allowed: set[str]) -> None:
        for key in self.table:
            if key not in allowed:
                raise self.error(key, f"unknown key (allowed: {', '.join(sorted(allowed))})")

    def get(self, key: str, kind: type | tuple, default: Any = ..., *, required: bool = False) -> Any:
        if key not in self.table:
            if required:
                raise self.error(key, "missing")
            return default
        value = self.table[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
            names = " or ".join(k.__name__ for k in kinds)
            raise self.error(key, f"expected {names}, got {type(value).__name__} {value!r}")
        return value

    def sub(self, key: str) -> _Reader:
        value = self.get(key, dict, {})
        return _Reader(self.path, value, f"{self.section}.{key}" if self.section else key)


def _limits(reader: _Reader) -> dict:
    reader.only(set(_LIMIT_KEYS))
    out = {}
    for key in reader.table:
        value = reader.get(key, (int, float))
        if value <= 0:
            raise reader.error(key, f"must be positive, got {value!r}")
        out[key] = value
    return out


def load_assignment(path: Path) -> AssignmentSpec:
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise AssignmentError(f"{path}: no such file") from None
    except tomllib.TOMLDecodeError as exc:
        raise AssignmentError(f"{path}: not valid TOML: {exc}") from None
    top = _Reader(path, data, "")
    top.only({"assignment", "variants", "templates", "limits", "checks", "forbidden", "gpu"})

    meta = top.sub("assignment")
    meta.only({"name", "title", "files", "reference", "preload", "hidden_inputs", "grading_budget_s"})
    budget = meta.get("grading_budget_s", (int, float), DEFAULT_GRADING_BUDGET_S)
    if not budget > 0:
        raise meta.error("grading_budget_s", f"expected a number of seconds above 0, got {budget!r}")
    name = meta.get("name", str, required=True)
    if name != path.parent.name:
        raise meta.error("name", f"{name!r} must match the folder name {path.parent.name!r}")
    files = meta.get("files", list, required=True)
    if not files or not all(isinstance(f, str) and f.endswith(".py") and "/" not in f for f in files):
        raise meta.error("files", "expected a non-empty list of .py file names")
    preload = meta.get("preload", list, [])
    if not all(isinstance(m, str) for m in preload):
        raise meta.error("preload", "expected a list of module names")

    variants = {}
    vtable = top.sub("variants")
    for vname in vtable.table:
        v = vtable.sub(vname)
        v.only({"default", "choices", "help"})
        default = v.get("default", (str, bool, int, float), required=True)
        choices = tuple(v.get("choices", list, []))
        if choices and default not in choices:
            raise v.error("default", f"{default!r} is not one of the choices {list(choices)}")
        variants[vname] = Variant(vname, default, choices)

    templates = {}
    ttable = top.sub("templates")
    for output, template in ttable.table.items():
        template = ttable.get(output, str)
        tpath = path.parent / template
        if not tpath.is_file():
            raise ttable.error(output, f"template {template!r} does not exist ({tpath})")
        templates[output] = tpath
    missing_stubs = [f for f in files if f not in templates]
    if missing_stubs:
        raise ttable.error(None, f"no template for the submitted file(s) {', '.join(missing_stubs)}")

    limits_reader = top.sub("limits")
    limits = _limits(limits_reader)

    checks = {}
    ctable = top.sub("checks")
    for cname in ctable.table:
        c = ctable.sub(cname)
        c.only({"points", "visibility", "limits", "device", "when_absent", "only", "points_when"})
        points = c.get("points", (int, float), None)
        if points is not None and points < 0:
            raise c.error("points", f"must be >= 0, got {points!r}")
        only = _by_variant(
            c.sub("only"), variants, lambda r, key, value: r.get(key, list), "a list of the variant's values"
        )
        points_when = _by_variant(c.sub("points_when"), variants, _points_by_value, "a table {value = points}")
        visibility = c.get("visibility", str, None)
        if visibility is not None and visibility not in VISIBILITIES:
            raise c.error("visibility", f"{visibility!r} is not one of {', '.join(VISIBILITIES)}")
        climits = c.sub("limits")
        checks[cname] = CheckConfig(
            points,
            visibility,
            _limits(climits),
            _choice(c, "device", DEVICES),
            _choice(c, "when_absent", WHEN_ABSENT),
            only,
            points_when,
        )

    gpu = top.sub("gpu")
    gpu.only({"when_absent"})

    forbidden, forbidden_also, forbidden_operators = _forbidden(top.sub("forbidden"))

    return AssignmentSpec(
        name=name,
        title=meta.get("title", str, name),
        path=path,
        files=tuple(files),
        reference_package=meta.get("reference", str, None),
        preload=tuple(preload),
        variants=variants,
        templates=templates,
        limits=limits,
        checks=checks,
        forbidden=forbidden,
        forbidden_also=forbidden_also,
        forbidden_operators=forbidden_operators,
        when_absent=_choice(gpu, "when_absent", WHEN_ABSENT) or "not_counted",
        hidden_inputs=_choice(meta, "hidden_inputs", HIDDEN_INPUTS) or COURSE,
        grading_budget_s=float(budget),
    )


def _by_variant(table: _Reader, variants: dict[str, Variant], read, expected: str) -> dict:
    """{variant: what `read` gives for it}, each value checked against the variant's choices."""
    out = {}
    for key in table.table:
        if key not in variants:
            raise table.error(key, f"no such variant (variants: {', '.join(variants) or 'none'})")
        value = read(table, key, variants[key])
        spelled = {_spelled(choice) for choice in variants[key].choices}
        listed = value if isinstance(value, list) else list(value)
        strangers = [v for v in listed if not isinstance(v, str) or spelled and v not in spelled]
        if strangers or not listed:
            raise table.error(
                key, f"expected {expected}, with values among {', '.join(sorted(spelled))}; got {value!r}"
            )
        out[key] = tuple(value) if isinstance(value, list) else value
    return out


def _points_by_value(table: _Reader, key: str, variant: Variant) -> dict[str, float]:
    by_value = table.sub(key)
    for value in by_value.table:
        points = by_value.get(value, (int, float))
        if points < 0:
            raise by_value.error(value, f"must be >= 0, got {points!r}")
    return {value: float(points) for value, points in by_value.table.items()}


def _choice(table: _Reader, key: str, choices: tuple[str, ...]) -> str | None:
    value = table.get(key, str, None)
    if value is not None and value not in choices:
        raise table.error(key, f"{value!r} is not one of {', '.join(choices)}")
    return value


def _dotted(value) -> bool:
    return isinstance(value, str) and all(part.isidentifier() for part in value.removesuffix("*").split("."))


def _operator(value) -> bool:
    """Whether `value` names dispatcher operators: "namespace::name", * and ? allowed in the name."""
    return isinstance(value, str) and re.fullmatch(r"[A-Za-z_]\w*::[A-Za-z_*?][\w*?]*", value) is not None


def _forbidden(
    table: _Reader,
) -> tuple[tuple[str, ...], dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    table.only({"apis", "also", "operators"})
    apis = table.get("apis", list, [])
    if not all(_dotted(a) for a in apis):
        raise table.error("apis", "expected a list of dotted names such as 'torch.nn.LayerNorm'")
    also = _per_api(table.sub("also"), apis, lambda p: _dotted(p) and not p.endswith("*"), "dotted names")
    operators = _per_api(table.sub("operators"), apis, _operator, "operator names such as 'aten::native_layer_norm'")
    return tuple(apis), also, operators


def _per_api(table: _Reader, apis: list[str], valid, expected: str) -> dict[str, tuple[str, ...]]:
    """{forbidden api: the list of names the table gives it}, each name checked by `valid`."""
    out = {}
    for api in table.table:
        if api not in apis:
            raise table.error(api, f"{api!r} is not one of the forbidden apis")
        names = table.get(api, list)
        if not all(valid(n) for n in names):
            raise table.error(api, f"expected a list of {expected}")
        out[api] = tuple(names)
    return out


@dataclass
class Assignment:
    """An assignment with its checks resolved: what `grade` runs.

    `device` is None until the process that grades binds one (`on`): until
    then a check that needs CUDA says so, whatever this machine has.
    """

    spec: AssignmentSpec
    checks: list[Check]
    device: str | None = None

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def needs_cuda(self) -> bool:
        return any(c.device == "cuda" for c in self.checks)

    def on(self, requested: str = "auto") -> Assignment:
        """The assignment as this machine grades it, for --device `requested` (auto, cpu, cuda).

        Raises `DeviceError` for cuda where there is none. An assignment
        with no CUDA check is bound to the CPU without asking (or importing
        torch). Binding a bound assignment again keeps its device if
        `requested` is auto or that device.
        """
        if self.device is not None:
            if requested not in ("auto", self.device):
                raise ValueError(f"{self.name} is bound to {self.device}, not {requested}")
            return self
        device = resolve_device(requested) if self.needs_cuda else "cpu"
        return replace(self, checks=[on_device(c, device) for c in self.checks], device=device)

    def check_module_files(self) -> dict[str, Path]:
        """Each check's name and the file of the module its scenario comes from (those loaded from a file)."""
        files = {}
        for check in self.checks:
            module = sys.modules.get(check.scenario.__module__)
            if module is not None and getattr(module, "__file__", None):
                files[check.name] = Path(module.__file__)
        return files


def bind(spec: AssignmentSpec, provided: list[Check], variant: dict[str, Any] | None = None) -> Assignment:
    """Apply assignment.toml's points, visibility, limits and devices to the plugins' checks.

    Checks keep the order of assignment.toml; checks that only a plugin names
    (a third-party addition) follow, with the plugin's points, visibility and
    limits. A check's points come from one place, assignment.toml or its Check
    (`_points`). `variant` (the defaults if None) leaves out the checks
    assignment.toml gives to other variants (`only`) and picks each check's
    points in it (`points_when`). The result is bound to no device yet
    (`Assignment.on`).
    """
    by_name: dict[str, Check] = {}
    for check in provided:
        if check.name in by_name:
            raise AssignmentError(f"two plugins provide a check named {check.name!r} for {spec.name}")
        by_name[check.name] = check
    if variant is None:
        variant = {v.name: v.default for v in spec.variants.values()}
    elsewhere = {name for name, config in spec.checks.items() if not config.applies(variant)}
    unknown = [name for name in spec.checks if name not in by_name and name not in elsewhere]
    if unknown:
        raise AssignmentError(
            f"{spec.path}: [checks.{unknown[0]}]: no plugin provides a check of that name "
            f"(known: {', '.join(sorted(by_name)) or 'none'})"
        )
    ordered = [n for n in spec.checks if n in by_name and n not in elsewhere] + [
        n for n in by_name if n not in spec.checks
    ]
    checks = []
    for name in ordered:
        check = by_name[name]
        config = spec.checks.get(name, CheckConfig())
        strangers = [f for f in check.files if f not in spec.files]
        if strangers:
            raise AssignmentError(
                f"the check {name!r} of {spec.name} imports {strangers[0]!r}, which is not "
                f"among the files of {spec.path} ({', '.join(spec.files)})"
            )
        limits = {**check.limits.as_dict(), **spec.limits, **config.limits}
        bound = replace(
            check,
            files=check.files or spec.files,
            points=_points(spec, check, config, variant),
            visibility=config.visibility or check.visibility,
            limits=Limits(**limits),
            device=config.device or check.device,
            when_absent=config.when_absent or spec.when_absent,
        )
        checks.append(bound)
    return Assignment(spec, checks)


def _points(spec: AssignmentSpec, check: Check, config: CheckConfig, variant: dict[str, Any]) -> float:
    """The check's points, from the one place that sets them: assignment.toml's [checks.NAME], else the Check."""
    where = f"{spec.path}: [checks.{check.name}]"
    if config.points is None and not config.points_when:
        if check.points is None:
            raise AssignmentError(
                f"{spec.path}: the check {check.name!r} has no points: give them in [checks.{check.name}] "
                "(points = N), or in the plugin's Check(points=N)"
            )
        return float(check.points)
    if check.points is not None:
        raise AssignmentError(
            f"{where} points: the plugin's Check({check.name!r}) sets points={check.points:g} too; a check's "
            "points are set in one place: keep them here and remove the Check's points, or the reverse"
        )
    points = config.points_in(variant)
    if points is None:
        chosen = ", ".join(f"{key} = {_spelled(variant.get(key))}" for key in config.points_when)
        raise AssignmentError(f"{where} points_when: no points for {chosen}, and no `points` for the other variants")
    return float(points)


def on_device(check: Check, device: str) -> Check:
    """The check as this machine runs it: on CUDA where it needs it and there is one, else its policy."""
    if check.device != "cuda" or device == "cuda":
        return check
    if check.when_absent == "cpu":
        return replace(check, device="cpu")
    return replace(
        check,
        points=0.0,
        unavailable=(
            "not run: this check needs a CUDA GPU and this run has none (no GPU found, or --device cpu); "
            "it is not counted here and is graded on a GPU machine"
        ),
    )

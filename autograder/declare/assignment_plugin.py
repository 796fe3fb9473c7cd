"""One assignment's plugin in one declaration.

    plugin = AssignmentPlugin(
        "ngram",
        package=__name__,                        # the plugin's own package
        folder="lmgrade.assignments.ngram",      # assignment.toml and the templates
        reference="lmgrade.reference.ngram",     # the reference solution, one module per submitted file
        checks=".checks:ngram_checks",           # imported when first asked for
        bugs=".bugs:BUGS",
    )

and, in the distribution's pyproject.toml, an entry point of the `lmgrade`
group naming it (``ngram = "lmgrade.plugins.ngram:plugin"``): the built-in
assignments are found exactly as an installed package's are.

Locations are package names (a leading dot: inside `package`), so the
assignment's files are found wherever pip put them, or a `Path`. Its hooks
answer for its own assignment only. What a student bundle of the assignment
carries is the `public` subpackage of `package` (scenarios, judges), and
nothing else of it; the reviewed equivalent mutants are
``equivalent_mutants.toml`` beside the package's ``__init__.py`` unless
named.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .hookspecs import hookimpl


@dataclass(frozen=True)
class AssignmentSource:
    """Where one assignment lives: what the `lmgrade_assignments` hook returns for it."""

    folder: Path
    """The folder of assignment.toml and its templates; the folder's name is the assignment's."""
    reference: str | None = None
    """The reference package, one module per submitted file (assignment.toml's `reference` overrides it)."""
    public: str | None = None
    """The package a student bundle carries (scenarios, judges), if any."""


def package_folder(name: str) -> Path:
    """The folder of package `name` (a regular or a namespace package), wherever it is installed."""
    try:
        spec = importlib.util.find_spec(name)
    except ModuleNotFoundError:
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(f"no package named {name!r}")
    return Path(list(spec.submodule_search_locations)[0])


class AssignmentPlugin:
    """The hooks of one assignment, from where its parts are (see the module docstring).

    An entry point of the `lmgrade` group names the object; it implements `lmgrade_assignments`,
    `lmgrade_checks`, `lmgrade_bugs` and `lmgrade_equivalent_mutants` for its own assignment only.
    Nothing named by a "module:name" string is imported before lmgrade asks for it, so listing the
    assignments imports no torch.

    Args:
        name: the assignment's name: the name of its folder and assignment.toml's `[assignment] name`.
        package: the plugin's own package (`__name__` in its `__init__.py`): locations with a leading dot
            are inside it, and its `public` subpackage is what a student bundle carries.
        folder: the folder of assignment.toml and the templates: a `Path`, or a package name
            (`"lmgrade.assignments.ngram"`, `".ngram"`).
        reference: the reference solution's package, one module per submitted file; assignment.toml's
            `[assignment] reference` overrides it.
        checks: a function of the variant (`{"activation": "tanh"}`), or of nothing where every variant has
            the same checks, returning a list of `Check`; or a "module:name" string naming one.
        bugs: the catalogue of realistic bugs, `{name: Bug}`: a dict, a function of nothing returning one,
            or a "module:name" string; None: no catalogue.
        equivalent_mutants: the TOML file of the reviewed equivalent mutants (`lmgrade mutants`); None:
            `equivalent_mutants.toml` beside the package's `__init__.py`, where there is one.
        public: the subpackage of `package` that a student bundle carries (scenarios, judges, never
            checks, mistakes or bugs); None: the bundle carries nothing of the plugin.
    """

    def __init__(
        self,
        name: str,
        *,
        package: str,
        folder: str | Path,
        reference: str,
        checks: str | Callable[..., list],
        bugs: str | Callable[[], dict] | dict | None = None,
        equivalent_mutants: Path | None = None,
        public: str | None = "public",
    ):
        self.name, self.package = name, package
        self.reference = self._absolute(reference)
        self.public = f"{package}.{public}" if public else None
        self._folder, self._checks, self._bugs, self._mutants = folder, checks, bugs, equivalent_mutants

    def __repr__(self) -> str:
        return f"AssignmentPlugin({self.name!r}, package={self.package!r})"

    def _absolute(self, name: str) -> str:
        return importlib.util.resolve_name(name, self.package) if name.startswith(".") else name

    def _load(self, ref: Any) -> Any:
        """A "module:attribute" reference, imported; anything else as it is."""
        if not isinstance(ref, str):
            return ref
        module, _, attribute = ref.partition(":")
        value = importlib.import_module(self._absolute(module))
        for part in filter(None, attribute.split(".")):
            value = getattr(value, part)
        return value

    def _path(self, location: str | Path) -> Path:
        return location if isinstance(location, Path) else package_folder(self._absolute(location))

    def folder(self) -> Path:
        """The assignment's folder, wherever it is installed."""
        return self._path(self._folder)

    def has_public(self) -> bool:
        """Whether the package a student bundle carries exists."""
        return self.public is not None and importlib.util.find_spec(self.public) is not None

    @hookimpl
    def lmgrade_assignments(self) -> list[AssignmentSource]:
        return [AssignmentSource(self.folder(), self.reference, self.public if self.has_public() else None)]

    @hookimpl
    def lmgrade_checks(self, assignment: str, variant: dict) -> list:
        if assignment != self.name:
            return []
        make = self._load(self._checks)
        # A function of the variant, or of nothing where the checks are the same in every variant.
        return list(make(variant) if inspect.signature(make).parameters else make())

    @hookimpl
    def lmgrade_bugs(self, assignment: str) -> dict:
        if assignment != self.name or self._bugs is None:
            return {}
        bugs = self._load(self._bugs)
        return dict(bugs() if callable(bugs) else bugs)

    @hookimpl
    def lmgrade_equivalent_mutants(self, assignment: str) -> list[Path]:
        if assignment != self.name:
            return []
        if self._mutants is not None:
            return [Path(self._mutants)]
        path = package_folder(self.package) / "equivalent_mutants.toml"
        return [path] if path.is_file() else []

"""torch, an optional requirement: which assignments need it, and what to install where it is missing.

`pip install lmgrade` brings the harness and the numpy assignments; torch comes with lmgrade's
`torch` extra (``pip install 'lmgrade[torch]'``), with an assignment package that requires it, or
with the student bundle of an assignment that needs it. A process that grades an assignment whose
fork servers or reference import torch needs torch itself; where it is missing, one line says so and
names what to install, before anything runs (`require`).
"""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import re
import sys

from .assignment import AssignmentError, AssignmentSpec

TORCH = "torch"
PROJECT = "lmgrade"
EXTRA = "torch"  # pyproject.toml's [project.optional-dependencies]: pip install 'lmgrade[torch]'
_EXTRA_MARKER = re.compile(r"""\bextra\s*==\s*['"]([^'"]+)['"]""")


class TorchMissing(AssignmentError):
    """An assignment that needs torch, graded where torch cannot be imported: the command line says it in
    one line, as it says an assignment's other errors (exit status 2)."""


def available() -> bool:
    """Whether `import torch` can work in this environment (without importing it: a second of CPU)."""
    if TORCH in sys.modules:
        return sys.modules[TORCH] is not None  # None: its import is blocked
    return importlib.util.find_spec(TORCH) is not None


def needs(spec: AssignmentSpec, distribution: str | None = None) -> bool:
    """Whether grading `spec` imports torch: its fork servers preload it, its reference imports it, or
    `distribution` (the package that provides it, or a student bundle) requires it."""
    if any(module.partition(".")[0] == TORCH for module in spec.preload):
        return True
    if distribution and distribution != PROJECT and _requirement_of(distribution, extras=False):
        return True
    return TORCH in _reference_imports(spec)


def install_hint(distribution: str | None = None) -> str:
    """The requirement to install for torch: that of the package providing the assignment where it names
    one (an assignment package, a student bundle's wheel), else lmgrade's extra."""
    if distribution and distribution != PROJECT:
        declared = _requirement_of(distribution)
        if declared:
            return declared
    return f"{PROJECT}[{EXTRA}]"


def missing_message(name: str, distribution: str | None = None) -> str:
    """The one line said where assignment `name` needs torch and torch is missing."""
    return f"assignment {name} needs torch: pip install '{install_hint(distribution)}'"


def require(spec: AssignmentSpec, distribution: str | None = None) -> None:
    """Raise `TorchMissing` where grading `spec` needs torch and it cannot be imported here."""
    if not available() and needs(spec, distribution):
        raise TorchMissing(missing_message(spec.name, distribution))


def declared(requirements: list[str]) -> str | None:
    """The requirement naming torch among a distribution's Requires-Dist lines (its `torch` extra or its
    own), without the marker: "torch>=2.1"."""
    for line in requirements:
        requirement, _, marker = line.partition(";")
        if _name(requirement) == TORCH and (not marker.strip() or _EXTRA_MARKER.search(marker)):
            return requirement.strip()
    return None


def lmgrade_requirement() -> str:
    """lmgrade's own torch requirement (its extra), as installed here; "torch" where it names none."""
    try:
        return declared(importlib.metadata.requires(PROJECT) or []) or TORCH
    except importlib.metadata.PackageNotFoundError:
        return TORCH


def _requirement_of(distribution: str, extras: bool = True) -> str | None:
    """How `distribution` asks for torch: its own requirement ("torch>=2.1,<2.14"), or (with `extras`)
    the extra that brings it ("package[torch]"); None where it does not."""
    try:
        lines = importlib.metadata.requires(distribution) or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for line in lines:
        requirement, _, marker = line.partition(";")
        if _name(requirement) != TORCH:
            continue
        extra = _EXTRA_MARKER.search(marker)
        if extra is None:
            return requirement.strip()
        if extras:
            return f"{distribution}[{extra.group(1)}]"
    return None


def _name(requirement: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    return re.sub(r"[-_.]+", "-", match.group(1)).lower() if match else ""


def _reference_imports(spec: AssignmentSpec) -> set[str]:
    """The top-level modules the reference's files import (none where the reference is not installed)."""
    try:
        folder = spec.reference_folder()
    except ModuleNotFoundError:
        return set()
    names: set[str] = set()
    for filename in spec.files:
        try:
            tree = ast.parse((folder / filename).read_text(encoding="utf-8"))
        except (OSError, SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(alias.name.partition(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names.add(node.module.partition(".")[0])
    return names


def missing_for(names: list[str]) -> dict[str, str]:
    """{name: `missing_message`} for those of the installed assignments `names` that need torch, where it
    is missing (none where it is installed)."""
    if available():
        return {}
    from . import catalog  # the plugins are loaded only here

    found = catalog.sources()
    return {
        name: missing_message(name, found[name].distribution)
        for name in names
        if needs(catalog.load_spec(name), found[name].distribution)
    }

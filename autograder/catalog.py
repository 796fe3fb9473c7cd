"""Find assignments through the plugins and bind them to their checks."""

from __future__ import annotations

from pathlib import Path

import pluggy

from .device import resolve as resolve_device
from .assignment import Assignment, AssignmentError, AssignmentSpec, bind, load_assignment
from .plugin_manager import get_manager


def assignment_folders(pm: pluggy.PluginManager | None = None) -> dict[str, Path]:
    pm = pm or get_manager()
    found: dict[str, Path] = {}
    for folders in pm.hook.lmgrade_assignments():
        for folder in folders or []:
            folder = Path(folder)
            if folder.name in found and found[folder.name] != folder:
                raise AssignmentError(f"two plugins provide an assignment named {folder.name!r}: "
                                      f"{found[folder.name]} and {folder}")
            found[folder.name] = folder
    return dict(sorted(found.items()))


def load_spec(name: str, pm: pluggy.PluginManager | None = None) -> AssignmentSpec:
    folders = assignment_folders(pm)
    if name not in folders:
        raise AssignmentError(f"unknown assignment {name!r} (available: {', '.join(folders) or 'none'})")
    return load_assignment(folders[name] / "assignment.toml")


def as_setting(value) -> str:
    """A variant's value as --set spells it (true, not True)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def variant_settings(name: str, pm: pluggy.PluginManager | None = None) -> list[dict[str, str]]:
    """The default variant ({}), then each other choice of each variant, as --set settings."""
    spec = load_spec(name, pm)
    out: list[dict[str, str]] = [{}]
    for variant in spec.variants.values():
        out += [{variant.name: as_setting(choice)} for choice in variant.choices if choice != variant.default]
    return out


def load(name: str, settings: dict[str, str] | None = None,
         pm: pluggy.PluginManager | None = None, device: str = "auto",
         graded_here: bool = True) -> tuple[Assignment, dict]:
    """The assignment `name` with the variant chosen by ``--set`` settings, for `device` (auto, cpu, cuda).

    `graded_here=False` is for a client whose workers grade (a Dask
    regrade): "cuda" is taken as asked, for the workers to have.
    """
    pm = pm or get_manager()
    spec = load_spec(name, pm)
    variant = spec.resolve_variant(settings or {})
    provided = [c for checks in pm.hook.lmgrade_checks(assignment=name, variant=variant) for c in checks or []]
    wants_cuda = any(c.device == "cuda" for c in provided) or any(
        config.device == "cuda" for config in spec.checks.values())
    if not wants_cuda:
        return bind(spec, provided, "cpu", variant), variant
    return bind(spec, provided, device if device == "cuda" and not graded_here else resolve_device(device),
                variant), variant


def bugs(name: str, pm: pluggy.PluginManager | None = None) -> dict:
    """The catalogue of realistic bugs of assignment `name`, from every plugin."""
    pm = pm or get_manager()
    found: dict = {}
    for contributed in pm.hook.lmgrade_bugs(assignment=name):
        for key, bug in (contributed or {}).items():
            if key in found:
                raise AssignmentError(f"two plugins provide a bug named {key!r} for {name}")
            found[key] = bug
    return found

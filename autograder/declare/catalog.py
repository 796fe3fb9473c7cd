"""Find assignments through the plugins and bind them to their checks."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import pluggy

from ..core.selection import Selection, as_setting
from .assignment import Assignment, AssignmentError, AssignmentSpec, bind, load_assignment
from .assignment_plugin import AssignmentSource, package_folder
from .plugin_manager import distribution_of, get_manager


@dataclass(frozen=True)
class Found:
    """An assignment as a plugin provides it, and the distribution that plugin comes from."""

    source: AssignmentSource
    distribution: str | None  # None: a plugin registered by hand, not through an entry point


def sources(pm: pluggy.PluginManager | None = None) -> dict[str, Found]:
    """{assignment name: where it lives and which distribution provides it}, by name."""
    pm = pm or get_manager()
    found: dict[str, Found] = {}
    for impl in pm.hook.lmgrade_assignments.get_hookimpls():
        for given in impl.function() or []:
            source = given if isinstance(given, AssignmentSource) else AssignmentSource(Path(given))
            source = replace(source, folder=Path(source.folder))
            name = source.folder.name
            if name in found and found[name].source.folder != source.folder:
                raise AssignmentError(
                    f"two plugins provide an assignment named {name!r}: {found[name].source.folder} and {source.folder}"
                )
            found[name] = Found(source, distribution_of(pm, impl.plugin))
    return dict(sorted(found.items()))


def assignment_folders(pm: pluggy.PluginManager | None = None) -> dict[str, Path]:
    return {name: found.source.folder for name, found in sources(pm).items()}


def load_spec(name: str, pm: pluggy.PluginManager | None = None) -> AssignmentSpec:
    """What assignment.toml says, with the reference and public packages its plugin declares."""
    found = sources(pm)
    if name not in found:
        raise AssignmentError(f"unknown assignment {name!r} (available: {', '.join(found) or 'none'})")
    source = found[name].source
    spec = load_assignment(source.folder / "assignment.toml")
    return replace(
        spec,
        reference_package=spec.reference_package or source.reference,
        public_package=source.public,
        hidden=tuple(
            folder
            for key, other in found.items()
            if key != name and (folder := _reference_folder(other.source)) is not None
        ),
    )


def _reference_folder(source: AssignmentSource) -> Path | None:
    """Where another assignment's reference is installed (None: it is not: nothing there to hide)."""
    if source.reference is None:
        return None
    try:
        return package_folder(source.reference)
    except ModuleNotFoundError:
        return None


def variants(name: str, pm: pluggy.PluginManager | None = None) -> list[Selection]:
    """The default variant, then each other choice of each variant, one setting each."""
    spec = load_spec(name, pm)
    out = [Selection(name)]
    for variant in spec.variants.values():
        out += [
            Selection(name, {variant.name: as_setting(choice)})
            for choice in variant.choices
            if choice != variant.default
        ]
    return out


def load(selection: Selection | str, pm: pluggy.PluginManager | None = None) -> tuple[Assignment, dict]:
    """The assignment and resolved variant `selection` names (a bare name: its default variant).

    The checks are bound to no device: the process that grades binds them
    (`Assignment.on`), so a Dask client hands workers what they resolve on
    their own machines.
    """
    if isinstance(selection, str):
        selection = Selection(selection)
    pm = pm or get_manager()
    spec = load_spec(selection.assignment, pm)
    variant = spec.resolve_variant(selection.chosen)
    provided = [c for checks in pm.hook.lmgrade_checks(assignment=spec.name, variant=variant) for c in checks or []]
    return bind(spec, provided, variant), variant


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

"""The plugin manager: every plugin, the built-in assignments included, found through its entry point.

lmgrade's own pyproject.toml declares the built-in assignments in the
`lmgrade` entry-point group exactly as an installed assignment package
declares its own, so nothing here names an assignment.
"""

from __future__ import annotations

from functools import lru_cache

import pluggy

from . import hookspecs

GROUP = "lmgrade"


def make_manager(load_entry_points: bool = True) -> pluggy.PluginManager:
    """A manager with the hooks; with every installed plugin unless `load_entry_points` is False (tests)."""
    pm = pluggy.PluginManager(GROUP)
    pm.add_hookspecs(hookspecs)
    if load_entry_points:
        pm.load_setuptools_entrypoints(GROUP)
    return pm


def distribution_of(pm: pluggy.PluginManager, plugin: object) -> str | None:
    """The name of the distribution whose entry point registered `plugin` (None: registered by hand)."""
    for registered, dist in pm.list_plugin_distinfo():
        if registered is plugin:
            return dist.metadata["name"]
    return None


@lru_cache(maxsize=1)
def get_manager() -> pluggy.PluginManager:
    return make_manager()

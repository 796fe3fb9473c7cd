"""Import the files of a submission, or of the reference, as one group.

A student's `model.py` says ``from layers import TransformerBlock``: the
files of an assignment import each other by their bare names. Each file is
therefore imported under its own name (``layers.py`` as ``layers``), with a
finder that resolves those names to the group's files first, so sibling
imports find the group's own modules and never another copy.

The sandboxed child keeps the modules in ``sys.modules`` (it is thrown
away); the grading process loads the reference and its flawed copies many
times over and gives the bare names back afterwards.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

# sys.modules is shared by every thread of the grading process.
_LOCK = threading.RLock()


class _GroupFinder(importlib.abc.MetaPathFinder):
    def __init__(self, paths: dict[str, Path]):
        self.paths = paths

    def find_spec(self, name, path=None, target=None):
        if name in self.paths:
            return importlib.util.spec_from_file_location(name, self.paths[name])
        return None


def module_name(filename: str) -> str:
    """The name a submitted file is imported under: ``ngram.py`` -> ``ngram``."""
    return Path(filename).stem


def load_files(folder: Path, files: Sequence[str], *, keep: bool = False) -> dict[str, ModuleType]:
    """{module name: module} for `files` in `folder`, imported fresh, in order.

    With ``keep=False`` the bare names are removed from ``sys.modules``
    afterwards (what was there before is put back); the returned modules
    still refer to each other.
    """
    paths = {module_name(f): Path(folder) / f for f in files}
    with _LOCK:
        saved = {name: sys.modules.pop(name) for name in paths if name in sys.modules}
        finder = _GroupFinder(paths)
        sys.meta_path.insert(0, finder)
        try:
            return {name: importlib.import_module(name) for name in paths}
        finally:
            sys.meta_path.remove(finder)
            if not keep:
                for name in paths:
                    sys.modules.pop(name, None)
                sys.modules.update(saved)


def import_probe(modules: dict[str, ModuleType], args) -> dict[str, list[str]]:
    """A scenario that only imports the files: the public names each one defines."""
    return {name: sorted(n for n in vars(module) if not n.startswith("_")) for name, module in modules.items()}

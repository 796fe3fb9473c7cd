"""Run only where this checkout's folder is named `lmgrade` and Python looks in its parent folder first.

`python -m ...` and pytest put the current folder first on the path, so from the parent of a checkout named
`lmgrade`, `import lmgrade` finds the checkout's folder before the installed package (which is the folder
autograder/: pyproject.toml's package-dir). Without this file the folder would be taken for an empty
namespace package, and every import from lmgrade would fail far from its cause ("cannot import name
'AssignmentPlugin' from 'lmgrade' (unknown location)"). With it, the installed lmgrade is loaded in its
place, and the clash is said in one line; where no lmgrade is installed, the ImportError says why.
"""

import importlib.machinery
import importlib.util
import sys
from pathlib import Path

_CHECKOUT = Path(__file__).resolve().parent


def _installed_spec():
    """The installed lmgrade's spec: from the path without the checkout's parent, or an editable install's
    own finder."""
    elsewhere = [entry for entry in sys.path if Path(entry or ".").resolve() != _CHECKOUT.parent]
    spec = importlib.machinery.PathFinder.find_spec(__name__, elsewhere)
    if spec is not None and spec.origin not in (None, __file__):
        return spec
    for finder in sys.meta_path:
        if finder is importlib.machinery.PathFinder or not hasattr(finder, "find_spec"):
            continue
        spec = finder.find_spec(__name__, None)
        if spec is not None and spec.origin not in (None, __file__):
            return spec
    return None


if __name__ == "lmgrade":  # a checkout under another name is never imported as a package
    _spec = _installed_spec()
    if _spec is None:
        raise ImportError(
            f"{_CHECKOUT} is a checkout of lmgrade's source, not the package, and no lmgrade is installed: "
            "install it (pip install -e THE_CHECKOUT) and run from another folder than the checkout's parent"
        )
    print(
        f"lmgrade: the folder {_CHECKOUT} (lmgrade's source) shadows the installed package in this folder; "
        f"the installed one is used ({Path(_spec.origin).parent}): run from another folder to silence this",
        file=sys.stderr,
    )
    _installed = importlib.util.module_from_spec(_spec)
    sys.modules[__name__] = _installed  # what `import lmgrade` returns once this file has run
    _spec.loader.exec_module(_installed)

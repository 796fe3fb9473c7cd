"""Forbidden library APIs, stopped when called.

An assignment may forbid the library's own version of what students write
(``torch.nn.LayerNorm`` in a LayerNorm assignment). The static scan
(`lmgrade.boundary.forbidden`) finds most uses in the source; this guard catches the
rest at run time: the fork server replaces each forbidden object, wherever
the library's modules expose it (``torch.layer_norm`` is the same function as
``torch.nn.functional.layer_norm`` under another name), by one that records
the call and raises. The child then tells the grading process which
forbidden APIs a case called, also when the submission caught the exception.

The operators behind each forbidden API are blocked at torch's dispatcher
too (`operators.py`), so that no other Python path reaches the same work;
those blocks report through the same record, naming the API and the operator.

Installed in the fork server, which never runs student code or the
reference, so each child starts with the guards in place and an empty record.
"""

from __future__ import annotations

import fnmatch
import importlib
import sys
from collections.abc import Iterable, Mapping
from typing import Any

from . import operators as _operators

# What each child's cases called, in order; reset before every case.
calls: list[str] = []


class ForbiddenAPIError(BaseException):
    """A forbidden API was called. A BaseException, so that `except Exception` does not hide it."""


def _resolve(path: str) -> Any:
    """The object at a dotted path, importing its modules; None where there is none."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name, None)
            if obj is None:
                return None
        return obj
    return None


def _expand(api: str) -> list[str]:
    """A path, or the paths a trailing wildcard matches among its module's public names."""
    if not api.endswith("*"):
        return [api]
    parent, _, pattern = api.rpartition(".")
    module = _resolve(parent)
    return [
        f"{parent}.{name}"
        for name in sorted(dir(module) if module is not None else ())
        if fnmatch.fnmatchcase(name, pattern)
    ]


def _guard(api: str, original: Any) -> Any:
    message = f"{api} is forbidden in this assignment: write your own"

    if isinstance(original, type):

        def __init__(self, *args, **kwargs):
            calls.append(api)
            raise ForbiddenAPIError(message)

        # A subclass, so that code which subclasses or isinstance-checks it still imports.
        return type(
            original.__name__,
            (original,),
            {"__init__": __init__, "__module__": original.__module__, "__qualname__": original.__qualname__},
        )

    def guarded(*args, **kwargs):
        calls.append(api)
        raise ForbiddenAPIError(message)

    guarded.__name__ = getattr(original, "__name__", api.rpartition(".")[2])
    guarded.__qualname__ = guarded.__name__
    return guarded


def _stop_operator(api: str, through: str) -> None:
    """What a blocked operator runs: record the API, as its guard would, and raise."""
    calls.append(f"{api} (reached through {through})")
    raise ForbiddenAPIError(f"{api} is forbidden in this assignment (reached through {through}): write your own")


def install(
    apis: Iterable[str], also: Mapping[str, Iterable[str]] = {}, operators: Mapping[str, Iterable[str]] = {}
) -> list[str]:
    """Replace every forbidden object wherever its package's loaded modules hold it, and block its operators.

    `operators` gives, for a forbidden API, the patterns of the dispatcher's
    operators behind it ("aten::native_layer_norm", "aten::_scaled_dot_product_*").
    Returns the dotted paths replaced and the operators blocked, for the record of defences.
    """
    targets: dict[int, tuple[str, Any]] = {}
    roots = set()
    for api in apis:
        for path in [*_expand(api), *also.get(api, ())]:
            obj = _resolve(path)
            if obj is not None:
                targets[id(obj)] = (api, obj)
                roots.add(path.split(".")[0])
    guards = {key: _guard(api, obj) for key, (api, obj) in targets.items()}
    replaced = []
    for name, module in list(sys.modules.items()):
        if module is None or name.split(".")[0] not in roots:
            continue
        try:
            members = list(vars(module).items())
        except TypeError:
            continue
        for attr, value in members:
            guard = guards.get(id(value))
            if guard is not None and targets[id(value)][1] is value:
                try:
                    setattr(module, attr, guard)
                    replaced.append(f"{name}.{attr}")
                except (AttributeError, TypeError):
                    pass
    return sorted(replaced) + _operators.block(operators, _stop_operator)

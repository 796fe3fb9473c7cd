"""A module imported when first used: what a check's code holds in place of torch.

The grading process imports every check's module to know its checks, but most
gradings never run torch there: the expected values come from the store, the
checks run in the sandbox (whose fork server imported torch before forking),
and an untouched stub needs no reference at all. Importing torch anyway costs a
second of CPU per grading, on the cores the sandbox needs. A check module says

    torch = lazy_import("torch")

and torch is imported by the first ``torch.<name>`` it evaluates: at once in
the sandbox, only when the reference computes a value in the grading process.
"""

from __future__ import annotations

import importlib
import sys
import types


class LazyModule(types.ModuleType):
    """Stands for the module `name`; every attribute is looked up on the real one, imported on first use.

    Nothing is copied, so what the sandbox's guards replace on the real module is what this one gives.
    """

    def __getattr__(self, attr: str):
        if attr.startswith("__") and attr.endswith("__") and self.__name__ not in sys.modules:
            # Introspection (copy, doctest, inspect probing for __wrapped__) imports nothing.
            raise AttributeError(attr)
        return getattr(importlib.import_module(self.__name__), attr)

    def __repr__(self) -> str:
        return f"<module {self.__name__!r}, imported on first use>"


def lazy_import(name: str) -> types.ModuleType:
    """The module `name`, imported by the first attribute asked of it (`LazyModule`)."""
    return LazyModule(name)

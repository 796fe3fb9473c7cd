"""A setting of the scenarios' own, per thread and context: the grading process computes expected values in
some threads while it records stand-ins in others, and the sandbox's child sets it once for its run."""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator


class ContextSetting:
    """A boolean read with `get`, set for a block (`within`) or from now on in this context (`set`)."""

    def __init__(self, name: str, default: bool):
        self._var = contextvars.ContextVar(name, default=default)

    def get(self) -> bool:
        return self._var.get()

    @contextlib.contextmanager
    def within(self, value: bool) -> Iterator[None]:
        token = self._var.set(value)
        try:
            yield
        finally:
            self._var.reset(token)

    def set(self, value: bool) -> None:
        self._var.set(value)

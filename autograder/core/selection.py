"""Which assignment, in which variant: the one form that choice travels in.

A `Selection` is what the user chose (`lmgrade grade rnn --set
activation=relu`), as plain strings: it goes unchanged from the command line
to the catalogue, into a Gradescope zip's config and to a Dask worker, and
only the catalogue turns it into checks (`catalog.load`). It names no
device: the process that grades binds one (`Assignment.on`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any


class SelectionError(ValueError):
    """A --set that is not KEY=VALUE, or a selection read back in a form it was never written in."""


def as_setting(value: Any) -> str:
    """A variant's value as --set spells it (true, not True)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


@dataclass(frozen=True)
class Selection:
    """An assignment and the --set settings that choose its variant (sorted; none: the defaults).

    Example:
        ```python
        Selection.parse("rnn", ["activation=tanh"]).options()  # ["--set", "activation=tanh"]
        ```
    """

    assignment: str
    """The assignment's name, as `lmgrade list` prints it."""
    settings: tuple[tuple[str, str], ...] = field(default=())
    """`(KEY, VALUE)` pairs as --set spells them, sorted by key; a mapping is accepted and sorted."""

    def __post_init__(self) -> None:
        given = self.settings.items() if isinstance(self.settings, Mapping) else self.settings
        pairs = tuple(sorted((str(key), str(value)) for key, value in given))
        if len({key for key, _ in pairs}) != len(pairs):
            raise SelectionError(f"{self.assignment}: a variant set twice in {pairs}")
        object.__setattr__(self, "settings", pairs)

    @classmethod
    def parse(cls, assignment: str, pairs: Iterable[str]) -> Selection:
        """From --set KEY=VALUE options (a later one wins, as on any command line)."""
        chosen: dict[str, str] = {}
        for pair in pairs:
            key, sep, value = pair.partition("=")
            if not sep or not key.strip():
                raise SelectionError(f"expected KEY=VALUE, got {pair!r}")
            chosen[key.strip()] = value.strip()
        return cls(assignment, chosen)

    @classmethod
    def of(cls, assignment: str, variant: Mapping[str, Any]) -> Selection:
        """The selection that chooses a resolved `variant` again."""
        return cls(assignment, {key: as_setting(value) for key, value in variant.items()})

    @property
    def chosen(self) -> dict[str, str]:
        """The settings as a dict: `{"activation": "tanh"}`."""
        return dict(self.settings)

    def options(self) -> list[str]:
        """The command-line options that make it again: ["--set", "KEY=VALUE", ...]."""
        return [part for key, value in self.settings for part in ("--set", f"{key}={value}")]

    def describe(self) -> str:
        """ "activation=relu, layers=2", or "" for the defaults."""
        return ", ".join(f"{key}={value}" for key, value in self.settings)

    def as_dict(self) -> dict[str, Any]:
        """Plain data for a file or a message: `{"assignment": ..., "settings": {...}}`."""
        return {"assignment": self.assignment, "settings": self.chosen}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Selection:
        """The selection `as_dict` wrote; `SelectionError` for anything else."""
        try:
            assignment, settings = data["assignment"], data["settings"]
        except (KeyError, TypeError):
            raise SelectionError(f"not a selection: {data!r}") from None
        if not isinstance(assignment, str) or not isinstance(settings, Mapping):
            raise SelectionError(f"not a selection: {data!r}")
        return cls(assignment, settings)

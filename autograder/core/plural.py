"""Counts in words, the noun agreeing with the number: "1 entry", "3 entries", "1 point", "2.5 points"."""

from __future__ import annotations


def counted(n: float, singular: str, plural: str | None = None) -> str:
    """`n` and the noun, singular for exactly one ("1 case"), plural otherwise ("0 cases", "1.5 points").

    `plural` where the noun does not take an s ("entry", "entries"); a float is written as `:g` writes it.
    """
    number = f"{n:g}" if isinstance(n, float) else str(n)
    return f"{number} {singular if n == 1 else plural or singular + 's'}"

"""Whether a check's answers show work done: the test that stands in for "right" where rightness cannot be asked.

A composed check whose component failed cannot expect the reference's
numbers; it still pays its capped share only for answers that are alive:
each shaped like the reference's (the same types, keys and array shapes),
not constant where the reference's is not, and not the same for every case
where the reference's differ. A submission that returns constants or raises
is never alive, so it still scores exactly 0.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .wire import Tensor

_NUMBER = repr("number")
_PLAIN_NUMBER_TYPES = {int, float}


def shape_of(value: Any) -> Any:
    """The structure of a value without its numbers (nor the length of its lists)."""
    if isinstance(value, Tensor):
        value = value.values
    if isinstance(value, np.ndarray):
        return ("array", value.shape)
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, (int, float, np.integer, np.floating)):
        return "number"
    if isinstance(value, (list, tuple)):
        # The kinds of its items, not their count: a list of the wrong length (pairs of a wrong
        # window, merges stopped early) is wrong but shows work; an empty one shows none.
        # A list of plain numbers is said without a call each: an answer may hold millions.
        kinds = {_NUMBER} if value and _plain_numbers(value) else {repr(shape_of(v)) for v in value}
        return (type(value).__name__, tuple(sorted(kinds)))
    if isinstance(value, dict):
        # Sorted by text: two keys may print alike (nan and nan), and their shapes need not be comparable.
        return ("dict", tuple(sorted(((repr(k), shape_of(v)) for k, v in value.items()), key=repr)))
    return type(value).__name__


def _numbers(value: Any) -> np.ndarray:
    """Every number in a value, flattened."""
    if isinstance(value, Tensor):
        value = value.values
    if isinstance(value, np.ndarray):
        return value.astype(np.float64).ravel() if value.dtype.kind in "biuf" else np.zeros(0)
    if isinstance(value, (bool, np.bool_)):
        return np.zeros(0)
    if isinstance(value, (int, float, np.integer, np.floating)):
        try:
            return np.array([float(value)])
        except OverflowError:  # an int past float's range
            return np.array([np.inf if value > 0 else -np.inf])
    if isinstance(value, (list, tuple)):
        items = value
    elif isinstance(value, dict):
        items = [value[k] for k in sorted(value, key=repr)]
    else:
        return np.zeros(0)
    if _plain_numbers(items):  # one array, not one per number: an answer may hold millions
        try:
            return np.array(items, dtype=np.float64).ravel()
        except OverflowError:  # an int past float's range: number by number below
            pass
    parts = [_numbers(v) for v in items]
    return np.concatenate(parts) if parts else np.zeros(0)


def _plain_numbers(items) -> bool:
    return set(map(type, items)) <= _PLAIN_NUMBER_TYPES


def _constant(numbers: np.ndarray) -> bool:
    return numbers.size > 1 and bool(np.all(numbers == numbers[0]))


def _constant_part(expected: Any, got: Any, whole: bool = True) -> bool:
    """Whether the answer, or a named value in it, is constant where the contract's varies: a step
    that returns a number but updates nothing answers {"loss": 1.0, "change of W": zeros}. A dict
    inside is looked into, not judged as a whole: biases of ones and zeros all set to zeros are a
    wrong initialisation, not a call that did nothing."""
    nested = isinstance(expected, dict) and isinstance(got, dict)
    if (whole or not nested) and _constant(_numbers(got)) and not _constant(_numbers(expected)):
        return True
    return nested and any(_constant_part(expected[k], got[k], whole=False) for k in expected if k in got)


def dead(expected: list[Any], got: list[Any]) -> str | None:
    """None when the answers show work; otherwise why they do not."""
    if not got or all(g is None for g in got):  # nothing answered (raised, crashed or never ran)
        return "no answer"
    for e, g in zip(expected, got):
        if shape_of(e) != shape_of(g):
            return "an answer is not shaped like the contract's (other types, keys or shapes)"
        if _constant_part(e, g):
            return "an answer is constant where the contract's varies"
    fingerprints = {_numbers(g).tobytes() for g in got}
    if len(got) > 1 and len(fingerprints) == 1 and len({_numbers(e).tobytes() for e in expected}) > 1:
        return "every input gets the same answer"
    return None

"""Compare what a submission returned with what the reference returned.

`compare` walks both values together and describes the first difference: where
it is (a path such as ``[('<s>', 'a')]['b']`` or an array index), what was
expected, what came back, the error and the tolerance. With ``reveal=False``
(hidden checks) the expected value is never put into words.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .wire import Tensor


@dataclass(frozen=True)
class Tolerance:
    """|got - expected| <= atol + rtol * |expected|, elementwise (numpy's isclose)."""

    rtol: float = 1e-9
    atol: float = 1e-12

    def __str__(self) -> str:
        return f"rtol {self.rtol:g}, atol {self.atol:g}"


def _short(value: Any, limit: int = 160) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _type_name(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"array of shape {value.shape}"
    return type(value).__name__


def _items(n: int) -> str:
    return f"{n} item" if n == 1 else f"{n} items"


def _is_number(value: Any) -> bool:
    return (isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_)))


def _close(expected: float, got: float, tol: Tolerance) -> bool:
    if math.isnan(expected) or math.isnan(got):
        return math.isnan(expected) and math.isnan(got)
    if math.isinf(expected) or math.isinf(got):
        return expected == got
    return abs(got - expected) <= tol.atol + tol.rtol * abs(expected)


def compare(expected: Any, got: Any, tol: Tolerance, *, reveal: bool = True, path: str = "") -> str | None:
    """None when `got` matches `expected`; otherwise a sentence about the first difference."""
    where = f" at {path}" if path else ""
    if isinstance(expected, Tensor):
        if not isinstance(got, Tensor):
            return f"expected a tensor{where}, got {_type_name(got)}"
        return compare(expected.values, got.values, tol, reveal=reveal, path=path)
    if isinstance(expected, np.ndarray):
        return _compare_arrays(expected, got, tol, reveal, where)
    if _is_number(expected):
        if not _is_number(got):
            return f"expected a number{where}, got {_type_name(got)} {_short(got)}"
        if _close(float(expected), float(got), tol):
            return None
        if not reveal:
            return f"wrong value{where}: got {float(got)!r}, which is off by more than the tolerance ({tol})"
        err = abs(float(got) - float(expected))
        return (f"wrong value{where}: expected {float(expected)!r}, got {float(got)!r} "
                f"(error {err:.3g}, tolerance {tol})")
    if isinstance(expected, (bool, np.bool_, str, type(None))):
        if type(got) is type(expected) and got == expected:
            return None
        if not reveal:
            return f"wrong value{where}: got {_short(got)}"
        return f"wrong value{where}: expected {_short(expected)}, got {_short(got)}"
    if isinstance(expected, (list, tuple)):
        if type(got) is not type(expected):
            return f"expected a {type(expected).__name__}{where}, got {_type_name(got)} {_short(got)}"
        if len(got) != len(expected):
            if not reveal:
                return f"wrong length{where}: got {_items(len(got))}"
            return (f"wrong length{where}: expected {_items(len(expected))}, got {len(got)}\n"
                    f"  expected {_short(expected)}\n  got      {_short(got)}")
        for i, (e, g) in enumerate(zip(expected, got)):
            diff = compare(e, g, tol, reveal=reveal, path=f"{path}[{i}]")
            if diff:
                return diff
        return None
    if isinstance(expected, (set, frozenset)):
        if not isinstance(got, (set, frozenset)):
            return f"expected a set{where}, got {_type_name(got)} {_short(got)}"
        return _membership("set", where, sorted(expected - got, key=repr), sorted(got - expected, key=repr), reveal)
    if isinstance(expected, dict):
        if not isinstance(got, dict):
            return f"expected a dict{where}, got {_type_name(got)} {_short(got)}"
        diff = _membership("keys", where, [k for k in expected if k not in got],
                           [k for k in got if k not in expected], reveal)
        if diff:
            return diff
        for key, e in expected.items():
            diff = compare(e, got[key], tol, reveal=reveal, path=f"{path}[{key!r}]")
            if diff:
                return diff
        return None
    raise TypeError(f"cannot compare expected values of type {type(expected).__name__}")


def _membership(what: str, where: str, missing: list, extra: list, reveal: bool) -> str | None:
    """Items expected but absent, and present but not expected (shown up to five)."""
    if not missing and not extra:
        return None
    parts = []
    if missing:
        parts.append(f"missing {_short(missing[:5]) if reveal else len(missing)}")
    if extra:
        parts.append(f"unexpected {_short(extra[:5])}")
    return f"wrong {what}{where}: " + "; ".join(parts)


def _compare_arrays(expected: Any, got: Any, tol: Tolerance, reveal: bool, where: str) -> str | None:
    if not isinstance(got, np.ndarray):
        return f"expected an array{where}, got {_type_name(got)} {_short(got)}"
    expected = np.asarray(expected)
    if got.shape != expected.shape:
        return f"wrong shape{where}: expected {expected.shape}, got {got.shape}"
    if expected.dtype.kind in "biu" and got.dtype.kind not in "biu":
        return f"wrong dtype{where}: expected integers ({expected.dtype}), got {got.dtype}"
    if expected.dtype.kind not in "biufc" or got.dtype.kind not in "biufc":
        if np.array_equal(expected, got):
            return None
        return f"wrong values{where}"
    e = expected.astype(np.float64)
    g = got.astype(np.float64)
    ok = np.isclose(g, e, rtol=tol.rtol, atol=tol.atol, equal_nan=True)
    if ok.all():
        return None
    err = np.where(np.isnan(e) | np.isnan(g), np.inf, np.abs(g - e))
    err = np.where(ok, 0.0, err)
    index = np.unravel_index(int(np.argmax(err)), e.shape) if e.ndim else ()
    bad = int((~ok).sum())
    head = f"{bad} of {e.size} values wrong{where}"
    idx = tuple(int(i) for i in index)
    if not reveal:
        return f"{head}; the largest error is at index {idx} (tolerance {tol})"
    return (f"{head}; the largest error is at index {idx}: expected {e[index]!r}, got {g[index]!r} "
            f"(max error {float(err.max()):.3g}, tolerance {tol})")

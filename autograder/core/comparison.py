"""Compare what a submission returned with what the reference returned.

`compare` walks both values together and describes the first difference: where
it is (a path such as ``[('<s>', 'a')]['b']`` or an array index), what was
expected, what came back, the error and the tolerance. Numbers are written as
plain numbers with the digits that matter at the tolerance (`number`), arrays
as arrays. With ``reveal=False`` (hidden checks) only the size of the miss is
said: how many values are wrong and by how much, never the expected value,
what came back, nor where (no index, no position in a list, no key made from
the inputs).

`compare` never raises on what came back: whatever plain data a child sent
(records, strings where numbers belong, numbers past float's range, complex
numbers, nesting of any depth) is a difference it describes. Only an expected
value of a type it does not know is the grader's own error.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..boundary.wire import Tensor


@dataclass(frozen=True)
class Tolerance:
    """|got - expected| <= atol + rtol * |expected|, elementwise (numpy's isclose).

    A NaN matches only a NaN, and an infinity only the same infinity. The default suits float64
    arithmetic; a float32 case takes its own (`Case.tolerance`, e.g. `Tolerance(rtol=2e-4, atol=1e-6)`).
    """

    rtol: float = 1e-9
    """The relative part: the error allowed per unit of |expected|."""
    atol: float = 1e-12
    """The absolute part: the error allowed near zero."""

    def __str__(self) -> str:
        return f"rtol {self.rtol:g}, atol {self.atol:g}"


def digits(tol: Tolerance | None) -> int:
    """Significant digits that show a difference the tolerance notices: two past its relative part."""
    if tol is None or tol.rtol <= 0:
        return 17
    return max(4, min(17, math.ceil(-math.log10(tol.rtol)) + 2))


def number(value: Any, tol: Tolerance | None = None, *, beside: Any = None) -> str:
    """A number as a student reads it: `3.16447524064`, never `np.float64(3.1644752406379517)`.

    Integers in full; floats to `digits(tol)` significant digits, more where
    that would print `beside` (the value it is compared with) the same.
    """
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (complex, np.complexfloating)):
        return str(complex(value))
    if isinstance(value, (int, np.integer)):
        value = int(value)
        if value.bit_length() > 200:  # Python refuses to write out very long ints; nobody reads them
            size = math.ceil(value.bit_length() * math.log10(2))
            return f"{'a negative' if value < 0 else 'an'} integer of {size} digits"
        return str(value)
    x = _as_float(value)
    if not math.isfinite(x) or tol is None:
        return repr(x)  # the shortest text that reads back as x
    n = digits(tol)
    text = f"{x:.{n}g}"
    if beside is not None and _is_number(beside) and _as_float(beside) != x:
        while n < 17 and text == f"{_as_float(beside):.{n}g}":
            n += 1
            text = f"{x:.{n}g}"
    return text if any(c in text for c in ".en") else text + ".0"  # a float reads as one


def plain(value: Any, tol: Tolerance | None = None, *, limit: int = 160) -> str:
    """Any value as text: numbers as `number` writes them, arrays as arrays, containers as Python writes them."""
    text = _plain(value, tol, limit, 0)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# How far `plain` looks into a container: enough to fill its line, never the whole of a huge answer.
_PLAIN_DEPTH = 8
_SORTED_SET_ITEMS = 1000


def _plain(value: Any, tol: Tolerance | None, limit: int, depth: int) -> str:
    if depth > _PLAIN_DEPTH:
        return "..."
    if isinstance(value, Tensor):
        return _plain(value.values, tol, limit, depth)
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biuf":
            return np.array2string(value, threshold=20, edgeitems=3)
        with np.printoptions(
            precision=8 if tol is None else digits(tol) - 1, threshold=20, edgeitems=3, floatmode="maxprec"
        ):
            return np.array2string(value, separator=", ")
    if _is_number(value) or isinstance(value, (bool, np.bool_)):
        return number(value, tol)
    if isinstance(value, str):
        return repr(value[:limit])
    if isinstance(value, (set, frozenset)):
        if len(value) > _SORTED_SET_ITEMS:  # shown sorted, and sorting a huge one takes long: its size says enough
            return f"a set of {len(value)} items"
        return (
            "{" + ", ".join(_first(sorted(_plain(v, tol, limit, depth + 1) for v in value), limit)) + "}"
            if value
            else "set()"
        )
    if isinstance(value, dict):
        pairs = (f"{_plain(k, tol, limit, depth + 1)}: {_plain(v, tol, limit, depth + 1)}" for k, v in value.items())
        return "{" + ", ".join(_first(pairs, limit)) + "}"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(_first((_plain(v, tol, limit, depth + 1) for v in value), limit))
        if isinstance(value, list):
            return f"[{inner}]"
        return f"({inner}{',' if len(value) == 1 else ''})"
    return repr(value)[:limit]


def _first(texts, limit: int) -> list[str]:
    """The first texts that fill `limit` characters, then "..." if more were left."""
    kept, used = [], 0
    for text in texts:
        if used > limit:
            kept.append("...")
            break
        kept.append(text)
        used += len(text) + 2
    return kept


def _short(value: Any, limit: int = 160, tol: Tolerance | None = None) -> str:
    return plain(value, tol, limit=limit)


# A dict key that names an output ("loss", "grads['W_ah']") rather than being made from the inputs.
_OUTPUT_NAME = re.compile(r"[A-Za-z_][\w .'\[\]-]{0,39}")


def _hidden_path(path: str, key: Any = None, index: bool = False) -> str:
    """The path a hidden check may say: output names kept, positions and keys made from inputs dropped."""
    if index or not (isinstance(key, str) and _OUTPUT_NAME.fullmatch(key)):
        return path
    return f"{path}[{key!r}]"


def _type_name(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"array of shape {value.shape}"
    return type(value).__name__


def _items(n: int) -> str:
    return f"{n} item" if n == 1 else f"{n} items"


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def _as_float(value: Any) -> float:
    """A number as a float; an integer past float's range as an infinity of its sign."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _close(expected: float, got: float, tol: Tolerance) -> bool:
    if math.isnan(expected) or math.isnan(got):
        return math.isnan(expected) and math.isnan(got)
    if math.isinf(expected) or math.isinf(got):
        return expected == got
    return abs(got - expected) <= tol.atol + tol.rtol * abs(expected)


def compare(expected: Any, got: Any, tol: Tolerance, *, reveal: bool = True, path: str = "") -> str | None:
    """None when `got` matches `expected`; otherwise a sentence about the first difference.

    What a check without a judge does with each case, and what a judge may call on parts of an answer.
    Numbers (Python's or numpy's, of any width) match within `tol`; an array matches an array of the
    same shape and kind of number entry by entry (the sentence says how many entries are off and the
    largest error, and, where the check is visible, at which index); strings, booleans and None match
    exactly and by type; lists and tuples by type, length and item; sets by membership; dicts by their
    keys, then value by value.

    Args:
        expected: the reference's answer (plain data).
        got: the submission's answer.
        tol: the tolerance of every number in it.
        reveal: False for a check whose inputs are not shown: the sentence then says how many values
            are wrong and by how much, never which ones, what came back or what was expected.
        path: where in a larger answer this part sits (`["logits"]`), named in the sentence.
    """
    where = f" at {path}" if path else ""
    if isinstance(expected, Tensor):
        if not isinstance(got, Tensor):
            return f"expected a tensor{where}, got {_type_name(got)}"
        return compare(expected.values, got.values, tol, reveal=reveal, path=path)
    if isinstance(expected, np.ndarray):
        return _compare_arrays(expected, got, tol, reveal, where)
    if _is_number(expected):
        if not _is_number(got):
            return f"expected a number{where}, got {_type_name(got)}" + (f" {_short(got, tol=tol)}" if reveal else "")
        if _close(_as_float(expected), _as_float(got), tol):
            return None
        err = abs(_as_float(got) - _as_float(expected))
        if not reveal:
            return f"wrong value{where}: off by {_error(err)} (tolerance {tol})"
        return (
            f"wrong value{where}: expected {number(expected, tol, beside=got)}, "
            f"got {number(got, tol, beside=expected)} (error {_error(err)}, tolerance {tol})"
        )
    if isinstance(expected, (bool, np.bool_, str, type(None))):
        if type(got) is type(expected) and got == expected:
            return None
        if not reveal:
            return f"wrong value{where}"
        return f"wrong value{where}: expected {_short(expected, tol=tol)}, got {_short(got, tol=tol)}"
    if isinstance(expected, (list, tuple)):
        if type(got) is not type(expected):
            return f"expected a {type(expected).__name__}{where}, got {_type_name(got)}" + (
                f" {_short(got, tol=tol)}" if reveal else ""
            )
        if len(got) != len(expected):
            if not reveal:
                return f"wrong length{where}: got {_items(len(got))}"
            return (
                f"wrong length{where}: expected {_items(len(expected))}, got {len(got)}\n"
                f"  expected {_short(expected, tol=tol)}\n  got      {_short(got, tol=tol)}"
            )
        for i, (e, g) in enumerate(zip(expected, got)):
            inner = f"{path}[{i}]" if reveal else _hidden_path(path, index=True)
            diff = compare(e, g, tol, reveal=reveal, path=inner)
            if diff:
                return diff
        return None
    if isinstance(expected, (set, frozenset)):
        if not isinstance(got, (set, frozenset)):
            return f"expected a set{where}, got {_type_name(got)}" + (f" {_short(got, tol=tol)}" if reveal else "")
        return _membership("set", where, sorted(expected - got, key=repr), sorted(got - expected, key=repr), reveal)
    if isinstance(expected, dict):
        if not isinstance(got, dict):
            return f"expected a dict{where}, got {_type_name(got)}" + (f" {_short(got, tol=tol)}" if reveal else "")
        diff = _membership(
            "keys", where, [k for k in expected if k not in got], [k for k in got if k not in expected], reveal
        )
        if diff:
            return diff
        for key, e in expected.items():
            inner = f"{path}[{key!r}]" if reveal else _hidden_path(path, key)
            diff = compare(e, got[key], tol, reveal=reveal, path=inner)
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
    if extra:  # what the code returned may be made from the inputs too
        parts.append(f"unexpected {_short(extra[:5]) if reveal else len(extra)}")
    return f"wrong {what}{where}: " + "; ".join(parts)


def _error(err: float) -> str:
    return f"{err:.3g}"


def _compare_arrays(expected: Any, got: Any, tol: Tolerance, reveal: bool, where: str) -> str | None:
    if not isinstance(got, np.ndarray):
        return f"expected an array{where}, got {_type_name(got)}" + (f" {_short(got)}" if reveal else "")
    expected = np.asarray(expected)
    if got.shape != expected.shape:
        if not reveal:
            return f"wrong shape{where}: got {got.shape}"
        return f"wrong shape{where}: expected {expected.shape}, got {got.shape}"
    numeric = "biufc"
    if expected.dtype.kind in numeric and (got.dtype.kind not in numeric or got.dtype.fields is not None):
        return f"wrong dtype{where}: expected numbers ({expected.dtype}), got {_dtype_words(got.dtype)}"
    if expected.dtype.kind in "biu" and got.dtype.kind not in "biu":
        return f"wrong dtype{where}: expected integers ({expected.dtype}), got {got.dtype}"
    if (expected.dtype.kind == "c") != (got.dtype.kind == "c"):
        return f"wrong dtype{where}: expected {expected.dtype}, got {got.dtype}"
    if expected.dtype.kind not in numeric:
        if expected.dtype == got.dtype and np.array_equal(expected, got):
            return None
        return (
            f"wrong values{where}" if expected.dtype.kind == got.dtype.kind else f"wrong dtype{where}: got {got.dtype}"
        )
    wide = np.complex128 if expected.dtype.kind == "c" else np.float64
    e = expected.astype(wide)
    g = got.astype(wide)
    # Infinities and values near float's limits: the differences below may be inf or nan, which
    # `ok` already judges (equal infinities are close, nan only beside nan); no warning is due.
    with np.errstate(all="ignore"):
        ok = np.isclose(g, e, rtol=tol.rtol, atol=tol.atol, equal_nan=True)
        if ok.all():
            return None
        err = np.where(ok, 0.0, np.abs(g - e))
    err = np.where(~ok & np.isnan(err), np.inf, err)
    index = np.unravel_index(int(np.argmax(err)), e.shape) if e.ndim else ()
    bad = int((~ok).sum())
    head = f"{bad} of {e.size} values wrong{where}"
    hint = _float32_hint(e, g, got.dtype, float(err.max()), tol)
    if not reveal:
        return f"{head}; the largest error is {_error(float(err.max()))} (tolerance {tol}){hint}"
    idx = tuple(int(i) for i in index)
    return (
        f"{head}; the largest error is at index {idx}: expected {number(e[index], tol, beside=g[index])}, "
        f"got {number(g[index], tol, beside=e[index])} (max error {_error(float(err.max()))}, tolerance {tol})"
        f"{hint}"
    )


# How a difference that float32's rounding explains is told (gradcheck.which_half then claims nothing of
# a backward beside it: finite differences of float32 values measure their rounding).
FLOAT32 = "float32"
# The largest error, relative to the array's largest value, that computing in float32 leaves (its unit
# roundoff is 6e-8; a few dozen operations accumulate it) in a check whose tolerance is float64's.
FLOAT32_REACH = 2e-5
FLOAT32_SENTENCES = ("These values are float32", "Every error is at most")  # how its sentences begin


def without_float32_hint(message: str) -> str:
    """`message` without the float32 sentence: where a known mistake explains the answers, it is the cause."""
    return "\n".join(line for line in message.split("\n") if not line.startswith(FLOAT32_SENTENCES))


def _float32_hint(e: np.ndarray, g: np.ndarray, dtype: np.dtype, largest: float, tol: Tolerance) -> str:
    """A sentence where the answers are float32, or where every error is as small as float32's rounding
    leaves and the check's tolerance is far below it (what the values show, and nothing more)."""
    if dtype == np.float32 and tol.rtol < 1e-6:
        return f"\nThese values are {FLOAT32}: the contract computes in float64."
    scale = float(np.max(np.abs(e))) if e.size and np.all(np.isfinite(e)) else 0.0
    if e.dtype.kind != "f" or tol.rtol >= 1e-6 or not scale or not np.isfinite(largest):
        return ""
    if largest <= FLOAT32_REACH * scale and largest > 1e-9 * scale:
        return (
            f"\nEvery error is at most {largest / scale:.1g} of the largest value, what computing in {FLOAT32} "
            "leaves: if any step of yours is float32 (an array made float32, a cast, a float32 "
            "parameter), make it float64."
        )
    return ""


def _dtype_words(dtype: np.dtype) -> str:
    if dtype.fields is not None:
        return "records with named fields"
    return f"values of dtype {str(dtype)[:40]}"

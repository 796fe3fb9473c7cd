"""Plain data across the sandbox boundary, without pickle.

A value is written as JSON plus, for arrays, one `.npz` archive loaded with
``allow_pickle=False``. Python's own types survive the trip (tuple vs list,
int vs float, dicts with non-string keys), so a grader can tell a student
"you returned a list where a tuple is expected". Anything else is refused at
encoding time, in the sandboxed child, with a message naming the type.
"""

from __future__ import annotations

import io
import json
import math
import struct
import sys
import zipfile
from typing import Any

import numpy as np

MAX_DEPTH = 64
_HEADER = struct.Struct(">Q")


class WireError(ValueError):
    """A value that cannot cross the boundary, or bytes that do not decode."""


def _describe(value: Any) -> str:
    cls = type(value)
    return f"{cls.__module__}.{cls.__qualname__}" if cls.__module__ != "builtins" else cls.__qualname__


def _encode(value: Any, arrays: list[np.ndarray], depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise WireError(f"value nested deeper than {MAX_DEPTH} levels")
    # Subclasses (Counter, defaultdict, namedtuple, IntEnum) travel as their
    # base type; the grader sees the data, not the class.
    if value is None or type(value) is bool:
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return int.__index__(value)
    if isinstance(value, float):
        value = float.__float__(value)
        return value if math.isfinite(value) else {"$float": repr(value)}
    if isinstance(value, np.generic) and type(value) is not np.object_:
        return {"$scalar": _encode(value.item(), arrays, depth + 1), "dtype": str(value.dtype)}
    if type(value) is np.ndarray:
        if value.dtype.hasobject or value.dtype.kind == "V":
            raise WireError(f"numpy array of dtype {value.dtype} cannot be graded")
        arrays.append(np.ascontiguousarray(value))
        return {"$array": len(arrays) - 1}
    if _is_tensor(value):
        return {
            "$tensor": _encode(value.detach().cpu().numpy(), arrays, depth + 1),
            "dtype": str(value.dtype).replace("torch.", ""),
            "device": value.device.type,
        }
    if isinstance(value, list):
        return [_encode(v, arrays, depth + 1) for v in list.__iter__(value)]
    if isinstance(value, tuple):
        return {"$tuple": [_encode(v, arrays, depth + 1) for v in tuple.__iter__(value)]}
    if isinstance(value, (set, frozenset)):
        items = [_encode(v, arrays, depth + 1) for v in value]
        items.sort(key=lambda v: json.dumps(v, sort_keys=True))
        return {"$set": items}
    if isinstance(value, dict):
        return {"$dict": [[_encode(k, arrays, depth + 1), _encode(v, arrays, depth + 1)] for k, v in dict.items(value)]}
    raise WireError(f"a value of type {_describe(value)} cannot be graded")


def _is_tensor(value: Any) -> bool:
    # Never imported here: only a loaded torch makes tensors. One still being imported (the reference,
    # in a thread of the grading process) has no Tensor yet, and has made none.
    tensor = getattr(sys.modules.get("torch"), "Tensor", None)
    return (
        tensor is not None and isinstance(value, tensor) and type(value) in (tensor, sys.modules["torch"].nn.Parameter)
    )


def to_document(value: Any) -> tuple[Any, list[np.ndarray]]:
    """Plain data as a JSON-ready document and the arrays it refers to by position."""
    arrays: list[np.ndarray] = []
    return _encode(value, arrays, 0), arrays


def from_document(doc: Any, arrays: list[np.ndarray]) -> Any:
    """The value `to_document` took apart; raises `WireError` on a malformed document."""
    try:
        return _decode(doc, arrays, 0)
    except WireError:
        raise
    except Exception as exc:  # malformed data from an untrusted writer
        raise WireError(f"undecodable result ({type(exc).__name__}: {exc})") from None


def save_arrays(arrays: list[np.ndarray], file, *, compressed: bool = False) -> None:
    """Write arrays as one npz archive (arr_0, arr_1, ...), as `load_arrays` reads them back.

    Written as `numpy.savez` writes it, but with every entry dated 1980-01-01:
    the same arrays always give the same bytes.
    """
    method = zipfile.ZIP_DEFLATED if compressed else zipfile.ZIP_STORED
    with zipfile.ZipFile(file, "w", compression=method, allowZip64=True) as archive:
        for i, array in enumerate(arrays):
            entry = zipfile.ZipInfo(f"arr_{i}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            entry.compress_type = method
            with archive.open(entry, "w", force_zip64=True) as out:
                np.lib.format.write_array(out, np.asanyarray(array), allow_pickle=False)


def load_arrays(file) -> list[np.ndarray]:
    """The arrays of an npz archive written by `save_arrays`; never unpickles."""
    with np.load(file, allow_pickle=False) as npz:
        return [npz[f"arr_{i}"] for i in range(len(npz.files))]


def identical(a: Any, b: Any) -> bool:
    """Whether two values are the same plain data, bit for bit (types, dtypes and shapes too)."""
    doc_a, arrays_a = to_document(a)
    doc_b, arrays_b = to_document(b)
    return (
        doc_a == doc_b
        and len(arrays_a) == len(arrays_b)
        and all(
            x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes() for x, y in zip(arrays_a, arrays_b)
        )
    )


def encode(value: Any) -> bytes:
    """Encode plain data: JSON document, then an optional npz archive."""
    doc, arrays = to_document(value)
    text = json.dumps(doc, allow_nan=False).encode()
    blob = b""
    if arrays:
        buf = io.BytesIO()
        save_arrays(arrays, buf)
        blob = buf.getvalue()
    return _HEADER.pack(len(text)) + text + blob


def decode(data: bytes) -> Any:
    """Decode what `encode` wrote; never unpickles, never executes anything."""
    try:
        (n,) = _HEADER.unpack_from(data)
        doc = json.loads(data[_HEADER.size : _HEADER.size + n])
        blob = data[_HEADER.size + n :]
        arrays = load_arrays(io.BytesIO(blob)) if blob else []
    except Exception as exc:  # malformed bytes from an untrusted writer
        raise WireError(f"undecodable result ({type(exc).__name__}: {exc})") from None
    return from_document(doc, arrays)


def _decode(doc: Any, arrays: list[np.ndarray], depth: int) -> Any:
    if depth > MAX_DEPTH + 2:
        raise WireError("result nested too deeply")
    if isinstance(doc, list):
        return [_decode(v, arrays, depth + 1) for v in doc]
    if not isinstance(doc, dict):
        return doc
    if "$float" in doc:
        return float(doc["$float"])
    if "$array" in doc:
        return arrays[doc["$array"]]
    if "$scalar" in doc:
        return np.dtype(doc["dtype"]).type(_decode(doc["$scalar"], arrays, depth + 1))
    if "$tensor" in doc:
        return Tensor(_decode(doc["$tensor"], arrays, depth + 1), doc["dtype"], doc["device"])
    if "$tuple" in doc:
        return tuple(_decode(v, arrays, depth + 1) for v in doc["$tuple"])
    if "$set" in doc:
        return {_decode(v, arrays, depth + 1) for v in doc["$set"]}
    if "$dict" in doc:
        return {_decode(k, arrays, depth + 1): _decode(v, arrays, depth + 1) for k, v in doc["$dict"]}
    raise WireError(f"unknown tag in result: {sorted(doc)[:3]}")


class Tensor:
    """A tensor as the student returned it: values, dtype name and device type.

    The grading process keeps torch out of its comparisons; graders that need
    the dtype or device (float64 kept? moved to cuda?) read them here.
    """

    __slots__ = ("values", "dtype", "device")

    def __init__(self, values: np.ndarray, dtype: str, device: str):
        self.values, self.dtype, self.device = values, dtype, device

    def __repr__(self) -> str:
        return f"Tensor(shape={self.values.shape}, dtype={self.dtype}, device={self.device})"

"""Plain data across the sandbox boundary, without pickle.

A value is written as JSON plus, for arrays, one `.npz` archive of stored
(uncompressed) members. Python's own types survive the trip (tuple vs list,
int vs float, dicts with non-string keys), so a grader can tell a student
"you returned a list where a tuple is expected". Anything else is refused at
encoding time, in the sandboxed child, with a message naming the type.

Decoding trusts nothing: the bytes come from a child that may have written
its frames itself. `decode` accepts only what `encode` can write, and no
more of it than any contract answer needs: numbers, strings, arrays of
numbers or strings, and containers of them, nested at most `MAX_DEPTH`
deep; integers within 64 bits; a JSON document of at most
`MAX_DOCUMENT_BYTES` and arrays of at most `MAX_ARRAY_BYTES`, their sizes
read from the archive's and the arrays' headers before anything is
allocated; compressed members refused (a few kilobytes could inflate to
gigabytes). Anything else is a `WireError` that says what was refused.
"""

from __future__ import annotations

import io
import json
import math
import re
import struct
import sys
import zipfile
from typing import Any, NoReturn

import numpy as np

from . import npy_members

MAX_DEPTH = 64
# What a decoded value may hold. The largest the graders send themselves (the transformer's train-step
# timing case on CUDA) is about 27 MiB of arrays, and no document passes 60 kB; answers are far smaller.
MAX_DOCUMENT_BYTES = 4 * 2**20
MAX_ARRAY_BYTES = 64 * 2**20
MAX_ARRAYS = 100_000
# What the grading process itself sends a run (cases, a stand-in's recorded calls) may be larger: a
# transformer's training run records about 1800 calls of its attention, some 70 MiB of arrays.
MAX_REQUEST_DOCUMENT_BYTES = 64 * 2**20
MAX_REQUEST_ARRAY_BYTES = 256 * 2**20
# Integers as numpy holds them: int64 and uint64. A count, an index or a seed fits.
INT_RANGE = (-(2**63), 2**64)
# numpy kinds that are plain data: booleans, integers, floats, complex numbers, strings.
PLAIN_KINDS = "biufcUS"
_HEADER = struct.Struct(">Q")


class WireError(ValueError):
    """A value that cannot cross the boundary, or bytes that do not decode."""


def plain_dtype(dtype: np.dtype) -> bool:
    """Whether arrays of `dtype` are plain data: numbers or strings, not records, objects or dates."""
    return dtype.kind in PLAIN_KINDS and dtype.fields is None and dtype.subdtype is None and not dtype.hasobject


def _plain_int(value: int, refused: str = "") -> int:
    if not INT_RANGE[0] <= value < INT_RANGE[1]:
        raise WireError(f"{refused}an integer of {_digits(value)} digits (integers must fit in 64 bits)")
    return value


def _digits(value: int) -> int:
    """How many decimal digits `value` has, without writing it out (3.11 refuses to past 4300)."""
    return max(1, math.ceil(abs(value).bit_length() * math.log10(2)))


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
        return _plain_int(int.__index__(value))
    if isinstance(value, float):
        value = float.__float__(value)
        return value if math.isfinite(value) else {"$float": repr(value)}
    if isinstance(value, np.generic) and type(value) is not np.object_:
        if not plain_dtype(value.dtype) or value.dtype.kind in "cS":
            raise WireError(f"a numpy scalar of dtype {value.dtype} cannot be graded")
        return {"$scalar": _encode(value.item(), arrays, depth + 1), "dtype": str(value.dtype)}
    if type(value) is np.ndarray:
        if not plain_dtype(value.dtype):
            raise WireError(f"a numpy array of dtype {value.dtype} cannot be graded")
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
    """The value `to_document` took apart; raises `WireError` on a malformed document or one that is not plain data."""
    try:
        return _decode(doc, arrays, 0)
    except WireError:
        raise
    except RecursionError:
        raise WireError(f"not plain data: nested deeper than {MAX_DEPTH} levels") from None
    except Exception as exc:  # malformed data from an untrusted writer
        raise WireError(f"undecodable result ({type(exc).__name__})") from None


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
    """The arrays of an npz archive written by `save_arrays`, compressed or not; never unpickles.

    For the grader's own files (recorded fixtures); what a child sent is read by `decode`.
    """
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
    # save_arrays' stored archive, byte for byte, laid out directly (`npy_members`).
    blob = npy_members.stored_archive(arrays) if arrays else b""
    return _HEADER.pack(len(text)) + text + blob


class Encoded:
    """A list of values encoded once (`encode`), to be sent as it is any number of times."""

    def __init__(self, values: list):
        self.blob = encode(values)
        self.count = len(values)

    def __len__(self) -> int:
        return self.count


def decode(data: bytes, *, max_document_bytes: int = MAX_DOCUMENT_BYTES, max_array_bytes: int | None = None) -> Any:
    """Decode what `encode` wrote; never unpickles, never executes anything, never inflates.

    Raises `WireError` for bytes `encode` cannot have written, for values that
    are not plain data, and for values larger than the caps (`max_document_bytes`,
    `max_array_bytes`), checked from the lengths before anything is allocated.
    """
    if len(data) < _HEADER.size:
        raise WireError("undecodable result (truncated)")
    (n,) = _HEADER.unpack_from(data)
    if n > len(data) - _HEADER.size:
        raise WireError("undecodable result (truncated)")
    if n > max_document_bytes:
        raise WireError(f"the answer's structure is {_mb(n)}, more than the grader accepts ({_mb(max_document_bytes)})")
    if max_array_bytes is None:  # the answers' cap, read now (a test may lower it)
        max_array_bytes = MAX_ARRAY_BYTES
    if len(data) - _HEADER.size - n > max_array_bytes:
        raise WireError(
            f"the answer's arrays are {_mb(len(data) - _HEADER.size - n)}, more than the grader accepts "
            f"({_mb(max_array_bytes)})"
        )
    view = memoryview(data)
    try:
        doc = json.loads(
            bytes(view[_HEADER.size : _HEADER.size + n]), parse_int=_parse_int, parse_constant=_refuse_constant
        )
    except WireError:
        raise
    except RecursionError:
        raise WireError(f"not plain data: nested deeper than {MAX_DEPTH} levels") from None
    except Exception as exc:  # malformed bytes from an untrusted writer
        raise WireError(f"undecodable result ({type(exc).__name__})") from None
    blob = view[_HEADER.size + n :]
    try:
        arrays = _stored_arrays(blob) if len(blob) else []
    except WireError:
        raise
    except Exception as exc:  # a header cut short, a field out of range
        raise WireError(f"undecodable result ({type(exc).__name__} in the arrays)") from None
    return from_document(doc, arrays)


def _mb(n: int) -> str:
    return f"{n / 2**20:.1f} MiB"


def _parse_int(text: str) -> int:
    # Called before the digits become an int: a million-digit number is refused unread.
    if len(text.lstrip("-")) > 20:
        raise WireError(f"not plain data: an integer of {len(text.lstrip('-'))} digits (integers must fit in 64 bits)")
    return _plain_int(int(text), "not plain data: ")


def _refuse_constant(text: str) -> float:
    raise WireError(f"undecodable result (bare {text} in the document)")


_LOCAL = struct.Struct("<IHHHHHIIIHH")  # a zip member's local header
_LOCAL_SIGNATURE, _CENTRAL_SIGNATURE = 0x04034B50, 0x02014B50
_ZIP64_EXTRA = 0x0001


def _stored_arrays(blob: memoryview) -> list[np.ndarray]:
    """The arrays of an archive `save_arrays` wrote: stored members arr_0.npy, arr_1.npy, ... in order.

    Read from the members' own headers, each size checked against the bytes
    that are there before an array is allocated; a compressed, encrypted or
    misnamed member, or an array that is not plain data, is refused.
    """
    arrays: list[np.ndarray] = []
    pos = 0
    while pos + 4 <= len(blob):
        (signature,) = struct.unpack_from("<I", blob, pos)
        if signature == _CENTRAL_SIGNATURE:  # the directory after the members: nothing more to read
            break
        if signature != _LOCAL_SIGNATURE or pos + _LOCAL.size > len(blob):
            raise WireError("undecodable result (not an archive of arrays)")
        _, _, flags, method, _, _, _, packed, size, name_len, extra_len = _LOCAL.unpack_from(blob, pos)
        if method != zipfile.ZIP_STORED:
            raise WireError("not plain data: a compressed array (the grader reads stored arrays only)")
        if flags & 0x9:  # encrypted, or sizes in a trailing descriptor instead of the header
            raise WireError("undecodable result (an array member the grader cannot read)")
        name_at = pos + _LOCAL.size
        data_at = name_at + name_len + extra_len
        if data_at > len(blob) or bytes(blob[name_at : name_at + name_len]) != f"arr_{len(arrays)}.npy".encode():
            raise WireError("undecodable result (not an archive of arrays)")
        if 0xFFFFFFFF in (packed, size):
            packed, size = _zip64_sizes(blob[name_at + name_len : data_at], packed, size)
        if packed != size or data_at + size > len(blob):
            raise WireError("undecodable result (an array's size does not match its bytes)")
        if len(arrays) >= MAX_ARRAYS:
            raise WireError(f"the answer holds more than {MAX_ARRAYS} arrays, more than the grader accepts")
        arrays.append(_npy(blob[data_at : data_at + size]))
        pos = data_at + size
    return arrays


def _zip64_sizes(extra: memoryview, packed: int, size: int) -> tuple[int, int]:
    """A member's sizes from its zip64 extra field: the original size, then the stored one, each there only
    where the header holds 0xFFFFFFFF in its place."""
    at = 0
    while at + 4 <= len(extra):
        kind, length = struct.unpack_from("<HH", extra, at)
        body = extra[at + 4 : at + 4 + length]
        if kind == _ZIP64_EXTRA:
            values = list(struct.unpack_from(f"<{len(body) // 8}Q", body))
            if size == 0xFFFFFFFF and values:
                size = values.pop(0)
            if packed == 0xFFFFFFFF and values:
                packed = values.pop(0)
            if 0xFFFFFFFF not in (packed, size):
                return packed, size
            break
        at += 4 + length
    raise WireError("undecodable result (an array member without its sizes)")


def _npy(member: memoryview) -> np.ndarray:
    """One .npy member: its header read and checked (plain dtype, shape times item size equal to the bytes that
    follow), then its data copied into a fresh array."""
    read = npy_members.header(member)  # the header numpy writes, read in one match
    if read is not None:
        shape, fortran, dtype, start = read
    else:  # any other form: numpy's own parser
        head = io.BytesIO(bytes(member[:65_536]))
        try:
            version = np.lib.format.read_magic(head)
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(head)
            elif version == (2, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(head)
            else:
                raise ValueError(f"npy version {version}")
        except Exception as exc:
            raise WireError(f"undecodable result (an array header: {type(exc).__name__})") from None
        start = head.tell()
    if not plain_dtype(dtype):
        raise WireError(f"not plain data: a numpy array of dtype {_dtype_words(dtype)}")
    count = math.prod(shape)
    if any(d < 0 for d in shape) or count * dtype.itemsize != len(member) - start:
        raise WireError("undecodable result (an array's shape does not match its bytes)")
    try:
        flat = np.frombuffer(member, dtype=dtype, count=count, offset=start)
        return flat.reshape(shape, order="F" if fortran else "C").copy(order="K")
    except ValueError:  # a shape numpy cannot make (too many dimensions, sizes past its index type)
        raise WireError("undecodable result (an array of a shape the grader cannot hold)") from None


def _dtype_words(dtype: np.dtype) -> str:
    if dtype.fields is not None:
        return "with named fields (a structured array)"
    if dtype.hasobject:
        return "object"
    return str(dtype)[:40]


def _unhashable(values: list, what: str) -> NoReturn:
    """Say which of `values` cannot be a set item or a dict key (a list, a dict, an array)."""
    for value in values:
        try:
            hash(value)
        except TypeError:
            raise WireError(f"not plain data: {what} that is a {type(value).__name__}") from None
    raise WireError(f"not plain data: {what} that cannot be hashed")


def _decode(doc: Any, arrays: list[np.ndarray], depth: int) -> Any:
    if type(doc) is str:  # the commonest leaf first (a vocabulary, a corpus)
        return doc
    if depth > MAX_DEPTH + 2:
        raise WireError(f"not plain data: nested deeper than {MAX_DEPTH} levels")
    if isinstance(doc, list):
        return [_decode(v, arrays, depth + 1) for v in doc]
    if type(doc) is int:
        return _plain_int(doc, "not plain data: ")
    if doc is None or isinstance(doc, (bool, float, str)):
        return doc
    if not isinstance(doc, dict):
        raise WireError("undecodable result (a malformed document)")
    if "$float" in doc:
        if doc["$float"] not in ("nan", "inf", "-inf"):
            raise WireError("undecodable result (a malformed float)")
        return float(doc["$float"])
    if "$array" in doc:
        index = doc["$array"]
        if type(index) is not int or not 0 <= index < len(arrays):
            raise WireError("undecodable result (a reference to a missing array)")
        return arrays[index]
    if "$scalar" in doc:
        return _scalar(_decode(doc["$scalar"], arrays, depth + 1), doc.get("dtype"))
    if "$tensor" in doc:
        values, dtype, device = _decode(doc["$tensor"], arrays, depth + 1), doc.get("dtype"), doc.get("device")
        if not isinstance(values, np.ndarray) or not _short_name(dtype) or not _short_name(device):
            raise WireError("undecodable result (a malformed tensor)")
        return Tensor(values, dtype, device)
    items = next((doc[tag] for tag in ("$tuple", "$set", "$dict") if tag in doc), None)
    if not isinstance(items, list):
        raise WireError("undecodable result (a malformed document)")
    if "$tuple" in doc:
        return tuple(_decode(v, arrays, depth + 1) for v in items)
    if "$set" in doc:
        values = [_decode(v, arrays, depth + 1) for v in items]
        try:
            return set(values)
        except TypeError:
            _unhashable(values, "a set item")
    if not all(isinstance(pair, list) and len(pair) == 2 for pair in items):
        raise WireError("undecodable result (a malformed dict)")
    keys = [_decode(k, arrays, depth + 1) for k, _ in items]
    try:
        return dict(zip(keys, [_decode(v, arrays, depth + 1) for _, v in items]))
    except TypeError:
        _unhashable(keys, "a dict key")


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_:]{0,31}")


def _short_name(value: Any) -> bool:
    """A dtype or device name as torch writes it ("float32", "cuda"), nothing longer."""
    return isinstance(value, str) and _NAME.fullmatch(value) is not None


def _scalar(value: Any, dtype_name: Any) -> np.generic:
    """A numpy scalar of a plain dtype, its value of the matching Python type."""
    try:
        dtype = np.dtype(dtype_name) if isinstance(dtype_name, str) and len(dtype_name) <= 16 else None
    except Exception:  # not a dtype numpy knows
        dtype = None
    if dtype is None or not plain_dtype(dtype) or dtype.kind in "cS":
        raise WireError("not plain data: a numpy scalar of a dtype that is not a number or a string")
    kinds = {"b": (bool,), "i": (int,), "u": (int,), "f": (float, int), "U": (str,)}[dtype.kind]
    if type(value) not in kinds:
        raise WireError("undecodable result (a numpy scalar that does not match its dtype)")
    try:
        with np.errstate(all="raise"):
            return dtype.type(value)
    except Exception:  # out of the dtype's range (300 as int8, 1e300 as float16)
        raise WireError(f"not plain data: a number out of the range of {dtype}") from None


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

"""The `.npy` members of the wire's stored archives, written and read in a few steps each.

A stand-in's recorded calls are thousands of small arrays (an LSTM cell's
every step): through `zipfile` and numpy's own header code they took 0.5 s
to write and 1.5 s to read for 18 000 arrays, longer than the run they fed.
Here each member is laid out directly, as `zipfile` writes a stored member
with a zip64 extra field and as `numpy.lib.format.write_array` writes an
array (the same bytes: numpy and `zipfile` read the archive, and the tests
compare the two writers). Reading takes the header numpy writes, and only
that form (`header`); any other header goes back to numpy's own parser.
"""

from __future__ import annotations

import re
import struct
import zlib

import numpy as np

MAGIC = b"\x93NUMPY"
ALIGN = 64  # numpy pads each header so that the data starts on a multiple of this
# A zip member's local header, and the central directory's record of it.
LOCAL = struct.Struct("<IHHHHHIIIHH")
CENTRAL = struct.Struct("<IHHHHHHIIIHHHHHII")
END = struct.Struct("<IHHHHIIH")
END64 = struct.Struct("<IQHHIIQQQQ")
LOCATOR64 = struct.Struct("<IIQI")
LOCAL_SIGNATURE, CENTRAL_SIGNATURE = 0x04034B50, 0x02014B50
END_SIGNATURE, END64_SIGNATURE, LOCATOR64_SIGNATURE = 0x06054B50, 0x06064B50, 0x07064B50
ZIP64_VERSION, DOS_1980 = 45, (0, 33)  # version needed for zip64; 1980-01-01 00:00 as (time, date)
MAX32 = 0xFFFFFFFF
ZIP64_LIMIT, COUNT_LIMIT = 2**31 - 1, 0xFFFF  # past these, zipfile writes zip64 records
READ_WRITE = 0o600 << 16  # the mode zipfile records for a member written through open(..., "w")

# The header numpy writes for a plain array: descr, then fortran_order, then shape, in that order.
_HEADER = re.compile(
    r"\{'descr': '([<>|=][a-zA-Z]\d+)', 'fortran_order': (True|False), 'shape': \(((?:\d+, )*\d*|\d+,)\), \} *\n"
)
_DTYPES: dict[str, np.dtype] = {}


def npy_bytes(array: np.ndarray) -> bytes:
    """A C-contiguous array of a plain dtype as `numpy.lib.format.write_array` writes it (versions 1.0 and 2.0)."""
    shape = repr(tuple(int(d) for d in array.shape))
    text = "{" + f"'descr': '{array.dtype.str}', 'fortran_order': False, 'shape': {shape}, " + "}"
    # Version 1.0 holds the header's length in 2 bytes; 2.0, for a longer header, in 4.
    version, length = b"\x01\x00", struct.Struct("<H")
    if len(text) + ALIGN + 10 >= 2**16:
        version, length = b"\x02\x00", struct.Struct("<I")
    fixed = len(MAGIC) + 2 + length.size
    head = (text + " " * (ALIGN - (fixed + len(text) + 1) % ALIGN) + "\n").encode("latin1")
    return MAGIC + version + length.pack(len(head)) + head + array.tobytes()


def header(member: memoryview) -> tuple[tuple[int, ...], bool, np.dtype, int] | None:
    """(shape, fortran order, dtype, where the data starts) of a member in the form `npy_bytes` writes; None
    for any other form, which numpy's own parser then reads."""
    if bytes(member[:6]) != MAGIC or len(member) < 10:
        return None
    major = member[6]
    if major == 1:
        (length,), start = struct.unpack_from("<H", member, 8), 10
    elif major == 2 and len(member) >= 12:
        (length,), start = struct.unpack_from("<I", member, 8), 12
    else:
        return None
    if member[7] != 0 or start + length > len(member) or length > 65_536:
        return None
    match = _HEADER.fullmatch(bytes(member[start : start + length]).decode("latin1"))
    if match is None:
        return None
    descr, fortran, dims = match.groups()
    dtype = _DTYPES.get(descr)
    if dtype is None:
        try:
            dtype = np.dtype(descr)
        except TypeError:
            return None
        _DTYPES[descr] = dtype
    shape = tuple(int(d) for d in dims.replace(",", " ").split())
    return shape, fortran == "True", dtype, start + length


def stored_archive(arrays: list[np.ndarray]) -> bytes:
    """The archive `wire.save_arrays` writes, stored: members arr_0.npy, arr_1.npy, ... each with a zip64
    extra field (as `zipfile` writes with force_zip64), then the central directory."""
    out, central = bytearray(), bytearray()
    for i, array in enumerate(arrays):
        data = npy_bytes(array)
        name = f"arr_{i}.npy".encode()
        crc, size, offset = zlib.crc32(data), len(data), len(out)
        extra = struct.pack("<HHQQ", 1, 16, size, size)
        out += LOCAL.pack(LOCAL_SIGNATURE, ZIP64_VERSION, 0, 0, *DOS_1980, crc, MAX32, MAX32, len(name), len(extra))
        out += name + extra + data
        # The directory needs zip64 only for what does not fit 32 bits, in this order.
        wide = [v for v in (size, size, offset) if v > ZIP64_LIMIT]
        record = struct.pack(f"<HH{len(wide)}Q", 1, 8 * len(wide), *wide) if wide else b""
        central += CENTRAL.pack(
            CENTRAL_SIGNATURE,
            (3 << 8) | ZIP64_VERSION,
            ZIP64_VERSION,
            0,
            0,
            *DOS_1980,
            crc,
            MAX32 if size > ZIP64_LIMIT else size,
            MAX32 if size > ZIP64_LIMIT else size,
            len(name),
            len(record),
            0,
            0,
            0,
            READ_WRITE,
            MAX32 if offset > ZIP64_LIMIT else offset,
        )
        central += name + record
    start, count = len(out), len(arrays)
    out += central
    if count > COUNT_LIMIT or start > ZIP64_LIMIT or len(central) > ZIP64_LIMIT:
        end64 = len(out)
        out += END64.pack(END64_SIGNATURE, 44, ZIP64_VERSION, ZIP64_VERSION, 0, 0, count, count, len(central), start)
        out += LOCATOR64.pack(LOCATOR64_SIGNATURE, 0, end64, 1)
    out += END.pack(
        END_SIGNATURE, 0, 0, min(count, 0xFFFF), min(count, 0xFFFF), min(len(central), MAX32), min(start, MAX32), 0
    )
    return bytes(out)

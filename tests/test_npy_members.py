"""The wire's archives laid out directly: the very bytes zipfile and numpy write, read back in one match."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest

from lmgrade.boundary import npy_members, wire

ARRAYS = [
    np.arange(12.0).reshape(3, 4),
    np.arange(5),
    np.array(3.5),
    np.zeros((0, 2)),
    np.array(["ab", "c"]),
    np.array([b"x"]),
    np.array([True, False]),
    np.ones((2, 3, 4), dtype=np.float32),
    np.array([1 + 2j]),
    np.zeros((1,) * 32),
    np.zeros(70_000, dtype=np.uint8),
]


@pytest.mark.parametrize("array", ARRAYS, ids=lambda a: f"{a.dtype}{a.shape}")
def test_a_member_is_what_numpy_writes_and_its_header_reads_back(array):
    written = io.BytesIO()
    np.lib.format.write_array(written, array, allow_pickle=False)
    assert npy_members.npy_bytes(array) == written.getvalue()
    shape, fortran, dtype, start = npy_members.header(memoryview(written.getvalue()))
    assert (shape, fortran, dtype) == (array.shape, False, array.dtype)
    assert written.getvalue()[start:] == array.tobytes()


@pytest.mark.parametrize("count", [3, 70_000], ids=["few", "past the 16-bit count"])
def test_an_archive_is_what_save_arrays_writes(count):
    arrays = [ARRAYS[i % len(ARRAYS)] if count < 100 else np.arange(i % 3) for i in range(count)]
    saved = io.BytesIO()
    wire.save_arrays(arrays, saved)
    assert npy_members.stored_archive(arrays) == saved.getvalue()
    with zipfile.ZipFile(io.BytesIO(npy_members.stored_archive(arrays))) as archive:
        assert archive.testzip() is None and len(archive.namelist()) == count


def test_a_header_in_another_form_is_left_to_numpys_parser():
    # Valid for numpy, with the keys in another order: not the form matched, read the slow way.
    text = "{'shape': (2,), 'fortran_order': False, 'descr': '<i8', }"
    head = (text + " " * (64 - (10 + len(text) + 1) % 64) + "\n").encode()
    member = b"\x93NUMPY\x01\x00" + len(head).to_bytes(2, "little") + head + np.arange(2).tobytes()
    assert npy_members.header(memoryview(member)) is None
    value = {"a": np.arange(2)}
    blob = bytearray(wire.encode(value))
    at = blob.index(b"\x93NUMPY")
    blob[at : at + len(member)] = member
    assert wire.identical(wire.decode(bytes(blob)), value)

"""Hypothesis strategies for what a hostile child can send the grading process: frames, answers, arrays.

Shared by the suite (`test_child_frames.py`, a few hundred examples each) and
the longer run of `benchmarks/fuzz_child_frames.py`. Each strategy draws
bytes a child could write to its result pipe: well-formed frames around
documents of any shape, the wire's own tags misused, npy members with any
dtype and shape in their headers, and plain noise.
"""

from __future__ import annotations

import io
import json
import struct
import warnings
import zipfile

import numpy as np
from hypothesis import strategies as st

from lmgrade.boundary import wire
from lmgrade.boundary.protocol import CASE_RESULT, CASE_START, DONE, HELLO, pack_frame

TAGS = ["$float", "$array", "$scalar", "dtype", "$tensor", "device", "$tuple", "$set", "$dict"]
OUTCOME_KEYS = ["ok", "error", "import_error", "forbidden", "timeout", "", "OK"]
ERROR_FIELDS = ["type", "message", "traceback", "file", "where"]
# Dtypes and shapes as an npy header may claim them: plain, structured, object, dates, nonsense.
DTYPES = [
    "<f8",
    ">f8",
    "<f2",
    "<i8",
    "|u1",
    "|b1",
    "<c16",
    "<U5",
    "|S3",
    "|O",
    "<M8[s]",
    "<m8[ns]",
    "|V8",
    "[('a', '<i4'), ('b', '<f8')]",
    "('<f8', (2, 2))",
    "object",
    "int",
    "<f99",
    "",
    "'",
    "[",
    "{}",
]
TRACEBACK_FILES = [
    "/tmp/x/lmgrade-run-a/submission/ngram.py",
    "/tmp/x/lmgrade-run-a/submission/../../proc/self/fd/1",
    "/tmp/x/lmgrade-run-a/submission//dev/zero",
    "/usr/lib/python3/site-packages/numpy/core.py",
    "<string>",
]

names = st.one_of(
    st.sampled_from(["ngram", "pad", "NGramLM", "__init__", "numpy.linalg.inv", "torch.nn.functional.softmax"]),
    st.text(max_size=30),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
    names,
)


def _tagged(children):
    return st.one_of(
        st.lists(children, max_size=5),
        st.dictionaries(st.sampled_from(TAGS) | st.text(max_size=8), children, max_size=3),
        st.builds(lambda c: {"$tuple": c}, st.lists(children, max_size=4)),
        st.builds(lambda c: {"$set": c}, st.lists(children, max_size=4)),
        st.builds(lambda c: {"$dict": c}, st.lists(st.lists(children, min_size=2, max_size=2), max_size=4)),
        st.builds(lambda i: {"$array": i}, st.integers(-3, 5) | scalars),
        st.builds(lambda v, d: {"$scalar": v, "dtype": d}, children, st.sampled_from(DTYPES) | scalars),
        st.builds(
            lambda v, d, dev: {"$tensor": v, "dtype": d, "device": dev},
            children,
            st.sampled_from(["float32", "float64", "int64"]) | scalars,
            st.sampled_from(["cpu", "cuda"]) | scalars,
        ),
        st.builds(lambda v: {"$float": v}, st.sampled_from(["nan", "inf", "-inf", "1e400", ""]) | scalars),
    )


documents = st.recursive(scalars, _tagged, max_leaves=25)


def traceback_text(files=TRACEBACK_FILES):
    frame = st.builds(
        lambda path, line, name, src: f'  File "{path}", line {line}, in {name}\n    {src}\n',
        st.sampled_from(files) | st.text(max_size=40),
        st.integers(-5, 10**12),
        names,
        st.text(max_size=30),
    )
    return st.builds(
        lambda frames, tail: "Traceback (most recent call last):\n" + "".join(frames) + tail,
        st.lists(frame, max_size=4),
        st.text(max_size=40),
    ) | st.text(max_size=200)


error_reports = st.one_of(
    st.dictionaries(
        st.sampled_from(ERROR_FIELDS) | st.text(max_size=5),
        st.one_of(scalars, traceback_text(), st.sampled_from(["NotImplementedError", "MemoryError", "WireError"])),
        max_size=6,
    ),
    documents,
)


@st.composite
def npy_members(draw) -> bytes:
    """One .npy member whose header claims any dtype and shape, followed by any number of bytes."""
    descr = draw(st.sampled_from(DTYPES))
    shape = draw(st.lists(st.integers(-2, 2**40) | st.integers(0, 4), max_size=4).map(tuple))
    header = "{'descr': %s, 'fortran_order': %s, 'shape': %r, }" % (
        descr if descr.startswith(("[", "(")) else repr(descr),
        draw(st.sampled_from(["False", "True", "0", "'x'"])),
        shape,
    )
    header = header.ljust(118) + "\n"
    version = draw(st.sampled_from([b"\x01\x00", b"\x02\x00", b"\x09\x00"]))
    size = struct.pack("<H" if version == b"\x01\x00" else "<I", len(header))
    data = draw(st.binary(max_size=64))
    real = draw(st.booleans())
    if real:  # a valid member of a random plain array
        array = np.frombuffer(data[: len(data) // 8 * 8], dtype="<f8")
        out = io.BytesIO()
        np.lib.format.write_array(out, array, allow_pickle=False)
        return out.getvalue()
    return b"\x93NUMPY" + version + size + header.encode("latin-1") + data


@st.composite
def archives(draw) -> bytes:
    members = draw(st.lists(npy_members(), max_size=3))
    method = draw(st.sampled_from([zipfile.ZIP_STORED, zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED]))
    out = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(out, "w", compression=method) as archive:
        warnings.simplefilter("ignore")  # a member's name given twice: as a hostile child may
        for i, member in enumerate(members):
            archive.writestr(draw(st.sampled_from([f"arr_{i}.npy", f"arr_{i + 1}.npy", "x"])), member)
    data = out.getvalue()
    cut = draw(st.integers(0, len(data)))
    return data if draw(st.booleans()) else data[:cut]


def _payload(doc, blob: bytes) -> bytes:
    text = json.dumps(doc, allow_nan=True).encode()
    return struct.pack(">Q", len(text)) + text + blob


def _encoded_answer(value) -> bytes:
    """An answer as the child's harness encodes it; where the encoder refuses it, as a child may write it."""
    try:
        return wire.encode({"ok": value})
    except wire.WireError:
        return _payload({"$dict": [["ok", value]]}, b"")


outcome_documents = st.one_of(
    st.builds(lambda k, v: {"$dict": [[k, v]]}, st.sampled_from(OUTCOME_KEYS), documents),
    st.builds(lambda k, v: {"$dict": [[k, v]]}, st.sampled_from(["error", "import_error"]), error_reports),
    st.builds(lambda v: {"$dict": [["forbidden", v]]}, st.lists(names | scalars, max_size=25) | documents),
    documents,
)

payloads = st.one_of(
    st.builds(_payload, outcome_documents, st.just(b"") | archives()),
    st.builds(_encoded_answer, st.recursive(scalars, lambda c: st.lists(c, max_size=4), max_leaves=10)),
    st.binary(max_size=200),
    st.builds(lambda n, rest: struct.pack(">Q", n) + rest, st.integers(0, 2**64 - 1), st.binary(max_size=40)),
)

HELLO_FRAME = pack_frame(HELLO, -1, wire.encode({"landlock": "full", "rlimits": True}))


@st.composite
def frame_streams(draw, cases: int) -> bytes:
    """What a child's result pipe may hold for a run of `cases` cases: the harness's HELLO, then any frames."""
    index = st.integers(-1, cases) | st.integers(-(2**31), 2**31 - 1)
    frame = st.one_of(
        st.builds(lambda i, p: pack_frame(CASE_RESULT, i, p), index, payloads),
        st.builds(lambda i: pack_frame(CASE_START, i), index),
        st.just(pack_frame(DONE, -1)),
        st.builds(lambda k, i, p: pack_frame(k, i, p), st.integers(0, 255), index, st.binary(max_size=20)),
    )
    body = b"".join(draw(st.lists(frame, max_size=2 * cases + 2)))
    tail = draw(st.binary(max_size=12))  # a frame cut short by the child's death
    return HELLO_FRAME + body + tail

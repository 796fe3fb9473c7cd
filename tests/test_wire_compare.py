"""Plain data across the boundary, and the words of a failed comparison."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from lmgrade.boundary import protocol, wire
from lmgrade.core.comparison import Tolerance, compare


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        3,
        -2.5,
        float("inf"),
        "text",
        [1, (2, 3)],
        {("a", "b"): {"c": 1}},
        {1, 2},
        np.arange(6.0).reshape(2, 3),
        np.float32(1.5),
    ],
)
def test_round_trip_keeps_values_and_types(value):
    back = wire.decode(wire.encode(value))
    if isinstance(value, np.ndarray):
        assert back.dtype == value.dtype and np.array_equal(back, value)
    else:
        assert back == value and type(back) is type(value)


def test_nested_arrays_round_trip():
    back = wire.decode(wire.encode({"nested": [np.zeros(3, dtype=np.int64)]}))
    assert back["nested"][0].dtype == np.int64 and back["nested"][0].tolist() == [0, 0, 0]


def test_nan_round_trips():
    assert math.isnan(wire.decode(wire.encode(float("nan"))))


def test_subclasses_travel_as_their_base_type():
    from collections import Counter, defaultdict, namedtuple

    counts = defaultdict(Counter)
    counts[("a",)]["b"] += 2
    assert wire.decode(wire.encode(counts)) == {("a",): {"b": 2}}
    point = namedtuple("Point", "x y")(1, 2.5)
    assert wire.decode(wire.encode(point)) == (1, 2.5)
    assert type(wire.decode(wire.encode(type("F", (float,), {})(1.5)))) is float


@pytest.mark.parametrize("value", [object(), np.array([object()]), lambda: 1])
def test_anything_else_is_refused(value):
    with pytest.raises(wire.WireError, match="cannot be graded"):
        wire.encode(value)


def test_pickles_and_garbage_are_not_decoded():
    with pytest.raises(wire.WireError):
        wire.decode(pickle.dumps({"score": 100}))
    with pytest.raises(wire.WireError):
        wire.decode(b"\x00" * 3)


def test_frames_split_cleanly():
    data = protocol.pack_frame(1, -1, b"abc") + protocol.pack_frame(3, 2, b"") + protocol.pack_frame(4, 0, b"xy")[:5]
    frames, rest = protocol.unpack_frames(data)
    assert frames == [(1, -1, b"abc"), (3, 2, b"")] and len(rest) == 5


TOL = Tolerance(rtol=1e-9, atol=1e-12)


def test_numbers_within_tolerance_match():
    assert compare(1.0, 1.0 + 1e-12, TOL) is None
    assert compare(float("-inf"), float("-inf"), TOL) is None
    assert compare(0.25, 1 / 4, TOL) is None


def test_a_wrong_number_says_where_and_by_how_much():
    msg = compare({"prob('a', [])": 0.25}, {"prob('a', [])": 0.3}, TOL)
    assert "at [\"prob('a', [])\"]" in msg and "expected 0.25, got 0.3" in msg and "error 0.05" in msg


def test_arrays_report_the_worst_index():
    expected = np.zeros((2, 3))
    got = expected.copy()
    got[1, 2] = 0.5
    got[0, 0] = 0.1
    msg = compare(expected, got, TOL)
    assert "2 of 6 values wrong" in msg and "index (1, 2)" in msg and "max error 0.5" in msg


def test_numbers_read_as_numbers_with_the_digits_the_tolerance_needs():
    msg = compare(np.float64(3.1644752406379517), np.float64(3.5), TOL)
    assert "expected 3.1644752406, got 3.5" in msg and "np.float64" not in msg
    # Two values that differ beyond the tolerance never print the same.
    msg = compare(np.array([1.0, 2.0]), np.array([1.0, 2.0 + 3e-9]), TOL)
    assert "expected 2.0, got 2.000000003" in msg and "np." not in msg
    assert "np." not in compare([np.float64(0.5)], [np.float64(0.5), np.int64(2)], TOL)
    # Arrays as arrays, long ones shortened.
    msg = compare([1.0], [np.linspace(0, 1, 100)], TOL)
    assert "array of shape (100,)" in msg
    from lmgrade.core.comparison import number, plain

    assert number(np.float32(0.1), Tolerance(rtol=2e-4)) == "0.1" and number(np.int64(3)) == "3"
    assert number(2.0, TOL) == "2.0" and number(float("inf"), TOL) == "inf"
    assert plain([np.float64(0.1), (np.int64(3),)]) == "[0.1, (3,)]"
    assert plain(np.arange(100.0)).startswith("[ 0.,  1.,  2., ...,")


def test_hidden_comparisons_say_only_how_many_values_are_wrong_and_by_how_much():
    expected = {"loss": 1.0, "grads['W']": np.zeros((4, 5)), "per sentence": [1.0, 2.0, 3.0]}
    got = {"loss": 1.0, "grads['W']": np.zeros((4, 5)), "per sentence": [1.0, 2.0, 3.0]}
    got["grads['W']"][3, 2] = 0.25
    got["grads['W']"][1, 1] = 0.125
    msg = compare(expected, got, TOL, reveal=False)
    assert (
        msg == "2 of 20 values wrong at [\"grads['W']\"]; the largest error is 0.25 (tolerance rtol 1e-09, atol 1e-12)"
    )
    got["grads['W']"][:] = 0
    got["per sentence"][2] = 3.5
    msg = compare(expected, got, TOL, reveal=False)
    assert msg == "wrong value at ['per sentence']: off by 0.5 (tolerance rtol 1e-09, atol 1e-12)"  # no [2]
    # A key made from the inputs is not said either.
    msg = compare({"prob('secret', ())": 0.25}, {"prob('secret', ())": 0.5}, TOL, reveal=False)
    assert "secret" not in msg and "0.25" in msg  # 0.25: the size of the miss
    assert "unexpected 1" in compare({"a": 1}, {"a": 1, "('secret',)": 2}, TOL, reveal=False)


def test_hidden_comparisons_never_show_the_expected_value():
    assert "0.25" not in compare(0.25, 0.3, TOL, reveal=False)
    assert "secret" not in compare(["secret"], ["other"], TOL, reveal=False)
    # The size of the miss is said (where the code returned zeros, it is the expected value's size).
    assert "7" not in compare(np.full(3, 7.0), np.full(3, 6.5), TOL, reveal=False)
    assert "missing" in compare({"secret": 1}, {}, TOL, reveal=False) and "secret" not in compare(
        {"secret": 1}, {}, TOL, reveal=False
    )


def test_type_mistakes_are_named():
    assert "expected a tuple" in compare((1, 2), [1, 2], TOL)
    assert "expected a dict" in compare({"a": 1}, [("a", 1)], TOL)
    assert "expected a number" in compare(1.0, "1.0", TOL)
    assert "wrong shape" in compare(np.zeros(3), np.zeros(4), TOL)
    assert "expected a list" in compare(["a"], np.array(["a"]), TOL)

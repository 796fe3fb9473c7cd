"""check --case's list of differences (reproduce.differences): one line per differing entry, whatever the shape."""

from __future__ import annotations

import numpy as np

from lmgrade.core.comparison import Tolerance
from lmgrade.grading.reproduce import differences


def test_each_differing_entry_of_an_array_is_one_line():
    lines = differences({"a": np.array([1.0, 2.0, 3.0])}, {"a": np.array([1.0, 5.0, 3.0])}, Tolerance())
    assert lines == ["['a'][1]: expected 2.0, got 5.0"]


def test_a_zero_dimensional_array_is_compared_as_one_number():
    (line,) = differences(np.array(1.0), np.array(2.0), Tolerance())
    assert "expected 1.0, got 2.0" in line
    assert differences(np.array(1.0), np.array(1.0), Tolerance()) == []

"""What the contract leaves free never costs a point, in any variant (tests/free_state.py)."""

from __future__ import annotations

import pytest
from free_state import FREE

from helpers import graded_in, variant_params
from lmgrade.flawed import write_flawed

# Slow: grades every variant of every assignment.
pytestmark = pytest.mark.slow


@pytest.mark.parametrize("name,pairs", [p for p in variant_params() if p.values[0] in FREE])
def test_state_the_contract_leaves_free_costs_nothing(graders, name, pairs, tmp_path):
    grader = graders(name, pairs)
    spec = grader.assignment.spec
    folder = write_flawed(spec.reference_folder(), spec.files, tmp_path / "free", FREE[name])
    lost = {
        v.check.name: v.output for v in grader.grade(folder, only=graded_in(grader.assignment, pairs)) if not v.passed
    }
    assert not lost, lost

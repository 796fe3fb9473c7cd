"""What the contract leaves free never costs a point, in any variant (tests/free_state.py)."""

from __future__ import annotations

import pytest
from free_state import FREE

from helpers import graded_in, study_unless, variant_params
from lmgrade.declare.flawed import write_flawed

# Slow: grades every variant of every assignment.
pytestmark = pytest.mark.slow


# The default variant of each in the suite (but the transformer's, which trains); every variant in the study.
@pytest.mark.parametrize(
    "name,pairs",
    [
        pytest.param(*p.values, id=p.id, marks=study_unless(not p.values[1] and p.values[0] != "transformer"))
        for p in variant_params()
        if p.values[0] in FREE
    ],
)
def test_state_the_contract_leaves_free_costs_nothing(graders, name, pairs, tmp_path):
    grader = graders(name, pairs)
    spec = grader.assignment.spec
    folder = write_flawed(spec.reference_folder(), spec.files, tmp_path / "free", FREE[name])
    lost = {
        v.check.name: v.output for v in grader.grade(folder, only=graded_in(grader.assignment, pairs)) if not v.passed
    }
    assert not lost, lost

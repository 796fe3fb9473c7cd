"""The zip's time advice: where the checks' time limits add up to more than a zip grades for, the build
names the Gradescope timeout to set (the limits' sum and the margin, rounded up to whole minutes) and the
LMGRADE_GRADESCOPE_TIMEOUT to build with; with them set, the limits fit."""

from __future__ import annotations

import pytest

from lmgrade.core.selection import Selection
from lmgrade.course.gradescope.config import (
    DEFAULT_TIMEOUT_S,
    MAX_TIMEOUT_S,
    TIMEOUT_ENV,
    TIMEOUT_MARGIN_S,
    timeout_advice,
    timeout_needed,
)
from lmgrade.declare import catalog


@pytest.mark.parametrize("worst_case_s", [556.0, 680.0, 1430.0, 2355.0])
def test_the_timeout_named_fits_every_limit_and_is_whole_minutes(worst_case_s):
    needed = timeout_needed(worst_case_s)
    assert needed % 60 == 0 and needed - 60 < worst_case_s + TIMEOUT_MARGIN_S <= needed
    advice = timeout_advice(worst_case_s, 600.0 - TIMEOUT_MARGIN_S)
    assert f"Set the autograder timeout on Gradescope to {needed // 60} minutes" in advice
    assert f"{TIMEOUT_ENV}={needed}." in advice and f"add up to {worst_case_s:g} s" in advice
    assert timeout_advice(worst_case_s, needed - TIMEOUT_MARGIN_S) is None  # built with it: nothing to say


def test_limits_past_gradescopes_longest_timeout_are_told_to_come_down():
    advice = timeout_advice(3000.0, 555.0)
    assert "past Gradescope's longest (40)" in advice and f"{TIMEOUT_ENV}={MAX_TIMEOUT_S:g}" in advice
    assert "lower the checks' limits" in advice


def test_limits_that_fit_need_no_advice():
    assert timeout_advice(555.0, 555.0) is None and timeout_advice(125.0, 555.0) is None


def _variants(name: str) -> list[tuple[str, ...]]:
    spec = catalog.load(Selection.parse(name, ()))[0].spec
    return [()] + [(f"{key}={value}",) for key, v in spec.variants.items() for value in v.choices]


@pytest.mark.parametrize("name", ["ngram", "rnn", "lstm", "embeddings", "seq2seq", "transformer"])
def test_a_built_in_assignments_default_zip_needs_no_other_timeout(name):
    # The floors of every check's limits (a timing check's once per sandboxed run) fit the time a zip built
    # for Gradescope's default timeout grades for, with room left for checks whose reference takes long
    # enough here that their limit follows it (`Limits.wall_factor`): a default zip names no timeout to set.
    budget = DEFAULT_TIMEOUT_S - TIMEOUT_MARGIN_S
    for variant in _variants(name):
        assignment, _ = catalog.load(Selection.parse(name, variant))
        floors = sum(c.limits.wall_s * (c.timing.sandboxed_runs if c.timing else 1) for c in assignment.checks)
        assert floors <= budget - 10, (variant, floors)

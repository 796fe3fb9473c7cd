"""A visible check's case N is the same case everywhere: on Gradescope, in a regrade and in a student's bundle.

Gradescope shows a visible check's inputs and expected values, and a student
reruns one of its cases with `lmgrade check --case CHECK:N`, which draws from
the public default secret (a bundle has no other). So every visible check
draws its cases from the public default whatever the course secret, while
every other check keeps following the course secret (and a student's own seed).
"""

from __future__ import annotations

import pytest

from helpers import ASSIGNMENTS, TEST_SECRET
from lmgrade.boundary import wire
from lmgrade.core.seeds import PUBLIC_SECRET, case_secret
from lmgrade.declare import catalog
from lmgrade.grading.expected_values import ExpectedValues, draw_cases
from lmgrade.grading.oracle import LiveReference
from lmgrade.grading.per_student import is_hidden


def _args(cases) -> list[bytes]:
    """Each case's arguments as bytes: arrays among them compare whole."""
    return [wire.encode(c.args) for c in cases]


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_a_visible_check_draws_the_public_cases_under_any_secret(name):
    assignment, variant = catalog.load(name)
    assignment = assignment.on("cpu")
    visible = [c for c in assignment.checks if c.visibility == "visible" and not c.unavailable]
    assert visible
    for check in visible:
        public = draw_cases(check, assignment.name, variant, PUBLIC_SECRET)
        for secret in (TEST_SECRET, "another course"):
            assert _args(draw_cases(check, assignment.name, variant, secret)) == _args(public), check.name


def test_a_grading_with_the_course_secret_numbers_the_public_cases_as_a_bundle_does(ngram_assignment):
    """What the course's grader runs as pad's case 1 is what a student's `check --case pad:1` runs."""
    assignment, variant = ngram_assignment
    oracle = LiveReference(assignment.spec)
    course = ExpectedValues(assignment, variant, oracle, secret=TEST_SECRET)
    student = ExpectedValues(assignment, variant, oracle, secret=PUBLIC_SECRET)
    pad = next(c for c in assignment.checks if c.name == "pad")
    assert _args(course.cases(pad)) == _args(student.cases(pad))
    hidden = next(c for c in assignment.checks if is_hidden(c))
    assert _args(course.cases(hidden)) != _args(student.cases(hidden))


def test_only_a_visible_check_leaves_the_course_secret():
    assert case_secret("visible", TEST_SECRET) == PUBLIC_SECRET
    for visibility in ("hidden", "after_due_date", "after_published"):
        assert case_secret(visibility, TEST_SECRET) == TEST_SECRET


@pytest.fixture(scope="module")
def ngram_assignment():
    assignment, variant = catalog.load("ngram")
    return assignment.on("cpu"), variant

"""A timing check states its own slow-code hint (`Timing.slow_hint`): a case slower than the bound is told
its times, then the check's hint, or by default the one for loops in Python."""

from __future__ import annotations

import dataclasses

import pytest

from lmgrade import Case, Check, Timing, Tolerance
from lmgrade.grading.timing_laps import SLOW_HINT
from lmgrade.grading.timing_verdicts import Laps, judge_case

CACHE_HINT = "The cache is the usual cause: generate must reuse past keys and values, not recompute them"


def speed_check(timing: Timing) -> Check:
    return Check(
        "speed",
        "a timed call",
        scenario=lambda m, a: None,
        make_cases=lambda ctx: [],
        tolerance=Tolerance(rtol=1e-3, atol=1e-3),
        timing=timing,
    )


def said_of(timing: Timing, student_seconds: float) -> str:
    """What a case says of laps this fast, against a reference's of 10 ms."""

    def laps(seconds: float) -> Laps:
        return Laps([seconds] * 8, [(i, [float(i)]) for i in range(10)])

    check = speed_check(timing)
    return judge_case(check, Case("x", {}), laps(0.01), laps(student_seconds), lambda n: [float(n)], "cpu").message


TIMING = Timing(setup=lambda m, a: None, step=lambda s, n: [0.0], warmup=1, laps=4, rounds=2)


def test_a_slow_case_is_told_the_checks_own_hint():
    said = said_of(dataclasses.replace(TIMING, slow_hint=CACHE_HINT), 0.05)
    assert "slower than the allowed 3x. " + CACHE_HINT in said and SLOW_HINT not in said


def test_without_a_hint_of_its_own_the_hint_is_the_loops_one():
    assert TIMING.slow_hint == SLOW_HINT
    assert said_of(TIMING, 0.05).endswith("slower than the allowed 3x. " + SLOW_HINT)


@pytest.mark.parametrize("seconds", [0.02, 0.0005])  # within the bound; suspiciously fast
def test_a_case_that_is_not_slow_is_told_no_hint(seconds):
    said = said_of(dataclasses.replace(TIMING, slow_hint=CACHE_HINT), seconds)
    assert CACHE_HINT not in said

"""Time limits follow the reference: a factor of its own time on the same cases, never below a floor."""

from __future__ import annotations

import time

from lmgrade.declare.checks import Case, Check
from lmgrade.declare.handout import limits_in_words
from lmgrade.grading.grader import Grader
from lmgrade.sandbox.limits import Limits


def test_limits_scale_with_the_reference_and_keep_their_floors():
    floors = Limits(cpu_s=4, wall_s=8, wall_factor=30)
    assert floors.following(None) == floors  # unknown (recorded fixtures): the floors
    assert floors.following(0.01) == floors  # a fast reference: the floors
    slow = floors.following(1.0)
    assert (slow.cpu_s, slow.wall_s) == (30.0, 30.0)  # 30 times a reference of one second
    assert Limits(cpu_s=4, wall_s=8, wall_factor=0).following(5.0).wall_s == 8  # fixed limits


class _SlowOracle:
    """A live reference (it has a folder) that takes at least 0.2 s per case."""

    reference_folder, modules = "somewhere", {}

    def protected_paths(self):
        return []

    def expected(self, check, cases):
        time.sleep(0.2 * len(cases))
        return [1.0 for _ in cases]


class _Recorded(_SlowOracle):
    reference_folder = None


def _check():
    return Check(
        "c",
        "c",
        scenario=lambda m, a: a,
        make_cases=lambda ctx: [Case("one", 1), Case("two", 2)],
        limits=Limits(cpu_s=1, wall_s=2, wall_factor=30),
    )


def test_the_grader_measures_the_reference_once_and_scales_the_check(ngram):
    assignment, variant = ngram
    check = _check()
    with Grader(assignment, variant, _SlowOracle(), secret="s") as grader:
        limits = grader.limits_of(check)
        assert limits.wall_s >= 30 * 0.4 and limits.cpu_s >= 30 * 0.4
        assert grader.limits_of(check) == limits  # measured once per grading
    with Grader(assignment, variant, _Recorded(), secret="s") as grader:
        assert grader.limits_of(check) == check.limits  # no live reference: the floors


def test_the_handout_states_each_limit_as_a_factor_and_a_floor():
    assert limits_in_words(_check()).startswith("30 times the reference's time, at least 2 s")

"""Messages say what is true of the submission they are shown to."""

from __future__ import annotations

import pytest

from lmgrade.core.comparison import Tolerance
from lmgrade.declare.checks import Case, Check
from lmgrade.grading.timing_laps import Timing
from lmgrade.grading.timing_verdicts import Laps, judge_case


def _timed_check():
    timing = Timing(setup=lambda m, a: None, step=lambda s, n: [0.0], warmup=0, laps=2, rounds=1)
    return Check(
        "attention_speed",
        "timed",
        scenario=lambda m, a: a,
        make_cases=lambda ctx: [],
        timing=timing,
        tolerance=Tolerance(rtol=1e-3, atol=1e-3),
        composes=("attention",),
    )


def _laps(fingerprint):
    return Laps(seconds=[0.01, 0.01], laps=[(1, fingerprint), (2, fingerprint)])


def test_a_timing_check_on_wrong_answers_says_so_and_names_the_numeric_check():
    check = _timed_check()
    verdict = judge_case(
        check,
        Case("c", {}),
        _laps([1.0]),
        _laps([5.0]),
        lambda nonce: [1.0],
        "cpu",
        wrong="attention",
    )
    assert not verdict.passed
    assert (
        "answers differ from the reference's" in verdict.message
        and "failed attention (see attention)" in verdict.message
    )
    assert "stream" not in verdict.message and "reused" not in verdict.message


def test_right_answers_that_differ_only_in_the_timed_call_are_told_why():
    check = _timed_check()
    verdict = judge_case(check, Case("c", {}), _laps([1.0]), _laps([5.0]), lambda nonce: [1.0], "cpu")
    assert not verdict.passed and "before the call returns" in verdict.message


def test_a_table_registered_as_a_frozen_parameter_is_not_said_to_train():
    torch = pytest.importorskip("torch")
    from lmgrade.plugins.transformer.public.position_scenarios import _registered

    lm = torch.nn.Module()
    lm.pos_enc = torch.nn.Parameter(torch.zeros(4, 2), requires_grad=False)
    said = _registered(lm)
    assert "requires_grad=False" in said and "does not train" in said and "would train" not in said
    lm.pos_enc = torch.nn.Parameter(torch.zeros(4, 2))
    assert "would train" in _registered(lm)
    del lm.pos_enc
    lm.register_buffer("pos_enc", torch.zeros(4, 2), persistent=False)
    assert _registered(lm) == "a buffer outside state_dict"

"""A right backward is never told it disagrees with finite differences, however large its loss or saturated its
units; a loss that is not finite gets no claim about the backward at all; a wrong backward is still told.

Every check of the numpy assignments that differentiates the submission's own forward (its answers carry "finite
differences") is run here on the reference, on its own cases and on the same cases with every float input scaled
up (losses in the thousands, sigmoids and tanhs at 0 or 1, softmaxes of one-hot rows).
"""

from __future__ import annotations

import numpy as np
import pytest

from helpers import TEST_SECRET
from lmgrade import AGREE, NOT_MEASURED, Tolerance, agreement, compare, finite_differences, which_half
from lmgrade.declare import catalog
from lmgrade.grading.expected_values import draw_cases
from lmgrade.grading.oracle import LiveReference, run_scenario

SCALES = (1.0, 30.0)
# Arguments whose values the scenario relies on as they are (probabilities, token ids, sizes).
KEPT = {"probs", "targets", "tokens", "seed"}


def _claims(value, path=()):
    """Every (path, text) of an answer whose key speaks of finite differences."""
    if isinstance(value, dict):
        for key, inner in value.items():
            if isinstance(key, str) and "finite differences" in key and isinstance(inner, str):
                yield (*path, key), inner
            else:
                yield from _claims(inner, (*path, key))


def _scaled(value, scale, name=""):
    if name in KEPT:
        return value
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return value * scale
    if isinstance(value, dict):
        return {k: _scaled(v, scale, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_scaled(v, scale, name) for v in value]
    return value


def _differentiating_checks():
    for name in ("rnn", "lstm", "embeddings"):
        assignment, variant = catalog.load(name)
        oracle = LiveReference(assignment.spec)
        for check in assignment.checks:
            cases = draw_cases(check, name, variant, TEST_SECRET)
            answer = run_scenario(check, oracle.modules, cases[0])
            if any(True for _ in _claims(answer)):
                yield pytest.param(oracle, check, cases, id=f"{name}-{check.name}")


@pytest.mark.slow
@pytest.mark.parametrize("oracle,check,cases", list(_differentiating_checks()))
def test_a_right_backward_agrees_with_finite_differences_at_every_scale(oracle, check, cases):
    claims = []
    for scale in SCALES:
        for case in cases:
            scaled = type(case)(case.label, _scaled(case.args, scale), case.tolerance)
            try:
                answer = run_scenario(check, oracle.modules, scaled)
            except Exception:  # the scaled input is outside the function's domain: no claim to check
                continue
            claims += [(scale, case.label, path, text) for path, text in _claims(answer)]
    assert claims
    wrong = [c for c in claims if c[3] != AGREE and not c[3].startswith(NOT_MEASURED)]
    assert not wrong, wrong[:5]


def _quadratic(scale):
    """A loss of about `scale` squared and its true gradient."""
    x = np.linspace(-1.0, 1.0, 7) * scale
    point = {"x": x.copy()}
    return point, (lambda: float(np.sum(point["x"] ** 2) + 0.5 * np.sum(point["x"] ** 3))), 2 * x + 1.5 * x**2


@pytest.mark.parametrize("scale", [1.0, 1e2, 1e4])
def test_the_differences_of_a_large_loss_agree_with_its_gradient_and_not_with_a_wrong_one(scale):
    point, loss, grad = _quadratic(scale)
    numeric = finite_differences(loss, dict(point), point.__setitem__)
    assert agreement({"x": grad}, numeric) == AGREE
    assert agreement({"x": grad * 1.001}, numeric).startswith("disagree")
    assert agreement({"x": grad + 1e-2 * scale}, numeric).startswith("disagree")


def test_a_loss_that_is_not_finite_gets_no_claim_about_the_backward():
    point = {"x": np.array([0.0, 1.0])}
    with np.errstate(divide="ignore", invalid="ignore"):
        numeric = finite_differences(lambda: float(np.sum(np.log(point["x"]))), dict(point), point.__setitem__)
    said = agreement({"x": np.array([1.0, 1.0])}, numeric)
    assert said.startswith(NOT_MEASURED)
    message = which_half("the value is inf", None, "loss", False, said)
    assert "agree" not in message and "not finite" in message
    # A right forward beside it: the backward is wrong, and nothing is claimed about finite differences.
    message = which_half(None, "2 of 2 values wrong", "loss", False, said)
    assert message.startswith("the backward is wrong") and "agree" not in message


def test_a_hidden_case_says_only_that_they_disagree():
    message = which_half(None, "wrong", "forward", False, "disagree at W (child's words)", reveal=False)
    assert "they disagree" in message and "child's words" not in message


def test_answers_computed_in_float32_are_told_so_and_get_no_claim_about_the_backward():
    tol = Tolerance(rtol=1e-9, atol=1e-12)
    rng = np.random.default_rng(0)
    right = rng.standard_normal((4, 5))
    through_float32 = right.astype(np.float32).astype(np.float64)
    said = compare({"forward": right}, {"forward": through_float32}, tol)
    assert "what computing in float32 leaves" in said
    assert "values are float32" in compare({"forward": right}, {"forward": right.astype(np.float32)}, tol)
    # A wrong value far beyond float32's rounding is not blamed on it, nor is a float32 difference in a
    # check whose tolerance is float32's already.
    assert "float32" not in compare({"forward": right}, {"forward": right * 1.01}, tol)
    assert compare({"forward": right}, {"forward": through_float32}, Tolerance(rtol=1e-4, atol=1e-5)) is None
    message = which_half(said, None, "forward", False, "disagree at dx")
    assert "finite differences" not in message and "float32" in message

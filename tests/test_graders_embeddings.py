"""The embeddings graders' words are true of the submission they are shown to.

Where a check's feedback names another check ("Passes once SkipGram.step is
fixed: SkipGram.step differs (see step)", "fix the loss first (see the check
sgns_loss)"), that
check lost points in the same grading; where it says a function is right at
a point, that function's check passed.
"""

from __future__ import annotations

import re

import pytest

from lmgrade.declare import catalog

NAMED = re.compile(r"see (?:the check )?(\w+)(?:\)|: fix that first)")
# Bugs whose feedback names other checks: in a function a method builds on, or beside a property.
COMPOSED = [
    "positive_term_sign",
    "dw_without_negatives",
    "c_updated_before_w_gradient",
    "window_counts_the_centre",
    "counts_not_raised",
    "ties_by_first_occurrence",
]


@pytest.fixture(scope="session")
def graded(bug_verdicts):
    # Graded once a session per worker, with test_assignments.py's bug tests.
    return {name: {v.check.name: v for v in bug_verdicts("embeddings", name)} for name in COMPOSED}


@pytest.mark.parametrize("bug", COMPOSED)
def test_every_check_a_message_names_lost_points_too(graded, bug):
    verdicts = graded[bug]
    named = {(v.check.name, other) for v in verdicts.values() for other in NAMED.findall(v.output)}
    # Named nowhere: a tie only train_bpe shows, and a step whose train has no stand-in (step's effect is
    # SkipGram's state, which the contract leaves free), so train keeps its own verdict and blames nothing.
    assert named or bug in ("ties_by_first_occurrence", "c_updated_before_w_gradient")
    for check, other in named:
        assert verdicts[other].score < verdicts[other].max_score, f"{check} names {other}, which passed"


@pytest.mark.parametrize("bug", COMPOSED)
def test_a_bug_loses_points_only_where_it_is_and_where_its_function_is_used(graded, bug):
    loses = catalog.bugs("embeddings")[bug].loses
    lost = {name for name, v in graded[bug].items() if v.score < v.max_score}
    # Nowhere but the checks the catalogue names: a composed check is paid by its run with the
    # grader's stand-in for the function, or where its answers are exactly the function's named
    # mistake's; a property beside any other wrong answer of the function earns nothing.
    assert lost == set(loses), lost


def test_a_wrong_gradient_is_told_that_its_own_loss_is_right(graded):
    output = graded["dw_without_negatives"]["sgns_grads"].output
    assert "Your sgns_loss is right at this point" in output
    assert graded["dw_without_negatives"]["sgns_loss"].passed


def test_gradients_of_a_wrong_loss_are_sent_to_the_loss_first(graded):
    output = graded["positive_term_sign"]["sgns_grads"].output
    assert "They are the gradients of your own sgns_loss" in output and "fix the loss first" in output
    assert not graded["positive_term_sign"]["sgns_loss"].passed

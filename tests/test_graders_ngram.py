"""The ngram graders, proved: full marks for the reference, zero for the stub,
points lost on the right check for every buggy implementation."""

from __future__ import annotations

import pytest

from autograder import templates
from plugins.ngram.bugs import BUGS
from conftest import by_name


def test_the_catalogue_is_large_enough():
    assert len(BUGS) >= 10 and all(bug.loses for bug in BUGS.values())


def test_reference_gets_full_marks(ngram_grader, reference_submission):
    verdicts = ngram_grader.grade(reference_submission)
    for v in verdicts:
        assert v.passed, f"{v.check.name}: {v.output}"
    assert sum(v.score for v in verdicts) == sum(v.max_score for v in verdicts) == 100


def test_generated_stub_gets_zero_not_implemented(ngram_grader, ngram, tmp_path):
    assignment, variant = ngram
    templates.generate(assignment, variant, tmp_path)
    verdicts = ngram_grader.grade(tmp_path)
    assert sum(v.score for v in verdicts) == 0
    for v in verdicts:
        if v.check.name != "bad_arguments":  # asks for ValueError, gets NotImplementedError
            assert "not implemented" in v.output, v.output


@pytest.mark.parametrize("bug", sorted(BUGS))
def test_each_bug_loses_points_on_the_right_check(bug, ngram_grader, buggy):
    verdicts = by_name(ngram_grader.grade(buggy[bug]))
    for name, words in BUGS[bug].loses.items():
        v = verdicts[name]
        assert v.score < v.max_score, f"{bug} should lose points on {name}"
        assert words in v.output, f"{bug}/{name}: {words!r} not in feedback:\n{v.output}"
    assert sum(v.score for v in verdicts.values()) < 100


def test_a_bug_elsewhere_does_not_cost_the_sample_check(ngram_grader, buggy):
    verdicts = by_name(ngram_grader.grade(buggy["count_ngrams_missing"]))
    assert verdicts["sample"].passed, verdicts["sample"].output


def test_hidden_checks_never_show_expected_values(ngram_grader, buggy):
    verdicts = by_name(ngram_grader.grade(buggy["perplexity_without_eos"]))
    hidden = verdicts["perplexity_hidden"]
    assert hidden.score < hidden.max_score
    assert "expected" not in hidden.output and "hidden input" in hidden.output
    visible = verdicts["perplexity"]
    assert "expected" in visible.output

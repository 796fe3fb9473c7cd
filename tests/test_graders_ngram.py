"""What only the ngram graders promise (the proofs every assignment shares are in test_assignments.py)."""

from __future__ import annotations

from helpers import by_name


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

"""The ngram graders, proved: full marks for the reference, zero for the stub,
points lost on the right check for every buggy implementation."""

from __future__ import annotations

import pytest

from autograder import templates
from conftest import BUGGY_NGRAM, by_name

# bug -> {check that must lose points: words its feedback must contain}
CATALOGUE = {
    "eos_per_order": {"pad": "n - 1 EOS markers", "count_ngrams": "n - 1 EOS markers", "prob_mle": ""},
    "no_bos_padding": {"pad": "not padded with n - 1 BOS", "count_ngrams": "BOS"},
    "bos_in_vocab": {"fit": "BOS is counted in the vocabulary", "prob_add_k": "BOS is counted"},
    "no_unk_in_vocab": {"fit": "UNK is not added", "prob_add_k": "UNK is not added"},
    "add_k_denominator": {"prob_add_k": "adds k to the context count"},
    "unseen_context_division": {"prob_mle": "ZeroDivisionError"},
    "context_not_truncated": {"prob_mle": "wrong value"},
    "log_base_2": {"logprob": "base 2", "perplexity": "base 2"},
    "logprob_without_eos": {"logprob": "final EOS is not predicted"},
    "log_of_zero": {"logprob": "ValueError", "perplexity": "ValueError"},
    "perplexity_mean_of_sentences": {"perplexity": "averaged over sentences", "perplexity_hidden": "averaged"},
    "perplexity_without_eos": {"perplexity": "leaves out the EOS"},
    "sample_global_random": {"sample": "same seed gave different draws"},
    "sample_greedy": {"sample": "ignores rng"},
    "sample_stale_context": {"sample": "do not follow p(. | context)"},
    "sample_never_stops": {"sample": "time limit exceeded"},
    "pad_mutates": {"no_mutation": "wrong"},
    "no_validation": {"bad_arguments": "expected 'ValueError', got 'no exception'"},
}


def test_the_catalogue_is_complete():
    assert sorted(p.name for p in BUGGY_NGRAM.iterdir() if p.is_dir()) == sorted(CATALOGUE)
    assert len(CATALOGUE) >= 10


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


@pytest.mark.parametrize("bug", sorted(CATALOGUE))
def test_each_bug_loses_points_on_the_right_check(bug, ngram_grader):
    verdicts = by_name(ngram_grader.grade(BUGGY_NGRAM / bug))
    expected = CATALOGUE[bug]
    for name, words in expected.items():
        v = verdicts[name]
        assert v.score < v.max_score, f"{bug} should lose points on {name}"
        assert words in v.output, f"{bug}/{name}: {words!r} not in feedback:\n{v.output}"
    assert sum(v.score for v in verdicts.values()) < 100


def test_hidden_checks_never_show_expected_values(ngram_grader):
    verdicts = by_name(ngram_grader.grade(BUGGY_NGRAM / "perplexity_without_eos"))
    hidden = verdicts["perplexity_hidden"]
    assert hidden.score < hidden.max_score
    assert "expected" not in hidden.output and "hidden input" in hidden.output
    visible = verdicts["perplexity"]
    assert "expected" in visible.output

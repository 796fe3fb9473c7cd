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
    assert "expected" not in hidden.output and ("hidden input" in hidden.output or "every case: " in hidden.output)
    visible = verdicts["perplexity"]
    assert "expected" in visible.output


def test_a_mistake_that_raises_is_named_where_the_same_exception_comes_on_the_same_cases(ngram_grader, buggy, tmp_path):
    """An unseen context divided by: ZeroDivisionError on exactly the cases the known mistake raises on."""
    verdict = by_name(ngram_grader.grade(buggy["unseen_context_division"], only={"prob_mle"}))["prob_mle"]
    assert "Every failed case matches a known mistake" in verdict.output
    assert "an unseen context gives every word probability 0" in verdict.output
    # Another exception on those cases is not that mistake: nothing is named.
    source = (buggy["unseen_context_division"] / "ngram.py").read_text()
    other = source.replace("return c_ctx_w / c_ctx\n", "return c_ctx_w / c_ctx if c_ctx else {}[0]\n", 1)
    assert other != source
    (tmp_path / "ngram.py").write_text(other)
    verdict = by_name(ngram_grader.grade(tmp_path, only={"prob_mle"}))["prob_mle"]
    assert "KeyError" in verdict.output and "known mistake" not in verdict.output


def test_a_submission_that_raises_everywhere_is_told_no_mistake(ngram_grader, tmp_path):
    """No case answered: a mistake that raises alike explains nothing of it (a stub, a cheat that raises)."""
    (tmp_path / "ngram.py").write_text(
        "BOS, EOS, UNK = '<s>', '</s>', '<unk>'\n"
        "def pad(sentence, n):\n    raise ZeroDivisionError\n"
        "def count_ngrams(corpus, n):\n    raise ZeroDivisionError\n"
        "class NGramLM:\n"
        "    def __init__(self, n, k=0.0):\n        self.n, self.k = n, k\n"
        "    def fit(self, corpus):\n        return self\n"
        "    def prob(self, word, context):\n        raise ZeroDivisionError\n"
    )
    verdict = by_name(ngram_grader.grade(tmp_path, only={"prob_mle"}))["prob_mle"]
    assert verdict.score == 0 and "ZeroDivisionError" in verdict.output
    assert "known mistake" not in verdict.output

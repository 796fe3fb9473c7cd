"""The reference against hand-computed values, the contract, and NLTK's MLE."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from lmgrade.plugins.ngram.checks import COWS
from lmgrade.plugins.ngram.corpus import sentences
from lmgrade.reference.ngram import ngram as ref


def test_pad_example_from_the_contract():
    assert ref.pad(["a", "b"], 3) == ["<s>", "<s>", "a", "b", "</s>"]
    assert ref.pad([], 1) == ["</s>"]


def test_cows_eat_trigram_probabilities():
    lm = ref.NGramLM(3).fit(COWS)
    got = {w: lm.prob(w, ["cows", "eat"]) for w in ("corn", "grass", "hay", ref.EOS)}
    assert got == {"corn": 4 / 11, "grass": 3 / 11, "hay": 2 / 11, ref.EOS: 2 / 11}
    assert [Fraction(v).limit_denominator(100) for v in got.values()] == [
        Fraction(4, 11),
        Fraction(3, 11),
        Fraction(2, 11),
        Fraction(2, 11),
    ]


def test_count_ngrams_by_hand():
    counts = ref.count_ngrams([["a", "b", "a"], []], 2)
    assert counts == {("<s>",): {"a": 1, "</s>": 1}, ("a",): {"b": 1, "</s>": 1}, ("b",): {"a": 1}}
    assert ref.count_ngrams([["a", "a"]], 1) == {(): {"a": 2, "</s>": 1}}


def test_vocab_has_eos_and_unk_but_not_bos():
    lm = ref.NGramLM(2).fit([["x"]])
    assert lm.vocab == {"x", "</s>", "<unk>"}


def test_add_k_by_hand():
    lm = ref.NGramLM(2, k=1).fit([["a", "b"]])  # vocab {a, b, </s>, <unk>}
    assert lm.prob("b", ["a"]) == (1 + 1) / (1 + 4)
    assert lm.prob("zebra", ["a"]) == (0 + 1) / (1 + 4)  # zebra -> <unk>
    assert lm.prob("a", ["zebra"]) == 1 / 4  # unseen context: uniform


@pytest.mark.parametrize("n,k", [(1, 0.0), (2, 0.0), (3, 0.0), (2, 0.5), (3, 1.0)])
def test_prob_sums_to_one_over_vocab(n, k):
    corpus = sentences(np.random.default_rng(0), 50)
    lm = ref.NGramLM(n, k).fit(corpus)
    contexts = list(ref.count_ngrams(corpus, n))
    if k > 0:
        contexts.append(("zebra",) * (n - 1))
    for ctx in contexts:
        assert math.isclose(sum(lm.prob(w, ctx) for w in lm.vocab), 1.0, rel_tol=1e-12)


def test_logprob_and_perplexity_infinite_for_impossible_sentences():
    lm = ref.NGramLM(2).fit([["a", "b"]])
    assert lm.logprob(["b", "a"]) == -math.inf
    assert lm.perplexity([["a", "b"], ["b"]]) == math.inf


def test_perplexity_counts_eos_not_bos():
    lm = ref.NGramLM(1).fit([["a", "b"]])  # p(a) = p(b) = p(</s>) = 1/3
    assert math.isclose(lm.perplexity([["a"], ["a", "b", "a"]]), 3.0)


@pytest.mark.parametrize(
    "bad",
    [
        lambda: ref.pad(["a"], 0),
        lambda: ref.count_ngrams([], -1),
        lambda: ref.NGramLM(0),
        lambda: ref.NGramLM(2, k=-0.1),
    ],
)
def test_value_errors(bad):
    with pytest.raises(ValueError):
        bad()


def test_sample_uses_only_rng_and_respects_max_len():
    lm = ref.NGramLM(2, k=0.5).fit(sentences(np.random.default_rng(1), 20))
    a = [lm.sample(np.random.default_rng(7), max_len=4) for _ in range(20)]
    np.random.seed(123)
    b = [lm.sample(np.random.default_rng(7), max_len=4) for _ in range(20)]
    assert a == b and all(len(s) <= 4 for s in a)


def test_agrees_with_nltk_mle():
    """NLTK's MLE pads both ends with n - 1 markers; on the BOS-padded side the
    conventions agree, so compare conditional probabilities there."""
    lm_module = pytest.importorskip("nltk.lm")
    from nltk.lm.preprocessing import padded_everygram_pipeline

    corpus = sentences(np.random.default_rng(3), 60)
    for n in (2, 3):
        train, vocab = padded_everygram_pipeline(n, corpus)
        theirs = lm_module.MLE(n)
        theirs.fit(train, vocab)
        ours = ref.NGramLM(n).fit(corpus)
        checked = 0
        for context, words in ref.count_ngrams(corpus, n).items():
            for word in words:
                if word == ref.EOS:
                    continue  # NLTK pads the end with n - 1 markers, the contract with one
                assert math.isclose(ours.prob(word, context), theirs.score(word, list(context)), rel_tol=1e-12)
                checked += 1
        assert checked > 50


def test_the_grammar_draws_what_generator_choice_draws():
    """The corpora of every grading drawn faster, the same sentences: cases and stored values stay put."""
    from lmgrade.plugins.ngram.corpus import GRAMMAR

    def by_choice(symbol, rng, out):
        if symbol not in GRAMMAR:
            out.append(symbol)
            return
        weights = np.array([w for w, _ in GRAMMAR[symbol]])
        for child in GRAMMAR[symbol][rng.choice(len(weights), p=weights / weights.sum())][1]:
            by_choice(child, rng, out)

    for seed in range(20):
        drawn, chosen = np.random.default_rng(seed), np.random.default_rng(seed)
        expected = []
        for _ in range(30):
            expected.append([])
            by_choice("S", chosen, expected[-1])
        assert sentences(drawn, 30) == expected
        assert drawn.random() == chosen.random()  # and the generator is left where choice leaves it


def test_a_grammar_with_weights_choice_refuses_is_refused():
    for weights in ([-1.0, 2.0], [0.0, 0.0]):
        grammar = {"S": [(w, [word]) for w, word in zip(weights, "ab")]}
        with pytest.raises(ValueError, match="weights must be >= 0"):
            sentences(np.random.default_rng(0), 1, grammar)

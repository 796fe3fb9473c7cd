"""The sampling judges' shared tests (lmgrade.core.stats): the seeding rule's level."""

from __future__ import annotations

from lmgrade.core.stats import collision_estimate, seeding_problem


def _answer(draws, other):
    return {"draws": draws, "again": draws[: len(other)], "other": other}


def test_a_likely_outcome_repeated_by_another_seed_is_no_proof_of_ignoring_rng():
    # One outcome of probability 0.9: 30 draws repeat under another seed in 4% of runs.
    draws = [[0]] * 30
    got = _answer(draws, [[0]] * 30)
    assert seeding_problem(got, got, 30, collision=0.9**2 + 0.1**2) is None


def test_another_seed_repeating_varied_draws_ignores_rng():
    draws = [[i % 3] for i in range(30)]
    got = _answer(draws, draws)
    assert "ignores rng" in seeding_problem(got, got, 30, collision=1 / 3)


def test_the_collision_probability_is_estimated_from_the_reference_draws_where_not_given():
    assert collision_estimate([[1], [1], [1], [1]]) == 1.0
    assert collision_estimate([[1], [2], [1], [2]]) == 1 / 3  # 2 * (2 * 1) pairs of 4 * 3
    single = {"draws": [[5]] * 10, "again": [[5]] * 10, "other": [[5]] * 10}
    assert seeding_problem(single, single, 10) is None  # one possible outcome: nothing to prove


def _bigram():
    from lmgrade.plugins.ngram.public.sampling import _Model

    # After BOS: a, b or EOS; after a or b: EOS only.
    table = {("<s>",): [0.4, 0.4, 0.2], ("a",): [0.0, 0.0, 1.0], ("b",): [0.0, 0.0, 1.0]}
    return _Model({"vocab": ["a", "b", "</s>"], "table": table}, 2, 0.0)


def test_a_context_that_never_moves_is_named_by_its_likelihood_ratio():
    from lmgrade.plugins.ngram.public.sampling import _stale_context

    stale = [("a", "b"), ("b",), ("a", "a", "a"), ()] * 5  # every word drawn from p(. | <s>)
    assert "move the context forward" in _stale_context(_bigram(), stale, 100)
    right = [("a",), ("b",), ("a",), ()] * 50
    assert _stale_context(_bigram(), right, 100) is None

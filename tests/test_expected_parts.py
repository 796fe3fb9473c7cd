"""The expected value's own part of an answer (`lmgrade.expected_only`): computed for the reference, never for
a submission, whose judge reads it from the expected value alone."""

from __future__ import annotations

import pickle
import threading
import types

import pytest
from sandbox_fixtures import sandbox_pool, submission_of

from lmgrade import UNEXPLAINED, expected_only, explained
from lmgrade.core.expected_only import answering_as_a_submission
from lmgrade.core.explanations import not_explaining
from lmgrade.core.selection import Selection
from lmgrade.declare import catalog
from lmgrade.grading import stand_in
from lmgrade.grading.expected_values import draw_cases
from lmgrade.grading.oracle import LiveReference, run_scenario
from lmgrade.plugins.transformer.public.judges import judge_generate
from lmgrade.sandbox.limits import Limits

# The two parts a scenario's answer may leave out: the block that leaves it out, the part, and what it is then.
PARTS = pytest.mark.parametrize(
    "block,part,left_out",
    [(answering_as_a_submission, expected_only, None), (not_explaining, explained, UNEXPLAINED)],
    ids=["expected_only", "explained"],
)


@PARTS
def test_computed_by_default_and_left_out_inside_the_block(block, part, left_out):
    calls = []

    def table():
        calls.append(1)
        return "table"

    assert part(table) == "table"
    with block():
        assert part(table) == left_out
        with block():
            assert part(table) == left_out
        assert part(table) == left_out
    assert part(table) == "table"
    assert len(calls) == 2


@PARTS
def test_one_thread_leaving_a_part_out_leaves_the_others_computing_it(block, part, left_out):
    """The grading process records stand-ins in some threads while others compute expected values."""
    inside, release, seen = threading.Event(), threading.Event(), []

    def recording():
        with block():
            inside.set()
            release.wait(5)
            seen.append(("recording", part(lambda: "table")))

    thread = threading.Thread(target=recording)
    thread.start()
    inside.wait(5)
    seen.append(("expected", part(lambda: "table")))
    release.set()
    thread.join(5)
    assert sorted(seen, key=str) == sorted([("expected", "table"), ("recording", left_out)], key=str)


def test_the_sandboxed_child_leaves_it_out(tmp_path_factory):
    victim = submission_of(tmp_path_factory, "victim", "def double(x):\n    return 2 * x\n")
    with sandbox_pool() as pool:
        (outcome,) = pool.run(
            scenario="sandbox_fixtures.scenarios:with_expected_part",
            submission=victim,
            files=["victim.py"],
            cases=[{"fn": "double", "args": [4]}],
            limits=Limits(cpu_s=2, wall_s=4, memory_mb=512),
        ).outcomes
    assert outcome.kind == "ok", outcome.message
    assert outcome.value == {"answer": 8, "table": None}


def _toy():
    module = types.ModuleType("toy")
    module.prob = lambda word: {"a": 0.75, "b": 0.25}[word]
    return module


def _sampling(modules, args):
    toy = modules["toy"]
    draws = [toy.prob(w) for w in args["draws"]]
    return {"draws": draws, "table": expected_only(lambda: {w: toy.prob(w) for w in ("a", "b", "c") if w != "c"})}


def test_a_stand_ins_record_holds_the_calls_a_submission_makes_only():
    table = stand_in.record(_sampling, {"toy": _toy()}, ("toy.prob",), {"draws": ["a", "a"]})
    assert [c["before"][0] for c in table] == [["a"], ["a"]]  # not the table's calls of "a" and "b" besides


def test_the_reference_computes_it_and_a_known_mistake_does_not():
    assignment, variant = catalog.load(Selection.parse("ngram", ()))
    checks = {c.name: c for c in assignment.checks}
    check = checks["sample"]
    (case, *_) = draw_cases(check, "ngram", variant, "expected-parts")
    reference = LiveReference(assignment.spec)
    expected = run_scenario(check, reference.load(), case)
    assert set(expected["model"]) == {"vocab", "table"} and expected["model"]["table"]
    mistake = checks["no_mutation"].mistakes[0]
    assert reference.mistaken(check, case, mistake)["model"] is None


@pytest.mark.parametrize("name,check_name", [("ngram", "sample"), ("rnn", "sample")])
def test_one_run_gives_a_mistakes_answers_in_both_forms_as_two_runs_do(name, check_name):
    """`mistaken_both` (what recording a zip's values uses): the draws made once, the table once, both forms
    exactly those of a run as a submission and a run as an expected value."""
    assignment, variant = catalog.load(Selection.parse(name, ()))
    check = next(c for c in assignment.checks if c.name == check_name)
    reference = LiveReference(assignment.spec)
    for case in draw_cases(check, name, variant, "expected-parts")[:2]:
        for mistake in check.mistakes:
            plain, expected = reference.mistaken_both(check, case, mistake)
            assert pickle.dumps(plain) == pickle.dumps(reference.mistaken(check, case, mistake))
            assert pickle.dumps(expected) == pickle.dumps(reference.mistaken(check, case, mistake, as_expected=True))
            assert plain[TABLE[name]] is None and expected[TABLE[name]] is not None


TABLE = {"ngram": "model", "rnn": "table"}


def _generate_case(p_greedy: float, draws: int = 300):
    table = {(0, 0): p_greedy, (0, 1): 1 - p_greedy}
    case = types.SimpleNamespace(args={"repeat": 30})
    same = [[0, 0]] * draws
    got = {
        "draws": same,
        "again": same[:30],
        "other": same[:30],
        "with max_new_tokens=0": "the prompt alone",
        "without a generator": "valid tokens",
    }
    return case, {"table": table, "draws": same}, got


@pytest.mark.parametrize("p_greedy, named", [(0.998, False), (0.9, True)])
def test_generate_names_argmax_only_where_a_correct_sampler_rarely_repeats_itself(p_greedy, named):
    """0.998 ** 300 is about one run in two: a correct sampler's, never called argmax. 0.9 ** 300 is 1e-14."""
    case, expected, got = _generate_case(p_greedy)
    verdict = judge_generate(None, case, expected, got, reveal=True)
    assert ("argmax" in verdict.message) is named
    if not named:
        assert verdict.passed, verdict.message

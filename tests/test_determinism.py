"""Same submission, same score; inputs depend on the course secret."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest

from helpers import shortened
from lmgrade.declare import catalog, composition
from lmgrade.grading.expected_store import ExpectedStore
from lmgrade.grading.grader import Grader
from lmgrade.grading.oracle import LiveReference


def test_grading_twice_gives_the_same_result(ngram_grader, buggy):
    # A sampler using numpy's global generator: deterministic all the same.
    first = ngram_grader.grade(buggy["sample_global_random"])
    second = ngram_grader.grade(buggy["sample_global_random"])
    assert sum(v.score for v in first) < 100
    assert [(v.score, v.output) for v in first] == [(v.score, v.output) for v in second]


def test_inputs_follow_the_secret(ngram):
    assignment, variant = ngram
    oracle = LiveReference(assignment.spec)
    check = next(c for c in assignment.checks if c.name == "perplexity_hidden")
    with (
        Grader(assignment, variant, oracle, secret="one") as a,
        Grader(assignment, variant, oracle, secret="one") as b,
        Grader(assignment, variant, oracle, secret="two") as c,
    ):
        cases = [g.cases_and_expected(check)[0] for g in (a, b, c)]
    assert [x.args for x in cases[0]] == [x.args for x in cases[1]]
    assert [x.args for x in cases[0]] != [x.args for x in cases[2]]


HANGING = textwrap.dedent("""
    import time
    BOS, EOS, UNK = "<s>", "</s>", "<unk>"

    def pad(sentence, n):
        time.sleep(1000)

    def count_ngrams(corpus, n):
        while True:
            pass

    class NGramLM:
        def __init__(self, n, k=0.0):
            time.sleep(1000)
""")


@pytest.mark.slow  # waits out every check's limits
def test_a_submission_that_hangs_everywhere_ends_within_the_limits(ngram, tmp_path):
    assignment, variant = ngram
    fast = shortened(assignment, cpu_s=1, wall_s=1.5, wall_factor=2)
    (tmp_path / "ngram.py").write_text(HANGING)
    with Grader(fast, variant, LiveReference(assignment.spec), secret="s", jobs=2) as grader:
        # Expected values are the reference's time, not the submission's.
        for check in fast.checks:
            grader.cases_and_expected(check)
        limits = sum(grader.limits_of(c).wall_s for c in fast.checks)  # they follow the reference's time
        # A composed check whose components failed runs once more with the grader's stand-ins for them,
        # under the same limits: a hang costs those runs too, and nothing more.
        # Their records of the reference's calls, like the expected values, are the grader's own work: made
        # before the clock starts.
        by_name = {c.name: c for c in fast.checks}
        stood_in = []
        for check in fast.checks:
            components = composition.outermost(composition.components(check, by_name), by_name)
            names = composition.stand_in_names(check, components)
            if names:
                grader.stand_in_tables(check, names)
                stood_in.append(check)
        limits += sum(grader.limits_of(c).wall_s for c in stood_in)
        started = time.monotonic()
        verdicts = grader.grade(tmp_path)
    elapsed = time.monotonic() - started
    assert sum(v.score for v in verdicts) == 0
    assert elapsed < limits
    # A hidden check says only the kind of failure: no answer (it ran out of time among other things).
    assert all(
        "time limit" in v.output if v.check.visibility == "visible" else "no answer" in v.output for v in verdicts
    )


# A one-line bug in TransformerBlock: its composed checks are paid through the grader's stand-in for it.
BLOCK_BUG = ("x = x + self.ffn(self.ln2(x))", "x = x + self.ffn(self.ln1(x))")
COMPOSED = ("layer_norm", "attention", "feed_forward", "cross_entropy", "block", "model", "model_hidden")


@pytest.fixture
def busy_cores():
    """Every core kept busy beside the test, as on a loaded grading machine."""
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(max(2, os.cpu_count() or 2))]
    yield
    for loop in loops:
        loop.kill()
        loop.wait()


def test_a_failing_component_gives_the_same_verdicts_at_any_jobs_under_load(tmp_path, busy_cores):
    assignment, variant = catalog.load("transformer")
    reference = assignment.spec.reference_folder()
    submission = tmp_path / "submission"
    submission.mkdir()
    for filename in assignment.spec.files:
        source = (reference / filename).read_text(encoding="utf-8")
        if filename == "layers.py":
            assert BLOCK_BUG[0] in source
            source = source.replace(*BLOCK_BUG)
        (submission / filename).write_text(source, encoding="utf-8")
    seen = []
    # The first grading computes the reference's answers in four threads, as a first grading on a machine
    # does; every grading records its stand-ins afresh, in as many threads as its jobs (one and two after it).
    store = ExpectedStore(tmp_path / "store")
    for jobs in (4, 1, 2):
        with Grader(assignment, variant, LiveReference(assignment.spec), secret="s", jobs=jobs, store=store) as g:
            verdicts = g.grade(submission, only=set(COMPOSED))
        seen.append([(v.check.name, v.score, v.output, v.stood_in) for v in verdicts])
    assert all(run == seen[0] for run in seen[1:])
    stood_in = {name for name, _, _, by in seen[0] if by}
    # The composed checks are rescued by the grader's block; the block itself is not.
    assert stood_in == {"model", "model_hidden"}

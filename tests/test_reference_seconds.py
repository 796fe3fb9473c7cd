"""The reference's time on a check's cases is read from the store before the check's first run, without its
expected values: the check's limits follow it from that run."""

from __future__ import annotations

from pathlib import Path

from helpers import TEST_SECRET
from lmgrade.declare import catalog
from lmgrade.grading.expected_store import ExpectedStore
from lmgrade.grading.grader import Grader
from lmgrade.grading.oracle import LiveReference

ROOT = Path(__file__).resolve().parents[1]


def test_a_later_grading_knows_the_references_time_before_the_first_run_and_its_limits_follow_it(tmp_path, monkeypatch):
    assignment, variant = catalog.load("ngram")
    store = ExpectedStore(tmp_path / "store")
    sample = next(c for c in assignment.checks if c.name == "sample")

    def grader() -> Grader:
        return Grader(assignment, variant, LiveReference(assignment.spec), secret=TEST_SECRET, jobs=2, store=store)

    with grader() as first:
        first.grade(ROOT / "reference" / "ngram", only={"sample"})  # computes and stores
        measured = first.expected.reference_seconds(sample)
    assert measured is not None and measured > 0
    with grader() as later:
        seen, run = [], later.pool.run

        def recording(**kw):
            if kw["scenario"] == sample.scenario_ref:
                seen.append((later.expected.known(sample), later.expected.reference_seconds(sample), kw["limits"]))
            return run(**kw)

        monkeypatch.setattr(later.pool, "run", recording)
        (verdict,) = later.grade(ROOT / "reference" / "ngram", only={"sample"})
    # At its first run: the time is known, the values are not read yet, and the limits follow the time.
    assert seen == [(False, measured, sample.limits.following(measured))]
    assert verdict.passed, verdict.output

"""A check the reference takes long on runs its cases in two children at once, and is judged as one run."""

from __future__ import annotations

from pathlib import Path

from helpers import TEST_SECRET
from lmgrade import catalog
from lmgrade.expected_store import ExpectedStore
from lmgrade.grading import Grader
from lmgrade.oracle import LiveReference
from lmgrade.sandbox.pool import CaseOutcome, Output, RunReport, merged

ROOT = Path(__file__).resolve().parents[1]


def _report(kinds, head="", tail="", total=0, laps=(), wall=1.0) -> RunReport:
    return RunReport(
        outcomes=[CaseOutcome(k) for k in kinds],
        defences={"landlock": True},
        wall_s=wall,
        output=Output(head, tail, total),
        laps=list(laps),
    )


def test_parts_merge_in_case_order():
    first = _report(["ok", "error"], laps=[(1, 7, 0.1, [1.0])], wall=2.0)
    quiet = _report(["ok"])
    last = _report(["timeout"], head="hi", tail="bye", total=40, laps=[(0, 8, 0.2, [2.0])])
    report = merged([first, quiet, last])
    assert [o.kind for o in report.outcomes] == ["ok", "error", "ok", "timeout"]
    assert report.laps == [(1, 7, 0.1, [1.0]), (3, 8, 0.2, [2.0])]  # case numbers are the check's
    assert (report.output.head, report.output.tail, report.output.total_bytes) == ("hi", "bye", 40)
    assert report.wall_s == 2.0 and report.defences == {"landlock": True}


def test_a_long_check_runs_in_two_children_at_once_and_a_short_one_in_one(tmp_path, monkeypatch):
    assignment, variant = catalog.load("ngram")
    store = ExpectedStore(tmp_path / "store")
    only = {"sample", "pad"}
    with Grader(assignment, variant, LiveReference(assignment.spec), secret=TEST_SECRET, jobs=2, store=store) as first:
        first.grade(ROOT / "reference" / "ngram", only=only)  # computes and stores the expected values
        checks = {c.name: c for c in assignment.checks}
        seconds = {name: first.expected.reference_seconds(checks[name]) for name in only}
    # This machine's times decide, not a fixed threshold: one between the short check's and the long one's.
    assert seconds["sample"] > 4 * seconds["pad"], seconds
    monkeypatch.setattr("lmgrade.grading.SPLIT_S", (seconds["sample"] * seconds["pad"]) ** 0.5)
    # A later grading reads them from the store before the checks' first runs: their parts follow the times.
    with Grader(assignment, variant, LiveReference(assignment.spec), secret=TEST_SECRET, jobs=2, store=store) as grader:
        runs, run = [], grader.pool.run

        def recording(**kw):
            runs.append((kw["scenario"].rsplit(":", 1)[-1], len(kw["cases"])))
            return run(**kw)

        monkeypatch.setattr(grader.pool, "run", recording)
        verdicts = {v.check.name: v for v in grader.grade(ROOT / "reference" / "ngram", only=only)}
        assert grader.expected.reference_seconds(checks["sample"]) == seconds["sample"]  # read from the store
    sample_cases = len(verdicts["sample"].cases)
    assert sorted(n for name, n in runs if name == "sample") == sorted([(sample_cases + 1) // 2, sample_cases // 2])
    assert [n for name, n in runs if name == "pad"] == [len(verdicts["pad"].cases)]
    assert all(v.passed for v in verdicts.values()), [v.output for v in verdicts.values()]

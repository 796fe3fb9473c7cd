"""A submission that hangs costs one limit, not one per check or per case, and its verdicts say why alike.

An import that runs past its limit (the import probe's own run says so) ends
the submission's grading at once: every check says so in the same line,
whichever check ran first and at any --jobs. A function that hangs costs each
check that runs it one case's limit: the cases after the one that ran out of
time are not run. A submission's whole grading is bounded by assignment.toml's
grading_budget_s. What is counted here is runs and children, never seconds.
"""

from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path

import pytest

from helpers import ROOT, shortened
from lmgrade.declare.assignment import AssignmentError, load_assignment
from lmgrade.grading.grader import Grader
from lmgrade.grading.oracle import LiveReference
from lmgrade.sandbox.limits import Limits
from lmgrade.sandbox.pool import Cancellation, SandboxPool

REFERENCE = (ROOT / "reference" / "ngram" / "ngram.py").read_text()
FIT = '    def fit(self, corpus: list[list[str]]) -> "NGramLM":\n'
IMPORT_HANGS = REFERENCE.replace("\nBOS = ", "\nimport time\n\ntime.sleep(1000)\nBOS = ", 1)
CHECK_LINE = "not graded: ngram.py could not be imported: it ran past its time limit (see above)"


def _fast(assignment, **spec):
    """ngram with limits short enough to wait out here: each check's, and the import probe's (the assignment's)."""
    fast = shortened(assignment, cpu_s=1, wall_s=1.5, wall_factor=2)
    limits = {**fast.spec.limits, "cpu_s": 1, "wall_s": 1.5}
    return dataclasses.replace(fast, spec=dataclasses.replace(fast.spec, limits=limits, **spec))


def _submission(folder: Path, source: str) -> Path:
    folder.mkdir()
    (folder / "ngram.py").write_text(source)
    return folder


def _counting_runs(grader: Grader) -> list[str]:
    """The scenario of every run the grader's pool is asked for, as they are asked."""
    asked: list[str] = []
    run = grader.pool.run

    def counted(**kwargs):
        asked.append(kwargs["scenario"])
        return run(**kwargs)

    grader.pool.run = counted
    return asked


def test_the_submission_that_hangs_at_import_hangs_there_only():
    assert IMPORT_HANGS.count("time.sleep(1000)") == 1
    assert IMPORT_HANGS.index("time.sleep(1000)") < IMPORT_HANGS.index("\ndef ")


@pytest.mark.parametrize("jobs", [1, 2])
def test_an_import_that_hangs_ends_the_grading_and_every_check_says_why(ngram, tmp_path, jobs):
    assignment, variant = ngram
    fast = _fast(assignment)
    folder = _submission(tmp_path / "hangs", IMPORT_HANGS)
    told: list[str] = []
    with Grader(fast, variant, LiveReference(assignment.spec), secret="s", jobs=jobs) as grader:
        asked = _counting_runs(grader)
        children = grader.pool.children
        verdicts = grader.grade(folder, on_import_failure=told.append)
        children = grader.pool.children - children
    assert [v.output for v in verdicts] == [CHECK_LINE] * len(fast.checks)
    assert sum(v.score for v in verdicts) == 0
    assert len(told) == 1 and "ran past its time limit" in told[0] and "top level" in told[0], told
    # The probe's child, and those of the checks begun beside it (one per other server, and one more where a
    # check's own import ran out of time as the probe's did); none followed a child that died at the import.
    assert children <= jobs + 1
    assert len(asked) <= len(fast.checks) + 1


def test_a_function_that_hangs_costs_each_check_one_case(ngram, tmp_path):
    assignment, variant = ngram
    fast = _fast(assignment)
    folder = _submission(tmp_path / "fit", REFERENCE.replace(FIT, FIT + "        while True:\n            pass\n", 1))
    with Grader(fast, variant, LiveReference(assignment.spec), secret="s", jobs=2) as grader:
        for check in fast.checks:
            grader.cases_and_expected(check)
        asked = _counting_runs(grader)
        verdicts = grader.grade(folder)
    by_name = {v.check.name: v for v in verdicts}
    assert by_name["pad"].passed and by_name["count_ngrams"].passed
    # fit has no stand-in: a stand-in run of a check that calls it would hang again, and none is made.
    assert "lmgrade.grading.stand_in:replay" not in asked
    ran_out = [v for v in verdicts if any("time limit exceeded" in c.message for _, c in v.cases)]
    assert {"fit", "prob_mle", "sample"} <= {v.check.name for v in ran_out}
    for verdict in ran_out:
        said = [c.message for _, c in verdict.cases]
        first = next(i for i, m in enumerate(said) if "time limit exceeded" in m)
        # One case ran out of time; the cases after it were not run (and say so), never timed out in turn.
        assert sum("time limit exceeded" in m for m in said) == 1, (verdict.check.name, said)
        assert all("not run" in m for m in said[first + 1 :]), (verdict.check.name, said)


def test_a_grading_past_its_budget_stops_and_the_checks_not_graded_say_so(ngram, tmp_path):
    assignment, variant = ngram
    fast = _fast(assignment, grading_budget_s=0.5)
    folder = _submission(tmp_path / "fit", REFERENCE.replace(FIT, FIT + "        while True:\n            pass\n", 1))
    with Grader(fast, variant, LiveReference(assignment.spec), secret="s", jobs=1) as grader:
        for check in fast.checks:
            grader.cases_and_expected(check)
        verdicts = grader.grade(folder)
    over = "not graded: this submission's grading ran past its budget of 0.5 s (grading_budget_s)"
    stopped = [v for v in verdicts if v.output == over]
    assert stopped, [v.output[:100] for v in verdicts]
    assert all(v.score == 0 for v in stopped)


def test_a_cancelled_run_runs_no_case(tmp_path):
    folder = _submission(tmp_path / "s", "def f():\n    return 1\n")
    cancellation = Cancellation()
    cancellation.cancel("the import hangs")
    cancellation.cancel("over budget")  # the first reason stays
    with SandboxPool(preload=[], forbidden_modules=[], protected=[], jobs=1) as pool:
        report = pool.run(
            scenario="lmgrade.submissions.loader:import_probe",
            submission=folder,
            files=["ngram.py"],
            cases=[None, None],
            limits=Limits(),
            cancellation=cancellation,
        )
        assert pool.children == 0
    assert [(o.kind, o.message) for o in report.outcomes] == [("not_run", "not run: the import hangs")] * 2


BUDGET_TOML = textwrap.dedent("""
    [assignment]
    name = "toy"
    files = ["toy.py"]
    {budget}

    [templates]
    "toy.py" = "toy.py.j2"
""")


def _toy(tmp_path, budget: str) -> Path:
    folder = tmp_path / "toy"
    folder.mkdir(parents=True)
    (folder / "toy.py.j2").write_text("def f():\n    raise NotImplementedError\n")
    (folder / "assignment.toml").write_text(BUDGET_TOML.format(budget=budget))
    return folder / "assignment.toml"


def test_the_budget_is_read_from_assignment_toml(tmp_path):
    assert load_assignment(_toy(tmp_path, "grading_budget_s = 90")).grading_budget_s == 90.0
    assert load_assignment(_toy(tmp_path / "default", "")).grading_budget_s > 0


@pytest.mark.parametrize("budget", ["0", "-5", '"a minute"'])
def test_a_budget_that_is_no_positive_number_is_refused(tmp_path, budget):
    with pytest.raises(AssignmentError, match="grading_budget_s"):
        load_assignment(_toy(tmp_path, f"grading_budget_s = {budget}"))


def test_a_hang_in_a_component_that_stands_in_is_still_paid_where_the_stand_in_replaces_it(ngram, tmp_path):
    """A loop in prob: the checks that compose it ran out of time too, and their stand-in runs (the grader's
    prob in place of the submission's) are made, and pay them: a hang costs no more than its own checks."""
    assignment, variant = ngram
    fast = _fast(assignment)
    prob = "    def prob(self, word: str, context: Sequence[str]) -> float:\n"
    assert prob in REFERENCE
    looping = REFERENCE.replace(prob, prob + "        while True:\n            pass\n", 1)
    folder = _submission(tmp_path / "prob", looping)
    with Grader(fast, variant, LiveReference(assignment.spec), secret="s", jobs=2) as grader:
        for check in fast.checks:
            grader.cases_and_expected(check)
        verdicts = grader.grade(folder)
    by_name = {v.check.name: v for v in verdicts}
    assert not by_name["prob_mle"].passed and not by_name["prob_add_k"].passed
    assert by_name["logprob"].passed and set(by_name["logprob"].stood_in) & {"prob_mle", "prob_add_k"}

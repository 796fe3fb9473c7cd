"""Grading one submission is one library call: what grade, check, regrade and Gradescope share."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from lmgrade.core.errors import HarnessFault
from lmgrade.grading.submission_grading import grade_submission
from lmgrade.reports.results import HARNESS_FAULT_NOTE


def test_one_call_grades_and_keeps_results(ngram, reference_submission, tmp_path):
    assignment, variant = ngram
    seen = []
    run = grade_submission(
        assignment,
        variant,
        reference_submission,
        results=tmp_path / "r.json",
        jobs=2,
        on_start=seen.append,
        on_verdict=lambda v: seen.append(v.check.name),
    )
    assert run.score == run.max_score == 100 and len(run.verdicts) == 11
    assert seen[0] == 11 and sorted(seen[1:]) == sorted(c.name for c in assignment.checks)
    assert json.loads((tmp_path / "r.json").read_text())["score"] == 100
    assert run.defences["rlimits"]


def test_visible_only_leaves_out_the_hidden_checks(ngram, reference_submission, ngram_grader):
    assignment, variant = ngram
    run = grade_submission(assignment, variant, reference_submission, visible_only=True, grader=ngram_grader)
    assert run.max_score == 90 and "perplexity_hidden" not in {v.check.name for v in run.verdicts}
    assert [v.number for v in run.verdicts] == list(range(1, 11))  # numbered as in the assignment


def test_an_import_error_of_the_submission_is_a_verdict_not_a_fault(ngram, ngram_grader, tmp_path):
    assignment, variant = ngram
    (tmp_path / "ngram.py").write_text("import no_such_module_anywhere\n")
    run = grade_submission(assignment, variant, tmp_path, grader=ngram_grader)
    assert run.score == 0 and "ModuleNotFoundError" in run.note
    assert run.verdicts[0].output == "not graded: ngram.py could not be imported (see above)"


def test_a_reference_that_cannot_be_imported_is_a_harness_fault(ngram, reference_submission, tmp_path):
    assignment, variant = ngram
    broken = type(assignment)(
        dataclasses.replace(assignment.spec, reference_package="no_such_reference"), assignment.checks
    )
    results = tmp_path / "results.json"
    with pytest.raises(HarnessFault, match="cannot be imported"):
        grade_submission(broken, variant, reference_submission, results=results)
    document = json.loads(results.read_text())
    assert document["output"].startswith(HARNESS_FAULT_NOTE) and len(document["tests"]) == 11
    assert document["score"] == 0


def test_an_untouched_stub_costs_no_expected_values_no_training_and_no_timing(tmp_path):
    """Where no case answered, nothing is compared: the reference never runs, for answers, training or laps."""
    from conftest import TEST_SECRET

    from lmgrade.declare import catalog, templates
    from lmgrade.grading.grader import Grader
    from lmgrade.grading.oracle import LiveReference

    assignment, variant = catalog.load("transformer")
    assignment = assignment.on("cpu")
    templates.generate(assignment, variant, tmp_path / "stub")
    ran, asked = [], []
    with Grader(assignment, variant, LiveReference(assignment.spec), secret=TEST_SECRET, jobs=1) as grader:
        expected, run = grader.oracle.expected, grader.pool.run
        grader.oracle.expected = lambda check, cases: asked.append(check.name) or expected(check, cases)
        grader.pool.run = lambda **kwargs: ran.append(Path(kwargs["submission"])) or run(**kwargs)
        only = {"layer_norm", "training", "train_step_speed"}
        verdicts = grader.grade(tmp_path / "stub", only=only)
        assert [v.score for v in verdicts] == [0, 0, 0] and all("not implemented" in v.output for v in verdicts)
        assert asked == [] and grader.reference_submission() not in ran and len(ran) == 1 + len(only)  # + the probe
        # An answer is compared: the reference's own files get their expected values computed.
        (verdict,) = grader.grade(assignment.spec.reference_folder(), only={"layer_norm"})
        assert verdict.passed and asked == ["layer_norm"]


def test_run_case_runs_one_case_and_names_the_mistake_its_answer_matches(
    ngram, ngram_grader, reference_submission, tmp_path
):
    """What `check --case` shows: one case of one check, its expected value, the answer and the mistake it matches."""
    from conftest import ROOT

    assignment, _ = ngram
    pad = next(c for c in assignment.checks if c.name == "pad")
    source = (ROOT / "reference" / "ngram" / "ngram.py").read_text()
    wrong = source.replace(
        "return [BOS] * (n - 1) + list(sentence) + [EOS]", "return [BOS] * n + list(sentence) + [EOS]"
    )
    assert wrong != source
    (tmp_path / "ngram.py").write_text(wrong)
    cases, expected = ngram_grader.cases_and_expected(pad)
    right = ngram_grader.run_case(pad, 3, reference_submission)
    assert (right.number, right.of, right.case, right.mistake) == (3, len(cases), cases[2], None)
    assert right.outcome.kind == "ok" and right.outcome.value == right.expected == expected[2]
    ran = ngram_grader.run_case(pad, 3, tmp_path)
    assert ran.outcome.kind == "ok" and ran.outcome.value != ran.expected
    assert ran.mistake is not None and ran.mistake.name == "n_bos"
    with pytest.raises(IndexError, match=f"pad has {len(cases)} cases"):
        ngram_grader.run_case(pad, len(cases) + 1, tmp_path)

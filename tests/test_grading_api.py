"""Grading one submission is one library call: what grade, check, regrade and Gradescope share."""

from __future__ import annotations

import dataclasses
import json

import pytest

from autograder.errors import HarnessFault
from autograder.grading import HARNESS_FAULT_NOTE, grade_submission


def test_one_call_grades_and_keeps_results(ngram, reference_submission, tmp_path):
    assignment, variant = ngram
    seen = []
    run = grade_submission(assignment, variant, reference_submission, results=tmp_path / "r.json", jobs=2,
                           on_start=seen.append, on_verdict=lambda v: seen.append(v.check.name))
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
    broken = type(assignment)(dataclasses.replace(assignment.spec, reference_package="no_such_reference"),
                              assignment.checks)
    results = tmp_path / "results.json"
    with pytest.raises(HarnessFault, match="cannot be imported"):
        grade_submission(broken, variant, reference_submission, results=results)
    document = json.loads(results.read_text())
    assert document["output"].startswith(HARNESS_FAULT_NOTE) and len(document["tests"]) == 11
    assert document["score"] == 0

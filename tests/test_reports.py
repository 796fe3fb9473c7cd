"""results.json: valid Gradescope JSON from before the first check to after the last."""

from __future__ import annotations

import json

from helpers import validate
from lmgrade.reports.gradescope import NOT_GRADED, ResultsFile, results_json

# Gradescope's results.json format (its autograder specification), as a JSON schema.


def test_provisional_file_lists_every_check_at_zero(ngram, tmp_path):
    assignment, _ = ngram
    path = tmp_path / "results.json"
    ResultsFile(path, assignment.checks)
    document = json.loads(path.read_text())
    validate(document)
    assert [t["name"].split(":")[0] for t in document["tests"]] == [c.name for c in assignment.checks]
    assert all(t["score"] == 0 and t["output"] == NOT_GRADED for t in document["tests"])
    assert sum(t["max_score"] for t in document["tests"]) == 100


def test_partial_scores_and_visibility(ngram):
    assignment, _ = ngram
    checks = list(enumerate(assignment.checks, start=1))
    graded = {1: (2.5, "half"), 11: (10.0, "all good")}
    document = results_json(checks, graded, output="summary", started=None)
    validate(document)
    first, last = document["tests"][0], document["tests"][-1]
    assert (first["score"], first["status"], first["output"].strip()) == (2.5, "failed", "half")
    assert (last["score"], last["status"], last["visibility"]) == (10.0, "passed", "after_due_date")
    assert document["score"] == 12.5 and document["output"] == "summary"
    assert isinstance(document["execution_time"], float)


def test_grading_writes_valid_results_and_keeps_them_valid(ngram_grader, reference_submission, tmp_path):
    path = tmp_path / "results.json"
    results = ResultsFile(path, ngram_grader.assignment.checks)
    seen = []

    def record(verdict):
        results.record(verdict.number, verdict.score, verdict.output)
        document = json.loads(path.read_text())
        validate(document)
        seen.append(document["score"])

    ngram_grader.grade(reference_submission, on_verdict=record)
    assert len(seen) == len(ngram_grader.assignment.checks)
    assert seen == sorted(seen) and seen[-1] == 100

"""results.json: valid Gradescope JSON from before the first check to after the last."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from helpers import validate
from lmgrade.reports.gradescope import NOT_GRADED, ResultsFile, results_json
from lmgrade.reports.results import CheckScore

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
    one, eleven = checks[0][1], checks[10][1]
    graded = {
        1: CheckScore(one.name, 2.5, one.points, "half"),
        11: CheckScore(eleven.name, 10.0, eleven.points, "all good"),
    }
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
        results.record(verdict.number, verdict.plain())
        document = json.loads(path.read_text())
        validate(document)
        seen.append(document["score"])

    ngram_grader.grade(reference_submission, on_verdict=record)
    assert len(seen) == len(ngram_grader.assignment.checks)
    assert seen == sorted(seen) and seen[-1] == 100


HARNESS = Path(__file__).resolve().parents[1] / "autograder"


def _imported(path: Path) -> set[str]:
    """The harness's modules a file imports (relative imports, resolved against its package)."""
    package = ["lmgrade", *path.parent.relative_to(HARNESS).parts]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[: len(package) - node.level + 1] + ([node.module] if node.module else [])
            found |= {".".join(base + [a.name]) for a in node.names} | {".".join(base)}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("lmgrade"):
            found.add(node.module)
    return found


def test_reports_read_results_and_grading_writes_none():
    """The verdict types are the bottom of reports/: a report never imports the grading, nor the grading a report."""
    for path in (HARNESS / "reports").glob("*.py"):
        assert not {
            m for m in _imported(path) if m.startswith(("lmgrade.grading.grader", "lmgrade.grading.submission_grading"))
        }, path.name
    for name in ("grader.py", "expected_values.py", "import_probe.py", "timing_verdicts.py"):
        imported = _imported(HARNESS / "grading" / name)
        reports = {
            m for m in imported if m.startswith("lmgrade.reports") and not m.startswith("lmgrade.reports.results")
        }
        assert not reports, f"{name} imports {reports}"
    assert "lmgrade.reports.results.Verdict" in _imported(HARNESS / "reports" / "terminal.py")

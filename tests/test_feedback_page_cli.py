"""`lmgrade check --html` and `grade --html` write the feedback page; without matplotlib, its text alone."""

from __future__ import annotations

import json
import re

import pytest

from helpers import invoke
from lmgrade.reports import page as feedback_page

BUG = "perplexity_mean_of_sentences"  # loses perplexity (visible: one number per case) and perplexity_hidden


def _sections(path) -> list[str]:
    return re.findall(r'<section class="check" id="check-\d+" data-check="([^"]+)"', path.read_text(encoding="utf-8"))


@pytest.mark.slow  # grades ngram twice
def test_check_and_grade_write_the_page_grade_with_the_hidden_checks_as_text(buggy, ngram, tmp_path):
    assignment, _ = ngram
    public = [c.name for c in assignment.checks if c.visibility == "visible"]
    checked = invoke("check", "ngram", buggy[BUG], "--html", tmp_path / "check.html")
    assert checked.exit_code == 1 and "feedback page written to" in checked.output, checked.output
    assert _sections(tmp_path / "check.html") == public
    assert "<img" in (tmp_path / "check.html").read_text(encoding="utf-8")  # the perplexities, case by case
    results = tmp_path / "results.json"
    graded = invoke("grade", "ngram", buggy[BUG], "--results", results, "--html", tmp_path / "grade.html")
    assert graded.exit_code == 0, graded.output
    assert _sections(tmp_path / "grade.html") == [c.name for c in assignment.checks]
    hidden = (tmp_path / "grade.html").read_text(encoding="utf-8").split('data-check="perplexity_hidden"')[1]
    assert "its text only" in hidden and "<img" not in hidden
    assert "lmgrade check ngram . --html feedback.html" in json.loads(results.read_text())["output"]


def test_html_does_not_go_with_case_and_an_unwritable_folder_is_refused(reference_submission, tmp_path):
    both = invoke("check", "ngram", reference_submission, "--case", "pad:1", "--html", tmp_path / "p.html")
    assert both.exit_code == 2 and "does not go with --case" in both.output
    nowhere = invoke("check", "ngram", reference_submission, "--html", tmp_path / "missing" / "p.html")
    assert nowhere.exit_code == 2 and "--html" in nowhere.output and "does not exist" in nowhere.output


def test_without_matplotlib_the_page_has_its_text_and_says_how_to_get_the_pictures(monkeypatch):
    from test_feedback_page import _check, _verdict

    from lmgrade.reports.results import GradingRun

    monkeypatch.setattr(feedback_page, "pictures_available", lambda: False)
    run = GradingRun(".", "", [_verdict(_check("one"), 1, [[1.0, 2.0, 3.0]], [[1.0, 2.0, 4.0]], output="off")])
    page = feedback_page.render_page("demo", run, "demo")
    assert "<img" not in page and "python -m pip install matplotlib" in page and "<pre>off</pre>" in page


@pytest.mark.slow  # grades three ngram submissions
def test_the_demo_writes_the_flawed_submissions_page_in_one_line(tmp_path):
    from helpers import lmgrade

    out = lmgrade("demo", "-o", tmp_path, "--assignment", "ngram")
    assert out.returncode == 0, out.stderr
    page = tmp_path / "ngram" / "results" / "flawed.html"
    assert _sections(page) and "<img" in page.read_text(encoding="utf-8")
    said = [line for line in out.stdout.splitlines() if "feedback page written to" in line]
    assert len(said) == 1 and str(page) in said[0], out.stdout

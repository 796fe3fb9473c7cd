"""`lmgrade demo` prints at most a screen per assignment (its score lines, the flawed submission's bugs and
the checks they cost); `--verbose` prints every file written and each grading's whole report."""

from __future__ import annotations

import re

import pytest

from helpers import lmgrade

SCREEN = 40  # lines: a terminal's screen


@pytest.mark.slow  # grades three submissions, twice
def test_the_demo_prints_a_screen_per_assignment_and_the_rest_with_verbose(tmp_path):
    brief = lmgrade("demo", "-o", tmp_path / "brief", "--assignment", "ngram")
    assert brief.returncode == 0, brief.stderr
    before_summary = brief.stdout.split("summary")[0].splitlines()
    assert len(before_summary) <= SCREEN, brief.stdout
    assert re.search(r"^starter: 0 / 100$", brief.stdout, re.MULTILINE)
    assert re.search(r"^reference: 100 / 100$", brief.stdout, re.MULTILINE)
    assert "bug made: " in brief.stdout and "known mistake" in brief.stdout and "--verbose" in brief.stdout
    verbose = lmgrade("demo", "-o", tmp_path / "verbose", "--assignment", "ngram", "--verbose")
    assert verbose.returncode == 0, verbose.stderr
    assert "wrote " in verbose.stdout and "grade the flawed submission" in verbose.stdout
    assert len(verbose.stdout.splitlines()) > 2 * len(before_summary)


def test_a_second_demo_into_the_same_folder_is_refused_in_one_line(tmp_path):
    (tmp_path / "ngram" / "starter").mkdir(parents=True)
    (tmp_path / "ngram" / "starter" / "ngram.py").write_text("# a student's work\n")
    out = lmgrade("demo", "-o", tmp_path, "--assignment", "ngram")
    assert out.returncode == 2 and "holds an earlier demo" in out.stderr and "Traceback" not in out.stderr

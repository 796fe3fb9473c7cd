"""Prints, temporary files and writes next to the code never cost points."""

from __future__ import annotations

import dataclasses

from helpers import ROOT, TEST_SECRET
from lmgrade.grading.grader import Grader
from lmgrade.grading.oracle import LiveReference

REFERENCE = (ROOT / "reference" / "ngram" / "ngram.py").read_text()

CHATTY = """
import sys
print("loading my ngram model " + "=" * 60)
for _ in range(20):
    sys.stdout.write("x" * 999_999 + "\\n")
print("done loading", file=sys.stderr)
_pad = pad

def pad(sentence, n):
    print("pad called with", sentence, n)
    return _pad(sentence, n)
"""

TEMP_FILES = """
import os, tempfile
from pathlib import Path

SCRATCH = tempfile.mkdtemp()                     # at import, as a student's cache would
with tempfile.TemporaryFile() as f:
    f.write(b"scratch")
with open("notes.txt", "w") as f:                # the current folder
    f.write("debug notes")
Path(os.path.expanduser("~/.mycache")).mkdir(exist_ok=True)
for var in ("TMPDIR", "TMP", "TEMP", "HOME", "XDG_CACHE_HOME", "MPLCONFIGDIR", "TORCHINDUCTOR_CACHE_DIR"):
    os.makedirs(os.environ[var], exist_ok=True)
    with open(os.path.join(os.environ[var], "probe"), "w") as f:
        f.write(var)
_fit = NGramLM.fit

def fit(self, corpus):
    with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as log:
        log.write(repr(corpus)[:100])
    with open(os.path.join(SCRATCH, "fit.txt"), "w") as f:
        f.write("fitted")
    return _fit(self, corpus)

NGramLM.fit = fit
"""


def _submission(tmp_path, extra: str):
    folder = tmp_path / "submission"
    folder.mkdir()
    (folder / "ngram.py").write_text(REFERENCE + extra)
    return folder


def test_printing_megabytes_costs_nothing_and_is_counted(ngram_grader, tmp_path):
    verdicts = ngram_grader.grade(_submission(tmp_path, CHATTY))
    for v in verdicts:
        assert v.passed, f"{v.check.name}: {v.output}"
    pad = next(v for v in verdicts if v.check.name == "pad")
    assert "Your code printed 20.0 MB; output shortened" in pad.output


def test_a_hundred_megabytes_of_output_in_one_check(ngram, tmp_path):
    assignment, variant = ngram
    flood = "\nfor _ in range(100):\n    print('y' * 999_999)\n"
    check = next(c for c in assignment.checks if c.name == "pad")
    one = type(assignment)(
        assignment.spec, [dataclasses.replace(check, limits=dataclasses.replace(check.limits, cpu_s=30, wall_s=60))]
    )
    with Grader(one, variant, LiveReference(assignment.spec), secret=TEST_SECRET) as grader:
        (verdict,) = grader.grade(_submission(tmp_path, flood))
    assert verdict.passed, verdict.output
    assert "Your code printed 100.0 MB; output shortened" in verdict.output


def test_a_failing_visible_check_shows_the_head_and_tail_of_the_output(ngram_grader, tmp_path):
    source = REFERENCE.replace(
        "    return [BOS] * (n - 1) + list(sentence) + [EOS]\n",
        "    print('START'); print('z' * 20000); print('END')\n    return [BOS] * n + list(sentence) + [EOS]\n",
    )
    folder = tmp_path / "submission"
    folder.mkdir()
    (folder / "ngram.py").write_text(source)
    verdicts = {v.check.name: v for v in ngram_grader.grade(folder)}
    pad = verdicts["pad"]
    assert not pad.passed and "It began:" in pad.output and "START" in pad.output and "END" in pad.output
    hidden = verdicts["perplexity_hidden"]  # what a hidden check's run printed is never shown
    assert "START" not in hidden.output


def test_temporary_files_caches_and_the_current_folder_are_writable(ngram_grader, tmp_path):
    folder = _submission(tmp_path, TEMP_FILES)
    verdicts = ngram_grader.grade(folder)
    for v in verdicts:
        assert v.passed, f"{v.check.name}: {v.output}"
    assert not (folder / "notes.txt").exists()  # it wrote into its own copy


LISTS_ITS_FOLDER = """
import os
_pad = pad

def pad(sentence, n):
    here = sorted(set(os.listdir(os.path.dirname(os.path.abspath(__file__)))) - {"__pycache__"})
    if here != ["ngram.py"]:
        raise RuntimeError(f"the folder holds {here}")
    return _pad(sentence, n)
"""


def test_results_written_into_the_graded_folder_are_not_part_of_the_submission(ngram, tmp_path):
    """`lmgrade grade . --results results.json`: checks copy the folder while its results are rewritten."""
    from lmgrade.grading.submission_grading import grade_submission

    assignment, variant = ngram
    folder = _submission(tmp_path, LISTS_ITS_FOLDER)
    for _ in range(2):  # the second time, results.json is there from the start
        run = grade_submission(assignment, variant, folder, results=folder / "results.json", jobs=2, secret=TEST_SECRET)
        for v in run.verdicts:
            assert v.passed, f"{v.check.name}: {v.output}"


def test_every_check_grades_the_submission_as_it_was_when_grading_began(ngram_grader, tmp_path):
    folder = _submission(tmp_path, "")
    started = []

    def student_saves_a_broken_file(check):
        started.append(check.name)
        (folder / "ngram.py").write_text("def pad(sentence, n:\n")

    verdicts = ngram_grader.grade(folder, on_check_start=student_saves_a_broken_file)
    assert len(started) == len(verdicts) > 1
    for v in verdicts:
        assert v.passed, f"{v.check.name}: {v.output}"

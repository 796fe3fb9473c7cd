"""Where the submitted files are looked for."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from lmgrade.grading.submission_grading import grade_submission
from lmgrade.submissions.submitted_files import locate, missing_hint


def touch(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("")


def test_files_at_the_top_are_graded_there(tmp_path):
    touch(tmp_path / "ngram.py")
    touch(tmp_path / "old" / "ngram.py")
    assert locate(tmp_path, ("ngram.py",)) == (tmp_path, "")


def test_one_sub_folder_holding_every_file_is_used_and_named(tmp_path):
    touch(tmp_path / "hw1" / "modules.py")
    touch(tmp_path / "hw1" / "elman.py")
    touch(tmp_path / "__MACOSX" / "hw1" / "elman.py")
    folder, note = locate(tmp_path, ("modules.py", "elman.py"))
    assert folder == tmp_path / "hw1" and note == "modules.py, elman.py were found in hw1/ and graded from there."


def test_ambiguous_or_split_files_are_left_alone(tmp_path):
    touch(tmp_path / "a" / "ngram.py")
    touch(tmp_path / "b" / "ngram.py")
    assert locate(tmp_path, ("ngram.py",)) == (tmp_path, "")
    touch(tmp_path / "c" / "modules.py")
    touch(tmp_path / "d" / "elman.py")
    assert locate(tmp_path, ("modules.py", "elman.py")) == (tmp_path, "")


def test_grade_uses_the_sub_folder_and_says_so(tmp_path, reference_submission):
    nested = tmp_path / "upload" / "my_hw"
    nested.mkdir(parents=True)
    (nested / "ngram.py").write_text((reference_submission / "ngram.py").read_text())
    results = tmp_path / "results.json"
    out = subprocess.run(
        [sys.executable, "-m", "lmgrade.cli", "grade", "ngram", str(tmp_path / "upload"), "--results", str(results)],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    document = json.loads(results.read_text())
    assert document["score"] == 100 and "found in my_hw/" in document["output"]


# --- what a student uploaded instead of the files: hints, a .zip, nothing ---

REFERENCE_NGRAM = Path(__file__).resolve().parents[1] / "reference" / "ngram" / "ngram.py"


def _results(ngram, ngram_grader, upload, tmp_path):
    assignment, variant = ngram
    results = tmp_path / "results.json"
    run = grade_submission(assignment, variant, upload, results=results, grader=ngram_grader)
    document = json.loads(results.read_text())
    assert len(document["tests"]) == 11 and document["score"] == run.score
    return run, document


def test_a_misnamed_file_gets_a_rename_hint_closest_names_first(tmp_path):
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / "ngram (1).py").write_text("x")
    (tmp_path / "zzz.py").write_text("x")
    hint = missing_hint(tmp_path, ("ngram.py",))
    assert hint.startswith("ngram.py is missing; the submission holds `ngram (1).py`")
    assert hint.endswith("rename `ngram (1).py` to `ngram.py`?")


def test_a_misnamed_submission_is_graded_zero_with_the_hint_once(ngram, ngram_grader, tmp_path):
    upload = tmp_path / "upload"
    upload.mkdir()
    (upload / "ngram (1).py").write_text(REFERENCE_NGRAM.read_text())
    run, document = _results(ngram, ngram_grader, upload, tmp_path)
    assert run.score == 0 and "rename `ngram (1).py` to `ngram.py`?" in document["output"]
    assert all("missing from the submission (see above)" in t["output"] for t in document["tests"])


def test_a_zip_instead_of_a_folder_is_unpacked_and_graded(ngram, ngram_grader, tmp_path):
    archive = tmp_path / "hw.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.write(REFERENCE_NGRAM, "hw/ngram.py")
    run, document = _results(ngram, ngram_grader, archive, tmp_path)
    assert run.score == 100 and "hw.zip" in document["output"]


@pytest.mark.parametrize("inside", ["ngram.py", "hw/ngram.py"])
def test_a_folder_holding_only_a_zip_is_unpacked_and_graded_and_says_so(ngram, ngram_grader, tmp_path, inside):
    upload = tmp_path / "upload"  # what Gradescope makes of an uploaded upload.zip
    upload.mkdir()
    with zipfile.ZipFile(upload / "upload.zip", "w") as zf:
        zf.write(REFERENCE_NGRAM, inside)
    (upload / ".DS_Store").write_bytes(b"\0")
    run, document = _results(ngram, ngram_grader, upload, tmp_path)
    assert run.score == 100 and "holds only upload.zip: it was unpacked" in document["output"]
    # Beside other files, a .zip is one file among them: not unpacked.
    (upload / "notes.txt").write_text("mine")
    run, document = _results(ngram, ngram_grader, upload, tmp_path)
    assert run.score == 0 and "unpacked" not in document["output"]


def test_a_zip_that_escapes_its_folder_is_not_unpacked(ngram, ngram_grader, tmp_path):
    archive = tmp_path / "evil.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("../escaped.py", "x = 1\n")
        zf.write(REFERENCE_NGRAM, "ngram.py")
    run, document = _results(ngram, ngram_grader, archive, tmp_path)
    assert run.score == 0 and "outside its folder" in document["output"]
    assert not any(p.name == "escaped.py" for p in tmp_path.parent.rglob("escaped.py"))


@pytest.mark.parametrize("make", ["missing", "empty"])
def test_a_missing_or_empty_folder_is_graded_zero_with_the_reason(ngram, ngram_grader, tmp_path, make):
    upload = tmp_path / "upload"
    if make == "empty":
        upload.mkdir()
    run, document = _results(ngram, ngram_grader, upload, tmp_path)
    assert run.score == 0
    assert ("does not exist" if make == "missing" else "The submission is empty") in document["output"]


def test_a_file_that_goes_away_while_it_is_copied_is_left_out(tmp_path, monkeypatch):
    from lmgrade.submissions import submitted_files as submission

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "ngram.py").write_text("x = 1\n")
    listed = submission.walk

    def walk_that_lists_a_vanished_file(folder):
        for root, dirs, names in listed(folder):
            yield root, dirs, [*names, ".results-gone.json"]  # written, listed, renamed away

    monkeypatch.setattr(submission, "walk", walk_that_lists_a_vanished_file)
    submission.copy_files(tmp_path / "src", tmp_path / "dst")
    assert sorted(p.name for p in (tmp_path / "dst").iterdir()) == ["ngram.py"]


def test_a_copy_stops_at_the_size_limit_and_leaves_out_what_it_is_told(tmp_path, monkeypatch):
    from lmgrade.submissions import submitted_files as submission

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "ngram.py").write_text("x = 1\n")
    (tmp_path / "src" / "results.json").write_text("{}")
    submission.copy_files(tmp_path / "src", tmp_path / "dst", leave_out=lambda p: p.name == "results.json")
    assert sorted(p.name for p in (tmp_path / "dst").iterdir()) == ["ngram.py"]
    monkeypatch.setattr(submission, "MAX_SUBMISSION_BYTES", 3)
    with pytest.raises(ValueError, match="larger than"):
        submission.copy_files(tmp_path / "src", tmp_path / "again")

"""Where the submitted files are looked for."""

from __future__ import annotations

import json
import subprocess
import sys

from autograder.submission import locate


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
    out = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", "ngram", str(tmp_path / "upload"),
                          "--results", str(results)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    document = json.loads(results.read_text())
    assert document["score"] == 100 and "found in my_hw/" in document["output"]

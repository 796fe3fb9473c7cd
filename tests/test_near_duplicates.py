"""Near-duplicates: a renamed, reformatted, reordered copy is found; independent correct solutions and untouched
stubs are not; no pair of byte-identical submissions is listed twice."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from disguise import padded, part_of, reformatted, renamed, reordered

from helpers import ROOT, SUBMISSIONS
from lmgrade import templates
from lmgrade.regrade.graded import Graded
from lmgrade.regrade.layout import SubmissionFolder
from lmgrade.regrade.near_duplicates import (
    THRESHOLD,
    class_near_duplicates,
    fingerprints,
    near_duplicates,
    normalised_tokens,
)

REFERENCE = ROOT / "reference" / "ngram" / "ngram.py"


def test_names_literals_comments_docstrings_and_layout_leave_the_same_tokens():
    original = '''
def total(values, scale=2):
    """Sum, scaled."""
    result = 0  # running sum
    for v in values:
        result += v * scale
    return result
'''
    disguised = """
def add_up(xs, factor = 3.5):
  'Other words.'
  # a comment of its own

  acc = 10
  for item in xs:
      acc += item * \\
          factor
  return acc
"""
    assert normalised_tokens(original) == normalised_tokens(disguised)
    assert "V" in normalised_tokens(original) and "for" in normalised_tokens(original)
    assert normalised_tokens("f(a, b,)\n") == normalised_tokens("f(\n    a,\n    b\n)\n")
    assert normalised_tokens('x = "a" "b"\n') == normalised_tokens("y = 'ab'\n")
    # A formatter's parentheses around a long expression go; a call's stay.
    assert normalised_tokens("return (\n    a\n    + b\n)\n") == normalised_tokens("return a + b\n")
    assert normalised_tokens("f(a)\n") != normalised_tokens("f, a\n")
    assert normalised_tokens("x = a + b\n") != normalised_tokens("x = a * b\n")


def test_a_file_that_does_not_parse_still_has_the_fingerprints_of_what_precedes_the_error():
    whole = fingerprints([REFERENCE.read_text()])
    broken = fingerprints([REFERENCE.read_text() + "\ndef broken(:\n    return '''never closed\n"])
    assert len(whole & broken) >= 0.9 * len(whole)


def _class(tmp_path: Path, sources: dict[str, str]) -> list[tuple[SubmissionFolder, Graded]]:
    rows = []
    for key, text in sources.items():
        (tmp_path / key).mkdir()
        (tmp_path / key / "ngram.py").write_text(text)
        rows.append((SubmissionFolder(key, tmp_path / key), Graded()))
    return rows


@pytest.fixture(scope="module")
def stub(ngram):
    return templates.render(*ngram)["ngram.py"]


def test_a_disguised_copy_is_found_and_independent_solutions_are_not(tmp_path, stub):
    reference = REFERENCE.read_text()
    sources = {
        "reference": reference,
        "disguised": reformatted(reordered(renamed(reference, stub))),
        "padded": padded(renamed(reference, stub, prefix="w")),
        "part": part_of(reference, stub),
        "dict_of_dicts": (SUBMISSIONS / "ngram" / "dict_of_dicts" / "ngram.py").read_text(),
        "numpy_table": (SUBMISSIONS / "ngram" / "numpy_table" / "ngram.py").read_text(),
        "trie": (SUBMISSIONS / "ngram" / "trie" / "ngram.py").read_text(),
        "stub_1": stub,
        "stub_2": stub,
    }
    # The disguises are real: the copies compile, and none is the reference's text.
    for key in ("disguised", "padded", "part"):
        compile(sources[key], key, "exec")
        assert sources[key] != reference and "q0_" in sources["disguised"] and "debug_" in sources["padded"]
    pairs = class_near_duplicates(_class(tmp_path, sources), ("ngram.py",), [stub])
    found = {(p.first, p.second) for p in pairs}
    copies = ("reference", "disguised", "padded", "part")
    assert found == {(a, b) for i, a in enumerate(copies) for b in copies[i + 1 :]}
    assert all(p.similarity >= THRESHOLD for p in pairs)
    disguised = next(p for p in pairs if (p.first, p.second) == ("reference", "disguised"))
    assert disguised.similarity > 0.8 and disguised.shared >= 50


def test_independent_solutions_share_well_under_the_threshold(tmp_path, stub):
    solutions = {p.parent.name: p.read_text() for p in sorted((SUBMISSIONS / "ngram").glob("*/ngram.py"))}
    solutions["reference"] = REFERENCE.read_text()
    prints = {key: fingerprints([text], frozenset()) for key, text in solutions.items()}
    assert near_duplicates(prints, threshold=THRESHOLD) == []
    # Measured with the stub discounted, the most similar independent pair shares about a quarter.
    assert all(p.similarity < THRESHOLD for p in near_duplicates(prints, threshold=0.0, min_shared=1))


def test_pairs_of_identical_files_are_left_to_the_identical_groups(tmp_path, stub):
    reference = REFERENCE.read_text()
    rows = _class(tmp_path, {"a": reference, "b": reference, "c": renamed(reference, stub)})
    hashed = [(s, Graded(files_hash="same" if s.key in "ab" else "other")) for s, _ in rows]
    found = [(p.first, p.second) for p in class_near_duplicates(hashed, ("ngram.py",), [stub])]
    assert found == [("a", "c"), ("b", "c")]
    assert [(p.first, p.second) for p in class_near_duplicates(rows, ("ngram.py",), [stub])][0] == ("a", "b")


def test_fingerprints_are_the_same_in_every_process():
    code = (
        "from lmgrade.regrade.near_duplicates import fingerprints; import pathlib; "
        f"print(sorted(fingerprints([pathlib.Path({str(REFERENCE)!r}).read_text()]))[:5])"
    )
    runs = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
        for env in ({**os.environ, "PYTHONHASHSEED": "1"}, {**os.environ, "PYTHONHASHSEED": "2"})
    }
    assert len(runs) == 1 and runs.pop().startswith("[")

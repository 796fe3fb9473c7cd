"""The command line as spec/cli.md fixes it: forms, outputs and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import invoke, lmgrade
from lmgrade.declare import catalog

ROOT = Path(__file__).resolve().parents[1]


def test_list():
    out = lmgrade("list")
    assert out.returncode == 0, out.stderr
    assert "ngram" in out.stdout and "ngram.py" in out.stdout and "100 points" in out.stdout
    # Each assignment says which distribution it comes from: the built-in ones are lmgrade's own.
    assert out.stdout.count("from the package lmgrade 0.1.0") == len(catalog.assignment_folders())


def test_generate(tmp_path):
    out = lmgrade("generate", "ngram", "-o", tmp_path / "starter")
    assert out.returncode == 0, out.stderr
    assert {p.name for p in (tmp_path / "starter").iterdir()} == {"ngram.py", "README.md"}


def test_grade_reference_writes_full_marks(tmp_path, reference_submission):
    results = tmp_path / "results.json"
    out = lmgrade("grade", "ngram", reference_submission, "--results", results, "--jobs", "2")
    assert out.returncode == 0, out.stderr
    assert results.stat().st_mode & 0o777 == 0o644  # the course's tools read it as another user
    document = json.loads(results.read_text())
    assert document["score"] == 100 and len(document["tests"]) == 11
    assert "total" in out.stdout and "100 / 100" in out.stdout


@pytest.mark.parametrize(
    "source,words",
    [
        ("def pad(:\n", "SyntaxError"),
        (None, "ngram.py is missing from the submission"),
        ("import os\nos._exit(0)\n", "exit status 0"),
        pytest.param("print('x' * 10**7)\n", "printed 10.0 MB; output shortened", marks=pytest.mark.study),
    ],
)
def test_a_broken_submission_still_gets_valid_results(tmp_path, source, words):
    submission = tmp_path / "submission"
    submission.mkdir()
    if source is not None:
        (submission / "ngram.py").write_text(source)
    results = tmp_path / "results.json"
    out = lmgrade("grade", "ngram", submission, "--results", results)
    assert out.returncode == 0, out.stderr
    document = json.loads(results.read_text())
    assert document["score"] == 0 and len(document["tests"]) == 11
    # Said once at the top (an import failure, a missing file) or by every check (a hidden one says only the kind
    # of failure: no answer).
    visible = [t for t in document["tests"] if "hidden input" not in t["output"] and "no answer" not in t["output"]]
    assert words in document["output"] or (visible and all(words in t["output"] for t in visible)), document


def test_usage_errors_exit_non_zero(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # A path that does not exist is a typo: one line, nothing graded, no results.json.
    for command in (
        ("grade", "ngram", tmp_path / "nowhere", "--results", tmp_path / "r.json"),
        ("check", "ngram", tmp_path / "nowhere"),
        ("check", "ngram", tmp_path / "nowhere", "--case", "pad:1"),
        ("regrade", "ngram", tmp_path / "nowhere", "-o", tmp_path / "out" / "scores.csv"),
    ):
        _one_line_error(invoke(*command), str(tmp_path / "nowhere"), "does not exist")
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    # An empty folder is a submission: graded 0, and results.json says why.
    (tmp_path / "empty").mkdir()
    empty = lmgrade("grade", "ngram", tmp_path / "empty", "--results", tmp_path / "r.json")
    assert (
        empty.returncode == 0 and "The submission is empty" in json.loads((tmp_path / "r.json").read_text())["output"]
    )
    bad_variant = invoke("grade", "ngram", tmp_path, "--set", "activation=relu")
    assert bad_variant.exit_code == 2 and "no variant 'activation'" in bad_variant.stderr
    unknown = invoke("generate", "nosuch", "-o", tmp_path)
    assert unknown.exit_code == 2 and "unknown assignment 'nosuch'" in unknown.stderr


def _one_line_error(out, *words):
    """`out`: a finished process, or click's result of an in-process run."""
    assert getattr(out, "returncode", getattr(out, "exit_code", None)) == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in out.stderr, out.stderr
    assert all(word in lines[0] for word in words), lines[0]


def test_a_users_mistake_is_one_line_and_exit_2(tmp_path, reference_submission):
    _one_line_error(invoke("generate", "ngram", "-o", "/proc/lmgrade-starter"), "/proc/lmgrade-starter")
    _one_line_error(invoke("grade", "ngram", reference_submission, "--results", "/proc/r.json"), "--results", "/proc")
    _one_line_error(
        invoke("grade", "ngram", reference_submission, "--results", tmp_path / "missing" / "r.json"),
        "does not exist",
        "missing",
    )
    _one_line_error(invoke("generate", "nosuch", "-o", tmp_path), "unknown assignment 'nosuch'")
    _one_line_error(invoke("generate", "rnn", "-o", tmp_path, "--set", "activation=relu"), "sigmoid, tanh")
    assert not (tmp_path / "missing").exists()


def test_generate_never_overwrites_a_students_work_without_force(tmp_path):
    (tmp_path / "ngram.py").write_text("# my own work\n")
    refused = lmgrade("generate", "ngram", "-o", tmp_path)
    _one_line_error(refused, "ngram.py", "--force")
    assert (tmp_path / "ngram.py").read_text() == "# my own work\n" and not (tmp_path / "README.md").exists()
    forced = lmgrade("generate", "ngram", "-o", tmp_path, "--force")
    assert forced.returncode == 0 and "NotImplementedError" in (tmp_path / "ngram.py").read_text()


def test_set_help_names_each_assignments_own_variants():
    out = lmgrade("grade", "--help")
    assert "activation=sigmoid|tanh" in " ".join(out.stdout.split()) and "pre_ln=true|false" in out.stdout


def test_check_runs_only_public_checks_and_says_what_it_left_out(reference_submission):
    out = lmgrade("check", "ngram", reference_submission)
    assert out.returncode == 0, out.stderr
    assert "90 / 90" in out.stdout
    said = " ".join(out.stdout.split())
    assert (
        "This is 90 of the assignment's 100 points" in said and "perplexity_hidden (10 points, after due date)" in said
    )


def test_check_exits_1_when_a_public_check_fails(tmp_path):
    (tmp_path / "ngram.py").write_text("def pad(sentence, n):\n    raise NotImplementedError\n")
    out = lmgrade("check", "ngram", tmp_path)
    assert out.returncode == 1, out.stderr
    assert "0 / 90" in out.stdout


@pytest.mark.slow  # grades three submissions per assignment
@pytest.mark.parametrize("name", ["ngram", pytest.param("lstm", marks=pytest.mark.study)])
def test_demo(tmp_path, name):
    out = lmgrade("demo", "-o", tmp_path / "demo", "--assignment", name)
    assert out.returncode == 0, out.stderr
    scores = {
        label: json.loads((tmp_path / "demo" / name / "results" / f"{label}.json").read_text())["score"]
        for label in ("starter", "reference", "flawed")
    }
    assert scores["starter"] == 0 and scores["reference"] == 100 and 0 < scores["flawed"] < 100
    assert "known mistake" in out.stdout


def test_check_case_shows_a_public_case_in_full_and_how_to_rerun_it(tmp_path):
    source = (ROOT / "reference" / "ngram" / "ngram.py").read_text()
    wrong = source.replace(
        "return [BOS] * (n - 1) + list(sentence) + [EOS]", "return [BOS] * n + list(sentence) + [EOS]"
    )
    assert wrong != source
    (tmp_path / "ngram.py").write_text(wrong)
    shown = lmgrade("check", "ngram", tmp_path, "--case", "pad:3", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    # Nothing written unless asked; the known mistake named, as grade names it.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ngram.py"]
    assert "this case fails" in shown.stdout and "--save-args case-pad-3.wire" in shown.stdout
    assert "This answer matches a known mistake: " in shown.stdout and "n BOS" in shown.stdout
    out = lmgrade("check", "ngram", tmp_path, "--case", "pad:3", "--save-args", tmp_path / "case.wire", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    said = out.stdout
    assert (tmp_path / "case.wire").is_file()
    assert "pad, case 3 of" in said and "arguments" in said
    assert "from lmgrade.plugins.ngram.public.scenarios import pad" in said
    assert "this case fails" in said and "expected" in said
    # The snippet runs as printed, in the submission's folder, and calls the student's code.
    code = said[said.index("from pathlib import Path") : said.index("expected:")]
    run = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert run.returncode == 0 and "<s>" in run.stdout, run.stderr


def test_check_case_fits_a_screen_or_two_unless_asked_for_everything(tmp_path):
    from lmgrade.declare import catalog
    from lmgrade.declare.flawed import write_flawed

    spec = catalog.load_spec("rnn")
    folder = write_flawed(
        spec.reference_folder(),
        spec.files,
        tmp_path / "flawed",
        [bug for bug in catalog.bugs("rnn").values() if bug.demo],
    )
    short = lmgrade("check", "rnn", folder, "--case", "elman_backward:3", cwd=tmp_path)
    full = lmgrade("check", "rnn", folder, "--case", "elman_backward:3", "--full", cwd=tmp_path)
    assert short.returncode == 0 and full.returncode == 0, short.stderr + full.stderr
    assert "this case fails" in short.stdout and "(--full lists them)" in short.stdout
    assert len(short.stdout.splitlines()) <= 100 < len(full.stdout.splitlines()), short.stdout
    assert "array of shape" in short.stdout and "np.float64" not in short.stdout + full.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["flawed"]
    assert lmgrade("check", "rnn", folder, "--full").returncode == 2  # only with --case


def test_check_case_shows_an_lstm_case_that_runs_as_printed(tmp_path):
    source = (ROOT / "reference" / "lstm" / "recurrent.py").read_text()
    # Each array clipped by its own norm: wrong wherever the total is above max_norm (case 3).
    wrong = source.replace(
        "return {k: g * scale for k, g in grads.items()}, total",
        "return {k: g * min(1.0, max_norm / np.sqrt(np.sum(g ** 2))) for k, g in grads.items()}, total",
    )
    assert wrong != source
    (tmp_path / "recurrent.py").write_text(wrong)
    out = lmgrade(
        "check", "lstm", tmp_path, "--case", "clip_grad_norm:3", "--save-args", tmp_path / "case.wire", cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr
    said = out.stdout
    assert "clip_grad_norm, case 3 of" in said and "from lmgrade.plugins.lstm.public.scenarios import clip" in said
    assert "this case fails" in said and "['clipped']" in said
    code = said[said.index("from pathlib import Path") : said.index("expected:")]
    run = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert run.returncode == 0 and "'total norm returned'" in run.stdout, run.stderr


def test_check_case_never_shows_a_hidden_check():
    out = lmgrade("check", "ngram", ROOT / "reference" / "ngram", "--case", "perplexity_hidden:1")
    assert out.returncode == 2 and "not a public check" in out.stderr and "arguments" not in out.stdout


def test_regrade_writes_the_csv_results_and_report_and_resumes(tmp_path, reference_submission):
    root = tmp_path / "class"
    for name in ("alice", "bob"):
        (root / name).mkdir(parents=True)
        (root / name / "ngram.py").write_text((reference_submission / "ngram.py").read_text())
    (root / "bob" / "ngram.py").write_text("def pad(:\n")
    out = lmgrade("regrade", "ngram", root, "-o", tmp_path / "out" / "scores.csv", "--jobs", "2")
    assert out.returncode == 0, out.stderr
    assert "2 graded, 0 unchanged" in out.stdout
    lines = (tmp_path / "out" / "scores.csv").read_text().splitlines()
    assert [line.split(",")[:5] for line in lines[1:]] == [["alice", "", "", "100", "100"], ["bob", "", "", "0", "100"]]
    assert json.loads((tmp_path / "out" / "results" / "bob" / "results.json").read_text())["score"] == 0
    assert "<svg" in (tmp_path / "out" / "report.html").read_text()
    again = lmgrade("regrade", "ngram", root, "-o", tmp_path / "out" / "scores.csv")
    assert again.returncode == 0 and "0 graded, 2 unchanged" in again.stdout
    assert (tmp_path / "out" / "scores.csv").read_text().splitlines() == lines


def test_regrade_usage_errors_are_one_line(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "class" / "alice").mkdir(parents=True)
    (tmp_path / "a_file").write_text("")
    scores = tmp_path / "scores.csv"
    for args, words in [
        ((tmp_path / "empty", "-o", scores), "holds no sub-folders"),
        ((tmp_path / "class", "-o", scores, "--executor", "dask://"), "expected dask://HOST:PORT"),
        ((tmp_path / "class", "-o", scores, "--executor", "nowhere.json"), "expected local, dask://HOST:PORT"),
        ((tmp_path / "class", "-o", tmp_path / "a_file" / "scores.csv"), "cannot make its folder"),
    ]:
        out = invoke("regrade", "ngram", *args)
        assert out.exit_code == 2 and words in out.stderr and "Traceback" not in out.stderr, out.stderr
    assert not scores.exists()


def test_the_command_line_runs_its_numeric_libraries_on_one_thread_unless_told_otherwise():
    """The sandbox's children keep every core busy: BLAS threads of the grading process beside them only wait."""
    script = "import os, lmgrade.cli; print(os.environ['OPENBLAS_NUM_THREADS'], os.environ['OMP_NUM_THREADS'])"
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    ours = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    assert ours.stdout.split() == ["1", "1"]
    theirs = subprocess.run(
        [sys.executable, "-c", script],
        env={**env, "OPENBLAS_NUM_THREADS": "4"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert theirs.stdout.split() == ["4", "1"]

"""The Gradescope zip, run as Gradescope runs it.

The zip is built by `lmgrade gradescope`, installed by its own setup.sh into
a throwaway virtual environment and run in temporary folders laid out like
/autograder, as `lmgrade gradescope --try` does (`lmgrade.course.gradescope.trial`,
with the scripts' local-run settings). Every results.json must be valid
Gradescope JSON with the scores `lmgrade grade` gives the same submission.
The throwaway environment reuses this interpreter's libraries, so pip
installs only what they lack; lmgrade itself comes from the zip's wheel. No
torch: the assignments run here (ngram, rnn, lstm) import none; the
transformer's zip is built and inspected.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from helpers import TEST_SECRET, study_unless, validate
from lmgrade.core.selection import Selection
from lmgrade.course.gradescope.layout import CONFIG_NAME, EXPECTED_FOLDER, Layout
from lmgrade.course.gradescope.local import LocalInstall, clean_env, install
from lmgrade.course.gradescope.trial import install_for_trial
from lmgrade.declare import catalog
from lmgrade.declare.flawed import write_flawed
from lmgrade.reports.gradescope import NOT_GRADED

# Slow: builds zips and wheels, installs them into virtual environments.
pytestmark = pytest.mark.slow

# The suite's own secret: a zip built with it copies the expected values other tests computed (and
# keeps those it computes for them) in the session's store.
SECRET = TEST_SECRET
ENTRIES = {"setup.sh", "run_autograder", "requirements.txt", CONFIG_NAME}


def command_env(secret: str | None) -> dict[str, str]:
    """lmgrade's commands here: none of the caller's lmgrade settings but the session's store, and `secret`."""
    return clean_env(LMGRADE_CACHE=os.environ["LMGRADE_CACHE"], **({"LMGRADE_SECRET": secret} if secret else {}))


def build(
    tmp: Path, assignment: str, *settings: str, secret: str | None = SECRET
) -> tuple[Path, subprocess.CompletedProcess]:
    out = tmp / f"{assignment}-autograder.zip"
    env = command_env(secret)
    args = [a for s in settings for a in ("--set", s)]
    proc = subprocess.run(
        [sys.executable, "-m", "lmgrade.cli", "gradescope", assignment, "-o", str(out), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return out, proc


def with_time_budget(layout: Layout, seconds: float) -> Layout:
    """The unpacked zip's config with a shorter time budget."""
    config = json.loads(layout.config.read_text())
    layout.config.write_text(json.dumps({**config, "time_budget_s": seconds}))
    return layout


@pytest.fixture(scope="module")
def ngram_zip(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("zip"), "ngram")[0]


@pytest.fixture(scope="module")
def rnn_zip(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """Built without LMGRADE_SECRET: the public default secret, and a warning."""
    return build(tmp_path_factory.mktemp("rnn_zip"), "rnn", "activation=tanh", secret=None)


@pytest.fixture(scope="module")
def installed(tmp_path_factory, ngram_zip) -> LocalInstall:
    """The ngram zip installed by its setup.sh into a throwaway venv, as --try installs it (torch-free: ngram
    imports none)."""
    made = install_for_trial(ngram_zip, tmp_path_factory.mktemp("gradescope"))
    print(f"setup.sh took {made.setup_s:.1f} s")
    return made


def reference_files(name: str) -> dict[str, str]:
    spec = catalog.load_spec(name)
    return {f: (spec.reference_folder() / f).read_text() for f in spec.files}


def looping_in(source: str, function: str) -> str:
    """`source` with an endless busy loop at the start of every function named `function`."""
    lines = source.splitlines(keepends=True)
    starts = sorted(
        (fn.body[0].lineno, fn.body[0].col_offset)
        for fn in ast.walk(ast.parse(source))
        if isinstance(fn, ast.FunctionDef) and fn.name == function
    )
    assert starts, f"no function {function}"
    for lineno, col in reversed(starts):
        lines.insert(lineno - 1, " " * col + "while True:\n" + " " * col + "    pass\n")
    return "".join(lines)


def buggy_files(tmp: Path) -> dict[str, str]:
    spec = catalog.load_spec("ngram")
    shown = [bug for bug in catalog.bugs("ngram").values() if bug.demo]
    folder = write_flawed(spec.reference_folder(), spec.files, tmp / "buggy", shown)
    return {f: (folder / f).read_text() for f in spec.files}


def results_of(layout: Layout) -> dict:
    document = json.loads(layout.results.read_text())
    validate(document)
    return document


def lmgrade_grade(
    files: dict[str, str], tmp: Path, assignment: str, settings: tuple[str, ...], secret: str | None
) -> tuple[subprocess.Popen, Path]:
    """`lmgrade grade` started on a folder of `files`; the folder, where its results.json will be."""
    folder = tmp / f"grade-{time.monotonic_ns()}"
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text)
    args = [a for s in settings for a in ("--set", s)]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "lmgrade.cli",
            "grade",
            assignment,
            str(folder),
            "--results",
            str(folder / "results.json"),
            *args,
        ],
        env=command_env(secret),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    return proc, folder


def scores(document: dict) -> dict[str, tuple[float, float, str]]:
    return {t["name"]: (t["score"], t["max_score"], t["visibility"]) for t in document["tests"]}


def differences(document: dict, expected: dict) -> str:
    """The checks scored differently, with both outputs: what a failure needs to be understood."""
    theirs = {t["name"]: t for t in expected["tests"]}
    lines = []
    for test in document["tests"]:
        other = theirs.get(test["name"], {})
        if (test["score"], test["max_score"]) != (other.get("score"), other.get("max_score")):
            lines.append(
                f"{test['name']}: run_autograder {test['score']}, lmgrade grade {other.get('score')}\n"
                f"--- run_autograder:\n{test['output']}\n--- lmgrade grade:\n{other.get('output')}"
            )
    return "\n".join(lines)


def grade_both(
    installed: LocalInstall,
    files: dict[str, str],
    tmp: Path,
    assignment: str = "ngram",
    settings: tuple[str, ...] = (),
    secret: str | None = SECRET,
) -> tuple[dict, dict]:
    """results.json of run_autograder and of `lmgrade grade` (with the zip's secret) on the same files, side by side."""
    layout = installed.new_root(files)
    recorded = sorted(layout.expected.rglob("*.wire"))
    zipped = installed.start(layout)
    graded, folder = lmgrade_grade(files, tmp, assignment, settings, secret)
    zip_out, _ = zipped.communicate(timeout=300)
    grade_out, _ = graded.communicate(timeout=300)
    assert zipped.returncode == 0, zip_out
    assert graded.returncode == 0, grade_out
    # Built from this checkout, graded from the installed wheel: the values the zip recorded served
    # every check and every named mistake (one computed live would have been stored beside them).
    assert recorded and sorted(layout.expected.rglob("*.wire")) == recorded
    expected = json.loads((folder / "results.json").read_text())
    return results_of(layout), expected


SUBMISSIONS_OF_NGRAM = {
    "reference": lambda tmp: reference_files("ngram"),
    "buggy": buggy_files,
    "syntax error": lambda tmp: {"ngram.py": "def pad(sentence, n:\n    return sentence\n"},
    "missing file": lambda tmp: {"notes.txt": "ngram.py is on my other laptop\n"},
    "infinite loop": lambda tmp: looping_submission(),
}


# The hanging submission waits out three checks' limits twice (16 s): the study compares it, and the suite
# grades it in the zip under a time budget (below).
@pytest.mark.parametrize(
    "kind", [pytest.param(kind, marks=study_unless(kind != "infinite loop")) for kind in SUBMISSIONS_OF_NGRAM]
)
def test_run_autograder_scores_as_lmgrade_grade(installed, tmp_path, kind):
    files = SUBMISSIONS_OF_NGRAM[kind](tmp_path)
    document, expected = grade_both(installed, files, tmp_path)
    assert scores(document) == scores(expected), differences(document, expected)
    assert document["score"] == expected["score"]
    if kind == "reference":
        assert document["score"] == 100
        visibility = {t["name"].split(":")[0]: t["visibility"] for t in document["tests"]}
        assignment, _ = catalog.load("ngram")
        assert visibility == {c.name: c.visibility for c in assignment.checks}  # from assignment.toml
        assert visibility["perplexity_hidden"] == "after_due_date"
    elif kind == "buggy":
        assert 0 < document["score"] < 100
    elif kind == "infinite loop":
        lost = {t["name"].split(":")[0] for t in document["tests"] if t["score"] < t["max_score"]}
        assert "perplexity" in lost and "pad" not in lost
        assert "limit" in next(t["output"] for t in document["tests"] if t["name"].startswith("perplexity:"))
    else:
        assert document["score"] == 0
        # Said once at the top, and each check points to it.
        words = "SyntaxError" if kind == "syntax error" else "ngram.py is missing"
        assert words in document["output"]
        assert all("ngram.py" in t["output"] for t in document["tests"])


SNOOP = '''
import json, os
from pathlib import Path

ROOT = Path({root!r})


def _try(what):
    try:
        return what()
    except OSError as exc:
        return type(exc).__name__


def pad(sentence, n):
    """What it could find of the secret, and whether it could write the results, as one token."""
    secret = _try(lambda: json.loads((ROOT / "source" / {config!r}).read_text())["secret"])
    listed = _try(lambda: sorted(os.listdir(ROOT / "source")))
    results = _try(lambda: (ROOT / "results" / "results.json").write_text("{{}}"))
    env = os.environ.get("LMGRADE_SECRET", "no secret in the environment")
    return [f"{{secret}} | {{listed}} | {{results}} | {{env}}"]
'''


def test_the_sandbox_reaches_neither_the_secret_nor_the_results(installed):
    layout = installed.new_root({})
    (layout.submission / "ngram.py").write_text(SNOOP.format(root=str(layout.root), config=CONFIG_NAME))
    # The secret in the grader's own environment too: the sandbox's must not have it.
    proc = installed.start(layout, LMGRADE_SECRET=SECRET)
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 0, out
    document = results_of(layout)
    assert SECRET not in layout.results.read_text() and SECRET not in out
    pad = next(t for t in document["tests"] if t["name"].startswith("pad:"))
    assert pad["score"] == 0, pad
    assert "PermissionError | PermissionError | PermissionError | no secret in the environment" in pad["output"], pad
    assert layout.source.stat().st_mode & 0o777 == 0o700


def looping_submission() -> dict[str, str]:
    """The reference with an endless loop in perplexity: three checks hang, the others pass."""
    return {"ngram.py": looping_in(reference_files("ngram")["ngram.py"], "perplexity")}


def test_time_budget_keeps_what_finished_and_zeroes_the_rest_with_a_reason(installed):
    layout = with_time_budget(installed.new_root(looping_submission()), 5)
    proc = installed.start(layout)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, out
    document = results_of(layout)
    tests = {t["name"].split(":")[0]: t for t in document["tests"]}
    assert len(tests) == 11
    assert "time limit" in document["output"]
    # The hanging check needs its own 8 s: it cannot have finished.
    assert tests["perplexity"]["score"] == 0 and "time budget (5 s)" in tests["perplexity"]["output"]
    finished = {name: t for name, t in tests.items() if "time budget" not in t["output"]}
    assert all(t["output"] != NOT_GRADED for t in finished.values())
    # What finished kept its points: only the checks that call perplexity lose any.
    assert all(
        t["score"] == t["max_score"]
        for name, t in finished.items()
        if name not in ("perplexity", "perplexity_hidden", "no_mutation")
    )


def wait_until_some_check_is_graded(layout: Layout, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if any(t["output"] != NOT_GRADED for t in json.loads(layout.results.read_text())["tests"]):
                return
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.1)
    pytest.fail("no check was graded in time")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_stopped_run_leaves_valid_results_with_what_finished(installed, sig):
    layout = installed.new_root(looping_submission())
    # The supervisor itself, as a timeout's signal would find it.
    proc = subprocess.Popen(
        [str(installed.venv / "bin" / "python"), "-I", "-m", "lmgrade.course.gradescope.supervise"],
        cwd=layout.root,
        env=installed.env(layout),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    wait_until_some_check_is_graded(layout)
    proc.send_signal(sig)
    out, _ = proc.communicate(timeout=60)
    document = results_of(layout)
    tests = {t["name"].split(":")[0]: t for t in document["tests"]}
    assert tests["perplexity"]["score"] == 0
    assert any(t["score"] > 0 for t in tests.values())
    if sig == signal.SIGTERM:
        assert proc.returncode == 0, out
        assert "stopped (SIGTERM)" in tests["perplexity"]["output"]
    else:  # nothing of ours ran after the kill: the last file the grading process wrote
        assert tests["perplexity"]["output"] == NOT_GRADED


def test_a_harness_that_cannot_start_still_leaves_valid_results(installed):
    layout = installed.new_root(reference_files("ngram"))
    config = json.loads(layout.config.read_text())
    layout.config.write_text(
        json.dumps({**config, "selection": {**config["selection"], "assignment": "no_such_assignment"}})
    )
    proc = installed.start(layout)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, out
    document = results_of(layout)
    assert len(document["tests"]) == 11 and document["score"] == 0
    assert "not your submission" in document["output"] and "exit status 1" in document["output"]
    assert all(t["output"].startswith("not graded: the grading process failed") for t in document["tests"])


def test_a_broken_image_still_leaves_valid_results(installed, tmp_path):
    layout = installed.new_root(reference_files("ngram"))
    broken = dataclasses.replace(installed, venv=tmp_path / "no-venv")
    proc = broken.start(layout)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode != 0
    document = results_of(layout)
    assert document["tests"] == [] and "could not start" in document["output"]


def zip_texts(path: Path) -> dict[str, str]:
    with zipfile.ZipFile(path) as zf:
        return {
            n: zf.read(n).decode()
            for n in zf.namelist()
            if not n.endswith(".whl") and not n.startswith(f"{EXPECTED_FOLDER}/")
        }


def inspect_zip(path: Path, assignment: str, settings: dict[str, str]) -> dict[str, str]:
    """The zip's texts, once its entries, modes, config and torch step are as they must be."""
    with zipfile.ZipFile(path) as zf:
        names = set(zf.namelist())
        modes = {i.filename: (i.external_attr >> 16) & 0o777 for i in zf.infolist()}
    wheels = {n for n in names if n.endswith(".whl")}
    # The expected values of every check, recorded: as secret as the config.
    expected = {n for n in names if n.startswith(f"{EXPECTED_FOLDER}/") and n.endswith(".wire")}
    assert names == ENTRIES | wheels | expected and len(wheels) == 1 and expected
    assert modes["setup.sh"] == modes["run_autograder"] == 0o755 and modes[CONFIG_NAME] == 0o600
    assert {modes[n] for n in expected} == {0o600}
    texts = zip_texts(path)
    assert not any("ngram" in text for text in texts.values()), "an ngram-shaped zip"
    config = json.loads(texts[CONFIG_NAME])
    assert config["selection"] == {"assignment": assignment, "settings": settings}
    loaded, variant = catalog.load(Selection(assignment, settings))
    assert config["variant"] == variant
    assert [c["name"] for c in config["checks"]] == [c.name for c in loaded.checks]
    torch_step = [
        line for line in texts["setup.sh"].splitlines() if line.startswith("pip_install") and "torch==" in line
    ]
    assert bool(torch_step) == (assignment in ("transformer", "embeddings"))  # the assignments that import torch
    assert "torch" not in texts["requirements.txt"]
    return texts


# A boolean variant and a choice of several (the other choices build the same way).
@pytest.mark.study  # the suite builds and runs the ngram zip; the study each assignment's
@pytest.mark.parametrize("setting", ["pre_ln=false", "positions=rope"])
def test_the_transformer_zip(tmp_path, setting):
    path, _ = build(tmp_path, "transformer", setting)
    config = json.loads(inspect_zip(path, "transformer", dict([setting.split("=")]))[CONFIG_NAME])
    assert config["secret"] == SECRET and not config["public_secret"]


@pytest.mark.study  # the suite builds and runs the ngram zip; the study each assignment's
def test_the_embeddings_zip_installs_torch(tmp_path):
    path, _ = build(tmp_path, "embeddings")
    config = json.loads(inspect_zip(path, "embeddings", {})[CONFIG_NAME])
    assert config["secret"] == SECRET and [c["name"] for c in config["checks"]][:2] == ["train_bpe", "encode_word"]


@pytest.mark.study  # the suite builds and runs the ngram zip; the study each assignment's
def test_the_rnn_zip_built_without_a_secret_says_so_loudly(rnn_zip):
    path, proc = rnn_zip
    assert "WARNING" in proc.stderr and "LMGRADE_SECRET is not set" in proc.stderr
    config = json.loads(inspect_zip(path, "rnn", {"activation": "tanh"})[CONFIG_NAME])
    assert config["public_secret"] is True


@pytest.mark.study  # the suite builds and runs the ngram zip; the study each assignment's
def test_the_rnn_zip_grades_the_rnn_reference(installed, rnn_zip, tmp_path):
    # Into the ngram zip's environment: the same wheel and requirements, only the config differs.
    rnn = install(rnn_zip[0], tmp_path, installed.venv)
    document, expected = grade_both(rnn, reference_files("rnn"), tmp_path, "rnn", ("activation=tanh",), secret=None)
    assert scores(document) == scores(expected), differences(document, expected)
    assert document["score"] == 100


@pytest.mark.study  # the suite builds and runs the ngram zip; the study each assignment's
def test_the_lstm_zip_grades_the_lstm_reference(installed, tmp_path):
    path, _ = build(tmp_path, "lstm")
    config = json.loads(inspect_zip(path, "lstm", {})[CONFIG_NAME])
    assert config["secret"] == SECRET
    lstm = install(path, tmp_path, installed.venv)
    document, expected = grade_both(lstm, reference_files("lstm"), tmp_path, "lstm")
    assert scores(document) == scores(expected), differences(document, expected)
    assert document["score"] == 100


def test_usage_errors_exit_2_without_a_traceback(tmp_path):
    def gradescope(*args, **env):
        return subprocess.run(
            [sys.executable, "-m", "lmgrade.cli", "gradescope", *args],
            capture_output=True,
            text=True,
            env=clean_env(**env),
            timeout=120,
        )

    assert gradescope("nosuch", "-o", str(tmp_path / "a.zip")).returncode == 2
    assert gradescope("ngram", "-o", str(tmp_path)).returncode == 2  # a folder
    bad = gradescope("ngram", "-o", str(tmp_path / "a.zip"), LMGRADE_GRADESCOPE_TIMEOUT="soon")
    assert bad.returncode == 2 and "LMGRADE_GRADESCOPE_TIMEOUT" in bad.stderr and "Traceback" not in bad.stderr

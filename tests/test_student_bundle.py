"""The student bundle: what it holds, what it must not hold, and that it grades as `lmgrade grade` does.

The ngram and rnn bundles are built with `lmgrade student-bundle` and
installed into a fresh venv that has no lmgrade and no reference: the
third-party libraries (numpy, click, rich, pytest, ...) come from the
project's venv through a .pth line naming its site-packages. Python adds
that folder as it is and runs none of the .pth files inside it, so the
editable install of lmgrade there stays out. The transformer bundle takes
minutes to record (its generate check), so only what its wheel would carry
is inspected.
"""

from __future__ import annotations

import io
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import numpy as np
import pytest

from helpers import TEST_SECRET, distinctive_reference_lines
from lmgrade.boundary import wire
from lmgrade.core.seeds import PUBLIC_SECRET
from lmgrade.core.selection import Selection
from lmgrade.course.bundle.fixtures import describe
from lmgrade.course.bundle.sources import FIXTURES_PACKAGE, grader_files
from lmgrade.declare import catalog, templates
from lmgrade.declare.flawed import write_flawed
from lmgrade.grading.expected_values import draw_cases
from lmgrade.grading.oracle import LiveReference

# Slow: builds bundles and installs them into virtual environments.
pytestmark = pytest.mark.slow

COLUMNS = "1000"  # no line of a report is wrapped, so reports compare line by line
BUILT = ("ngram", "rnn")
ROW = re.compile(r"^│\s*(\d+)\s*│\s*(\w+)\s*│\s*([\d.]+) / ([\d.]+)\s*│\s*(ok|FAIL)\s*│")
HEADING = re.compile(r"^(\d+)\. (\w+) \(([\d.]+)/([\d.]+)\)$")


def run(args, *, cwd=None, env=None, timeout=300) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k != "LMGRADE_SECRET"}
    environment.update(COLUMNS=COLUMNS, **(env or {}))
    return subprocess.run(
        [str(a) for a in args], cwd=cwd, env=environment, capture_output=True, text=True, timeout=timeout
    )


def lmgrade(*args, **kwargs) -> subprocess.CompletedProcess:
    """The instructor's lmgrade (this checkout), with the public default secret."""
    return run([sys.executable, "-m", "lmgrade.cli", *args], **kwargs)


def report(output: str) -> tuple[dict[str, tuple[float, float, str]], dict[str, str]]:
    """({check: (score, max, ok or FAIL)}, {check: its feedback}) from a printed report."""
    rows, feedback, current = {}, {}, None
    for line in output.splitlines():
        row = ROW.match(line)
        if row:
            rows[row[2]] = (float(row[3]), float(row[4]), row[5])
            continue
        heading = HEADING.match(line)
        if heading:
            current = heading[2]
            feedback[current] = []
        elif line.startswith("sandbox: ") or line.startswith("results written"):
            current = None
        elif current is not None:
            feedback[current].append(line)
    return rows, {name: "\n".join(lines).strip() for name, lines in feedback.items()}


def contents(path: Path, data: bytes | None = None) -> dict[str, bytes]:
    """Every file under `path`, and every member of every zip among them (wheel, npz), unpacked."""
    out: dict[str, bytes] = {}
    if data is None and path.is_dir():
        for child in sorted(path.rglob("*")):
            if child.is_file():
                out.update(contents(child, child.read_bytes()))
        return out
    data = path.read_bytes() if data is None else data
    out[str(path)] = data
    if data[:4] == b"PK\x03\x04":
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for name in archive.namelist():
                out.update(contents(Path(f"{path}!{name}"), archive.read(name)))
    return out


def traces(value) -> list[tuple[bytes, ...]]:
    """For each distinctive number in `value`, the byte strings that would show it in a file:
    a float as JSON writes it and as float64 bytes, an array by three distinct non-zero
    neighbours as stored (zeros and repeats are everywhere)."""
    if isinstance(value, wire.Tensor):
        return traces(value.values)
    if isinstance(value, np.ndarray):
        flat = value.ravel() if value.dtype.kind == "f" else value[:0]
        for start in range(flat.size - 2):
            window = flat[start : start + 3]
            if np.all(window != 0) and len(set(window.tolist())) == 3:
                return [(window.tobytes(),)]
        return []
    if isinstance(value, (float, np.floating)) and math.isfinite(value) and len(repr(float(value))) >= 10:
        return [(repr(float(value)).encode(), struct.pack("<d", float(value)))]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return [trace for item in value for trace in traces(item)]
    return []


# --- building and installing -------------------------------------------------


@pytest.fixture(scope="module")
def bundles(tmp_path_factory) -> dict[str, Path]:
    """The ngram bundle as a zip (unpacked here), the rnn bundle as a folder."""
    root = tmp_path_factory.mktemp("bundles")
    zipped = lmgrade("student-bundle", "ngram", "-o", root / "ngram-bundle.zip")
    assert zipped.returncode == 0, zipped.stderr
    with zipfile.ZipFile(root / "ngram-bundle.zip") as archive:
        archive.extractall(root / "unzipped")
    folder = lmgrade("student-bundle", "rnn", "-o", root / "rnn")
    assert folder.returncode == 0, folder.stderr
    return {"ngram": root / "unzipped" / "ngram", "rnn": root / "rnn"}


@pytest.fixture(scope="module")
def student_python(tmp_path_factory, bundles) -> Path:
    """A throwaway venv with both bundles installed as students install them, and no lmgrade."""
    return student_venv(tmp_path_factory.mktemp("student-venv"), [bundles[name] for name in BUILT])


def student_venv(root: Path, bundle_folders: list[Path]) -> Path:
    """A venv in `root` with the bundles' wheels installed, the project's libraries and no lmgrade: its python."""
    venv.EnvBuilder(with_pip=False).create(root)
    python = root / ("Scripts" if os.name == "nt" else "bin") / "python"
    # Run from the venv's folder: from this checkout, `python -c` would import its packages.
    purelib = run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], cwd=root).stdout.strip()
    (Path(purelib) / "project_libraries.pth").write_text(sysconfig.get_path("purelib") + "\n")
    assert run([python, "-c", "import numpy, rich"], cwd=root).returncode == 0
    assert run([python, "-c", "import lmgrade"], cwd=root).returncode != 0, "the instructor's lmgrade leaked in"
    for folder in bundle_folders:
        (wheel,) = (folder / "wheels").glob("*.whl")
        installed = run([python, "-m", "pip", "install", "--no-index", "--disable-pip-version-check", wheel], cwd=root)
        assert installed.returncode == 0, installed.stdout + installed.stderr
    where = run([python, "-c", "import lmgrade; print(lmgrade.__file__)"], cwd=root).stdout
    assert where.startswith(str(root)), where
    assert "No module named 'reference'" in run([python, "-c", "import reference"], cwd=root).stderr
    return python


def student_lmgrade(python: Path, *args, **kwargs) -> subprocess.CompletedProcess:
    return run([python.parent / "lmgrade", *args], **kwargs)


@pytest.fixture(scope="module")
def submissions(tmp_path_factory, bundles) -> dict[str, Path]:
    """The reference, the stub (the bundle's own starter files) and a buggy submission of ngram."""
    root = tmp_path_factory.mktemp("submissions")
    spec = catalog.load_spec("ngram")
    shutil.copytree(spec.reference_folder(), root / "reference", ignore=shutil.ignore_patterns("__pycache__"))
    demo_bugs = [bug for bug in catalog.bugs("ngram").values() if bug.demo]
    write_flawed(spec.reference_folder(), spec.files, root / "buggy", demo_bugs)
    return {"reference": root / "reference", "stub": bundles["ngram"], "buggy": root / "buggy"}


# --- what the bundle holds, and what it does not --------------------------------


def test_bundle_holds_stubs_handout_checker_and_public_fixtures(bundles):
    for name, folder in bundles.items():
        assignment, variant = catalog.load(name)
        rendered = templates.render(assignment, variant)
        for filename, text in rendered.items():  # the stubs and the handout, as `generate` renders them
            assert (folder / filename).read_text(encoding="utf-8") == text
        for filename in ("CHECKING.md", "pytest.ini", "test_public_checks.py"):
            assert (folder / filename).is_file()
        (wheel,) = (folder / "wheels").glob("*.whl")
        members = zipfile.ZipFile(wheel).namelist()
        assert f"{FIXTURES_PACKAGE}/{name}/fixtures.json" in members and "lmgrade/cli/__init__.py" in members
        fixture_text = contents(wheel)[f"{wheel}!{FIXTURES_PACKAGE}/{name}/fixtures.json"].decode()
        # A check not run by the bundle is only named (with its points and why), as the handout names it.
        left_out = {c["name"] for c in json.loads(fixture_text)["left_out"]}
        for check in assignment.checks:
            public = check.visibility == "visible" and check.timing is None
            assert (check.name in left_out) != public, check.name
            mentions = fixture_text.count(f'"{check.name}"')
            assert mentions >= 2 if public else mentions == 1, check.name
        plugin_modules = sorted(m for m in members if m.startswith("lmgrade/plugins/"))
        assert plugin_modules == [
            f"lmgrade/plugins/{name}/public/{m}"
            for m in ("__init__.py", "judges.py" if name == "rnn" else "sampling.py", "scenarios.py")
        ]


@pytest.mark.parametrize("name", BUILT)
def test_no_reference_code_inside(bundles, name):
    lines = distinctive_reference_lines(name)
    assert len(lines) >= 40  # enough to notice any file of the reference
    files = contents(bundles[name])
    assert any(path.endswith(".whl!lmgrade/grading/oracle.py") for path in files)  # wheels were unpacked
    for line in lines:
        found = [path for path, data in files.items() if line.encode() in data]
        assert not found, f"{line!r} of the reference is in {found}"


def test_the_embeddings_wheel_would_carry_no_reference_code():
    assignment, variant = catalog.load("embeddings")
    carried = grader_files(describe(assignment, variant), assignment.spec)
    assert sorted(carried) == [f"lmgrade/plugins/embeddings/public/{m}.py" for m in ("__init__", "judges", "scenarios")]
    for line in distinctive_reference_lines("embeddings"):
        assert not any(line.encode() in source for source in carried.values()), line


def test_the_transformer_wheel_would_carry_no_reference_code():
    assignment, variant = catalog.load("transformer")
    carried = grader_files(describe(assignment, variant), assignment.spec)
    assert sorted(carried) == [
        f"lmgrade/plugins/transformer/public/{m}.py"
        for m in ("__init__", "judges", "position_scenarios", "scenarios", "speed", "training")
    ]
    for line in distinctive_reference_lines("transformer"):
        assert not any(line.encode() in source for source in carried.values()), line


def test_the_lstm_wheel_would_carry_no_reference_code():
    assignment, variant = catalog.load("lstm")
    carried = grader_files(describe(assignment, variant), assignment.spec)
    assert sorted(carried) == [f"lmgrade/plugins/lstm/public/{m}.py" for m in ("__init__", "judges", "scenarios")]
    lines = distinctive_reference_lines("lstm")
    assert len(lines) >= 40
    for line in lines:
        assert not any(line.encode() in source for source in carried.values()), line


@pytest.mark.parametrize("name", BUILT)
def test_no_hidden_input_or_expected_value_inside(bundles, name):
    """Hidden cases, drawn from the public seed and from a course secret, leave no trace; public ones do."""
    assignment, variant = catalog.load(name)
    oracle = LiveReference(assignment.spec)
    files = contents(bundles[name])

    def shown(forms: tuple[bytes, ...]) -> bool:
        return any(form in data for form in forms for data in files.values())

    def case_traces(check, secret) -> list[tuple[bytes, ...]]:
        cases = draw_cases(check, name, variant, secret)
        return [(case.label.encode(),) for case in cases] + [
            trace for value in oracle.expected(check, cases) for trace in traces(value)
        ]

    public = next(c for c in assignment.checks if c.visibility == "visible" and c.name in ("perplexity", "rnnlm"))
    found = case_traces(public, PUBLIC_SECRET)
    assert len(found) > 5 and all(map(shown, found))  # the search finds what is there
    hidden = [c for c in assignment.checks if c.visibility != "visible"]
    assert hidden
    for check in hidden:
        for secret in (PUBLIC_SECRET, TEST_SECRET):
            found = case_traces(check, secret)
            assert len(found) > 5
            leaked = [forms[0][:80] for forms in found if shown(forms)]
            assert not leaked, (check.name, leaked)


# --- grading with the bundle ---------------------------------------------------------


@pytest.mark.parametrize("which", ["reference", "stub", "buggy"])
def test_check_in_the_bundle_gives_grades_verdicts_and_feedback(student_python, submissions, tmp_path, which):
    checked = student_lmgrade(student_python, "check", "ngram", submissions[which], cwd=tmp_path)
    # 0 where every public check passes, 1 where one fails: a script or a pre-commit hook stops on it.
    assert checked.returncode == (0 if which == "reference" else 1), checked.stderr
    graded = lmgrade("grade", "ngram", submissions[which], "--results", tmp_path / "results.json")
    assert graded.returncode == 0, graded.stderr
    check_rows, check_feedback = report(checked.stdout)
    grade_rows, grade_feedback = report(graded.stdout)
    public = [c.name for c in catalog.load("ngram")[0].checks if c.visibility == "visible"]
    assert sorted(check_rows) == sorted(public)
    assert check_rows == {name: grade_rows[name] for name in public}
    assert check_feedback == {name: text for name, text in grade_feedback.items() if name in public}
    totals = sum(score for score, _, _ in check_rows.values())
    assert totals == {"reference": 90, "stub": 0}.get(which, totals)
    if which == "buggy":
        assert 0 < totals < 90 and "known mistake" in checked.stdout  # named offline, from the fixtures


def test_pytest_in_the_bundle_prints_what_check_prints(student_python, bundles, submissions, tmp_path):
    folder = tmp_path / "ngram"
    shutil.copytree(bundles["ngram"], folder)
    shutil.copyfile(submissions["buggy"] / "ngram.py", folder / "ngram.py")
    # As CHECKING.md has it, the student's venv is in this folder: larger than a submission may be.
    (folder / ".venv" / "lib").mkdir(parents=True)
    with open(folder / ".venv" / "lib" / "libraries.bin", "wb") as libraries:
        libraries.truncate(100 * 2**20)  # sparse: costs no disk
    tested = run([student_python, "-m", "pytest"], cwd=folder)
    checked = student_lmgrade(student_python, "check", "ngram", cwd=folder)
    assert tested.returncode == 1, tested.stdout + tested.stderr  # some checks fail
    tested_rows, _ = report(tested.stdout)
    checked_rows, checked_feedback = report(checked.stdout)
    assert tested_rows == checked_rows and checked_feedback
    for name, (_score, _, mark) in checked_rows.items():
        assert re.search(rf"test_public_check\[{name}\] {'PASSED' if mark == 'ok' else 'FAILED'}", tested.stdout)
    for name, text in checked_feedback.items():  # each failure says what `check` says
        # (`check` also shows what a check paid through a stand-in saw; pytest reports it as passed)
        if checked_rows[name][2] != "ok":
            assert text in tested.stdout, name
    said = " ".join(tested.stdout.split())
    assert "perplexity_hidden (10 points, after due date), which is not run here" in said


def test_pytest_in_the_bundle_says_why_a_file_could_not_be_imported(student_python, bundles, tmp_path):
    folder = tmp_path / "ngram"
    shutil.copytree(bundles["ngram"], folder)
    (folder / "ngram.py").write_text("def pad(sentence, n:\n    return sentence\n")
    tested = run([student_python, "-m", "pytest"], cwd=folder)
    assert tested.returncode == 1
    # Each failing test carries what "see above" points to: pytest shows no report above it.
    failures = tested.stdout[tested.stdout.index("= FAILURES =") : tested.stdout.index("public checks")]
    blocks = re.split(r"_{3,} test_public_check\[", failures)[1:]
    assert blocks and all("ngram.py could not be imported" in b and "SyntaxError" in b for b in blocks)


def test_rnn_bundle_grades_as_grade_does(student_python, tmp_path):
    spec = catalog.load_spec("rnn")
    for which, folder in (("reference", spec.reference_folder()), ("stub", tmp_path / "stub")):
        if which == "stub":
            lmgrade("generate", "rnn", "-o", folder)
        checked = student_lmgrade(student_python, "check", "rnn", folder, cwd=tmp_path)
        graded = lmgrade("grade", "rnn", folder, "--results", tmp_path / "results.json")
        assert checked.returncode == (0 if which == "reference" else 1), checked.stderr
        assert graded.returncode == 0, graded.stderr
        check_rows, _ = report(checked.stdout)
        grade_rows, _ = report(graded.stdout)
        assert check_rows and check_rows == {name: grade_rows[name] for name in check_rows}
        assert sum(row[0] for row in check_rows.values()) == (94 if which == "reference" else 0)


@pytest.mark.study  # a second bundle built and installed; the suite's checks the default variant
def test_a_variants_bundle_checks_its_variant_with_the_commands_checking_md_shows(tmp_path):
    """The rnn bundle of activation=tanh: `lmgrade check rnn` and `pytest`, as written, check tanh."""
    built = lmgrade("student-bundle", "rnn", "--set", "activation=tanh", "-o", tmp_path / "tanh")
    assert built.returncode == 0, built.stderr
    folder = tmp_path / "tanh"
    guide = (folder / "CHECKING.md").read_text()
    commands = [
        line.split("#")[0].split()
        for line in guide.splitlines()
        if line.startswith("    lmgrade check") or line.startswith("    pytest")
    ]
    assert ["lmgrade", "check", "rnn"] in commands and ["pytest"] in commands and "`activation=tanh`" in guide
    handout = (folder / "README.md").read_text()
    assert "lmgrade check rnn --set activation=tanh path/to/your/folder" in handout
    python = student_venv(tmp_path / "venv", [folder])
    reference = catalog.load_spec("rnn").reference_folder()
    for filename in ("modules.py", "elman.py"):  # the reference computes either activation
        shutil.copyfile(reference / filename, folder / filename)
    checked = student_lmgrade(python, "check", "rnn", cwd=folder)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    rows, _ = report(checked.stdout)
    assert rows and all(mark == "ok" for _, _, mark in rows.values()), checked.stdout
    tested = run([python, "-m", "pytest"], cwd=folder)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert f"{len(rows)} passed" in tested.stdout
    # Naming the bundle's own variant is fine; another one is refused in one line.
    same = student_lmgrade(python, "check", "rnn", "--set", "activation=tanh", cwd=folder)
    assert same.returncode == 0, same.stderr
    other = student_lmgrade(python, "check", "rnn", "--set", "activation=sigmoid", cwd=folder)
    assert other.returncode == 2 and "this bundle checks rnn with activation=tanh" in other.stderr


def test_the_bundles_command_offers_only_what_works_there_about_its_own_assignments(student_python, tmp_path):
    helped = student_lmgrade(student_python, "--help", cwd=tmp_path)
    assert helped.returncode == 0, helped.stderr
    listed = helped.stdout[helped.stdout.index("Commands:") :].splitlines()[1:]
    assert [line.split()[0] for line in listed if line.strip()] == ["check", "list"]
    check_help = " ".join(student_lmgrade(student_python, "check", "--help", cwd=tmp_path).stdout.split())
    assert "check ngram (no variants), rnn with activation=sigmoid: check needs no --set" in check_help
    shown = student_lmgrade(student_python, "list", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    public = [c.name for name in BUILT for c in catalog.load(name)[0].checks if c.visibility == "visible"]
    assert all(re.search(rf"│ {name}\s+│", shown.stdout) for name in public), shown.stdout
    assert "from the student bundle lmgrade-student-ngram" in shown.stdout
    assert "variant: activation=sigmoid, the one this bundle checks" in " ".join(shown.stdout.split())
    assert "unknown assignment" not in shown.stdout + shown.stderr


def test_student_mistakes_are_one_line_errors(student_python, tmp_path):
    wrong_variant = student_lmgrade(student_python, "check", "rnn", tmp_path, "--set", "activation=tanh")
    assert wrong_variant.returncode == 2 and "activation=sigmoid" in wrong_variant.stderr
    not_installed = student_lmgrade(student_python, "check", "transformer", tmp_path)
    assert not_installed.returncode == 2 and "install the bundle of transformer" in not_installed.stderr
    for out in (wrong_variant, not_installed):
        assert "Traceback" not in out.stderr


def test_student_bundle_refuses_to_overwrite(tmp_path):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.txt").write_text("mine")
    out = lmgrade("student-bundle", "ngram", "-o", tmp_path / "taken")
    assert out.returncode == 2 and "not an empty folder" in out.stderr
    assert (tmp_path / "taken" / "notes.txt").read_text() == "mine"


def test_a_torch_bundle_requires_the_supported_range_and_says_how_to_install_a_cpu_build():
    from importlib.metadata import version

    from lmgrade.course.bundle import texts
    from lmgrade.course.bundle.build import torch_support

    graded = version("torch").partition("+")[0]
    major, minor = map(int, graded.split(".")[:2])
    torch = torch_support("torch>=2.1")
    assert torch.requirement == f"torch>=2.1,<{major}.{minor + 1}" and torch.graded == graded
    assignment, variant = catalog.load(Selection("transformer", {"pre_ln": "false"}))
    guide = texts.guide(assignment, variant, "checker.whl", torch)
    install = [line.split("#")[0].split() for line in guide.splitlines() if line.startswith("    python -m pip")]
    # torch first, a CPU-only build of the version graded with, from the index the Gradescope zip uses; then the wheel.
    assert install[0][:5] == ["python", "-m", "pip", "install", f"torch=={graded}"]
    assert install[0][5:] == ["--index-url", texts.torch_cpu_index()] and texts.torch_cpu_index()
    assert install[1] == ["python", "-m", "pip", "install", "wheels/checker.whl"]
    said = " ".join(guide.split())
    assert f"PyTorch 2.1 to {major}.{minor}" in said and f"grades with torch {graded} on the CPU" in said
    assert "`pre_ln=false`" in said
    assert "torch" not in texts.guide(*catalog.load("rnn"), "checker.whl", None)

"""An assignment from a package of its own, installed with pip, with no change to lmgrade.

The package is docs/examples/lmgrade-tiny (the worked example of
docs/writing-an-assignment.md), copied outside the repository and installed
(--no-deps) into a virtual environment that sees this interpreter's
packages (lmgrade, numpy, torch). That
environment's `lmgrade` then lists, generates, grades, checks, builds a
Gradescope zip whose run_autograder grades with it, and builds a student
bundle carrying its public package.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from lmgrade.course.gradescope.local import clean_env, install

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "docs" / "examples" / "lmgrade-tiny"
REFERENCE = (EXAMPLE / "tinylm" / "reference" / "stats.py").read_text()
BUGGY = REFERENCE.replace("/ len(values)", "/ (len(values) - 1)")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """A venv with lmgrade-tiny installed from a copy of the example, outside the repository."""
    tmp = tmp_path_factory.mktemp("external")
    source = tmp / "lmgrade-tiny"
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build"))
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    # --system-site-packages reaches the base interpreter's packages; where this interpreter is itself
    # a virtual environment, its own site-packages (lmgrade, numpy, torch) are added, .pth files included.
    (added,) = (venv / "lib").glob("python3*/site-packages")
    (added / "outer.pth").write_text("".join(f"import site; site.addsitedir({p!r})\n" for p in site.getsitepackages()))
    # Built as lmgrade gradescope builds lmgrade's own wheel: setuptools from pip's configured index.
    proc = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--disable-pip-version-check",
            str(source),
        ],
        capture_output=True,
        text=True,
        cwd=tmp,
    )
    assert proc.returncode == 0, proc.stderr
    return venv


def lmgrade(venv: Path, *args, cwd: Path) -> subprocess.CompletedProcess:
    # `python -m lmgrade.cli` is the `lmgrade` command of the outer environment, run by this one's python.
    return subprocess.run(
        [str(venv / "bin" / "python"), "-m", "lmgrade.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=clean_env(LMGRADE_CACHE=os.environ["LMGRADE_CACHE"]),  # the session's store, never the user's
        timeout=600,
    )


def submission(folder: Path, source: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "stats.py").write_text(source)
    return folder


def test_list_names_the_package(venv, tmp_path):
    out = lmgrade(venv, "list", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "tiny: The mean of a list" in out.stdout and "from the package lmgrade-tiny 0.1.0" in out.stdout
    assert "ngram" in out.stdout  # the built-in ones beside it


def test_generate_grade_and_check(venv, tmp_path):
    out = lmgrade(venv, "generate", "tiny", "-o", tmp_path / "starter", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert {p.name for p in (tmp_path / "starter").iterdir()} == {"stats.py", "README.md"}
    scores = {}
    for name, source in (
        ("reference", REFERENCE),
        ("buggy", BUGGY),
        ("stub", (tmp_path / "starter" / "stats.py").read_text()),
    ):
        folder = submission(tmp_path / name, source)
        out = lmgrade(
            venv, "grade", "tiny", folder, "--results", tmp_path / f"{name}.json", "--jobs", "1", cwd=tmp_path
        )
        assert out.returncode == 0, out.stderr
        document = json.loads((tmp_path / f"{name}.json").read_text())
        scores[name] = {t["name"].split(":")[0]: t["score"] for t in document["tests"]}
        if name == "buggy":
            assert "len(values) - 1" in out.stdout  # the known mistake, named
    assert sum(scores["reference"].values()) == 10 and sum(scores["stub"].values()) == 0
    assert sum(scores["buggy"].values()) == 0
    out = lmgrade(venv, "check", "tiny", tmp_path / "reference", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "6 / 6" in out.stdout or "6/6" in out.stdout.replace(" ", ""), out.stdout


def test_student_bundle_carries_the_public_package(venv, tmp_path):
    out = lmgrade(venv, "student-bundle", "tiny", "-o", tmp_path / "bundle", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    (wheel,) = (tmp_path / "bundle" / "wheels").glob("*.whl")
    members = set(zipfile.ZipFile(wheel).namelist())
    assert {
        "tinylm/public/__init__.py",
        "tinylm/public/scenarios.py",
        "lmgrade_fixtures/tiny/fixtures.json",
        "lmgrade/cli/__init__.py",
    } <= members
    assert not [
        m
        for m in members
        if m.startswith(
            (
                "tinylm/reference",
                "tinylm/checks",
                "tinylm/bugs",
                "tinylm/__init__",
                "lmgrade/plugins",
                "lmgrade/reference",
            )
        )
    ]


@pytest.mark.study  # a zip with a package of its own: test_try_zip.py builds one's wheel in the suite
def test_the_gradescope_zip_carries_the_package_and_grades_with_it(venv, tmp_path):
    out = lmgrade(venv, "gradescope", "tiny", "-o", tmp_path / "tiny.zip", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    names = zipfile.ZipFile(tmp_path / "tiny.zip").namelist()
    assert any(n.startswith("lmgrade_tiny-0.1.0-") and n.endswith(".whl") for n in names), names
    installed = install(tmp_path / "tiny.zip", tmp_path, tmp_path / "zip-venv")
    for source, total in ((REFERENCE, 10), (BUGGY, 0)):
        layout = installed.new_root({"stats.py": source})
        proc = installed.start(layout)
        output, _ = proc.communicate(timeout=600)
        assert proc.returncode == 0, output
        assert json.loads(layout.results.read_text())["score"] == total, output

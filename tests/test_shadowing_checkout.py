"""A checkout named `lmgrade`, in the folder Python is run from, would shadow the installed package: the
checkout's root `__init__.py` loads the installed one in its place and says so in one line, or, where none
is installed, raises an ImportError that says why."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from helpers import ROOT


@pytest.fixture
def parent_of_a_checkout(tmp_path):
    """A folder holding a folder `lmgrade` with the checkout's root __init__.py, as a clone named lmgrade."""
    (tmp_path / "lmgrade").mkdir()
    shutil.copyfile(ROOT / "__init__.py", tmp_path / "lmgrade" / "__init__.py")
    return tmp_path


def python_in(folder, *options: str, code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *options, "-c", code], cwd=folder, capture_output=True, text=True, timeout=120
    )


def test_the_installed_lmgrade_is_used_and_the_clash_said_in_one_line(parent_of_a_checkout):
    out = python_in(
        parent_of_a_checkout,
        code="import lmgrade.cli; from lmgrade import AssignmentPlugin; print(lmgrade.__file__)",
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() != str(parent_of_a_checkout / "lmgrade" / "__init__.py")
    (line,) = out.stderr.strip().splitlines()
    assert line.startswith(f"lmgrade: the folder {parent_of_a_checkout / 'lmgrade'} (lmgrade's source) shadows")


def test_without_an_installed_lmgrade_the_import_error_says_why(parent_of_a_checkout):
    out = python_in(parent_of_a_checkout, "-S", code="import lmgrade")  # -S: no site-packages, no lmgrade
    assert out.returncode == 1
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: ") and "is a checkout of lmgrade's source" in last
    assert "no lmgrade is installed" in last


def test_a_checkout_under_another_name_is_left_alone(tmp_path):
    (tmp_path / "main").mkdir()
    shutil.copyfile(ROOT / "__init__.py", tmp_path / "main" / "__init__.py")
    out = python_in(tmp_path, code="import main")
    assert out.returncode == 0 and out.stderr == "", out.stderr

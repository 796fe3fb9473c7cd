"""An assignment author's errors are said as the author's: a stale edit of a mistake or bug, a scenario its
cases do not fit, a mistake no submission can be told. `lmgrade selftest` names the file and line that
declare each, exits 1 and shows no traceback; `lmgrade grade` says which mistake it cannot name. Shown on
the package `lmgrade new` writes (loaded as tests/test_authoring_kit.py loads it)."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_authoring_kit import NAME, PACKAGE, as_installed

from helpers import TEST_SECRET, invoke
from lmgrade.declare import catalog
from lmgrade.declare.plugin_manager import make_manager
from lmgrade.prove.author_errors import Declared, bad_scenarios, on_the_reference, stale_bugs, stale_mistakes

REFERENCE_LINE = "return e / e.sum(axis=-1, keepdims=True)"


@pytest.fixture
def package(tmp_path, monkeypatch):
    folder = tmp_path / "lmgrade-demo-assignment"
    out = invoke("new", NAME, "-o", folder)
    assert out.exit_code == 0, out.output
    as_installed(folder)
    monkeypatch.syspath_prepend(str(folder))
    importlib.invalidate_caches()
    yield folder
    for module in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
        del sys.modules[module]


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) == 1, f"{path.name} no longer holds {old!r}"
    path.write_text(text.replace(old, new))


def lmgrade_in(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "lmgrade.cli", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(folder), "LMGRADE_SECRET": TEST_SECRET},
        timeout=300,
    )


def loaded():
    assignment, variant = catalog.load(NAME, make_manager())
    return assignment, variant, Declared.around(assignment)


def test_the_generated_package_declares_nothing_wrong(package):
    assignment, variant, declared = loaded()
    assert not stale_mistakes(assignment, declared)
    assert not stale_bugs(assignment, catalog.bugs(NAME, make_manager()), declared)
    assert not bad_scenarios(assignment, variant, TEST_SECRET, declared)
    assert not on_the_reference(assignment, [variant], TEST_SECRET, None, declared)


def test_a_stale_edit_is_named_by_its_declaration_and_selftest_exits_1_without_a_traceback(package):
    # The reference is rewritten: the mistake's edit (and the bug made from it) no longer applies.
    edit(package / PACKAGE / "reference" / "softmax.py", REFERENCE_LINE, "return e / np.sum(e, axis=-1, keepdims=True)")
    out = lmgrade_in(package, "selftest", NAME)
    assert out.returncode == 1, out.stdout + out.stderr
    said = out.stdout + out.stderr
    assert "Traceback" not in said and "lmgrade itself failed" not in said
    assert f"{PACKAGE}/mistakes.py:" in said and "mistake 'wrong_axis' of check softmax" in said
    assert "bug 'wrong_axis'" in said and f"{PACKAGE}/bugs.py:" in said
    assert "holds 'return e / e.sum(axis=-1, keepdims=True)' nowhere, not once" in said
    assert "ok " not in out.stdout  # no proof is made on declarations that cannot work


def test_grade_says_which_mistake_it_cannot_name(package):
    edit(package / PACKAGE / "reference" / "softmax.py", REFERENCE_LINE, "return e / np.sum(e, axis=-1, keepdims=True)")
    out = lmgrade_in(package, "grade", NAME, f"{PACKAGE}/reference", "--results", "results.json")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "note: " in out.stderr and "mistake 'wrong_axis' of check softmax" in out.stderr
    assert "it is not named in this grading" in out.stderr


def test_a_scenario_its_cases_do_not_fit_is_named(package):
    edit(package / PACKAGE / "checks.py", '{"x": x}', '{"logits": x}')
    out = lmgrade_in(package, "selftest", NAME)
    assert out.returncode == 1, out.stdout + out.stderr
    said = out.stdout + out.stderr
    assert "Traceback" not in said and "harness fault" not in said
    assert f"{PACKAGE}/public/scenarios.py:" in said and "check softmax: the reference failed on softmax case 1" in said


def test_a_mistake_that_changes_no_answer_is_on_the_reference(package):
    edit(
        package / PACKAGE / "mistakes.py",
        '"return e / e.sum(axis=0, keepdims=True)"',
        '"return e / e.sum(axis=-1, keepdims=True) * 1.0"',
    )
    assignment, variant, declared = loaded()
    (problem,) = on_the_reference(assignment, [variant], TEST_SECRET, None, declared)
    assert problem.startswith(f"{PACKAGE}/mistakes.py:")
    assert "mistake 'wrong_axis' of check softmax is never named: its answers are the reference's" in problem

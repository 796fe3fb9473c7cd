"""`lmgrade new NAME --torch`: a working PyTorch assignment package (modules loaded with the cases' weights,
float64 and float32 cases, a composed check, a timing check, a known mistake and its bug). Loaded without
installing it, as tests/test_authoring_kit.py loads the numpy one: one slow test runs its own tests, which
prove its graders with `lmgrade selftest`."""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys

import pytest
from test_authoring_kit import as_installed

from helpers import TEST_SECRET, invoke
from lmgrade.declare import catalog
from lmgrade.declare.plugin_manager import make_manager
from lmgrade.declare.scaffold import TORCH_TEMPLATE, words

NAME = "torch_demo"
PACKAGE = words(NAME)["__PACKAGE__"]


@pytest.fixture
def generated(tmp_path, monkeypatch):
    folder = tmp_path / "lmgrade-torch-demo"
    out = invoke("new", NAME, "-o", folder, "--torch")
    assert out.exit_code == 0, out.output
    as_installed(folder, NAME)
    monkeypatch.syspath_prepend(str(folder))
    importlib.invalidate_caches()
    yield folder
    for module in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
        del sys.modules[module]


def test_new_torch_writes_every_file_of_the_torch_template(generated):
    files = {p.relative_to(generated).as_posix() for p in generated.rglob("*") if p.is_file()}
    for source in TORCH_TEMPLATE.rglob("*.tmpl"):
        name = re.sub(r"\.tmpl$", "", source.relative_to(TORCH_TEMPLATE).as_posix())
        name = name.replace("__PACKAGE__", PACKAGE).replace("__NAME__", NAME).replace("gitignore", ".gitignore")
        assert name in files, name
        assert not re.search(r"__(NAME|PACKAGE|DIST)__", (generated / name).read_text()), name


def test_the_torch_assignment_loads_with_what_a_torch_check_needs(generated):
    assignment, _ = catalog.load(NAME, make_manager())
    assert list(assignment.spec.preload) == ["torch"]
    checks = {c.name: c for c in assignment.checks}
    assert checks["residual"].composes == ("rms_norm",) and checks["rms_norm"].grades == ("layers.RMSNorm",)
    assert checks["rms_norm_speed"].timing is not None
    dtypes = {case.args["dtype"] for case in checks["rms_norm"].make_cases(_context())}
    assert dtypes == {"float32", "float64"}
    bugs = catalog.bugs(NAME, make_manager())
    assert set(bugs["rows_in_a_loop"].loses) == {"rms_norm_speed"}


def _context():
    import numpy as np

    from lmgrade.declare.checks import CaseContext

    return CaseContext(rng=np.random.default_rng(0), variant={})


@pytest.mark.slow  # its own tests: lmgrade selftest of a torch assignment, some minutes on a busy machine
def test_the_generated_torch_package_passes_its_own_tests(generated):
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=generated,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(generated), "LMGRADE_SECRET": TEST_SECRET},
        timeout=900,
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert "2 passed" in out.stdout


def test_the_figures_the_authoring_kit_states_of_it_are_its_own(generated):
    """authoring-kit.md's proofs and mutants of the torch package: counted here, never typed stale."""
    from helpers import ROOT
    from lmgrade.prove.mutants import all_mutants
    from lmgrade.prove.selftest import plan

    page = (ROOT / "docs" / "authoring-kit.md").read_text(encoding="utf-8")
    said = re.search(
        r"`lmgrade selftest` \((\d+) proofs\), and\s+`lmgrade mutants` kills every one of the"
        r"\s+reference's (\d+) mutants",
        page,
    )
    assert said, "authoring-kit.md no longer states the torch package's proofs and mutants"
    steps = plan(NAME, pm=make_manager(), submissions=generated / "tests" / "submissions" / NAME)
    assignment, _ = catalog.load(NAME, make_manager())
    assert (int(said.group(1)), int(said.group(2))) == (len(steps), len(all_mutants(assignment)))

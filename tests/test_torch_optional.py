"""torch is optional: lmgrade grades the numpy assignments without it, and a torch assignment where it is
missing is refused in one line that says what to install.

torch stays installed: a throwaway venv sees the project's libraries through a .pth file, and another
line of that file sets sys.modules["torch"] = None, so `import torch` fails in every process started
there, the sandbox's fork servers (`python -I`, which still reads the venv's .pth files) included.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

from helpers import ROOT
from lmgrade.course.bundle.build import requirements
from lmgrade.declare import catalog, torch_requirement
from lmgrade.declare.assignment import tomllib
from lmgrade.declare.flawed import write_flawed

NUMPY_ASSIGNMENTS = ("ngram", "rnn", "lstm")
TORCH_ASSIGNMENTS = ("embeddings", "seq2seq", "transformer")
BLOCK = "import sys; sys.modules['torch'] = None  # tests: torch cannot be imported here"


@pytest.fixture(scope="module")
def torchless_python(tmp_path_factory) -> Path:
    """A venv whose processes import lmgrade and the project's libraries, and cannot import torch."""
    root = tmp_path_factory.mktemp("torchless")
    venv.EnvBuilder(with_pip=False).create(root)
    python = root / ("Scripts" if os.name == "nt" else "bin") / "python"
    purelib = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    project = Path(sysconfig.get_path("purelib"))
    # Python adds the project's folder as it is and runs no .pth file of it: the lines of lmgrade's
    # editable install (if it is one) come along, to find lmgrade where this checkout has it.
    editable = [
        line for pth in sorted(project.glob("__editable__*lmgrade*.pth")) for line in pth.read_text().split("\n")
    ]
    (purelib / "project_libraries.pth").write_text("\n".join([str(project), *editable, BLOCK]) + "\n")
    probe = subprocess.run(
        [python, "-c", "import lmgrade, numpy\ntry:\n    import torch\nexcept ImportError:\n    print('no torch')"],
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert probe.stdout.strip() == "no torch", probe.stdout + probe.stderr
    return python


def torchless_lmgrade(python: Path, *args, cwd: Path) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [python, "-m", "lmgrade.cli", *map(str, args)],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_pip_install_lmgrade_brings_no_torch_and_its_extras_do():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    named = {re.match(r"[\w.-]+", r).group() for r in project["dependencies"]}
    assert "torch" not in named and "numpy" in named
    extras = project["optional-dependencies"]
    assert [r for r in extras["torch"] if r.startswith("torch")]  # pip install 'lmgrade[torch]'
    assert [r for r in extras["test"] if r.startswith("torch")]  # the suite grades the torch assignments


@pytest.mark.parametrize("name", NUMPY_ASSIGNMENTS + TORCH_ASSIGNMENTS)
def test_the_torch_assignments_are_those_that_need_it(name):
    assert torch_requirement.needs(catalog.load_spec(name)) is (name in TORCH_ASSIGNMENTS)


def test_a_numpy_bundle_requires_no_torch_and_a_torch_bundle_the_range_it_was_recorded_with():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    # lmgrade's metadata as pip writes it from pyproject.toml: each extra's lines carry their marker.
    declared = list(project["dependencies"]) + [
        f'{r}; extra == "{extra}"' for extra, lines in project["optional-dependencies"].items() for r in lines
    ]
    numpy_only, none = requirements(declared, needs_torch=False)
    assert none is None and not [r for r in numpy_only if "torch" in r or "extra" in r]
    assert "numpy>=1.24" in numpy_only
    with_torch, torch = requirements(declared, needs_torch=True)
    assert torch is not None and with_torch == [*numpy_only, torch.requirement]
    assert torch.requirement.startswith("torch>=2.1,<")


def test_the_install_hint_is_the_assignment_packages_own_requirement(monkeypatch):
    asked = {
        "course-assignments": ["numpy", "torch>=2.3"],
        "optional-torch": ["numpy", 'torch>=2.2; extra == "gpu"'],
        "numpy-only": ["numpy"],
    }
    monkeypatch.setattr(torch_requirement.importlib.metadata, "requires", lambda name: asked[name])
    assert torch_requirement.install_hint("course-assignments") == "torch>=2.3"
    assert torch_requirement.install_hint("optional-torch") == "optional-torch[gpu]"
    assert torch_requirement.install_hint("numpy-only") == "lmgrade[torch]"
    assert torch_requirement.install_hint(None) == "lmgrade[torch]"
    spec = catalog.load_spec("ngram")  # numpy only: a package that requires torch makes it need torch
    assert torch_requirement.needs(spec, "course-assignments") and not torch_requirement.needs(spec, "optional-torch")
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(
        torch_requirement.TorchMissing, match=r"^assignment ngram needs torch: pip install 'torch>=2.3'$"
    ):
        torch_requirement.require(spec, "course-assignments")
    torch_requirement.require(spec, "numpy-only")  # needs nothing


@pytest.mark.parametrize(
    "name",
    # Grading a bug computes its known mistakes' answers: a minute for the larger catalogues of rnn and lstm.
    [pytest.param(name, marks=[pytest.mark.slow] if name != "ngram" else []) for name in NUMPY_ASSIGNMENTS],
)
def test_a_numpy_assignment_is_graded_where_torch_cannot_be_imported(torchless_python, tmp_path, name):
    spec = catalog.load_spec(name)
    # A catalogue bug: its known mistakes and the stand-ins of its composed checks run in this process too.
    bug = next(bug for bug in catalog.bugs(name).values() if bug.demo)
    submission = write_flawed(spec.reference_folder(), spec.files, tmp_path / "flawed", [bug])
    graded = torchless_lmgrade(
        torchless_python, "grade", name, submission, "--results", tmp_path / "r.json", cwd=tmp_path
    )
    assert graded.returncode == 0, graded.stdout[-3000:] + graded.stderr[-3000:]
    results = json.loads((tmp_path / "r.json").read_text())
    assert 0 < results["score"] < sum(t["max_score"] for t in results["tests"])
    assert "torch" not in graded.stderr and "harness fault" not in json.dumps(results)


@pytest.mark.parametrize("command", ["grade", "check"])
def test_a_torch_assignment_where_torch_is_missing_is_one_line_saying_what_to_install(
    torchless_python, tmp_path, command
):
    (tmp_path / "submission").mkdir()
    args = ["--results", tmp_path / "results.json"] if command == "grade" else []
    out = torchless_lmgrade(torchless_python, command, "transformer", tmp_path / "submission", *args, cwd=tmp_path)
    assert out.returncode == 2, out.stdout + out.stderr
    errors = [line for line in out.stderr.splitlines() if line.startswith("Error")]
    assert errors == ["Error: assignment transformer needs torch: pip install 'lmgrade[torch]'"], out.stderr
    assert "Traceback" not in out.stderr and not (tmp_path / "results.json").exists()

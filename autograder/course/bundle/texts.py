"""The files of a student bundle that are written, not rendered from the assignment's templates."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ...core.plural import counted
from ...core.selection import as_setting
from ...declare.assignment import Assignment
from .fixtures import visible_checks

TEST_FILE = "test_public_checks.py"
INI_FILE = "pytest.ini"
GUIDE_FILE = "CHECKING.md"


# The Gradescope image installs torch from the same index of CPU-only builds: one place says where it is.
_SETUP_TEMPLATE = Path(__file__).resolve().parents[1] / "gradescope" / "templates" / "setup.sh.j2"
_INDEX_DEFAULT = re.compile(r'TORCH_CPU_INDEX_URL="\$\{LMGRADE_TORCH_INDEX_URL-([^}"]*)\}"')


@dataclass(frozen=True)
class TorchSupport:
    """The torch a bundle's checker runs with, as its wheel requires it and CHECKING.md says it."""

    requirement: str  # the wheel's Requires-Dist: the supported range
    lowest: str  # the range in words: from `lowest` ...
    highest: str  # ... to `highest` (a minor version)
    graded: str  # the version the course grades with
    cpu_index: str  # where pip finds CPU-only builds ("": pip's own configuration)


def torch_cpu_index() -> str:
    """The index of torch's CPU-only builds the Gradescope zip installs from (LMGRADE_TORCH_INDEX_URL overrides)."""
    if "LMGRADE_TORCH_INDEX_URL" in os.environ:
        return os.environ["LMGRADE_TORCH_INDEX_URL"]
    found = _INDEX_DEFAULT.search(_SETUP_TEMPLATE.read_text(encoding="utf-8"))
    return found.group(1) if found else ""


def pytest_ini(name: str) -> str:
    # importlib import mode: pytest leaves sys.path alone, so the graded files
    # are imported only in the sandbox; no cache folder in the student's folder.
    return (
        f"# `pytest` in this folder runs the public checks of {name} on the files here (see {GUIDE_FILE}).\n"
        "[pytest]\n"
        "addopts = -p lmgrade.course.bundle.pytest_plugin -p no:cacheprovider --import-mode=importlib -v\n"
        f"testpaths = {TEST_FILE}\n"
        f"lmgrade_assignment = {name}\n"
    )


def test_file(name: str) -> str:
    return (
        f'"""The public checks of {name}, one test each: run `pytest` in this folder.\n\n'
        f"Each test grades one check on the files here exactly as `lmgrade check {name}` does\n"
        'and fails with the same feedback.\n"""\n\n'
        "from lmgrade.course.bundle.pytest_plugin import require_pass\n\n\n"
        "def test_public_check(public_check):\n"
        "    require_pass(public_check)\n"
    )


def guide(assignment: Assignment, variant: dict, wheel: str, torch: TorchSupport | None) -> str:
    """CHECKING.md: what the bundle holds, how to install the checker and run it."""
    name, spec, public = assignment.name, assignment.spec, visible_checks(assignment)
    stubs = ", ".join(f"`{f}`" for f in spec.files)
    lines = [
        f"# Checking your work: {name}",
        "",
        "This folder holds:",
        "",
        "- `README.md`: the handout;",
        f"- {stubs}: the starter code, to complete where it raises `NotImplementedError`;",
        f"- `{name}.ipynb`: the same starter as a notebook, for Jupyter or Colab: its `%%writefile` cells are",
        "  the files, and either the notebook or the files is a submission;",
        f"- `wheels/{wheel}`: the checker, with the expected answers of the public checks;",
        f"- `{INI_FILE}` and `{TEST_FILE}`: the same checks, for pytest.",
        "",
        "## Install the checker (once)",
        "",
        "Python 3.10 or newer, on Linux or macOS (on Windows, in WSL). In this folder:",
        "",
        "    python3 -m venv .venv",
        "    . .venv/bin/activate",
    ]
    if torch is not None:
        index = f" --index-url {torch.cpu_index}" if torch.cpu_index else ""
        lines += [f"    python -m pip install torch=={torch.graded}{index}   # PyTorch, a CPU-only build"]
    lines += [f"    python -m pip install wheels/{wheel}", ""]
    if torch is not None:
        lines += [
            f"The checker needs PyTorch {torch.lowest} to {torch.highest} (its requirement: `{torch.requirement}`);",
            f"the course grades with torch {torch.graded} on the CPU. Install torch first, as above: the",
            "checks need no GPU, and on Linux pip's default torch is a CUDA build of several GB",
            "instead of a CPU-only one of a few hundred MB. An environment that already has a torch",
            "in that range (a CUDA build too) can skip that line.",
            "",
        ]
    lines += [
        "## Run the public checks",
        "",
        *_commented(
            [
                (f"lmgrade check {name}", "the files of this folder"),
                (f"lmgrade check {name} path/to/folder", "or those of another folder"),
                ("pytest", "the same checks, one test each"),
            ]
        ),
        "",
        "Both run your code in the autograder's sandbox and print the same verdicts and",
        "feedback: for a failed check, the cases that failed, what was expected, what your",
        "code returned, and the known mistake it matches, if one does.",
        "",
        f"Only the public checks run here: {counted(len(public), 'check')}, {sum(c.points for c in public):g} of "
        f"the {counted(float(sum(c.points for c in assignment.checks)), 'point')}.",
        "The others run once you submit. The autograder also draws its own inputs for the",
        "public checks, so passing here is a good sign, not a promise.",
    ]
    if variant:
        chosen = ", ".join(f"`{k}={as_setting(v)}`" for k, v in variant.items())
        lines += ["", f"These checks are those of the variant {chosen}, which both commands check as they are."]
    return "\n".join(lines) + "\n"


def _commented(commands: list[tuple[str, str]]) -> list[str]:
    """Indented command lines, their comments aligned."""
    width = max(len(command) for command, _ in commands)
    return [f"    {command.ljust(width)}   # {comment}" for command, comment in commands]

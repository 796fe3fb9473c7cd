"""The files of a student bundle that are written, not rendered from the assignment's templates."""

from __future__ import annotations

from ..assignment import Assignment
from ..catalog import as_setting
from ..fixtures import visible_checks

TEST_FILE = "test_public_checks.py"
INI_FILE = "pytest.ini"
GUIDE_FILE = "CHECKING.md"


def pytest_ini(name: str) -> str:
    # importlib import mode: pytest leaves sys.path alone, so the graded files
    # are imported only in the sandbox; no cache folder in the student's folder.
    return (f"# `pytest` in this folder runs the public checks of {name} on the files here (see {GUIDE_FILE}).\n"
            "[pytest]\n"
            "addopts = -p autograder.bundle.pytest_plugin -p no:cacheprovider --import-mode=importlib -v\n"
            f"testpaths = {TEST_FILE}\n"
            f"lmgrade_assignment = {name}\n")


def test_file(name: str) -> str:
    return (f'"""The public checks of {name}, one test each: run `pytest` in this folder.\n\n'
            f"Each test grades one check on the files here exactly as `lmgrade check {name}` does\n"
            'and fails with the same feedback.\n"""\n\n'
            "from autograder.bundle.pytest_plugin import require_pass\n\n\n"
            "def test_public_check(public_check):\n"
            "    require_pass(public_check)\n")


def guide(assignment: Assignment, variant: dict, wheel: str, needs_torch: bool) -> str:
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
        f"- `wheels/{wheel}`: the checker, with the expected answers of the public checks;",
        f"- `{INI_FILE}` and `{TEST_FILE}`: the same checks, for pytest.",
        "",
        "## Install the checker (once)",
        "",
        "Python 3.10 or newer, on Linux or macOS (on Windows, in WSL). In this folder:",
        "",
        "    python3 -m venv .venv",
        "    . .venv/bin/activate",
        f"    python -m pip install wheels/{wheel}",
        "",
    ]
    if needs_torch:
        lines += ["This installs PyTorch too, where the environment has none yet.", ""]
    lines += [
        "## Run the public checks",
        "",
        f"    lmgrade check {name}                  # the files of this folder",
        f"    lmgrade check {name} path/to/folder   # or those of another folder",
        "    pytest                               # the same checks, one test each",
        "",
        "Both run your code in the autograder's sandbox and print the same verdicts and",
        "feedback: for a failed check, the cases that failed, what was expected, what your",
        "code returned, and the known mistake it matches, if one does.",
        "",
        f"Only the public checks run here: {len(public)} checks, {sum(c.points for c in public):g} of the "
        f"{sum(c.points for c in assignment.checks):g} points.",
        "The others run once you submit. The autograder also draws its own inputs for the",
        "public checks, so passing here is a good sign, not a promise.",
    ]
    if variant:
        chosen = ", ".join(f"`{k}={as_setting(v)}`" for k, v in variant.items())
        lines += ["", f"These checks are those of the variant {chosen}."]
    return "\n".join(lines) + "\n"

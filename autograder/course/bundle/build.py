"""Build a student bundle: the starter files, the handout, and the public checks to run locally.

The bundle is a folder (or a zip of one), which students install with one
command, ``python -m pip install wheels/<the wheel>``: a pure-Python wheel
that brings the harness (the ``lmgrade`` command and a pytest plugin), the
graders' scenarios and judges, and the recorded fixtures of the public
checks, and lets pip fetch the libraries they need. A wheel rather than a
script to run from the folder: pip resolves numpy (and torch) for the
student's platform, ``lmgrade check`` then works from any folder, and the
bundle's ``pytest`` run finds the same code.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from ... import __version__
from ...declare import starter_notebook, templates
from ...declare.assignment import Assignment
from ...declare.torch_requirement import TORCH
from ...declare.torch_requirement import declared as declared_torch
from . import texts
from .fixtures import record
from .public import distribution_name
from .sources import BundleError, fixture_files, grader_files, harness_files
from .wheel import distribution_filename, write_wheel

# Requirements of lmgrade that a bundle asks for only where its graders import them.
HEAVY_REQUIREMENTS = {"torch"}
ZIP_DATE = (1980, 1, 1, 0, 0, 0)


@dataclass
class Bundle:
    path: Path  # the folder or the zip written
    files: list[str]  # paths inside the bundle
    wheel: str  # the wheel's file name
    size_bytes: int  # of the zip, or of every file of the folder


def build_bundle(assignment: Assignment, variant: dict, output: Path) -> Bundle:
    """Record the public checks and write the bundle to `output` (a folder, or a file ending in .zip)."""
    check_output(output)
    fixtures = record(assignment, variant)
    with tempfile.TemporaryDirectory(prefix="lmgrade-bundle-") as tmp:
        fixtures.write(Path(tmp) / "fixtures")
        graders = grader_files(fixtures, assignment.spec)
        files = {**harness_files(), **graders, **fixture_files(Path(tmp) / "fixtures", assignment.name)}
        needs_torch = "torch" in assignment.spec.preload or any(
            "torch" in _top_level_imports(source) for source in graders.values()
        )
        requires, torch = requirements(_declared(), needs_torch)
        wheel = write_wheel(
            Path(tmp) / "wheels",
            name=distribution_name(assignment.name),
            version=__version__,
            files=files,
            summary=f"The public checks of the {assignment.name} assignment, to run locally",
            requires=requires,
            requires_python=">=3.10",
            console_scripts={
                "lmgrade": "lmgrade.cli.student_bundle_commands:main"
            },  # only the commands that work there
        )
        contents = {name: text.encode() for name, text in templates.render(assignment, variant).items()}
        # The same starter as a notebook, for students who work in Jupyter or Colab (docs/notebooks.md).
        contents[starter_notebook.starter_name(assignment)] = starter_notebook.starter_text(
            assignment, variant
        ).encode()
        written = {
            texts.GUIDE_FILE: texts.guide(assignment, variant, wheel.name, torch).encode(),
            texts.INI_FILE: texts.pytest_ini(assignment.name).encode(),
            texts.TEST_FILE: texts.test_file(assignment.name).encode(),
            f"wheels/{wheel.name}": wheel.read_bytes(),
        }
        clash = sorted(set(contents) & set(written))
        if clash:
            raise BundleError(f"the templates of {assignment.name} render {clash[0]}, which the bundle writes itself")
        contents.update(written)
    return _write(contents, output, assignment.name, wheel.name)


def _write(contents: dict[str, bytes], output: Path, folder_name: str, wheel: str) -> Bundle:
    if output.suffix.lower() == ".zip":
        output.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(output, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for name in sorted(contents):
                entry = zipfile.ZipInfo(f"{folder_name}/{name}", date_time=ZIP_DATE)
                entry.external_attr = 0o644 << 16
                entry.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(entry, contents[name])
        return Bundle(output, sorted(contents), wheel, output.stat().st_size)
    for name, data in contents.items():
        target = output / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return Bundle(output, sorted(contents), wheel, sum(len(d) for d in contents.values()))


def _declared() -> list[str]:
    """lmgrade's own Requires-Dist lines, its extras' among them (torch is one)."""
    try:
        return importlib.metadata.requires("lmgrade") or []
    except importlib.metadata.PackageNotFoundError:
        raise BundleError(
            "lmgrade is not installed in this environment (pip install -e .): its requirements are those of the bundle"
        ) from None


def requirements(declared: list[str], needs_torch: bool) -> tuple[list[str], texts.TorchSupport | None]:
    """The wheel's Requires-Dist: lmgrade's own requirements (`declared`) less its extras and the heavy
    ones, and torch, in the range `torch_support` admits, only where the bundle's graders need it."""
    kept = [r for r in declared if not re.search(r"\bextra\s*==", r) and _name(r) not in HEAVY_REQUIREMENTS]
    if not needs_torch:
        return kept, None
    torch = torch_support(declared_torch(declared) or TORCH)
    return [*kept, torch.requirement], torch


def _name(requirement: str) -> str:
    return distribution_filename(re.match(r"[A-Za-z0-9._-]+", requirement).group())


def torch_support(declared: str) -> texts.TorchSupport:
    """The torch versions a bundle admits: from lmgrade's own lower bound up to the minor version installed here.

    The public checks are recorded with the torch installed here, which is
    the one the course grades with; later versions are untested, so the
    wheel's requirement stops before the next minor version. An installer
    that reads it cannot then pick an untested torch, and CHECKING.md says
    which CPU-only build to install before the wheel.
    """
    try:
        graded = importlib.metadata.version("torch").partition("+")[0]
    except importlib.metadata.PackageNotFoundError:
        raise BundleError("torch is not installed here, and the checks of this assignment record with it") from None
    major, minor = (int(part) for part in re.match(r"(\d+)\.(\d+)", graded).groups())
    lowest = re.search(r">=\s*([\w.]+)", declared)
    floor = lowest.group(1) if lowest else f"{major}.{minor}"
    return texts.TorchSupport(
        f"torch>={floor},<{major}.{minor + 1}", floor, f"{major}.{minor}", graded, texts.torch_cpu_index()
    )


def _top_level_imports(source: bytes) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module.split(".")[0])
    return names


def check_output(output: Path) -> None:
    """Refuse to write over anything: the output must be a new zip, or a new or empty folder."""
    if output.suffix.lower() == ".zip":
        if output.exists():
            raise FileExistsError(f"{output} exists: remove it or choose another name")
    elif output.exists() and (not output.is_dir() or any(output.iterdir())):
        raise FileExistsError(f"{output} exists and is not an empty folder: choose another")

"""The wheel of lmgrade that the zip carries, and what it needs installed beside it.

The wheel is built from lmgrade's source folder with pip, from a clean copy
of what the project packages (so nothing stale from an earlier `build/` can
slip in), and holds the harness, every built-in plugin, the references and
the assignment files: the same code the test suite ran is the code that
grades. An assignment package's wheel is written from its installed files,
or, where it is an editable install, built from its source folder as
lmgrade's is. The requirements come from each wheel's own metadata; torch is set apart,
because it must come from the index of CPU-only builds, and only for an
assignment whose reference or checks import it.
"""

from __future__ import annotations

import email.parser
import hashlib
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path

from ...core.errors import HarnessFault
from ...core.selection import Selection
from ...declare.assignment import Assignment, tomllib
from ...grading.expected_store import default_folder
from ..bundle.wheel import write_wheel
from .config import ZipError

PROJECT = "lmgrade"
TORCH = "torch"


def source_root() -> Path:
    """lmgrade's source folder (the one holding its pyproject.toml)."""
    root = Path(__file__).resolve().parents[3]
    pyproject = root / "pyproject.toml"
    try:
        name = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["name"]
    except (OSError, ValueError, KeyError):
        name = None
    if name != PROJECT:
        raise ZipError(
            f"lmgrade gradescope builds its wheel from lmgrade's source folder, and this lmgrade "
            f"({root}) was installed without one: install it from a clone (pip install -e CLONE)"
        )
    return root


def check_carried(assignment: Assignment, root: Path, distribution: str | None) -> None:
    """Refuse an assignment the zip cannot carry: one not from lmgrade's source nor an installed distribution."""
    try:
        reference = assignment.spec.reference_folder()
    except ModuleNotFoundError as exc:
        raise ZipError(f"{assignment.name}'s reference cannot be found: {exc}") from None
    if distribution not in (None, PROJECT):
        return  # its own wheel goes in beside lmgrade's (distribution_wheel)
    parts = {
        "assignment folder": assignment.spec.root,
        "reference": reference,
        **{f"check {name}": path for name, path in assignment.check_module_files().items()},
    }
    for what, path in parts.items():
        if root not in Path(path).resolve().parents:
            raise ZipError(
                f"{assignment.name}'s {what} is {path}, outside lmgrade's source folder {root} and "
                "not from an installed package: install the assignment's package (pip install)"
            )


def editable_source(dist: importlib.metadata.Distribution) -> Path | None:
    """The source folder of `dist` where it is an editable install (pip install -e), else None.

    pip records it in the distribution's direct_url.json (PEP 610): a file:// URL with
    ``dir_info.editable``.
    """
    try:
        recorded = json.loads(dist.read_text("direct_url.json") or "{}")
    except ValueError:
        return None
    if not isinstance(recorded, dict) or not isinstance(recorded.get("dir_info"), dict):
        return None
    if not recorded["dir_info"].get("editable"):
        return None
    parsed = urllib.parse.urlparse(str(recorded.get("url", "")))
    if parsed.scheme != "file":
        return None
    folder = Path(urllib.request.url2pathname(parsed.path))
    return folder if (folder / "pyproject.toml").is_file() or (folder / "setup.py").is_file() else None


# What a project folder holds that is no part of its wheel: version control, environments, build outputs
# and caches (a stale build/ could otherwise slip old files into the wheel).
NOT_PACKAGED = (
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    "*.pyc",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    "node_modules",
)


def source_wheel(folder: Path, out_dir: Path, what: str) -> Path:
    """Build the wheel of the project in `folder` with pip, from a clean copy of it; return its path."""
    with tempfile.TemporaryDirectory(prefix="lmgrade-source-") as staged:
        copy = Path(staged) / "project"
        shutil.copytree(folder, copy, ignore=shutil.ignore_patterns(*NOT_PACKAGED), symlinks=True)
        return _pip_wheel(copy, Path(out_dir), what)


def distribution_wheel(name: str, out_dir: Path) -> Path:
    """A wheel of the installed distribution `name` (an assignment package): built from its source folder
    where it is an editable install, else written from its installed files."""
    dist = importlib.metadata.distribution(name)
    source = editable_source(dist)
    if source is not None:
        return source_wheel(source, Path(out_dir), f"{name}'s wheel (from {source})")
    files = {}
    for path in dist.files or []:
        parts = path.parts
        if (
            path.suffix in (".pyc", ".pth")
            or "__pycache__" in parts
            or parts[0].endswith(".dist-info")
            or parts[0].startswith("__editable__")
            or ".." in parts
        ):
            continue
        files[path.as_posix()] = Path(dist.locate_file(path)).read_bytes()
    if not any(p.endswith(".py") for p in files):
        raise ZipError(
            f"the package {name} is installed without its files, and without a source folder pip recorded: "
            "install it from its folder (pip install -e FOLDER, or without -e), so the zip can carry it"
        )
    entry_points: dict[str, dict[str, str]] = {}
    for ep in dist.entry_points:
        entry_points.setdefault(ep.group, {})[ep.name] = ep.value
    scripts = entry_points.pop("console_scripts", {})
    return write_wheel(
        out_dir,
        name=dist.metadata["Name"],
        version=dist.version,
        summary=dist.metadata.get("Summary") or name,
        files=files,
        requires=list(dist.requires or []),
        requires_python=dist.metadata.get("Requires-Python") or ">=3.10",
        console_scripts=scripts,
        entry_points=entry_points,
    )


def _stage(root: Path, into: Path) -> None:
    """Copy what the wheel is made of: pyproject.toml, the readme, the packages it includes."""
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    shutil.copy2(root / "pyproject.toml", into / "pyproject.toml")
    readme = project["project"].get("readme")
    if isinstance(readme, str):
        shutil.copy2(root / readme, into / readme)
    # The folders `package-dir` maps into the `lmgrade` namespace (autograder/, plugins/, ...).
    for folder in sorted(set(project["tool"]["setuptools"]["package-dir"].values())):
        shutil.copytree(root / folder, into / folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


def build_wheel(root: Path, out_dir: Path) -> Path:
    """Build lmgrade's wheel into `out_dir` with pip; return its path."""
    with tempfile.TemporaryDirectory(prefix="lmgrade-wheel-") as staged:
        _stage(root, Path(staged))
        return _pip_wheel(Path(staged), out_dir, "lmgrade's wheel")


def _project_digest(project: Path) -> str:
    """What a wheel of `project` is made of: every file's path and bytes."""
    digest = hashlib.sha256()
    for path in sorted(p for p in project.rglob("*") if p.is_file()):
        relative = path.relative_to(project).as_posix().encode()
        digest.update(len(relative).to_bytes(4, "big") + relative)
        data = path.read_bytes()
        digest.update(len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()


def wheel_cache() -> Path | None:
    """Where built wheels are kept, by the digest of what each was built from (beside the expected values,
    and off where they are): pip takes seconds for a wheel that the same files always make alike."""
    folder = default_folder()
    return None if folder is None else folder / "wheels"


def _pip_wheel(project: Path, out_dir: Path, what: str) -> Path:
    """The one wheel pip builds of the project folder `project`, copied into `out_dir`: built once for the
    same files (`wheel_cache`)."""
    cache = wheel_cache()
    kept = cache / _project_digest(project) if cache is not None else None
    if kept is not None:
        found = sorted(kept.glob("*.whl")) if kept.is_dir() else []
        if len(found) == 1:
            out_dir.mkdir(parents=True, exist_ok=True)
            return Path(shutil.copy2(found[0], out_dir / found[0].name))
    with tempfile.TemporaryDirectory(prefix="lmgrade-built-") as built:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "--no-deps",
                "--no-input",
                "--quiet",
                "--disable-pip-version-check",
                "--wheel-dir",
                built,
                str(project),
            ],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            raise HarnessFault(f"pip could not build {what}:\n{(proc.stderr or proc.stdout).strip()[-2000:]}")
        wheels = sorted(Path(built).glob("*.whl"))
        if len(wheels) != 1:
            raise HarnessFault(f"pip built {len(wheels)} wheels for {what}, expected one")
        if kept is not None:
            _keep(wheels[0], kept)
        out_dir.mkdir(parents=True, exist_ok=True)
        return Path(shutil.move(str(wheels[0]), str(out_dir / wheels[0].name)))


def _keep(wheel: Path, kept: Path) -> None:
    """A copy of `wheel` in the cache folder `kept`, whole or not at all: two builds may keep it at once."""
    try:
        kept.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        staging = Path(tempfile.mkdtemp(prefix=".incoming-", dir=kept.parent))
        shutil.copy2(wheel, staging / wheel.name)
        try:
            os.rename(staging, kept)
        except OSError:  # kept by a build beside this one meanwhile
            shutil.rmtree(staging, ignore_errors=True)
    except OSError:
        pass  # a cache that cannot be written costs the next build its seconds, nothing else


def requirement_name(requirement: str) -> str:
    """The normalised distribution name a requirement line starts with."""
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    return re.sub(r"[-_.]+", "-", match.group(1)).lower() if match else ""


def wheel_requirements(wheel: Path) -> list[str]:
    """The wheel's own Requires-Dist lines, extras left out (markers kept: pip evaluates them)."""
    with zipfile.ZipFile(wheel) as zf:
        name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = email.parser.BytesParser().parsebytes(zf.read(name))
    return [r for r in metadata.get_all("Requires-Dist") or [] if not re.search(r";.*\bextra\s*==", r)]


_PROBE = """
import importlib, json, sys
from lmgrade import catalog
from lmgrade.grading.oracle import LiveReference
from lmgrade.core.selection import Selection
assignment, _ = catalog.load(Selection.from_dict(json.loads(sys.argv[1])))
LiveReference(assignment.spec).load()
for name in sorted({c.scenario.__module__ for c in assignment.checks}):
    importlib.import_module(name)
print(json.dumps(sorted({m.partition(".")[0] for m in sys.modules})))
"""


def imported_by(selection: Selection) -> set[str]:
    """Top-level modules that loading the assignment, its reference and its checks imports (a fresh interpreter)."""
    with tempfile.TemporaryDirectory(prefix="lmgrade-probe-") as cwd:
        proc = subprocess.run(
            [sys.executable, "-c", _PROBE, json.dumps(selection.as_dict())], capture_output=True, text=True, cwd=cwd
        )
    if proc.returncode != 0:
        raise HarnessFault(f"loading {selection.assignment} failed:\n{proc.stderr.strip()[-2000:]}")
    return set(json.loads(proc.stdout.strip().splitlines()[-1]))


def torch_requirement(requirements: list[str]) -> str:
    """torch pinned to the version installed here (the one tested), else the wheel's own requirement."""
    try:
        return f"{TORCH}=={importlib.metadata.version(TORCH).partition('+')[0]}"
    except importlib.metadata.PackageNotFoundError:
        return next((r for r in requirements if requirement_name(r) == TORCH), TORCH)

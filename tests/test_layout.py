"""The repository's folders by role, installed as the one namespace `lmgrade`.

pyproject.toml's package-dir maps autograder/, plugins/, reference/ and
assignments/ into `lmgrade`. From the repository root (`python -m pytest`)
the folders' own names would still import, from the current folder, and
load every module a second time beside its `lmgrade` twin (two `Check`
classes, two plugin managers): nothing may use them.
"""

from __future__ import annotations

import ast
import re
import sys
import zipfile
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
FOLDER_NAMES = {"autograder", "plugins", "reference", "assignments"}
# A module path in a string: "autograder.loader:import_probe", "plugins.ngram.scenarios".
MODULE_STRING = re.compile(r"^(autograder|plugins|reference|assignments)\.[a-z_][\w.]*(?::[\w.]+)?$")
FILE_SUFFIXES = {"py", "zip", "toml", "json", "md", "txt", "whl", "j2"}  # autograder.zip is a file
SKIPPED = {".venv", ".git", "build", "dist", "node_modules"}


def python_files() -> list[Path]:
    return sorted(
        p
        for p in ROOT.rglob("*.py")
        if not SKIPPED & set(p.relative_to(ROOT).parts)
        and not any(part.startswith(".") or part.endswith(".egg-info") for part in p.relative_to(ROOT).parts)
    )


def old_names(path: Path) -> list[str]:
    """Where `path` imports, or names as a module path, a folder's own top-level name."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [
                f"line {node.lineno}: import {a.name}" for a in node.names if a.name.split(".")[0] in FOLDER_NAMES
            ]
        elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] in FOLDER_NAMES:
            found.append(f"line {node.lineno}: from {node.module} import ...")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            for line in node.value.splitlines():
                for word in re.findall(r"[\w.:-]+", line):
                    if MODULE_STRING.match(word) and word.partition(":")[0].rsplit(".")[-1] not in FILE_SUFFIXES:
                        found.append(f"line {node.lineno}: {word!r}")
    return found


def test_no_file_imports_a_folder_by_its_own_name():
    here = Path(__file__).resolve()  # its samples of the old spellings are strings
    offenders = {str(p.relative_to(ROOT)): hits for p in python_files() if p != here and (hits := old_names(p))}
    assert not offenders, f"import these as lmgrade.*: {offenders}"


def test_the_scan_sees_each_old_spelling(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import autograder\nfrom plugins.ngram import checks\nfrom reference import ngram\n"
        "X = 'autograder.loader:import_probe'\nimport lmgrade.plugins.ngram\nY = 'plugins.py'\n"
    )
    assert len(old_names(sample)) == 4


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_packages_names_every_package_of_the_mapped_folders():
    setuptools = _pyproject()["tool"]["setuptools"]
    mapping = setuptools["package-dir"]
    found = {
        ".".join((package, *init.parent.relative_to(ROOT / folder).parts))
        for package, folder in mapping.items()
        for init in (ROOT / folder).rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    assert set(setuptools["packages"]) == found


def test_the_console_script_is_lmgrade_cli():
    assert _pyproject()["project"]["scripts"]["lmgrade"] == "lmgrade.cli:main"


@pytest.mark.slow
def test_the_wheel_installs_only_lmgrade(tmp_path):
    from lmgrade.course.gradescope.wheel import build_wheel

    wheel = build_wheel(ROOT, tmp_path)
    with zipfile.ZipFile(wheel) as zf:
        tops = {name.split("/")[0] for name in zf.namelist()}
        names = zf.namelist()
    assert tops == {"lmgrade", wheel.name.split("-")[0] + "-" + wheel.name.split("-")[1] + ".dist-info"}
    for expected in (
        "lmgrade/cli/__init__.py",
        "lmgrade/declare/plugin_manager.py",
        "lmgrade/plugins/ngram/__init__.py",
        "lmgrade/assignments/ngram/assignment.toml",
        "lmgrade/plugins/ngram/equivalent_mutants.toml",
    ):
        assert expected in names
    assert any(name.startswith("lmgrade/reference/") and name.endswith("ngram.py") for name in names)


def test_the_builtin_plugins_import_lmgrade_from_its_root_only():
    offenders = []
    for path in sorted((ROOT / "plugins").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            modules = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and not node.level
                else []
            )
            offenders += [f"{path.relative_to(ROOT)}:{node.lineno} {m}" for m in modules if m.startswith("lmgrade.")]
    assert not offenders


def test_the_plugin_api_is_exported_and_importing_it_stays_cheap():
    import subprocess

    probe = (
        "import sys, lmgrade; names = lmgrade.__all__; [getattr(lmgrade, n) for n in names]; "
        "print('torch' in sys.modules, len(names))"
    )
    out = subprocess.run(
        [sys.executable, "-c", "import sys, lmgrade; print('torch' in sys.modules)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert out == ["False"]
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    assert out[0] == "False" and int(out[1]) >= 20


def test_the_writing_guide_shows_the_example_as_it_is():
    """Each file docs/writing-an-assignment.md shows (a `path`: line, then a block) is the example's file."""
    guide = (ROOT / "docs" / "writing-an-assignment.md").read_text(encoding="utf-8")
    example = ROOT / "docs" / "examples" / "lmgrade-tiny"
    shown = re.findall(r"^`([\w/.]+)`:\n\n```\w+\n(.*?)```\n", guide, flags=re.S | re.M)
    assert len(shown) >= 6
    for path, text in shown:
        assert (example / path).read_text(encoding="utf-8") == text, path

"""Which files a student bundle's wheel carries, and the rule that keeps the reference out.

- Every file of the harness (`lmgrade`, less the built-in plugins, the
  references and the assignment folders): the harness students run is the
  one that grades on Gradescope.
- The public package of the assignment's plugin (``<plugin>/public/``: the
  scenarios and judges its public checks name), whole, and nothing else of
  the plugin: never its checks (how hidden cases are made), mistakes or bugs
  (edits of the reference). Where the line runs is a folder, so a public
  module that imports the rest of its plugin or the reference is refused,
  and so is a recorded check that names a module outside it.
- The fixtures, under ``lmgrade_fixtures/<assignment>/``.

The public package's parents and `lmgrade_fixtures` go in as namespace
packages (no ``__init__.py``), so the bundles of several assignments install
side by side without sharing a file of theirs.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import lmgrade

from ...core.errors import HarnessFault
from ...declare.assignment import AssignmentSpec
from ...declare.assignment_plugin import package_folder
from .fixtures import ARRAYS, DOCUMENT, Fixtures

FIXTURES_PACKAGE = "lmgrade_fixtures"
# Folders of the installed `lmgrade` that are not the harness (package-dir in pyproject.toml), and the
# template of `lmgrade new`'s package, which a bundle (check and list only) never writes.
NOT_HARNESS = ("plugins", "reference", "assignments", "package_template")


class BundleError(HarnessFault):
    """A bundle that cannot be made without carrying what it must not."""


def harness_files() -> dict[str, bytes]:
    """Every file of the installed harness (`lmgrade`, less what `NOT_HARNESS` names), by its path in the wheel."""
    root = Path(lmgrade.__file__).resolve().parent
    return {
        f"lmgrade/{path.relative_to(root).as_posix()}": path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
        and "__pycache__" not in path.parts
        and path.suffix != ".pyc"
        and path.relative_to(root).parts[0] not in NOT_HARNESS
    }


def grader_files(fixtures: Fixtures, spec: AssignmentSpec) -> dict[str, bytes]:
    """Every module of the plugin's public package, and nothing else of the plugin.

    Refused: a public module that imports the reference or the rest of its
    plugin (checks, mistakes, bugs), and a recorded check naming a module
    that is neither the harness's nor public.
    """
    public, reference = spec.public_package, spec.reference_package
    carried: dict[str, Path] = {}
    if public is not None:
        folder = package_folder(public)
        for path in sorted(folder.rglob("*.py")):
            if "__pycache__" not in path.parts:
                relative = path.relative_to(folder).with_suffix("").parts
                carried[".".join((public, *relative[:-1], *([] if path.name == "__init__.py" else relative[-1:])))] = (
                    path
                )
    plugin = public.rpartition(".")[0] if public else None
    for module, path in carried.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for name in _imports(tree, module, is_package=path.name == "__init__.py"):
            if reference and _within(name, reference):
                raise BundleError(
                    f"{path} imports the reference ({reference}): a student bundle cannot carry "
                    "it. Scenarios and judges must not import the reference."
                )
            if plugin and _within(name, plugin) and not _within(name, public) and _exists(name):
                raise BundleError(
                    f"{path} imports {name}, which is not in {public}: a student bundle carries "
                    "the public package only (never checks, mistakes or bugs)"
                )
    for module in sorted(fixtures.named_modules()):
        if not (_is_harness(module) or module in carried):
            raise BundleError(
                f"the recorded checks of {spec.name} name {module}, which is neither lmgrade's "
                f"harness nor in the public package ({public}): move it there"
            )
    return {
        f"{module.replace('.', '/')}{'/__init__' if path.name == '__init__.py' else ''}.py": path.read_bytes()
        for module, path in carried.items()
    }


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _is_harness(module: str) -> bool:
    return _within(module, "lmgrade") and not any(_within(module, f"lmgrade.{part}") for part in NOT_HARNESS)


def fixture_files(folder: Path, assignment: str) -> dict[str, bytes]:
    return {f"{FIXTURES_PACKAGE}/{assignment}/{name}": (folder / name).read_bytes() for name in (DOCUMENT, ARRAYS)}


def _exists(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def _imports(tree: ast.Module, module: str, *, is_package: bool) -> set[str]:
    """Absolute names of the modules `module` imports (for ``from a import b``: a, and a.b)."""
    package = module if is_package else module.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            names.add(source)
            names.update(f"{source}.{alias.name}" for alias in node.names if alias.name != "*")
    return {n for n in names if n}

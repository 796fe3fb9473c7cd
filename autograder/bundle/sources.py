"""Which files a student bundle's wheel carries, and the rule that keeps the reference out.

- Every file of the harness (`lmgrade`, less the built-in plugins, the
  references and the assignment folders): the harness students run is the
  one that grades on Gradescope.
- From `lmgrade.plugins`, only the modules the recorded checks name
  (scenarios, judges) and what they import from there, followed
  transitively. Never a plugin's checks (how hidden cases are made),
  mistakes or bugs (edits of the reference): nothing names them, so nothing
  takes them in. A module that imports the reference package is refused
  outright.
- The fixtures, under ``lmgrade_fixtures/<assignment>/``.

`lmgrade.plugins` and `lmgrade_fixtures` go in as namespace packages (no
``__init__.py``), so the bundles of several assignments install side by
side without sharing a file of theirs.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import lmgrade

from ..errors import HarnessFault
from ..fixtures import ARRAYS, DOCUMENT, Fixtures

FIXTURES_PACKAGE = "lmgrade_fixtures"
GRADERS_PACKAGE = "lmgrade.plugins"
# Folders of the installed `lmgrade` that are not the harness (package-dir in pyproject.toml).
NOT_HARNESS = ("plugins", "reference", "assignments")


class BundleError(HarnessFault):
    """A bundle that cannot be made without carrying what it must not."""


def harness_files() -> dict[str, bytes]:
    """Every file of the installed harness (`lmgrade`, less what `NOT_HARNESS` names), by its path in the wheel."""
    root = Path(lmgrade.__file__).resolve().parent
    return {f"lmgrade/{path.relative_to(root).as_posix()}": path.read_bytes()
            for path in sorted(root.rglob("*"))
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
            and path.relative_to(root).parts[0] not in NOT_HARNESS}


def grader_files(fixtures: Fixtures, reference_package: str) -> dict[str, bytes]:
    """The graders' modules the recorded checks need, and nothing else of `lmgrade.plugins`."""
    wanted = sorted(m for m in fixtures.named_modules() if _is_grader(m))
    seen: dict[str, Path] = {}
    while wanted:
        module = wanted.pop()
        if module in seen:
            continue
        path = _source(module)
        if path.name == "__init__.py" and module.count(".") <= GRADERS_PACKAGE.count(".") + 1:
            continue  # `lmgrade.plugins` or a plugin's hook module: it reaches checks, mistakes and bugs
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        imported = _imports(tree, module, is_package=path.name == "__init__.py")
        if any(name == reference_package or name.startswith(reference_package + ".") for name in imported):
            raise BundleError(f"{module} imports the reference ({reference_package}): a student bundle "
                              "cannot carry it. Scenarios and judges must not import the reference.")
        seen[module] = path
        wanted += [name for name in imported if _is_grader(name) and _exists(name)]
    return {f"{module.replace('.', '/')}{'/__init__' if path.name == '__init__.py' else ''}.py":
            path.read_bytes() for module, path in sorted(seen.items())}


def _is_grader(module: str) -> bool:
    return module.startswith(GRADERS_PACKAGE + ".")


def fixture_files(folder: Path, assignment: str) -> dict[str, bytes]:
    return {f"{FIXTURES_PACKAGE}/{assignment}/{name}": (folder / name).read_bytes() for name in (DOCUMENT, ARRAYS)}


def _source(module: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        raise BundleError(f"the recorded checks name {module}, whose source cannot be found")
    return Path(spec.origin)


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

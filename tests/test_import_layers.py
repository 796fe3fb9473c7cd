"""The harness's import graph: every module in a folder, no arrow back up, no cycle, and each folder's
rules as its __init__ says them and docs/development.md shows them."""

from __future__ import annotations

import ast
import importlib.util
import re
import subprocess
import sys

from helpers import ROOT

spec = importlib.util.spec_from_file_location("import_layers", ROOT / "benchmarks" / "import_layers.py")
layers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(layers)

FOLDERS = [name for name, _ in layers.LAYERS if name != "root"]


def test_no_import_runs_back_up_and_none_goes_round():
    paths, arrows, upward, groups = layers.graph_of(ROOT / "autograder")
    assert len(paths) > 100 and len(arrows) > 300  # the graph was read
    assert upward == [] and groups == []


def test_a_module_in_no_layer_is_named(tmp_path):
    (tmp_path / "stray.py").write_text("x = 1\n")
    try:
        layers.graph_of(tmp_path)
    except SystemExit as exc:
        assert "stray: in no layer" in str(exc)
    else:
        raise AssertionError("a module in no layer passed")


def test_an_upward_arrow_and_a_cycle_are_found(tmp_path):
    (tmp_path / "boundary").mkdir()
    (tmp_path / "cli").mkdir()
    (tmp_path / "boundary" / "wire.py").write_text("from ..cli import main\n")  # boundary -> cli
    (tmp_path / "cli" / "__init__.py").write_text("from ..boundary import wire\n")
    _, _, upward, groups = layers.graph_of(tmp_path)
    assert upward == [("boundary.wire", "cli")]
    assert [sorted(group) for group in groups] == [["boundary.wire", "cli"]]


def folder_rules(folder: str) -> tuple[str, list[str]]:
    """A folder's job and the folders it may import, as its __init__'s docstring says them."""
    docstring = ast.get_docstring(ast.parse((ROOT / "autograder" / folder / "__init__.py").read_text("utf-8")))
    job, _, rest = docstring.partition("\n\n")
    said = re.search(r"^May import: (.*)\.$", rest, re.M)
    assert said, f"autograder/{folder}/__init__.py does not say what it may import"
    allowed = [] if said.group(1) == "nothing else of lmgrade" else said.group(1).split(", ")
    return " ".join(job.split()), allowed


def test_every_folder_is_a_layer_and_says_what_it_may_import():
    folders = {p.parent.name for p in (ROOT / "autograder").glob("*/__init__.py")}
    assert folders == set(FOLDERS)
    modules = {p.stem for p in (ROOT / "autograder").glob("*.py")}
    assert modules == {"__init__"}  # every module is in a folder
    for i, folder in enumerate(FOLDERS):
        assert folder_rules(folder)[1] == FOLDERS[:i], folder


def modules_of(folder) -> str:
    """A folder's modules and packages, as the map lists them."""
    names = sorted(p.name for p in folder.glob("*.py") if p.name not in ("__init__.py", "__main__.py"))
    names += sorted(f"{p.parent.name}/" for p in folder.glob("*/__init__.py"))
    return " ".join(f"`{n}`" for n in names)


def test_the_map_in_development_md_is_the_folders():
    page = (ROOT / "docs" / "development.md").read_text(encoding="utf-8")
    table = re.search(r"<!-- folders: tests/test_import_layers.py -->\n(.*?)<!-- /folders -->", page, re.S)
    assert table, "docs/development.md has no map of the folders"
    rows = [[cell.strip() for cell in line.strip("|").split(" | ")] for line in table.group(1).splitlines()[2:] if line]
    wanted = []
    for folder in FOLDERS:
        job, allowed = folder_rules(folder)
        below = ", ".join(f"`{a}/`" for a in allowed) or "nothing else of lmgrade"
        wanted.append([f"`{folder}/`", job, below, modules_of(ROOT / "autograder" / folder)])
    assert rows == wanted


def test_an_old_module_name_still_imports_and_warns_with_the_new_one():
    import lmgrade.core.old_names as old_names

    assert old_names.MOVED and all(importlib.util.find_spec(f"lmgrade.{new}") for new in old_names.MOVED.values())
    old, new = sorted(old_names.MOVED.items())[0]
    probe = (
        "import importlib, warnings; warnings.simplefilter('always'); "
        f"print(importlib.import_module('lmgrade.{old}') is importlib.import_module('lmgrade.{new}'))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True"]
    assert f"lmgrade.{old} moved: import lmgrade.{new}" in done.stderr

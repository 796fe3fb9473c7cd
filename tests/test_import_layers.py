"""The harness's import graph: every module in a layer, no arrow back up, no cycle."""

from __future__ import annotations

import importlib.util

from helpers import ROOT

spec = importlib.util.spec_from_file_location("import_layers", ROOT / "benchmarks" / "import_layers.py")
layers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(layers)


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
    (tmp_path / "wire.py").write_text("from .cli import main\n")  # base -> commands
    (tmp_path / "cli.py").write_text("from . import wire\n")
    _, _, upward, groups = layers.graph_of(tmp_path)
    assert upward == [("wire", "cli")]
    assert [sorted(group) for group in groups] == [["cli", "wire"]]

"""A third-party package adds a check through the `lmgrade` entry-point group."""

from __future__ import annotations

import importlib
import sys
import textwrap

import pytest

from lmgrade.declare import catalog
from lmgrade.declare.plugin_manager import make_manager
from lmgrade.grading.grader import Grader
from lmgrade.grading.oracle import LiveReference

PLUGIN = textwrap.dedent("""
    from lmgrade import hookimpl
    from lmgrade.declare.checks import Case, Check
    from lmgrade.sandbox.limits import Limits


    def scenario(modules, args):
        return modules["ngram"].pad(args["words"], 2)[::-1]


    def cases(ctx):
        return [Case("reversed pad", {"words": ["x", "y"]})]


    @hookimpl
    def lmgrade_checks(assignment, variant):
        if assignment == "ngram":
            return [Check("reversed_pad", "pad, reversed", scenario, cases,
                          points=3, limits=Limits(cpu_s=2, wall_s=4))]
        return []
""")


def install_plugin(folder, name: str, source: str) -> None:
    """A throwaway distribution `lmgrade_<name>` in `folder`, with an `lmgrade` entry point `name`."""
    (folder / f"lmgrade_{name}.py").write_text(source)
    dist = folder / f"lmgrade_{name}-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: lmgrade-{name}\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[lmgrade]\n{name} = lmgrade_{name}\n")


@pytest.fixture
def installed_plugin(tmp_path, monkeypatch):
    """The plugin on sys.path, found through its entry point."""
    install_plugin(tmp_path, "extra", PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    yield
    sys.modules.pop("lmgrade_extra", None)


def test_builtin_plugins_are_registered_like_external_ones():
    assert catalog.assignment_folders(make_manager(load_entry_points=False)) == {}  # nothing built in by name
    found = catalog.sources(make_manager())
    assert set(found) == {"ngram", "rnn", "lstm", "embeddings", "transformer", "seq2seq"}
    assert {f.distribution for f in found.values()} == {"lmgrade"}
    ngram = found["ngram"].source
    assert (ngram.reference, ngram.public) == ("lmgrade.reference.ngram", "lmgrade.plugins.ngram.public")


def test_a_plugins_hooks_answer_for_its_own_assignment_only():
    from lmgrade.plugins.ngram import plugin

    assert plugin.lmgrade_checks(assignment="rnn", variant={}) == []
    assert plugin.lmgrade_bugs(assignment="rnn") == {} and plugin.lmgrade_equivalent_mutants(assignment="rnn") == []
    assert {c.name for c in plugin.lmgrade_checks(assignment="ngram", variant={})} >= {"pad", "fit"}
    assert plugin.lmgrade_bugs(assignment="ngram") and plugin.lmgrade_equivalent_mutants(assignment="ngram")


def test_each_assignment_hides_the_other_references_from_the_sandbox():
    spec = catalog.load_spec("ngram")
    others = {catalog.load_spec(name).reference_folder() for name in catalog.assignment_folders() if name != "ngram"}
    assert set(spec.hidden) == others and spec.reference_folder() not in spec.hidden
    assert set(LiveReference(spec).protected_paths()) == others | {spec.reference_folder()}


def test_assignment_toml_may_name_another_reference_package(tmp_path):
    from lmgrade.declare.assignment import load_assignment

    toml = (catalog.assignment_folders()["ngram"] / "assignment.toml").read_text()
    assert load_assignment(catalog.assignment_folders()["ngram"] / "assignment.toml").reference_package is None
    folder = tmp_path / "ngram"
    folder.mkdir()
    (folder / "assignment.toml").write_text(toml.replace("[assignment]\n", '[assignment]\nreference = "mine"\n', 1))
    (folder / "templates").symlink_to(catalog.assignment_folders()["ngram"] / "templates")
    assert load_assignment(folder / "assignment.toml").reference_package == "mine"


def test_hooks_have_docstrings():
    from lmgrade.declare import hookspecs

    for name in ("lmgrade_assignments", "lmgrade_checks"):
        assert getattr(hookspecs, name).__doc__.strip()


def test_an_entry_point_plugin_adds_a_check_that_runs(installed_plugin, reference_submission):
    pm = make_manager()
    assert pm.get_plugin("extra") is not None
    assignment, variant = catalog.load("ngram", pm=pm)
    assert assignment.checks[-1].name == "reversed_pad"
    only = type(assignment)(assignment.spec, [assignment.checks[-1]])
    with Grader(only, variant, LiveReference(assignment.spec), secret="s") as grader:
        (verdict,) = grader.grade(reference_submission)
    assert verdict.check.name == "reversed_pad" and verdict.score == verdict.max_score == 3


def test_a_check_named_in_the_toml_but_provided_by_no_plugin_is_an_error(tmp_path):
    from lmgrade.declare.assignment import AssignmentError, bind, load_assignment

    spec = load_assignment(catalog.assignment_folders()["ngram"] / "assignment.toml")
    with pytest.raises(AssignmentError, match=r"\[checks.pad\]: no plugin provides"):
        bind(spec, [])


BROKEN = textwrap.dedent("""
    from lmgrade import hookimpl
    from lmgrade.declare.checks import Case, Check


    def scenario(modules, args):
        return modules["ngram"].no_such_function()


    def cases(ctx):
        return [Case("calls what the reference lacks", {})]


    @hookimpl
    def lmgrade_checks(assignment, variant):
        return [Check("broken", "a check whose reference fails", scenario, cases, points=1)]
""")


def test_a_harness_fault_exits_non_zero_and_leaves_valid_results(tmp_path, reference_submission):
    import json
    import os
    import subprocess

    install_plugin(tmp_path, "broken", BROKEN)
    results = tmp_path / "results.json"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "lmgrade.cli",
            "grade",
            "ngram",
            str(reference_submission),
            "--results",
            str(results),
            "--jobs",
            "1",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
    )
    assert out.returncode == 1 and "harness fault" in out.stderr and "no_such_function" in out.stderr
    document = json.loads(results.read_text())
    assert "The autograder itself failed, not your submission" in document["output"]
    assert len(document["tests"]) == 12 and document["tests"][-1]["score"] == 0

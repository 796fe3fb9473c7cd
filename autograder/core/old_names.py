"""The harness's module names from before its folders, still importable.

An assignment package written against them (`from lmgrade.checks import Check`) loads: the old
name is the module it is now, with a DeprecationWarning naming the new import. The root of the
package installs the finder (`install`), so that it costs one dictionary and no import.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from importlib.machinery import ModuleSpec

# old module (relative to lmgrade) -> the module it is now; a package's row covers its modules.
MOVED = {
    "assignment": "declare.assignment",
    "assignment_plugin": "declare.assignment_plugin",
    "atomic": "core.atomic",
    "author_errors": "prove.author_errors",
    "bundle": "course.bundle",
    "bundle.build": "course.bundle.build",
    "bundle.cli": "cli.student_bundle_commands",
    "bundle.public": "course.bundle.public",
    "bundle.pytest_plugin": "course.bundle.pytest_plugin",
    "bundle.sources": "course.bundle.sources",
    "bundle.texts": "course.bundle.texts",
    "bundle.wheel": "course.bundle.wheel",
    "catalog": "declare.catalog",
    "checks": "declare.checks",
    "comparison": "core.comparison",
    "composition": "declare.composition",
    "context_setting": "core.context_setting",
    "degenerate": "prove.degenerate",
    "device": "core.device",
    "errors": "core.errors",
    "expected": "grading.expected_values",
    "expected_parts": "core.expected_only",
    "expected_store": "grading.expected_store",
    "explanations": "core.explanations",
    "feedback": "grading.feedback",
    "fixtures": "course.bundle.fixtures",
    "flawed": "declare.flawed",
    "forbidden": "boundary.forbidden",
    "gradcheck": "grading.gradcheck",
    "grade": "grading.submission_grading",
    "gradescope": "course.gradescope",
    "gradescope.build": "course.gradescope.build",
    "gradescope.config": "course.gradescope.config",
    "gradescope.grade": "course.gradescope.grade",
    "gradescope.layout": "course.gradescope.layout",
    "gradescope.local": "course.gradescope.local",
    "gradescope.metadata": "course.gradescope.metadata",
    "gradescope.supervise": "course.gradescope.supervise",
    "gradescope.trial": "course.gradescope.trial",
    "gradescope.wheel": "course.gradescope.wheel",
    "handout": "declare.handout",
    "hidden_inputs": "core.hidden_inputs",
    "hookspecs": "declare.hookspecs",
    "import_probe": "grading.import_probe",
    "lazy_import": "core.lazy_import",
    "listing": "declare.listing",
    "loader": "submissions.loader",
    "mutants": "prove.mutants",
    "mutation": "prove.mutation",
    "notebook": "submissions.notebook",
    "notebook_reader": "submissions.notebook_reader",
    "npy_members": "boundary.npy_members",
    "oracle": "grading.oracle",
    "pictures": "reports.pictures",
    "plugin_manager": "declare.plugin_manager",
    "plural": "core.plural",
    "recorded_calls": "boundary.call_snapshots",
    "regrade": "course.regrade",
    "regrade.cells": "course.regrade.cells",
    "regrade.choice": "course.regrade.choice",
    "regrade.cluster": "course.regrade.cluster",
    "regrade.content": "course.regrade.content",
    "regrade.copy_groups": "course.regrade.copy_groups",
    "regrade.executor": "course.regrade.executor",
    "regrade.failures": "course.regrade.failures",
    "regrade.gradebook": "course.regrade.gradebook",
    "regrade.graded": "course.regrade.graded",
    "regrade.insights": "course.regrade.insights",
    "regrade.layout": "course.regrade.layout",
    "regrade.near_duplicates": "course.regrade.near_duplicates",
    "regrade.progress": "course.regrade.progress",
    "regrade.records": "course.regrade.records",
    "regrade.report": "course.regrade.report",
    "regrade.review_queue": "course.regrade.review_queue",
    "regrade.run": "course.regrade.run",
    "regrade.scores_csv": "course.regrade.scores_csv",
    "regrade.syntax_tree": "course.regrade.syntax_tree",
    "reproduce": "grading.reproduce",
    "results": "reports.results",
    "sandbox.protocol": "boundary.protocol",
    "sandbox.schema": "boundary.schema",
    "scaffold": "declare.scaffold",
    "scenario_call": "core.scenario_arguments",
    "seeds": "core.seeds",
    "selection": "core.selection",
    "selftest": "prove.selftest",
    "sequences": "core.sequences",
    "speed": "grading.timing_laps",
    "stand_in": "grading.stand_in",
    "stand_in_answers": "boundary.stand_in_answers",
    "stand_in_torch": "grading.stand_in_modules",
    "starter_notebook": "declare.starter_notebook",
    "stats": "core.stats",
    "student_grader": "grading.per_student",
    "submission": "submissions.submitted_files",
    "submission_limits": "submissions.limits",
    "submitted_sources": "boundary.submitted_sources",
    "templates": "declare.templates",
    "timing_grading": "grading.timing_verdicts",
    "torch_requirement": "declare.torch_requirement",
    "wire": "boundary.wire",
}


def new_name(name: str) -> str | None:
    """The module an old name `name` (lmgrade.x.y) is now; None where the name is no old one."""
    package, _, rest = name.partition(".")
    if package != "lmgrade" or not rest:
        return None
    parts = rest.split(".")
    for cut in range(len(parts), 0, -1):
        old = ".".join(parts[:cut])
        if old in MOVED:
            return ".".join(["lmgrade", MOVED[old], *parts[cut:]])
    return None


class OldNames:
    """A finder (sys.meta_path) that gives an old module name the module it is now."""

    def find_spec(self, name, path=None, target=None):
        return None if new_name(name) is None else ModuleSpec(name, self)

    def create_module(self, spec):
        new = new_name(spec.name)
        warnings.warn(f"{spec.name} moved: import {new}", DeprecationWarning, stacklevel=2)
        return importlib.import_module(new)

    def exec_module(self, module):
        """Nothing: the module is the new one, run when it was first imported."""


def install() -> None:
    """Put the finder first on sys.meta_path, once."""
    if not any(isinstance(finder, OldNames) for finder in sys.meta_path):
        sys.meta_path.insert(0, OldNames())

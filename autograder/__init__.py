"""lmgrade: the autograder harness of a language-modeling course.

Everything a plugin needs is importable from here, and a plugin imports
nothing else of lmgrade (docs/writing-an-assignment.md)::

    from lmgrade import AssignmentPlugin, Bug, Case, CaseContext, Check, Mistake, Tolerance, Limits

Every name is imported when first asked for (`_LAZY`): the plugin API
costs numpy, never torch, and `import lmgrade` alone costs nothing.
"""

from __future__ import annotations

import importlib

from .core import old_names

# name -> the module of lmgrade that defines it ("module:name" where it is named otherwise there),
# imported on first use: `import lmgrade` itself imports only the finder of the old module names
# (core/old_names.py; the Gradescope supervisor, which needs none of it, starts in a few milliseconds).
_LAZY = {
    "ANSWER": "declare.checks",
    "PROPERTY": "declare.checks",
    "Case": "declare.checks",
    "CaseContext": "declare.checks",
    "CaseVerdict": "declare.checks",
    "Check": "declare.checks",
    "Mistake": "declare.checks",
    "property_result": "declare.checks",
    "asked_beside": "declare.checks",
    "raised": "declare.checks",
    "takes_args_whole": "core.scenario_arguments",
    "expected_only": "core.expected_only",
    "explained": "core.explanations",
    "UNEXPLAINED": "core.explanations",
    "Tolerance": "core.comparison",
    "compare": "core.comparison",
    "hookimpl": "declare.hookspecs",
    "lazy_import": "core.lazy_import",
    "Limits": "sandbox.limits",
    "AssignmentPlugin": "declare.assignment_plugin",
    "AssignmentSource": "declare.assignment_plugin",
    "Bug": "declare.flawed",
    "AGREE": "grading.gradcheck",
    "NOT_MEASURED": "grading.gradcheck",
    "agreement": "grading.gradcheck",
    "finite_differences": "grading.gradcheck",
    "warnings_of": "grading.gradcheck",
    "which_half": "grading.gradcheck",
    "markov_sequences": "core.sequences",
    "LEVEL": "core.stats",
    "fit_problem": "core.stats",
    "seeding_problem": "core.stats",
    "Timing": "grading.timing_laps",
    "run_laps": "grading.timing_laps",
}

# The modules' names before the harness was in folders still import, with a DeprecationWarning.
old_names.install()

__all__ = list(_LAZY)
__version__ = "0.1.0"


def __getattr__(name: str):
    if name in _LAZY:
        module, _, defined_as = _LAZY[name].partition(":")
        value = getattr(importlib.import_module(f".{module}", __name__), defined_as or name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))

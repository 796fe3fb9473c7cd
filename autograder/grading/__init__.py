"""Grading: the Grader, expected values and their store, the oracle, stand-ins, feedback in words,
timing and gradient checks, one submission graded.

May import: boundary, core, submissions, sandbox, declare, reports.
"""

import importlib
import warnings

# What grading.py held before the harness was in folders: in lmgrade.grading.grader now.
_GRADER_NAMES = ("CaseRun", "Grader", "MAX_SCANNED_BYTES")


def __getattr__(name: str):
    # A package written before the folders imports these from lmgrade.grading: found, with a warning
    # naming the new import.
    if name in _GRADER_NAMES:
        warnings.warn(
            f"import {name} from lmgrade.grading.grader (lmgrade.grading is a folder now)",
            DeprecationWarning,
            stacklevel=2,
        )
        value = globals()[name] = getattr(importlib.import_module(".grader", __name__), name)
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""One case of a public check, complete, for a student to rerun in their own Python.

`lmgrade check ASSIGNMENT DIR --case CHECK:N` writes the case's arguments to
a file (plain data, the harness's own encoding), prints them in full with a
snippet that calls the student's code exactly as the check does, runs the
case in the sandbox and lists every entry that differs from the reference,
not only the first. Hidden checks never reveal any of this.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from . import wire
from .checks import Check
from .compare import Tolerance, compare

MAX_LISTED = 200


class CaseNotShown(ValueError):
    """A case that cannot be reproduced: a hidden check, or no such check or case number."""


def parse(spec: str) -> tuple[str, int]:
    name, sep, number = spec.rpartition(":")
    if not sep or not name or not number.isdigit() or int(number) < 1:
        raise CaseNotShown(f"--case {spec}: expected CHECK:N, e.g. pad:2 (N counts from 1)")
    return name, int(number)


def find(checks: list[Check], name: str) -> Check:
    by_name = {c.name: c for c in checks}
    if name not in by_name:
        raise CaseNotShown(f"--case: no check named {name!r} (checks: {', '.join(by_name)})")
    check = by_name[name]
    if check.visibility != "visible":
        raise CaseNotShown(f"--case: {name} is not a public check: its inputs are not shown")
    return check


def snippet(check: Check, args_file: Path) -> str:
    module, _, function = check.scenario_ref.partition(":")
    files = ", ".join(repr(f) for f in check.files)
    return "\n".join([
        "from pathlib import Path",
        "from autograder import wire",
        "from autograder.loader import load_files",
        f"from {module} import {function}",
        "",
        f"args = wire.decode(Path({str(args_file)!r}).read_bytes())",
        f"modules = load_files(Path('.'), [{files}])   # run it in your submission's folder",
        f"print({function}(modules, args))",
    ])


def show(value: Any) -> str:
    with np.printoptions(threshold=np.inf, linewidth=120, precision=17):
        return repr(value)


def differences(expected: Any, got: Any, tol: Tolerance, path: str = "") -> list[str]:
    """Every leaf where `got` differs from `expected`, one line each."""
    if isinstance(expected, dict) and isinstance(got, dict) and set(expected) == set(got):
        return [line for key in expected for line in differences(expected[key], got[key], tol, f"{path}[{key!r}]")]
    if isinstance(expected, (list, tuple)) and isinstance(got, (list, tuple)) and len(expected) == len(got):
        return [line for i, (e, g) in enumerate(zip(expected, got)) for line in differences(e, g, tol, f"{path}[{i}]")]
    if isinstance(expected, wire.Tensor) and isinstance(got, wire.Tensor):
        expected, got = expected.values, got.values
    if isinstance(expected, np.ndarray) and isinstance(got, np.ndarray) and expected.shape == got.shape \
            and expected.dtype.kind in "fiub" and got.dtype.kind in "fiub":
        bad = ~np.isclose(got, expected, rtol=tol.rtol, atol=tol.atol, equal_nan=True)
        return [f"{path}[{', '.join(map(str, index))}]: expected {expected[index]!r}, got {got[index]!r}"
                for index in zip(*np.nonzero(bad))]
    message = compare(expected, got, tol, reveal=True)
    return [] if message is None else [f"{path or 'the answer'}: {message}"]

"""One case of a public check, for a student to read and rerun in their own Python.

`lmgrade check ASSIGNMENT DIR --case CHECK:N` prints the case's arguments,
runs it in the sandbox and lists the entries that differ from the reference,
not only the first, and the known mistake the answer matches. By default it
fits a screen or two (long arrays shortened, the first differences listed);
``--full`` prints everything. Only ``--save-args FILE`` writes a file: the
arguments (plain data, the harness's own encoding), which the printed snippet
reads to call the student's code exactly as the check does. Hidden checks
never reveal any of this.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..boundary import wire
from ..core.comparison import Tolerance, compare, digits, number
from ..core.scenario_arguments import takes_args_by_name
from ..declare.checks import Check

MAX_LISTED = 200  # differing entries listed with --full
SHORT_LISTED = 10  # ... and without it


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


def snippet(check: Check, args_file: Path, args: Any) -> str:
    """The lines that run the check's scenario on the case's arguments saved in `args_file` (`args`)."""
    module, _, function = check.scenario_ref.partition(":")
    files = ", ".join(repr(f) for f in check.files)
    return "\n".join(
        [
            "from pathlib import Path",
            "from lmgrade import wire",
            "from lmgrade.submissions.loader import load_files",
            f"from {module} import {function}",
            "",
            f"args = wire.decode(Path({str(args_file)!r}).read_bytes())",
            f"modules = load_files(Path('.'), [{files}])   # run it in your submission's folder",
            f"print({function}(modules, {'**' if takes_args_by_name(check.scenario, args) else ''}args))",
        ]
    )


SHORT_DIGITS = 6  # of the values shown without --full; the differences are listed to the tolerance's digits
SHORT_ENTRIES = 6  # of an array shown without --full: its first and last few, on one line
SHORT_CHARS = 300  # of any other value shown without --full


def show(value: Any, *, full: bool = False, tol: Tolerance | None = None) -> str:
    """`value` for a student to read: a dict one entry a line; without `full`, each array on one line, shortened."""
    precision = 17 if full or tol is None else min(SHORT_DIGITS, digits(tol))
    with np.printoptions(
        linewidth=120 if full else 10**6, precision=precision, floatmode="maxprec", threshold=np.inf if full else 1000
    ):
        return "\n".join(_lines(value, full, ""))


def _lines(value: Any, full: bool, indent: str) -> list[str]:
    if isinstance(value, dict) and value:
        out = []
        for key, item in value.items():
            if isinstance(item, dict) and item:
                out += [f"{indent}{key!r}:", *_lines(item, full, indent + "    ")]
            else:
                text = _one(item, full)
                out.append(f"{indent}{key!r}: " + text.replace("\n", "\n" + indent + "    "))
        return out
    return [indent + _one(value, full)]


def _one(value: Any, full: bool) -> str:
    if isinstance(value, wire.Tensor):
        value = value.values
    if full:
        return repr(_plain_scalars(value))
    if isinstance(value, np.ndarray) and value.size > SHORT_ENTRIES:
        flat = value.ravel()
        head, tail = flat[: SHORT_ENTRIES - 2], flat[-2:]
        entries = ", ".join(np.array2string(x) for x in head) + ", ..., " + ", ".join(np.array2string(x) for x in tail)
        return f"array of shape {value.shape}, {value.dtype}: [{entries}]"
    text = repr(_plain_scalars(value))
    return text if len(text) <= SHORT_CHARS else text[: SHORT_CHARS - 3] + "..."


def _plain_scalars(value: Any) -> Any:
    """numpy scalars as Python's, so they print as numbers (0.5, not np.float64(0.5))."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {_plain_scalars(k): _plain_scalars(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_plain_scalars(v) for v in value)
    return value


def differences(expected: Any, got: Any, tol: Tolerance, path: str = "") -> list[str]:
    """Every leaf where `got` differs from `expected`, one line each."""
    if isinstance(expected, dict) and isinstance(got, dict) and set(expected) == set(got):
        return [line for key in expected for line in differences(expected[key], got[key], tol, f"{path}[{key!r}]")]
    if isinstance(expected, (list, tuple)) and isinstance(got, (list, tuple)) and len(expected) == len(got):
        return [line for i, (e, g) in enumerate(zip(expected, got)) for line in differences(e, g, tol, f"{path}[{i}]")]
    if isinstance(expected, wire.Tensor) and isinstance(got, wire.Tensor):
        expected, got = expected.values, got.values
    if (
        isinstance(expected, np.ndarray)
        and isinstance(got, np.ndarray)
        and expected.shape == got.shape
        and expected.dtype.kind in "fiub"
        and got.dtype.kind in "fiub"
        and expected.ndim  # a 0-d array has no entries to index: compared as one number, below
    ):
        bad = ~np.isclose(got, expected, rtol=tol.rtol, atol=tol.atol, equal_nan=True)
        return [
            f"{path}[{', '.join(map(str, index))}]: expected {number(expected[index], tol, beside=got[index])}, "
            f"got {number(got[index], tol, beside=expected[index])}"
            for index in zip(*np.nonzero(bad))
        ]
    message = compare(expected, got, tol, reveal=True)
    return [] if message is None else [f"{path or 'the answer'}: {message}"]

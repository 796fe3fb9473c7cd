"""Where expected values come from.

`LiveReference` runs each check's scenario against the reference solution in
the grading process (trusted code; it never runs in the sandbox, and the
sandbox cannot read it). Results take the same trip through `wire` as the
submission's, so both sides are compared as the same plain types.
"""

from __future__ import annotations

import importlib
import importlib.util
import threading
from pathlib import Path
from typing import Any

from . import wire
from .assignment import AssignmentSpec
from .checks import Case, Check, Mistake


class OracleError(RuntimeError):
    """The reference failed on a check's input: a bug in the assignment, not the submission."""


class LiveReference:
    def __init__(self, spec: AssignmentSpec):
        self.spec = spec
        self.modules = {Path(f).stem: importlib.import_module(spec.reference_module(f)) for f in spec.files}
        self._flawed: dict[str, dict] = {}
        self._lock = threading.Lock()  # checks are judged in parallel threads

    def protected_paths(self) -> list[Path]:
        """The reference package: the sandbox must not be able to read it."""
        package = importlib.import_module(self.spec.reference_package)
        return [Path(p) for p in getattr(package, "__path__", [])] + [Path(m.__file__) for m in self.modules.values()]

    def expected(self, check: Check, cases: list[Case]) -> list[Any]:
        out = []
        for i, case in enumerate(cases):
            try:
                out.append(_run(check, self.modules, case))
            except Exception as exc:
                raise OracleError(f"the reference failed on {check.name} case {i + 1} ({case.label}): "
                                  f"{type(exc).__name__}: {exc}") from exc
        return out

    def _flawed_modules(self, mistake: Mistake) -> dict:
        """Fresh copies of the reference modules with `mistake` patched in."""
        with self._lock:
            if mistake.name not in self._flawed:
                self._flawed[mistake.name] = self._make_flawed(mistake)
            return self._flawed[mistake.name]

    def _make_flawed(self, mistake: Mistake) -> dict:
        copies = {}
        for key, module in self.modules.items():
            spec = importlib.util.spec_from_file_location(f"{module.__name__}__{mistake.name}", module.__file__)
            copy = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(copy)
            copies[key] = copy
        mistake.patch(copies)
        return copies

    def mistaken(self, check: Check, case: Case, mistake: Mistake) -> Any:
        """What a submission making `mistake` returns on `case`."""
        return _run(check, self._flawed_modules(mistake), case)


def _run(check: Check, modules: dict, case: Case) -> Any:
    """The scenario on its own copy of the arguments, its result as plain data like the sandbox's."""
    return wire.decode(wire.encode(check.scenario(modules, wire.decode(wire.encode(case.args)))))

"""Importing a submission once, before its checks, and the hint for a name it lacks.

An import failure is said once, at the top, instead of by every check; what
the files define feeds the hint a check adds to `module 'ngram' has no
attribute 'pad'`: the names the contract wants of that file, and those it
defines. An import that runs past its time limit (an endless loop at the top
level) stops every check: the probe's own time-out decides it, so every
check of such a submission says the same whichever ran first.
"""

from __future__ import annotations

import ast
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

from ..boundary import schema
from ..declare.assignment import Assignment
from ..declare.checks import CaseVerdict
from ..sandbox.limits import Limits
from ..submissions import loader
from ..submissions.submitted_files import content_hash

MISSING_NAME = re.compile(r"module '(\w+)' has no attribute '(\w+)'")
# Probes kept, by the files' content: a bundle's pytest asks once per check.
KEPT = 8


@dataclass
class Imports:
    """What importing a submission's files once gave: the file that failed and why, or the names each defines."""

    broken: str | None = None
    message: str = ""
    defined: dict[str, list[str]] = field(default_factory=dict)
    hung: bool = False
    """The files did not finish importing within the time limit: no check is graded."""

    def stops(self, files) -> bool:
        """Whether a check of `files` cannot be graded: one of them fails to import, or the import hangs."""
        return self.hung or (self.broken is not None and self.broken in files)

    def refusal(self) -> str:
        """What each check stopped by this import says, in one line."""
        if self.hung:
            return f"not graded: {self.broken} could not be imported: it ran past its time limit (see above)"
        return f"not graded: {self.broken} could not be imported (see above)"


class PendingImports:
    """The import probe's answer while its run goes on beside the first checks' runs.

    A check's run needs nothing of it; its verdict does (a file that does not
    import, the names it defines). `wait` tells `on_failure` what stopped the
    files from importing, once, before it returns: so before any verdict.
    """

    def __init__(self, future: Future, on_failure: Callable[[str], None] | None = None):
        self._future, self._on_failure = future, on_failure
        self._told = False
        self._lock = threading.Lock()

    def ready(self) -> Imports | None:
        """The answer if the probe has finished (`wait` without the wait); else None."""
        return self.wait() if self._future.done() else None

    def wait(self) -> Imports:
        imports = self._future.result()
        with self._lock:
            if not self._told:
                self._told = True
                if imports.broken and self._on_failure:
                    self._on_failure(imports.message)
        return imports


class ImportProbe:
    """Imports a submission's files in the sandbox pool `pool` (each content once), and says what they lack."""

    def __init__(self, assignment: Assignment, variant: dict, pool):
        self.assignment, self.variant, self.pool = assignment, variant, pool
        self._imports: OrderedDict[str, Imports] = OrderedDict()
        self._contract: dict[str, list[str]] | None = None
        self._lock = threading.Lock()

    def probe(self, submission: Path) -> Imports:
        """Import every submitted file present, once, in the sandbox."""
        present = [f for f in self.assignment.spec.files if (submission / f).is_file()]
        if not present:
            return Imports()
        key = content_hash(submission)
        with self._lock:
            if key in self._imports:
                return self._imports[key]
        imports = self._probe(submission, present)
        with self._lock:
            self._imports[key] = imports
            while len(self._imports) > KEPT:
                self._imports.popitem(last=False)
        return imports

    def _probe(self, submission: Path, present: list[str]) -> Imports:
        limits = Limits(**{**Limits().as_dict(), **self.assignment.spec.limits})
        outcome = self.pool.run(
            scenario="lmgrade.submissions.loader:import_probe",
            submission=submission,
            files=present,
            cases=[None],
            limits=limits,
        ).outcomes[0]
        if outcome.kind == "timeout":
            # Every check would import the files again and wait out its own limit: the grading stops here.
            files = " and ".join(present)
            why = (outcome.message or "").removeprefix("while importing the submission, ").split("\n")[0]
            return Imports(
                files,
                f"{files} could not be imported: it ran past its time limit ({why}), "
                "so no check was graded: does code at the top level loop forever or do long work? Move it into a "
                'function, or under if __name__ == "__main__":',
                hung=True,
            )
        if outcome.kind != "import_error":
            # What a child sends is a claim: names of identifiers, for the submission's own modules only.
            modules = [loader.module_name(f) for f in present]
            return Imports(defined=schema.probe_names(outcome.value, modules) if outcome.kind == "ok" else {})
        error = outcome.error or schema.error_report(None)
        # The file a child names only selects among the files present, compared as text.
        broken = error["file"] if error["file"] in present else present[0]
        where = error["where"] or f"{error['type']}: {error['message']}"
        return Imports(broken, f"{broken} could not be imported, so the checks that need it were not graded:\n{where}")

    def contract_names(self) -> dict[str, list[str]]:
        """The public names each stub defines: what the contract expects of each file."""
        with self._lock:
            if self._contract is None:
                from ..declare import templates  # jinja2, only where a hint is asked for

                stubs = templates.render(self.assignment, self.variant)
                self._contract = {
                    loader.module_name(f): top_level_names(stubs[f]) for f in self.assignment.spec.files if f in stubs
                }
            return self._contract

    def with_hints(self, verdict: CaseVerdict, defined: dict[str, list[str]]) -> CaseVerdict:
        """A missing name (`module 'ngram' has no attribute 'pad'`): what the file defines, what the contract wants."""
        found = MISSING_NAME.search(verdict.message)
        if verdict.passed or not found or found.group(1) not in self.contract_names():
            return verdict
        module = found.group(1)
        hint = (
            f"\n{module}.py must define: {', '.join(self.contract_names()[module])}; "
            f"it defines: {', '.join(defined.get(module, [])) or 'nothing public'}"
        )
        return CaseVerdict(False, verdict.message + hint)


def top_level_names(source: str) -> list[str]:
    tree = ast.parse(source)
    names = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    names += [t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)]
    return [n for n in names if not n.startswith("_")]

"""Where Gradescope puts things, inside one root folder (/autograder).

The zip is unpacked to ``source/``, the student's files arrive in
``submission/``, and ``results/results.json`` is what the platform reads.
Only a run on another machine moves the root (``LMGRADE_GRADESCOPE_ROOT``):
`lmgrade gradescope --try` and the test suite run a zip in a temporary
folder laid out the same way (`local.py`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

DEFAULT_ROOT = Path("/autograder")
# A temporary folder laid out like /autograder (`lmgrade gradescope --try`, the tests). Never set on Gradescope.
ROOT_ENV = "LMGRADE_GRADESCOPE_ROOT"
CONFIG_NAME = "lmgrade-gradescope.json"
EXPECTED_FOLDER = "expected"


@dataclass(frozen=True)
class Layout:
    root: Path

    @classmethod
    def from_environment(cls) -> Layout:
        return cls(Path(os.environ.get(ROOT_ENV) or DEFAULT_ROOT))

    @property
    def source(self) -> Path:
        """The unpacked zip: the wheel, the config with the course secret, the scripts."""
        return self.root / "source"

    @property
    def config(self) -> Path:
        return self.source / CONFIG_NAME

    @property
    def expected(self) -> Path:
        """The expected values recorded when the zip was built (an `ExpectedStore`)."""
        return self.source / EXPECTED_FOLDER

    @property
    def submission(self) -> Path:
        return self.root / "submission"

    @property
    def results_folder(self) -> Path:
        return self.root / "results"

    @property
    def results(self) -> Path:
        return self.results_folder / "results.json"

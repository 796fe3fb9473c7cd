"""The zip's config: what `run_autograder` grades, and with which secret.

Written by `lmgrade gradescope` into the zip (readable by root alone), read
by the supervisor and the grading process on Gradescope. The list of checks
is there so that a valid results.json can be written even when the
assignment itself cannot be loaded on the image.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ...core.errors import HarnessFault
from ...core.selection import Selection

if TYPE_CHECKING:  # read by the supervisor, which loads no assignment
    from ...declare.assignment import Assignment

FORMAT = 2
# Gradescope's default timeout of an autograder run; instructors may raise it
# to 40 minutes in the assignment's settings, and then build with
# LMGRADE_GRADESCOPE_TIMEOUT set to the same number of seconds.
DEFAULT_TIMEOUT_S = 600.0
TIMEOUT_ENV = "LMGRADE_GRADESCOPE_TIMEOUT"
# Kept back from the timeout for starting Python and writing the last
# results.json: grading stops this long before Gradescope would kill the run
# (a run Gradescope kills gets its results replaced by a zero).
TIMEOUT_MARGIN_S = 45.0


# The longest timeout Gradescope lets an assignment set.
MAX_TIMEOUT_S = 2400.0


def timeout_needed(worst_case_s: float) -> int:
    """The Gradescope timeout, in seconds, under which a submission that uses every check's time limit is
    still graded whole: the limits' sum and the margin, rounded up to whole minutes (Gradescope's setting)."""
    return 60 * math.ceil((worst_case_s + TIMEOUT_MARGIN_S) / 60)


def timeout_advice(worst_case_s: float, budget_s: float) -> str | None:
    """What to set where the checks' time limits add up to more than a zip grades for, or None where they fit."""
    if worst_case_s <= budget_s:
        return None
    needed = timeout_needed(worst_case_s)
    said = (
        f"the checks' time limits add up to {worst_case_s:g} s, more than the {budget_s:g} s this zip grades for "
        "before Gradescope's timeout; a submission that uses every limit is stopped there and its remaining "
        "checks score 0. "
    )
    if needed > MAX_TIMEOUT_S:
        return said + (
            f"That needs a timeout of {needed // 60} minutes, past Gradescope's longest ({MAX_TIMEOUT_S / 60:g}): "
            f"set {MAX_TIMEOUT_S / 60:g} minutes on Gradescope and build with {TIMEOUT_ENV}={MAX_TIMEOUT_S:g}, "
            "or lower the checks' limits."
        )
    return said + (
        f"Set the autograder timeout on Gradescope to {needed // 60} minutes and build with {TIMEOUT_ENV}={needed}."
    )


class ZipError(ValueError):
    """The zip cannot be built as asked, or from what is installed here (not a fault of the harness)."""


@dataclass(frozen=True)
class CheckEntry:
    """One check as results.json lists it (the attributes `reports.gradescope` reads of a Check)."""

    name: str
    title: str
    points: float
    visibility: str


@dataclass
class ZipConfig:
    selection: Selection  # the assignment and the --set choices the zip was built with
    secret: str
    public_secret: bool  # built without LMGRADE_SECRET: hidden inputs are guessable
    checks: list[CheckEntry]
    time_budget_s: float
    lmgrade_version: str
    wheel: str
    wheel_sha256: str
    format: int = FORMAT
    variant: dict = field(default_factory=dict)  # the resolved variant, for people reading the file
    per_student: bool = False  # hidden checks' inputs drawn per student (`hidden_inputs`)

    @classmethod
    def for_assignment(
        cls,
        assignment: Assignment,
        variant: dict,
        selection: Selection,
        *,
        secret: str,
        public_secret: bool,
        time_budget_s: float,
        lmgrade_version: str,
        wheel: str,
        wheel_sha256: str,
        per_student: bool = False,
    ) -> ZipConfig:
        checks = [CheckEntry(c.name, c.title, c.points, c.visibility) for c in assignment.checks]
        return cls(
            selection=selection,
            secret=secret,
            public_secret=public_secret,
            checks=checks,
            time_budget_s=time_budget_s,
            lmgrade_version=lmgrade_version,
            wheel=wheel,
            wheel_sha256=wheel_sha256,
            variant=dict(variant),
            per_student=per_student,
        )

    @property
    def assignment(self) -> str:
        return self.selection.assignment

    @property
    def title(self) -> str:
        """The assignment and its variant, as people read them: "rnn (activation=tanh)"."""
        chosen = Selection.of(self.assignment, self.variant).describe()
        return f"{self.assignment} ({chosen})" if chosen else self.assignment

    def to_json(self) -> str:
        return json.dumps({**asdict(self), "selection": self.selection.as_dict()}, indent=2) + "\n"

    @classmethod
    def load(cls, path: Path) -> ZipConfig:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            if data.get("format") != FORMAT:
                raise ValueError(f"format {data.get('format')!r}, expected {FORMAT}")
            data["checks"] = [CheckEntry(**c) for c in data["checks"]]
            data["selection"] = Selection.from_dict(data["selection"])
            return cls(**data)
        except (OSError, ValueError, TypeError, KeyError) as exc:
            raise HarnessFault(f"the autograder's config {path} cannot be read: {exc}") from None


def time_budget_s() -> float:
    """Seconds grading may take on Gradescope: its timeout (default, or the builder's) less a margin."""
    raw = os.environ.get(TIMEOUT_ENV)
    try:
        timeout = float(raw) if raw else DEFAULT_TIMEOUT_S
    except ValueError:
        raise ZipError(f"{TIMEOUT_ENV}={raw!r}: expected Gradescope's timeout in seconds") from None
    if timeout <= 2 * TIMEOUT_MARGIN_S:
        raise ZipError(f"{TIMEOUT_ENV}={raw!r}: Gradescope's timeout must exceed {2 * TIMEOUT_MARGIN_S:g} s")
    return timeout - TIMEOUT_MARGIN_S

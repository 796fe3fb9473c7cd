"""What `lmgrade check` and a bundle's pytest run grade with: the public checks.

Where a student bundle is installed, its recorded checks and fixtures
(`RecordedReference`): no reference is needed. Elsewhere (the instructor's
checkout), the plugins' public checks against the live reference. Both draw
from the public seed, so a bundle and the checkout that built it give the
same cases, verdicts and feedback.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from ...core.plural import counted
from ...core.seeds import PUBLIC_SECRET
from ...core.selection import Selection
from ...declare import catalog, torch_requirement
from ...declare.assignment import Assignment, AssignmentError
from ...grading.expected_store import default_store
from ...grading.grader import Grader
from ...grading.oracle import LiveReference, RecordedReference
from ...sandbox.pool import Prestarted
from .fixtures import DOCUMENT, Fixtures, left_out, visible_checks
from .sources import FIXTURES_PACKAGE


def distribution_name(assignment: str) -> str:
    """The name of the wheel a student bundle of `assignment` installs (its requirements among its metadata)."""
    return f"lmgrade-student-{assignment}"


@dataclass
class PublicChecks:
    assignment: Assignment  # its public checks only
    variant: dict
    oracle: LiveReference | RecordedReference
    left_out: list[dict]  # the checks not run here (`fixtures.left_out`)

    def grader(self, jobs: int, prestarted: Prestarted | None = None) -> Grader:
        # The user's store serves a checkout's live reference (a bundle's values are recorded already).
        return Grader(
            self.assignment,
            self.variant,
            self.oracle,
            secret=PUBLIC_SECRET,
            jobs=jobs,
            prestarted=prestarted,
            store=default_store(),
        )

    def not_run_here(self) -> str:
        """A sentence naming the checks only the course's autograder runs ("" when there are none)."""
        return not_run_here(self.assignment, self.left_out)


def not_run_here(public: Assignment, left_out: list[dict]) -> str:
    """A sentence naming the checks `left_out` of the `public` ones, which only the course's autograder runs
    ("" when there are none)."""
    if not left_out:
        return ""
    here = sum(c.points for c in public.checks)
    total = here + sum(c["points"] for c in left_out)
    return (
        f"This is {here:g} of the assignment's {counted(float(total), 'point')}: the course's autograder also "
        "runs "
        + ", ".join(f"{c['name']} ({counted(float(c['points']), 'point')}, {c['why']})" for c in left_out)
        + (", which is" if len(left_out) == 1 else ", which are")
        + " not run here."
    )


def installed_fixtures() -> dict[str, Path]:
    """{assignment: fixture folder} of every student bundle installed in this environment."""
    spec = importlib.util.find_spec(FIXTURES_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return {}
    return {
        folder.name: folder
        for location in spec.submodule_search_locations
        for folder in sorted(Path(location).iterdir())
        if (folder / DOCUMENT).is_file()
    }


def public_checks(selection: Selection) -> PublicChecks:
    """The public checks of the assignment and variant `selection` names.

    An installed bundle checks the variant it was recorded in, with no --set;
    settings that name another variant are refused. An assignment that needs
    torch is refused in one line where torch is missing (`torch_requirement`).
    """
    name, settings = selection.assignment, selection.chosen
    installed = installed_fixtures()
    if not installed:
        # As a bundle records them: on the CPU, which every student has.
        assignment, variant = catalog.load(selection)
        torch_requirement.require(assignment.spec, catalog.sources()[name].distribution)
        assignment = assignment.on("cpu")
        return PublicChecks(
            Assignment(assignment.spec, visible_checks(assignment), device=assignment.device),
            variant,
            LiveReference(assignment.spec),
            left_out(assignment),
        )
    if name not in installed:
        raise AssignmentError(
            f"the checks installed here are those of {', '.join(sorted(installed))}, "
            f"not of {name!r}: install the bundle of {name}"
        )
    fixtures = Fixtures.read(installed[name])
    assignment = fixtures.to_assignment()
    torch_requirement.require(assignment.spec, distribution_name(name))
    # A bundle checks the variant it was built for: that is the default here, and --set may only name it again.
    recorded = Selection.of(name, fixtures.variant)
    variant = assignment.spec.resolve_variant({**recorded.chosen, **settings})
    if variant != fixtures.variant:
        raise AssignmentError(
            f"this bundle checks {name} with {recorded.describe()}; the other variants are checked by their own bundles"
        )
    return PublicChecks(assignment, variant, RecordedReference(fixtures, variant), fixtures.left_out)

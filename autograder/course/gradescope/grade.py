"""The grading process of a Gradescope run: one `grade_submission` call.

Started by the supervisor (`supervise.py`) with the zip's assignment,
variant and course secret, which it reads from the zip's config itself: the
secret never travels through an environment or a command line. It prints
the per-check table for the instructors (Gradescope keeps a run's output
from students). ``--check-install`` is setup.sh's last step: it loads the
assignment and imports the reference, so that a broken install fails the
image build instead of the first submission.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console
from rich.text import Text

from ...core.errors import HarnessFault
from ...core.hidden_inputs import hidden_inputs, student_identity
from ...core.plural import counted
from ...declare import catalog
from ...declare.assignment import AssignmentError
from ...grading.expected_store import ExpectedStore
from ...grading.oracle import LiveReference
from ...grading.submission_grading import grade_submission, servers_for
from ...reports.terminal import describe_defences, print_report
from ...sandbox.limits import default_jobs
from ...sandbox.privileges import die_with_parent
from .config import ZipConfig
from .layout import Layout
from .metadata import beside, read_submitters


def load(config: ZipConfig):
    """The zip's assignment and variant, checked against the checks the zip was built with."""
    assignment, variant = catalog.load(config.selection)
    names = [c.name for c in assignment.checks]
    if names != [c.name for c in config.checks]:
        raise HarnessFault(
            f"this lmgrade grades {config.assignment} with the checks {names}, not those the zip was built with"
        )
    return assignment, variant


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lmgrade.course.gradescope.grade")
    parser.add_argument("--config", type=Path, help="the zip's config (default: the one in the Gradescope layout)")
    parser.add_argument(
        "--check-install", action="store_true", help="load the assignment and its reference, grade nothing"
    )
    parser.add_argument("--parent", type=int, help="die with this process (the supervisor)")
    args = parser.parse_args(argv)
    if args.parent:
        # Killed with everything else, the supervisor takes this process along.
        die_with_parent(args.parent)
    layout = Layout.from_environment()
    out = Console(file=sys.stdout, width=120, no_color=True, highlight=False)
    try:
        config = ZipConfig.load(args.config or layout.config)
        if args.check_install:
            assignment, _ = load(config)
            LiveReference(assignment.spec).load()  # imported now: a broken install fails setup.sh
            out.print(Text(f"{config.title}: {counted(len(config.checks), 'check')}, reference imported"))
            return 0
        with servers_for(config.assignment, default_jobs()) as prestarted:
            assignment, variant = load(config)
            # Per student, the hidden checks' cases are the submitters' own, and the reference computes
            # their expected values here (the zip holds the public ones, and the course's hidden ones).
            identity = student_identity(read_submitters(beside(layout.submission))) if config.per_student else None
            # The expected values recorded in the zip: only the submission's side is computed here.
            run = grade_submission(
                assignment,
                variant,
                layout.submission,
                results=layout.results,
                jobs=default_jobs(),
                secret=config.secret,
                store=ExpectedStore(layout.expected),
                prestarted=prestarted,
                hidden=hidden_inputs(config.secret, identity, config.per_student),
            )
    except (HarnessFault, AssignmentError) as exc:
        print(f"lmgrade: harness fault: {exc}", file=sys.stderr)
        return 1
    if run.note:
        out.print(Text(run.note))  # what the submission holds: never rich markup
    print_report(out, config.title, run.verdicts)
    out.print(f"sandbox: {describe_defences(run.defences)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The `lmgrade` command of a student bundle: the commands that work there, about the bundle's assignment.

A bundle's wheel carries the whole harness but neither the references nor the plugins, so the commands
of the course's checkout (grade, generate, gradescope, mutants, ...) have no assignment to work on
there. Its console script is this group instead: `check`, as in the checkout, its --set help naming
the variant each installed bundle checks, and `list`, the public checks of each installed bundle with
their points and the checks only the course's autograder runs.
"""

from __future__ import annotations

import copy
import importlib.metadata
import json

import click

from .. import __version__
from ..core.selection import Selection
from ..course.bundle.fixtures import DOCUMENT, Fixtures
from ..course.bundle.public import distribution_name, installed_fixtures, not_run_here
from ..declare.listing import print_assignment, variants_line
from . import app as checkout
from . import grading_commands


def installed_variants() -> dict[str, dict]:
    """{assignment: the variant its bundle checks} of every bundle installed here, from its fixtures' header."""
    variants = {}
    for name, folder in installed_fixtures().items():
        try:
            variants[name] = json.loads((folder / DOCUMENT).read_text(encoding="utf-8")).get("variant") or {}
        except (OSError, ValueError, AttributeError):  # said by `check`, which reads the fixtures whole
            variants[name] = {}
    return variants


def variants_help(variants: dict[str, dict]) -> str:
    """--set's help: the variant each installed bundle checks, which it checks without --set."""
    if not variants:
        return "Choose an assignment variant: no bundle is installed here (CHECKING.md says how to install one)."
    checked = [
        f"{name} with {Selection.of(name, variant).describe()}" if variant else f"{name} (no variants)"
        for name, variant in variants.items()
    ]
    others = any(variants.values())
    return (
        f"The variant to check. {'The bundles' if len(checked) > 1 else 'The bundle'} installed here "
        f"{'check' if len(checked) > 1 else 'checks'} {', '.join(checked)}: check needs no --set"
        + (", and refuses another variant (each is checked by its own bundle)." if others else ".")
    )


def check_command(variants: dict[str, dict]) -> click.Command:
    """The checkout's `check`, its --set help naming the bundles' variants instead of the checkout's."""
    command = copy.copy(grading_commands.check)
    command.params = [copy.copy(param) for param in grading_commands.check.params]
    for param in command.params:
        if param.name == "settings":
            param.help = variants_help(variants)
    return command


@click.command("list")
def list_() -> None:
    """List the public checks of the assignment this bundle checks, and their points."""
    for name, folder in installed_fixtures().items():
        fixtures = Fixtures.read(folder)
        public = fixtures.to_assignment()
        distribution = distribution_name(name)
        try:
            origin = f"from the student bundle {distribution} {importlib.metadata.version(distribution)}"
        except importlib.metadata.PackageNotFoundError:
            origin = "from a student bundle"
        chosen = Selection.of(name, fixtures.variant).describe()
        notes = (
            f"variant: {chosen}, the one this bundle checks" if chosen else variants_line(public.spec),
            not_run_here(public, fixtures.left_out),
        )
        print_assignment(checkout.console, public, origin, notes=notes)


def group() -> click.Group:
    """The bundle's command group: `check` and `list`, their help about the bundles installed here."""
    variants = installed_variants()
    installed = ", ".join(variants) or "none installed"

    @click.group(
        "lmgrade",
        cls=checkout._Commands,  # as the checkout says a mistake: one line, exit status 2
        context_settings={"help_option_names": ["-h", "--help"]},
        help=f"The public checks of the assignment of a student bundle ({installed}), to run on your work.",
    )
    @click.version_option(__version__, prog_name="lmgrade")
    def commands() -> None:
        pass

    commands.add_command(check_command(variants))
    commands.add_command(list_)
    return commands


def main() -> None:
    """The console script `lmgrade` of a student bundle's wheel."""
    group()(prog_name="lmgrade")

"""`lmgrade list`, `generate` and `new`: an assignment's checks, its starter files, a new assignment package."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import click
from rich.text import Text

from ..declare import catalog
from ..declare.assignment import AssignmentError
from . import app
from .app import UserError, _load, _select, main, set_option


@main.command("list")
def list_() -> None:
    """List the assignments, their files, checks and points."""
    from ..declare import listing

    try:
        found = catalog.sources()
        loaded = [catalog.load(name) for name in found]
    except AssignmentError as exc:
        raise click.ClickException(str(exc)) from None
    for assignment, _ in loaded:
        spec = assignment.spec
        distribution = found[spec.name].distribution
        origin = (
            f"from the package {distribution} {importlib.metadata.version(distribution)}"
            if distribution
            else "from a plugin registered without an entry point"
        )
        listing.print_assignment(app.console, assignment, origin)


@main.command()
@click.argument("assignment")
@click.option(
    "-o",
    "--output",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder to write the starter files and the handout into.",
)
@set_option
@click.option("--force", is_flag=True, help="Overwrite files of the same names already in the folder.")
@click.option(
    "--notebook",
    is_flag=True,
    help="Write a starter notebook (ASSIGNMENT.ipynb) instead: the handout, a %%writefile cell per starter file "
    "and a cell that runs the public checks (docs/notebooks.md).",
)
def generate(assignment: str, out_dir: Path, settings: tuple[str, ...], force: bool, notebook: bool) -> None:
    """Render the student starter files and the handout into a folder, or with --notebook a starter notebook."""
    from ..declare import templates  # the commands that write files import jinja2, the others never

    bound, variant = _load(_select(assignment, settings))
    try:
        if notebook:
            from ..declare.starter_notebook import write_starter

            written = [write_starter(bound, variant, out_dir, overwrite=force)]
        else:
            written = templates.generate(bound, variant, out_dir, overwrite=force)
    except templates.WouldOverwrite as exc:
        raise UserError(
            f"{out_dir} already holds {', '.join(exc.names)}: nothing was written (--force overwrites them)"
        ) from None
    except OSError as exc:
        raise UserError(f"cannot write into {out_dir}: {exc.strerror or exc}") from None
    for path in written:
        app.console.print(Text(f"wrote {path}"))


@main.command("new")
@click.argument("name")
@click.option(
    "-o",
    "--output",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="The folder to write the package into (new, or empty).",
)
@click.option(
    "--torch",
    "with_torch",
    is_flag=True,
    help="A PyTorch assignment (modules with weights from the cases, a composed check, a timing check) "
    "instead of the numpy one.",
)
def new_command(name: str, out_dir: Path, with_torch: bool) -> None:
    """Write a working external assignment package to start from (docs/authoring-kit.md)."""
    from ..declare.scaffold import ScaffoldError, check_name, words, write_package

    try:
        check_name(name)
        taken = name in catalog.assignment_folders()
    except ScaffoldError as exc:
        raise UserError(str(exc)) from None
    if taken:
        raise UserError(f"an assignment named {name!r} is installed already: choose another name")
    try:
        written = write_package(name, out_dir, torch=with_torch)
    except ScaffoldError as exc:
        raise UserError(str(exc)) from None
    except OSError as exc:
        raise UserError(f"cannot write into {out_dir}: {exc.strerror or exc}") from None
    package = words(name)["__PACKAGE__"]
    app.console.print(
        f"wrote {len(written)} files of the assignment {name} (package {package}) into {out_dir}", soft_wrap=True
    )
    app.console.print(
        f"next: pip install -e {out_dir}; lmgrade list; lmgrade selftest {name} (in {out_dir}); python -m pytest",
        soft_wrap=True,
    )

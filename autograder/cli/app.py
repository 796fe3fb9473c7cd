"""The `lmgrade` command line (spec/cli.md)."""

from __future__ import annotations

import tempfile
import traceback
from pathlib import Path

import click
from rich.console import Console
from rich.text import Text

from .. import __version__
from ..core.device import CHOICES as DEVICE_CHOICES
from ..core.device import DeviceError
from ..core.errors import HarnessFault
from ..core.selection import Selection, SelectionError, as_setting
from ..declare import catalog, torch_requirement
from ..declare.assignment import AssignmentError
from ..grading.feedback import human_bytes
from ..reports.results import GradingRun
from ..sandbox.limits import default_jobs

console = Console(highlight=False)


err_console = Console(stderr=True, highlight=False)


def _select(name: str, pairs: tuple[str, ...]) -> Selection:
    try:
        return Selection.parse(name, pairs)
    except SelectionError as exc:
        raise click.BadParameter(str(exc), param_hint="--set") from None


class UserError(click.ClickException):
    """A mistake in how lmgrade was called or where it was pointed: one line, exit status 2."""

    exit_code = 2


class _Commands(click.Group):
    """Every command: a user's mistake is one line (`UserError`); anything else is a fault of lmgrade."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException, KeyboardInterrupt):
            raise
        except AssignmentError as exc:  # a malformed assignment file or template: its author's to fix
            raise UserError(str(exc)) from None
        except HarnessFault as exc:  # described where it arose (no sandbox here, a reference that fails)
            raise click.ClickException(f"harness fault: {exc}") from None
        except Exception:
            traceback.print_exc()
            err_console.print(
                "lmgrade itself failed (not your submission or your command): please report "
                "this, with the traceback above."
            )
            ctx.exit(1)


def writable_folder(folder: Path, what: str) -> None:
    """Refuse early, in one line, a folder that is missing or cannot be written."""
    if not folder.is_dir():
        raise UserError(f"{what}: the folder {folder} does not exist")
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise UserError(f"{what}: cannot write into {folder} ({exc.strerror or exc})") from None


device_option = click.option(
    "--device",
    type=click.Choice(DEVICE_CHOICES),
    default="auto",
    show_default=True,
    help='Where the checks that assignment.toml marks device = "cuda" run: cuda, or auto when a GPU is usable. '
    "Without one they follow the assignment's [gpu] when_absent policy (CPU sizes and bounds, or listed as "
    "not counted).",
)


html_option = click.option(
    "--html",
    "html",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    metavar="PATH",
    help="Also write the feedback page here: one self-contained HTML file, each check's verdict and text, and "
    "for a failed visible check pictures of where the numbers differ (docs/feedback-page.md).",
)


def write_feedback_page(path: Path, assignment: str, run: GradingRun, title: str) -> None:
    """Write the feedback page of `run` and say where, in one line (and why it has no pictures, if so)."""
    from ..declare.plugin_manager import get_manager
    from ..reports.page import NO_MATPLOTLIB, write_page

    try:
        size = write_page(path, assignment, run, title, hook=get_manager().hook)
    except OSError as exc:
        raise UserError(f"--html: cannot write {path} ({exc.strerror or exc})") from None
    console.print(Text(f"feedback page written to {path} ({human_bytes(size)})"), soft_wrap=True)
    from ..reports.pictures import pictures_available

    if not pictures_available():
        err_console.print(Text(f"note: {NO_MATPLOTLIB}"), soft_wrap=True)


def existing(path: Path, consequence: str) -> Path:
    """Refuse, in one line, a submission path that does not exist: a typo, not a submission to grade 0."""
    if not path.exists():
        raise UserError(f"{path} does not exist: {consequence}")
    return path


def _load(selection: Selection, device: str | None = None):
    """The assignment and variant `selection` names, bound to `device` if this process grades it (which
    needs torch where the assignment imports it: refused in one line where torch is missing)."""
    try:
        assignment, variant = catalog.load(selection)
        if device is None:
            return assignment, variant
        torch_requirement.require(assignment.spec, catalog.sources()[assignment.name].distribution)
        return assignment.on(device), variant
    except (AssignmentError, DeviceError) as exc:
        raise UserError(str(exc)) from None


def _variants_help() -> str:
    """Every assignment's own variants, for --set's help."""
    try:
        specs = [catalog.load_spec(name) for name in catalog.assignment_folders()]
    except Exception:  # a broken assignment file is reported when it is used, not in help
        return "Choose an assignment variant (see `lmgrade list`)."
    choices = [
        f"{spec.name}: "
        + ", ".join(f"{v.name}=" + "|".join(as_setting(c) for c in v.choices) for v in spec.variants.values())
        for spec in specs
        if spec.variants
    ]
    if not choices:
        return "Choose an assignment variant: none of the assignments installed here has variants."
    return (
        "Choose an assignment variant (" + "; ".join(choices) + "). Give generate and grade the same one. "
        "The zip of gradescope and the bundle of student-bundle grade only the variant they were built "
        "for: a bundle's check and pytest check it with no --set, and refuse another."
    )


class _HelpWhenShown(click.Option):
    """An option whose help is worked out only when help is shown: --set's loads every assignment."""

    def __init__(self, *args, make_help, **kwargs):
        self._make_help, self._help = make_help, None
        super().__init__(*args, **kwargs)

    @property
    def help(self) -> str:
        if self._help is None:
            self._help = self._make_help()
        return self._help

    @help.setter
    def help(self, value) -> None:  # a text given (click's own, a bundle's) stands; None: worked out when shown
        self._help = value


set_option = click.option(
    "--set", "settings", multiple=True, metavar="KEY=VALUE", cls=_HelpWhenShown, make_help=_variants_help
)


def jobs_option(help_text: str):
    """--jobs N: at least 1, by default `default_jobs()`."""
    return click.option(
        "--jobs", type=click.IntRange(min=1), default=default_jobs, show_default="up to 4", help=help_text
    )


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="lmgrade")
def main() -> None:
    """Autograder of the language-modeling course: generate, grade, report."""


per_student_option = click.option(
    "--per-student",
    is_flag=True,
    help="Draw the hidden checks' inputs per student, from the course secret and the student's identity "
    '(as assignment.toml\'s hidden_inputs = "per_student" does); public checks stay the same for everyone.',
)

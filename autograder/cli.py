"""The `lmgrade` command line (spec/cli.md)."""

from __future__ import annotations

import os

# The grading process's own numeric libraries on one thread each, set before numpy loads: the sandbox's
# children keep every core busy, and BLAS threads waiting for a core beside them made a 144 x 144
# eigenvalue problem take 0.7 s instead of 18 ms (a transformer grading spent 1.4 s more of its CPU, and
# 0.9 s more of its time). A setting of the user's own stays.
for _library_threads in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_library_threads, "1")

import importlib.metadata
import json
import shutil
import sys
import tempfile
import threading
import traceback
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from . import __version__, catalog, reproduce, torch_requirement, wire
from .assignment import AssignmentError
from .bundle.public import PublicChecks, public_checks
from .device import CHOICES as DEVICE_CHOICES
from .device import DeviceError
from .errors import HarnessFault
from .expected_store import default_store
from .feedback import human_bytes, outcome_verdict
from .grade import grade_submission, servers_for
from .grading import Grader
from .hidden_inputs import HiddenInputs, hidden_inputs, identity_of_option, per_student_asked, student_identity
from .oracle import LiveReference
from .plural import counted
from .reports.terminal import describe_defences, print_report
from .results import GradingRun
from .sandbox.limits import default_jobs
from .seeds import PUBLIC_SECRET, SECRET_ENV, course_secret, public_secret_warning
from .selection import Selection, SelectionError, as_setting
from .submission import prepare

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
    from .plugin_manager import get_manager
    from .reports.page import NO_MATPLOTLIB, write_page

    try:
        size = write_page(path, assignment, run, title, hook=get_manager().hook)
    except OSError as exc:
        raise UserError(f"--html: cannot write {path} ({exc.strerror or exc})") from None
    console.print(Text(f"feedback page written to {path} ({human_bytes(size)})"), soft_wrap=True)
    from .pictures import pictures_available

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


@main.command("list")
def list_() -> None:
    """List the assignments, their files, checks and points."""
    from . import listing

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
        listing.print_assignment(console, assignment, origin)


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
    from . import templates  # the commands that write files import jinja2, the others never

    bound, variant = _load(_select(assignment, settings))
    try:
        if notebook:
            from .starter_notebook import write_starter

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
        console.print(Text(f"wrote {path}"))


per_student_option = click.option(
    "--per-student",
    is_flag=True,
    help="Draw the hidden checks' inputs per student, from the course secret and the student's identity "
    '(as assignment.toml\'s hidden_inputs = "per_student" does); public checks stay the same for everyone.',
)


def _grade_hidden_inputs(assignment, submission: Path, per_student: bool, student: str | None) -> HiddenInputs | None:
    """`grade`'s hidden inputs: per student where --per-student, --student or assignment.toml ask, for the
    students --student names, else those a submission_metadata.json beside the submission names."""
    if not per_student_asked(assignment.spec.hidden_inputs, per_student or student is not None):
        return None
    from .gradescope.metadata import beside, read_submitters

    identity = identity_of_option(student) if student else student_identity(read_submitters(beside(submission)))
    return hidden_inputs(course_secret(), identity, True)


def _warn_of_public_secret(what: str, remedy: str) -> None:
    """Say so on stderr, in one line, where a grading draws its inputs from the public default secret."""
    warning = public_secret_warning(what, remedy)
    if warning:
        err_console.print(Text(warning, style="bold red"), soft_wrap=True)


def run_grading(
    assignment,
    variant,
    submission: Path,
    *,
    results: Path | None,
    jobs: int,
    visible_only: bool = False,
    title: str | None = None,
    grader: Grader | None = None,
    prestarted=None,
    hidden: HiddenInputs | None = None,
    report: bool = True,
) -> GradingRun:
    """Grade one submission with a progress bar; print the report (`report`: else its note alone)."""
    running: list[str] = []  # the checks under way, named beside the bar (some take a while)
    lock = threading.Lock()  # checks start and finish in the grader's threads

    def started(check) -> None:
        with lock:
            running.append(check.name)
            progress.update(task, description=f"grading {assignment.name}: {', '.join(running)}")

    def finished(verdict) -> None:
        with lock:
            running.remove(verdict.check.name)
            progress.update(task, advance=1, description=f"grading {assignment.name}: {', '.join(running)}")

    with _progress() as progress:
        task = progress.add_task(f"grading {assignment.name}", total=None)
        run = grade_submission(
            assignment,
            variant,
            submission,
            results=results,
            jobs=jobs,
            visible_only=visible_only,
            grader=grader,
            prestarted=prestarted,
            hidden=hidden,
            on_start=lambda n: progress.update(task, total=n),
            on_check_start=started,
            on_verdict=finished,
        )
    if run.note:
        console.print(Text(run.note))
    if not report:
        return run
    # The folder graded, or what was given where that was a .zip (unpacked into a folder that is gone now).
    shown = run.submission if run.submission.resolve().is_relative_to(Path(submission).resolve()) else submission
    print_report(console, title or f"{assignment.name}: {shown}", run.verdicts)
    console.print(f"[dim]sandbox: {describe_defences(run.defences)}[/dim]")
    return run


def _progress() -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
    )


@main.command()
@click.argument("assignment")
# A path that does not exist is a usage error; anything there (an empty folder, a .zip, a stray file) is graded,
# with results.json saying why it scores what it does.
@click.argument("submission_dir", type=click.Path(path_type=Path))
@click.option(
    "--results",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("results.json"),
    show_default=True,
    help="Where to write Gradescope's results.json.",
)
@set_option
@device_option
@jobs_option("Checks run in parallel.")
@per_student_option
@click.option(
    "--student",
    metavar="EMAIL",
    help="Draw the hidden checks' inputs for this student (a group: its emails, comma-separated), as Gradescope "
    "and regrade do with --per-student. Without it, a submission_metadata.json beside the submission names them.",
)
@html_option
def grade(
    assignment: str,
    submission_dir: Path,
    results: Path,
    settings: tuple[str, ...],
    device: str,
    jobs: int,
    per_student: bool,
    student: str | None,
    html: Path | None,
) -> None:
    """Grade a submission folder (or a .zip, or a notebook) against the reference; write results.json."""
    existing(submission_dir, "nothing was graded, and no results file written")
    writable_folder(results.parent if str(results.parent) else Path("."), "--results")
    if html is not None:
        writable_folder(html.parent if str(html.parent) else Path("."), "--html")
        from .pictures import preload

        preload()  # matplotlib imported while the checks run
    _warn_of_public_secret("this grading", "grade again for a real course")
    with servers_for(assignment, jobs) as prestarted:
        bound, variant = _load(_select(assignment, settings), device)
        hidden = _grade_hidden_inputs(bound, submission_dir, per_student, student)
        from .author_errors import stale_mistakes

        for dropped in stale_mistakes(bound):  # never named while so: said, not dropped in silence
            err_console.print(Text(f"note: {dropped}; it is not named in this grading"), soft_wrap=True)
        run = run_grading(
            bound, variant, submission_dir, results=results, jobs=jobs, prestarted=prestarted, hidden=hidden
        )
    if html is not None:
        write_feedback_page(html, bound.name, run, f"{bound.name}: {submission_dir}")
    console.print(f"results written to {results}")


@main.command()
@click.argument("assignment")
@click.argument("submission_dir", required=False, default=".", type=click.Path(path_type=Path))
@set_option
@click.option(
    "--case",
    "case_spec",
    metavar="CHECK:N",
    help="Show case N of a public check instead of running every check: its arguments, what was "
    "expected, what your code returned, the entries that differ and the known mistake it matches.",
)
@click.option(
    "--full",
    is_flag=True,
    help="With --case: every value in full and every differing entry (by default, a screen or two).",
)
@click.option(
    "--save-args",
    "save_args",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="With --case: write the case's arguments to FILE, for the printed snippet to rerun it "
    "(nothing is written without it).",
)
@html_option
def check(
    assignment: str,
    submission_dir: Path,
    settings: tuple[str, ...],
    case_spec: str | None,
    full: bool,
    save_args: Path | None,
    html: Path | None,
) -> None:
    """Run the public checks on your own work (no results.json).

    With a student bundle installed, its recorded checks; in the course's own
    checkout, the same public cases against the reference.
    """
    if (full or save_args) and not case_spec:
        raise UserError(f"{'--full' if full else '--save-args'} goes with --case CHECK:N")
    existing(submission_dir, "no folder to check")
    if html is not None:
        if case_spec:
            raise UserError("--html writes the page of every public check: it does not go with --case")
        writable_folder(html.parent if str(html.parent) else Path("."), "--html")
        from .pictures import preload

        preload()  # matplotlib imported while the checks run
    selection = _select(assignment, settings)
    if case_spec:
        show_case(
            public_checks(selection), submission_dir, case_spec, full=full, save_args=save_args, selection=selection
        )
        return
    with servers_for(assignment, default_jobs()) as prestarted:
        public = public_checks(selection)
        with public.grader(jobs=default_jobs(), prestarted=prestarted) as grader:
            run = run_grading(
                public.assignment,
                public.variant,
                submission_dir,
                results=None,
                jobs=default_jobs(),
                visible_only=True,
                grader=grader,
            )
    if public.not_run_here():
        console.print(Text(public.not_run_here()))
    if html is not None:
        write_feedback_page(html, public.assignment.name, run, f"{public.assignment.name}: {submission_dir}")
    if not all(v.passed for v in run.verdicts):  # a script or a pre-commit hook stops on a failed check
        raise click.exceptions.Exit(1)


def show_case(
    public: PublicChecks,
    submission: Path,
    spec: str,
    *,
    full: bool = False,
    save_args: Path | None = None,
    selection: Selection | None = None,
) -> None:
    """`check --case CHECK:N`: one public case, what the submission made of it, and how to rerun it."""
    try:
        name, number = reproduce.parse(spec)
        why = {c["name"]: c["why"] for c in public.left_out}
        if name in why:
            raise reproduce.CaseNotShown(
                f"--case: {name} is not a public check here ({why[name]}): its cases are not shown"
            )
        check_ = reproduce.find(public.assignment.checks, name)
    except reproduce.CaseNotShown as exc:
        raise UserError(str(exc)) from None
    with public.grader(jobs=1) as grader:
        cases, expected = grader.cases_and_expected(check_)
        if number > len(cases):
            raise UserError(f"--case: {name} has {counted(len(cases), 'case')}")
        case, wanted = cases[number - 1], expected[number - 1]
        tol = check_.tolerance_of(case)
        click.echo(f"{name}, case {number} of {len(cases)}: {case.label}\n")
        click.echo("arguments:\n" + reproduce.show(case.args, full=full, tol=tol))
        if save_args is not None:
            try:
                save_args.write_bytes(wire.encode(case.args))
            except OSError as exc:
                raise UserError(f"--save-args: cannot write {save_args} ({exc.strerror or exc})") from None
            click.echo(f"\n(written to {save_args}) to run it yourself, in your submission's folder:\n")
            click.echo(reproduce.snippet(check_, save_args.resolve(), case.args))
        else:
            folder = [] if submission == Path(".") else [str(submission)]
            again = " ".join(
                [
                    "lmgrade",
                    "check",
                    public.assignment.name,
                    *folder,
                    *(selection.options() if selection else []),
                    "--case",
                    spec,
                    "--save-args",
                    f"case-{name}-{number}.wire",
                ]
            )
            click.echo(f"\n(to rerun it in your own Python: {again}, then run the snippet it prints)")
        # A .zip or a notebook is run as the files it holds, as grading runs it.
        with tempfile.TemporaryDirectory(prefix="lmgrade-upload-") as scratch:
            folder, said = prepare(Path(submission), public.assignment.spec.files, Path(scratch))
            for line in said:
                click.echo(f"\n{line}")
            ran = grader.run_case(check_, number, folder)
    outcome, mistake = ran.outcome, ran.mistake
    click.echo("\nexpected:\n" + reproduce.show(wanted, full=full, tol=tol))
    if outcome.kind != "ok":
        verdict = outcome_verdict(check_, case, wanted, outcome, True)
        click.echo(f"\nyour code: {verdict.message}")
        return
    click.echo("\nyour code returned:\n" + reproduce.show(outcome.value, full=full, tol=tol))
    lines = reproduce.differences(wanted, outcome.value, tol)
    verdict = check_.verdict(case, wanted, outcome.value, reveal=True)
    if verdict.passed:
        click.echo("\nthis case passes.")
        return
    limit = reproduce.MAX_LISTED if full else reproduce.SHORT_LISTED
    shown = lines[:limit] or [verdict.message]
    more = len(lines) - len(shown) if lines else 0
    click.echo(
        f"\nthis case fails ({counted(len(lines) or 1, 'differing entry', 'differing entries')}, tolerance {tol}):\n"
        + "\n".join(shown)
        + (f"\n... and {more} more" + ("" if full else " (--full lists them)") if more > 0 else "")
    )
    if mistake is not None:
        click.echo(f"\nThis answer matches a known mistake: {mistake.explanation}.")


@main.command()
@click.argument("assignment")
@click.option(
    "-o",
    "--output",
    "out_path",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Where to write the zip to upload to Gradescope.",
)
@click.option(
    "--try",
    "try_submission",
    type=click.Path(path_type=Path),
    metavar="SUBMISSION",
    help="Then install the zip in a temporary folder laid out as Gradescope's /autograder and grade SUBMISSION "
    "(a folder, .zip, notebook or .py) with its run_autograder; print the results (docs/gradescope-try.md).",
)
@set_option
@per_student_option
def gradescope(
    assignment: str, out_path: Path, try_submission: Path | None, settings: tuple[str, ...], per_student: bool
) -> None:
    """Build the Gradescope autograder zip of an assignment and variant.

    The course secret comes from LMGRADE_SECRET; Gradescope's timeout, when
    raised above its default of 600 s, from LMGRADE_GRADESCOPE_TIMEOUT.
    """
    from .gradescope.build import build_zip
    from .gradescope.config import ZipError, timeout_advice

    if try_submission is not None:
        existing(try_submission, "no zip was built, and nothing tried")
    selection = _select(assignment, settings)
    # Bound here: the zip records its expected values on this machine.
    bound, variant = _load(selection, "auto")
    secret = course_secret()
    public = secret == PUBLIC_SECRET
    if public:
        err_console.print(
            f"[bold red]WARNING: {SECRET_ENV} is not set: this zip uses the public default secret, "
            "which every student has, so the hidden inputs can be computed in advance. Set "
            f"{SECRET_ENV} to the course's own secret and build again for a real course.[/bold red]"
        )
    try:
        built = build_zip(
            bound,
            variant,
            selection,
            out_path,
            secret=secret,
            public_secret=public,
            per_student=per_student_asked(bound.spec.hidden_inputs, per_student),
        )
    except ZipError as exc:
        raise UserError(str(exc)) from None
    config = built.config
    console.print(
        Text(
            f"wrote {built.path} ({built.size / 1024:.0f} KiB): {config.title}, "
            f"{counted(len(config.checks), 'check')}, {counted(float(sum(c.points for c in config.checks)), 'point')}, "
            f"lmgrade {config.lmgrade_version}, torch: {built.torch or 'not needed'}"
        )
    )
    advice = timeout_advice(built.worst_case_s, config.time_budget_s)
    if advice:
        err_console.print(Text(f"note: {advice}", style="yellow"))
    if try_submission is not None:
        from .gradescope.trial import print_tried, try_zip

        with err_console.status(f"trying the zip on {try_submission}: its setup.sh, then its run_autograder"):
            tried = try_zip(built.path, try_submission)
        print_tried(console, tried)


@main.command("student-bundle")
@click.argument("assignment")
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(path_type=Path),
    metavar="DIR_OR_ZIP",
    help="A new folder, or a file ending in .zip, to write the bundle to.",
)
@set_option
def student_bundle(assignment: str, output: Path, settings: tuple[str, ...]) -> None:
    """Write the students' bundle: starter files, handout, and the public checks to run locally."""
    # Recorded on the CPU, which every student has.
    from .bundle.build import build_bundle

    bound, variant = _load(_select(assignment, settings), "cpu")
    try:
        with err_console.status(f"recording the public checks of {assignment} from the reference"):
            bundle = build_bundle(bound, variant, output)
    except FileExistsError as exc:
        raise UserError(str(exc)) from None
    except OSError as exc:
        raise UserError(f"cannot write the bundle to {output}: {exc.strerror or exc}") from None
    console.print(
        f"wrote {bundle.path} ({human_bytes(bundle.size_bytes)}): {counted(len(bundle.files), 'file')}, "
        f"students install it with: python -m pip install wheels/{bundle.wheel}"
    )


@main.command()
@click.option(
    "-o",
    "--output",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("lmgrade-demo"),
    show_default=True,
    help="Folder for the demo's files and results.",
)
@click.option(
    "--assignment",
    "only",
    multiple=True,
    metavar="NAME",
    help="Demonstrate only this assignment (repeatable; default: every one).",
)
@click.option(
    "--verbose",
    is_flag=True,
    help="Print every file written and each grading's whole report (by default, a few lines per grading).",
)
def demo(out_dir: Path, only: tuple[str, ...], verbose: bool) -> None:
    """The whole pipeline on built-in data: generate, grade three submissions per assignment, report."""
    names = list(only) or list(catalog.assignment_folders())
    if not only:  # every assignment this environment grades: those that need torch where it is installed
        for name, missing in torch_requirement.missing_for(names).items():
            console.print(Text(f"not demonstrated: {missing}"))
            names.remove(name)
    from . import templates
    from .flawed import write_flawed

    totals = {}
    for name in names:
        bound, variant = _load(Selection(name), "auto")
        spec = bound.spec
        console.rule(f"{name}: generate the starter files" if verbose else name)
        starter = out_dir / name / "starter"
        try:
            written = templates.generate(bound, variant, starter)
        except templates.WouldOverwrite:
            raise UserError(f"{out_dir} holds an earlier demo: remove it, or give another folder with -o") from None
        for path in written if verbose else ():
            console.print(f"wrote {path}")
        if not verbose:
            console.print(Text(f"starter files: {counted(len(written), 'file')} in {starter}"), soft_wrap=True)
        reference = out_dir / name / "submissions" / "reference"
        reference.mkdir(parents=True, exist_ok=True)
        for filename in spec.files:
            shutil.copyfile(spec.reference_folder() / filename, reference / filename)
        shown = [bug for bug in catalog.bugs(name).values() if bug.demo]
        flawed = write_flawed(spec.reference_folder(), spec.files, out_dir / name / "submissions" / "flawed", shown)
        # One grader for the three: the expected values are computed once, the sandbox started once.
        with Grader(
            bound,
            variant,
            LiveReference(spec),
            secret=course_secret(),
            jobs=default_jobs(),
            protected=[(out_dir / name / "results").resolve()],
            store=default_store(),
        ) as grader:
            for label, folder in (("starter", starter), ("reference", reference), ("flawed", flawed)):
                if verbose:
                    console.rule(f"{name}: grade the {label} submission")
                results = out_dir / name / "results" / f"{label}.json"
                run = run_grading(
                    bound,
                    variant,
                    folder,
                    results=results,
                    jobs=default_jobs(),
                    title=f"{name}: {label} submission",
                    grader=grader,
                    report=verbose,
                )
                if not verbose:
                    _print_brief(label, run, shown if label == "flawed" else [])
                if label == "flawed":  # one feedback page per assignment: the flawed submission's
                    write_feedback_page(
                        out_dir / name / "results" / "flawed.html", name, run, f"{name}: flawed submission"
                    )
                totals[(name, label)] = (run.score, run.max_score, results)
    if not verbose:
        console.print(f"each grading's whole report: lmgrade demo --verbose, or the results.json files in {out_dir}")
    console.rule("summary")
    for (name, label), (score, maximum, results) in totals.items():
        console.print(f"{name:>12} {label:>10}: {score:.4g} / {maximum:g}   ({results})")


def _print_brief(label: str, run: GradingRun, bugs: list) -> None:
    """A grading of the demo in a few lines: its score, and for the flawed submission its bugs and the checks
    they cost, with the known mistake each check's feedback named."""
    console.print(Text(f"{label}: {run.score:.4g} / {run.max_score:g}"), soft_wrap=True)
    for bug in bugs:
        console.print(Text(f"  bug made: {bug.what}"), overflow="ellipsis", no_wrap=True)  # one line each
    for v in run.verdicts if bugs else ():
        if not v.passed:
            named = f": known mistake, {v.mistake.explanation}" if v.mistake else ""
            line = f"  {v.check.name} {v.score:.4g}/{v.max_score:g}{named}"
            console.print(Text(line), overflow="ellipsis", no_wrap=True)


@main.command("regrade")
@click.argument("assignment")
@click.argument("submissions_root", type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output",
    "csv_path",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The scores CSV to write; results/ (one results.json per submission) and report.html go beside it.",
)
@set_option
@device_option
@jobs_option("Sandboxed runs in parallel, here (a Dask worker runs as many as it has threads).")
@click.option(
    "--executor",
    "executor_spec",
    default="local",
    show_default=True,
    metavar="local|dask://HOST:PORT|SCHEDULER_FILE",
    help="Where to grade: here, or on a Dask cluster.",
)
@click.option("--force", is_flag=True, help="Grade every submission again, even those unchanged since the last run.")
@per_student_option
def regrade_command(
    assignment: str,
    submissions_root: Path,
    csv_path: Path,
    settings: tuple[str, ...],
    device: str,
    jobs: int,
    executor_spec: str,
    force: bool,
    per_student: bool,
) -> None:
    """Grade every sub-folder of SUBMISSIONS_ROOT: a scores CSV, results and a class report.

    Understands Gradescope's "Export Submissions" folder (its
    submission_metadata.yml names the students). Resumes: a submission
    already graded into the same place is graded again only if its files
    or the grading changed, or with --force.
    """
    from .regrade import ExecutorError, LayoutError, discover, make_executor, output_paths, parse_executor, regrade
    from .regrade.failures import remedy
    from .regrade.progress import RegradeProgress
    from .regrade.run import OutputError

    if not existing(submissions_root, "no submissions to regrade (SUBMISSIONS_ROOT)").is_dir():
        raise UserError(f"SUBMISSIONS_ROOT {submissions_root} is not a folder")
    results_dir, _ = output_paths(csv_path)
    try:
        connection = parse_executor(executor_spec)
        layout = discover(submissions_root, exclude=(results_dir,))
    except (ExecutorError, LayoutError) as exc:
        raise UserError(str(exc)) from None
    # Graded here, bound here; on a Dask cluster each worker binds `device` on its own machine.
    bound, variant = _load(_select(assignment, settings), device if connection is None else None)
    try:
        csv_path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"-o {csv_path}: cannot make its folder ({exc.strerror or exc})") from None
    writable_folder(csv_path.parent, "-o")
    _warn_of_public_secret("this regrade", "regrade for a real course")
    secret = course_secret()
    per_student = per_student_asked(bound.spec.hidden_inputs, per_student)
    # Student code must not read the class's other submissions or results.
    protected = [layout.root.resolve(), results_dir.resolve()]
    for note in layout.notes:
        console.print(note, soft_wrap=True)
    try:
        with RegradeProgress(err_console, f"regrading {assignment}") as progress:
            summary = regrade(
                bound,
                variant,
                layout,
                csv_path,
                secret=secret,
                force=force,
                listener=progress,
                device=device,
                per_student=per_student,
                make_executor=lambda: make_executor(
                    connection,
                    bound,
                    variant,
                    jobs=jobs,
                    secret=secret,
                    protected=protected,
                    device=device,
                    per_student=per_student,
                ),
            )
    except ExecutorError as exc:
        raise UserError(str(exc)) from None
    except OutputError as exc:  # a full disk: every grade saved so far is kept
        raise click.ClickException(str(exc)) from None
    console.print(
        f"{counted(len(summary.rows), 'submission')}: {summary.graded} graded, {summary.resumed} unchanged since "
        f"the last run, {len(summary.failures)} failed"
    )
    console.print(f"scores: {summary.csv}\nresults: {summary.results}\nreport: {summary.report}")
    console.print(
        f"gradebooks (Gradescope, Canvas): {', '.join(str(path) for path in summary.gradebooks)}", soft_wrap=True
    )
    for note in summary.notes:
        console.print(note, soft_wrap=True)
    if summary.failures:
        for key, error in summary.failures:
            err_console.print(Text(f"  {key}: {error}\n    to do: {remedy(error)}"), soft_wrap=True)
        raise click.ClickException(
            f"{counted(len(summary.failures), 'submission')} could not be graded (listed above, with what to do; "
            "scored 0 until graded, every other row and the report are written): fix each cause and run the same "
            "command again, which grades only these"
        )


@main.command()
@click.argument("assignment")
@set_option
@jobs_option("Sandboxed runs in parallel.")
@click.option(
    "--max",
    "max_mutants",
    type=click.IntRange(min=1),
    default=None,
    help="Grade a seeded sample of this many mutants instead of all of them.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the --max sample.")
@click.option(
    "-o",
    "--output",
    "report_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the whole report as JSON here.",
)
def mutants(
    assignment: str, settings: tuple[str, ...], jobs: int, max_mutants: int | None, seed: int, report_path: Path | None
) -> None:
    """Grade every single-point mutant of the reference: what do the checks miss?

    Without --set, every variant is graded, each with its own score: a
    mutant counts as killed in a variant only where that variant's grading
    kills it.
    """
    from .mutants import run_mutants

    chosen = [_select(assignment, settings)] if settings else catalog.variants(assignment)
    reports = {}
    for selection in chosen:
        bound, variant = _load(selection, "auto")
        name = Selection.of(assignment, variant).describe() or "the only variant"
        with _progress() as progress:
            task = progress.add_task(f"mutants of {assignment} ({name})", total=None)
            report = run_mutants(
                bound,
                variant,
                jobs=jobs,
                max_mutants=max_mutants,
                seed=seed,
                on_start=lambda n, task=task: progress.update(task, total=n),
                on_result=lambda r, task=task: progress.advance(task),
            )
        if len(chosen) > 1:
            console.print(Text(f"\nvariant {name}", style="bold"))
        print_mutants_report(report)
        reports[name] = report
    if report_path:
        report_path.parent.mkdir(parents=True, exist_ok=True)
        data = (
            next(iter(reports.values())).as_dict()
            if len(reports) == 1
            else {"assignment": assignment, "variants": {k: r.as_dict() for k, r in reports.items()}}
        )
        report_path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        console.print(f"report written to {report_path}")
    if any(report.survivors for report in reports.values()):  # news: a gate for CI (docs/commands.md)
        raise click.exceptions.Exit(1)


def print_mutants_report(report) -> None:
    def table(title: str, tallies: dict) -> Table:
        t = Table(title=Text(title), title_justify="left")
        t.add_column("", no_wrap=True, overflow="fold")  # a file, or a file and a function: never cut
        for column in ("mutants", "equivalent", "killed", "survived", "score", "killed with a named mistake"):
            t.add_column(column, justify="right", overflow="fold")
        for key, tally in tallies.items():
            named = f"{tally.named}/{tally.killed}" if tally.killed else "-"
            t.add_row(
                Text(key),
                str(tally.total),
                str(tally.equivalent),
                str(tally.killed),
                str(tally.counted - tally.killed),
                f"{100 * tally.score:.1f}%",
                named,
            )
        return t

    from .reports.tables import print_whole

    sampled = f" (a sample of {len(report.results)} of {report.made})" if len(report.results) < report.made else ""
    print_whole(
        console, table(f"{report.assignment}: mutation score by file{sampled}", report.tally(lambda r: r.mutant.file))
    )
    print_whole(
        console,
        table("by function", dict(sorted(report.tally(lambda r: f"{r.mutant.file} {r.mutant.function}").items()))),
    )
    overall = report.tally().get("all")
    if overall:
        console.print(
            f"mutation score: {overall.killed} killed of {overall.counted} "
            f"({overall.total} made, {overall.equivalent} equivalent) = {100 * overall.score:.1f}%"
        )
    if report.survivors:
        console.print(
            Text(f"\n{counted(len(report.survivors), 'survivor')}, not on the equivalent list:", style="bold")
        )
        for result in report.survivors:
            console.print(Text("  " + result.mutant.diff()), soft_wrap=True)
        from .mutants import equivalent_entry

        console.print(
            Text(
                "\nwhere a survivor changes nothing the contract lets a check see, paste its entry into the "
                "equivalent-mutants file and write why:\n",
                style="bold",
            ),
            soft_wrap=True,
        )
        for result in report.survivors:
            console.print(Text(equivalent_entry(result.mutant)), soft_wrap=True)  # whole lines: never wrapped
    if report.killed_but_listed:
        console.print(Text("\nlisted as equivalent, yet killed (remove them from the list):", style="bold"))
        for result in report.killed_but_listed:
            console.print(Text("  " + result.mutant.diff()))
    if report.unused_equivalents:
        console.print(Text("\non the equivalent list, but no such mutant any more:", style="bold"))
        for entry in report.unused_equivalents:
            console.print(Text("  " + entry))
    elsewhere = report.named_elsewhere()
    if elsewhere:
        console.print(
            Text("\nknown mistakes named on mutants that change none of their lines (named falsely):", style="bold")
        )
        for name, diffs in elsewhere.items():
            console.print(Text(f"  {name}: {len(diffs)}, e.g. {diffs[0]}"), soft_wrap=True)


@main.command("selftest")
@click.argument("assignment")
@set_option
@jobs_option("Gradings in flight, and sandboxed runs, at once.")
@click.option(
    "--submissions",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="A folder whose every sub-folder is a correct submission that must get full marks "
    "[default: tests/submissions/ASSIGNMENT here, where it exists].",
)
def selftest_command(assignment: str, settings: tuple[str, ...], jobs: int, submissions: Path | None) -> None:
    """Prove the assignment's graders: reference full, stub and submissions that do no work 0, each
    catalogue bug losing on its own checks, correct submissions full. One line per proof; exit 1 on the
    first that fails."""
    from .author_errors import AuthorError
    from .selftest import selftest

    _load(_select(assignment, settings))  # an unknown assignment or variant: one line, exit 2
    if submissions is None:
        submissions = Path("tests") / "submissions" / assignment
    elif not submissions.is_dir():
        raise UserError(f"--submissions: the folder {submissions} does not exist")
    try:
        made = selftest(
            assignment,
            settings,
            submissions=submissions,
            jobs=jobs,
            on_proof=lambda proof: console.print(Text(proof.line()), soft_wrap=True),
        )
    except AuthorError as exc:  # the assignment's declarations: its author's to fix, not lmgrade's
        for problem in exc.problems:
            err_console.print(Text(problem), soft_wrap=True)
        err_console.print(
            Text(f"{assignment}: no proof made: the declarations above are the assignment's to fix"), soft_wrap=True
        )
        raise click.exceptions.Exit(1) from None
    if made and not made[-1].passed:
        raise click.exceptions.Exit(1)
    console.print(f"{assignment}: {len(made)} proofs hold")


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
    from .scaffold import ScaffoldError, check_name, words, write_package

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
    console.print(
        f"wrote {len(written)} files of the assignment {name} (package {package}) into {out_dir}", soft_wrap=True
    )
    console.print(
        f"next: pip install -e {out_dir}; lmgrade list; lmgrade selftest {name} (in {out_dir}); python -m pytest",
        soft_wrap=True,
    )


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

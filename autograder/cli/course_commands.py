"""`lmgrade gradescope`, `student-bundle` and `regrade`: what a course hands out and grades a class with."""

from __future__ import annotations

from pathlib import Path

import click
from rich.text import Text

from ..core.hidden_inputs import per_student_asked
from ..core.plural import counted
from ..core.seeds import PUBLIC_SECRET, SECRET_ENV, course_secret
from ..grading.feedback import human_bytes
from . import app
from .app import (
    UserError,
    _load,
    _select,
    device_option,
    existing,
    jobs_option,
    main,
    per_student_option,
    set_option,
    writable_folder,
)
from .grading_commands import _warn_of_public_secret


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
    from ..course.gradescope.build import build_zip
    from ..course.gradescope.config import ZipError, timeout_advice

    if try_submission is not None:
        existing(try_submission, "no zip was built, and nothing tried")
    selection = _select(assignment, settings)
    # Bound here: the zip records its expected values on this machine.
    bound, variant = _load(selection, "auto")
    secret = course_secret()
    public = secret == PUBLIC_SECRET
    if public:
        app.err_console.print(
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
    app.console.print(
        Text(
            f"wrote {built.path} ({built.size / 1024:.0f} KiB): {config.title}, "
            f"{counted(len(config.checks), 'check')}, {counted(float(sum(c.points for c in config.checks)), 'point')}, "
            f"lmgrade {config.lmgrade_version}, torch: {built.torch or 'not needed'}"
        )
    )
    advice = timeout_advice(built.worst_case_s, config.time_budget_s)
    if advice:
        app.err_console.print(Text(f"note: {advice}", style="yellow"))
    if try_submission is not None:
        from ..course.gradescope.trial import print_tried, try_zip

        with app.err_console.status(f"trying the zip on {try_submission}: its setup.sh, then its run_autograder"):
            tried = try_zip(built.path, try_submission)
        print_tried(app.console, tried)


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
    from ..course.bundle.build import build_bundle

    bound, variant = _load(_select(assignment, settings), "cpu")
    try:
        with app.err_console.status(f"recording the public checks of {assignment} from the reference"):
            bundle = build_bundle(bound, variant, output)
    except FileExistsError as exc:
        raise UserError(str(exc)) from None
    except OSError as exc:
        raise UserError(f"cannot write the bundle to {output}: {exc.strerror or exc}") from None
    app.console.print(
        f"wrote {bundle.path} ({human_bytes(bundle.size_bytes)}): {counted(len(bundle.files), 'file')}, "
        f"students install it with: python -m pip install wheels/{bundle.wheel}"
    )


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
    from ..course.regrade import (
        ExecutorError,
        LayoutError,
        discover,
        make_executor,
        output_paths,
        parse_executor,
        regrade,
    )
    from ..course.regrade.failures import remedy
    from ..course.regrade.progress import RegradeProgress
    from ..course.regrade.run import OutputError

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
        app.console.print(note, soft_wrap=True)
    try:
        with RegradeProgress(app.err_console, f"regrading {assignment}") as progress:
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
    app.console.print(
        f"{counted(len(summary.rows), 'submission')}: {summary.graded} graded, {summary.resumed} unchanged since "
        f"the last run, {len(summary.failures)} failed"
    )
    app.console.print(f"scores: {summary.csv}\nresults: {summary.results}\nreport: {summary.report}")
    app.console.print(
        f"gradebooks (Gradescope, Canvas): {', '.join(str(path) for path in summary.gradebooks)}", soft_wrap=True
    )
    for note in summary.notes:
        app.console.print(note, soft_wrap=True)
    if summary.failures:
        for key, error in summary.failures:
            app.err_console.print(Text(f"  {key}: {error}\n    to do: {remedy(error)}"), soft_wrap=True)
        raise click.ClickException(
            f"{counted(len(summary.failures), 'submission')} could not be graded (listed above, with what to do; "
            "scored 0 until graded, every other row and the report are written): fix each cause and run the same "
            "command again, which grades only these"
        )

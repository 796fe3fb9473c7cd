"""`lmgrade grade` and `check` (with --case): one submission graded, here or in the sandbox."""

from __future__ import annotations

import tempfile
import threading
from pathlib import Path

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from ..boundary import wire
from ..core.hidden_inputs import HiddenInputs, hidden_inputs, identity_of_option, per_student_asked, student_identity
from ..core.plural import counted
from ..core.seeds import course_secret, public_secret_warning
from ..core.selection import Selection
from ..course.bundle.public import PublicChecks, public_checks
from ..grading import reproduce
from ..grading.feedback import outcome_verdict
from ..grading.grader import Grader
from ..grading.submission_grading import grade_submission, servers_for
from ..reports.results import GradingRun
from ..reports.terminal import describe_defences, print_report
from ..sandbox.limits import default_jobs
from ..submissions.submitted_files import prepare
from . import app
from .app import (
    UserError,
    _load,
    _select,
    device_option,
    existing,
    html_option,
    jobs_option,
    main,
    per_student_option,
    set_option,
    writable_folder,
    write_feedback_page,
)


def _grade_hidden_inputs(assignment, submission: Path, per_student: bool, student: str | None) -> HiddenInputs | None:
    """`grade`'s hidden inputs: per student where --per-student, --student or assignment.toml ask, for the
    students --student names, else those a submission_metadata.json beside the submission names."""
    if not per_student_asked(assignment.spec.hidden_inputs, per_student or student is not None):
        return None
    from ..course.gradescope.metadata import beside, read_submitters

    identity = identity_of_option(student) if student else student_identity(read_submitters(beside(submission)))
    return hidden_inputs(course_secret(), identity, True)


def _warn_of_public_secret(what: str, remedy: str) -> None:
    """Say so on stderr, in one line, where a grading draws its inputs from the public default secret."""
    warning = public_secret_warning(what, remedy)
    if warning:
        app.err_console.print(Text(warning, style="bold red"), soft_wrap=True)


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
        app.console.print(Text(run.note))
    if not report:
        return run
    # The folder graded, or what was given where that was a .zip (unpacked into a folder that is gone now).
    shown = run.submission if run.submission.resolve().is_relative_to(Path(submission).resolve()) else submission
    print_report(app.console, title or f"{assignment.name}: {shown}", run.verdicts)
    app.console.print(f"[dim]sandbox: {describe_defences(run.defences)}[/dim]")
    return run


def _progress() -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=app.err_console,
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
        from ..reports.pictures import preload

        preload()  # matplotlib imported while the checks run
    _warn_of_public_secret("this grading", "grade again for a real course")
    with servers_for(assignment, jobs) as prestarted:
        bound, variant = _load(_select(assignment, settings), device)
        hidden = _grade_hidden_inputs(bound, submission_dir, per_student, student)
        from ..prove.author_errors import stale_mistakes

        for dropped in stale_mistakes(bound):  # never named while so: said, not dropped in silence
            app.err_console.print(Text(f"note: {dropped}; it is not named in this grading"), soft_wrap=True)
        run = run_grading(
            bound, variant, submission_dir, results=results, jobs=jobs, prestarted=prestarted, hidden=hidden
        )
    if html is not None:
        write_feedback_page(html, bound.name, run, f"{bound.name}: {submission_dir}")
    app.console.print(f"results written to {results}")


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
        from ..reports.pictures import preload

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
        app.console.print(Text(public.not_run_here()))
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

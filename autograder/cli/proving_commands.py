"""`lmgrade demo`, `mutants` and `selftest`: an assignment's graders proved on flawed submissions, mutants and
its own declarations.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import click
from rich.table import Table
from rich.text import Text

from ..core.plural import counted
from ..core.seeds import course_secret
from ..core.selection import Selection
from ..declare import catalog, torch_requirement
from ..grading.expected_store import default_store
from ..grading.grader import Grader
from ..grading.oracle import LiveReference
from ..reports.results import GradingRun
from ..sandbox.limits import default_jobs
from . import app
from .app import UserError, _load, _select, jobs_option, main, set_option, write_feedback_page
from .grading_commands import _progress, run_grading


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
            app.console.print(Text(f"not demonstrated: {missing}"))
            names.remove(name)
    from ..declare import templates
    from ..declare.flawed import write_flawed

    totals = {}
    for name in names:
        bound, variant = _load(Selection(name), "auto")
        spec = bound.spec
        app.console.rule(f"{name}: generate the starter files" if verbose else name)
        starter = out_dir / name / "starter"
        try:
            written = templates.generate(bound, variant, starter)
        except templates.WouldOverwrite:
            raise UserError(f"{out_dir} holds an earlier demo: remove it, or give another folder with -o") from None
        for path in written if verbose else ():
            app.console.print(f"wrote {path}")
        if not verbose:
            app.console.print(Text(f"starter files: {counted(len(written), 'file')} in {starter}"), soft_wrap=True)
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
                    app.console.rule(f"{name}: grade the {label} submission")
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
        app.console.print(
            f"each grading's whole report: lmgrade demo --verbose, or the results.json files in {out_dir}"
        )
    app.console.rule("summary")
    for (name, label), (score, maximum, results) in totals.items():
        app.console.print(f"{name:>12} {label:>10}: {score:.4g} / {maximum:g}   ({results})")


def _print_brief(label: str, run: GradingRun, bugs: list) -> None:
    """A grading of the demo in a few lines: its score, and for the flawed submission its bugs and the checks
    they cost, with the known mistake each check's feedback named."""
    app.console.print(Text(f"{label}: {run.score:.4g} / {run.max_score:g}"), soft_wrap=True)
    for bug in bugs:
        app.console.print(Text(f"  bug made: {bug.what}"), overflow="ellipsis", no_wrap=True)  # one line each
    for v in run.verdicts if bugs else ():
        if not v.passed:
            named = f": known mistake, {v.mistake.explanation}" if v.mistake else ""
            line = f"  {v.check.name} {v.score:.4g}/{v.max_score:g}{named}"
            app.console.print(Text(line), overflow="ellipsis", no_wrap=True)


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
    from ..prove.mutants import run_mutants

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
            app.console.print(Text(f"\nvariant {name}", style="bold"))
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
        app.console.print(f"report written to {report_path}")
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

    from ..reports.tables import print_whole

    sampled = f" (a sample of {len(report.results)} of {report.made})" if len(report.results) < report.made else ""
    print_whole(
        app.console,
        table(f"{report.assignment}: mutation score by file{sampled}", report.tally(lambda r: r.mutant.file)),
    )
    print_whole(
        app.console,
        table("by function", dict(sorted(report.tally(lambda r: f"{r.mutant.file} {r.mutant.function}").items()))),
    )
    overall = report.tally().get("all")
    if overall:
        app.console.print(
            f"mutation score: {overall.killed} killed of {overall.counted} "
            f"({overall.total} made, {overall.equivalent} equivalent) = {100 * overall.score:.1f}%"
        )
    if report.survivors:
        app.console.print(
            Text(f"\n{counted(len(report.survivors), 'survivor')}, not on the equivalent list:", style="bold")
        )
        for result in report.survivors:
            app.console.print(Text("  " + result.mutant.diff()), soft_wrap=True)
        from ..prove.mutants import equivalent_entry

        app.console.print(
            Text(
                "\nwhere a survivor changes nothing the contract lets a check see, paste its entry into the "
                "equivalent-mutants file and write why:\n",
                style="bold",
            ),
            soft_wrap=True,
        )
        for result in report.survivors:
            app.console.print(Text(equivalent_entry(result.mutant)), soft_wrap=True)  # whole lines: never wrapped
    if report.killed_but_listed:
        app.console.print(Text("\nlisted as equivalent, yet killed (remove them from the list):", style="bold"))
        for result in report.killed_but_listed:
            app.console.print(Text("  " + result.mutant.diff()))
    if report.unused_equivalents:
        app.console.print(Text("\non the equivalent list, but no such mutant any more:", style="bold"))
        for entry in report.unused_equivalents:
            app.console.print(Text("  " + entry))
    elsewhere = report.named_elsewhere()
    if elsewhere:
        app.console.print(
            Text("\nknown mistakes named on mutants that change none of their lines (named falsely):", style="bold")
        )
        for name, diffs in elsewhere.items():
            app.console.print(Text(f"  {name}: {len(diffs)}, e.g. {diffs[0]}"), soft_wrap=True)


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
    from ..prove.author_errors import AuthorError
    from ..prove.selftest import selftest

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
            on_proof=lambda proof: app.console.print(Text(proof.line()), soft_wrap=True),
        )
    except AuthorError as exc:  # the assignment's declarations: its author's to fix, not lmgrade's
        for problem in exc.problems:
            app.err_console.print(Text(problem), soft_wrap=True)
        app.err_console.print(
            Text(f"{assignment}: no proof made: the declarations above are the assignment's to fix"), soft_wrap=True
        )
        raise click.exceptions.Exit(1) from None
    if made and not made[-1].passed:
        raise click.exceptions.Exit(1)
    app.console.print(f"{assignment}: {len(made)} proofs hold")

"""The `lmgrade` command line (spec/cli.md)."""

from __future__ import annotations

import json
import shutil
import sys
import threading
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from . import __version__, catalog, templates
from .assignment import AssignmentError
from .bundle.build import build_bundle
from .bundle.public import public_checks
from .errors import HarnessFault
from .feedback import human_bytes
from .flawed import write_flawed
from .grading import Grader, GradingRun, grade_submission
from .oracle import LiveReference
from .seeds import course_secret
from .reports.terminal import describe_defences, print_report
from .sandbox.limits import available_cpus

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)


def _settings(pairs: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"expected KEY=VALUE, got {pair!r}", param_hint="--set")
        out[key.strip()] = value.strip()
    return out


def _load(name: str, pairs: tuple[str, ...]):
    try:
        return catalog.load(name, _settings(pairs))
    except AssignmentError as exc:
        raise click.UsageError(str(exc)) from None


def _default_jobs() -> int:
    return max(1, min(4, int(available_cpus())))


set_option = click.option("--set", "settings", multiple=True, metavar="KEY=VALUE",
                          help="Choose an assignment variant, e.g. --set activation=tanh.")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="lmgrade")
def main() -> None:
    """Autograder of the language-modeling course: generate, grade, report."""


@main.command("list")
def list_() -> None:
    """List the assignments, their files, checks and points."""
    try:
        names = list(catalog.assignment_folders())
        loaded = [catalog.load(name) for name in names]
    except AssignmentError as exc:
        raise click.ClickException(str(exc)) from None
    for assignment, variant in loaded:
        spec = assignment.spec
        table = Table(title=f"{spec.name}: {spec.title}", title_justify="left")
        table.add_column("check")
        table.add_column("what it tests")
        table.add_column("points", justify="right")
        table.add_column("visibility")
        for check in assignment.checks:
            table.add_row(check.name, check.title, f"{check.points:g}", check.visibility)
        console.print(table)
        console.print(f"files: {', '.join(spec.files)}; total {sum(c.points for c in assignment.checks):g} points")
        if spec.variants:
            console.print("variants: " + ", ".join(
                f"{v.name}={v.default} ({'/'.join(map(str, v.choices))})" for v in spec.variants.values()))
        console.print()


@main.command()
@click.argument("assignment")
@click.option("-o", "--output", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder to write the starter files and the handout into.")
@set_option
def generate(assignment: str, out_dir: Path, settings: tuple[str, ...]) -> None:
    """Render the student starter files and the handout into a folder."""
    bound, variant = _load(assignment, settings)
    try:
        written = templates.generate(bound, variant, out_dir)
    except AssignmentError as exc:
        raise click.ClickException(str(exc)) from None
    for path in written:
        console.print(f"wrote {path}")


def run_grading(assignment, variant, submission: Path, *, results: Path | None, jobs: int,
                visible_only: bool = False, title: str | None = None, grader: Grader | None = None) -> GradingRun:
    """Grade one submission with a progress bar; print the report."""
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

    try:
        with _progress() as progress:
            task = progress.add_task(f"grading {assignment.name}", total=None)
            run = grade_submission(assignment, variant, submission, results=results, jobs=jobs,
                                   visible_only=visible_only, grader=grader,
                                   on_start=lambda n: progress.update(task, total=n),
                                   on_check_start=started, on_verdict=finished)
    except HarnessFault as exc:
        raise click.ClickException(f"harness fault: {exc}") from None
    if run.note:
        console.print(run.note)
    print_report(console, title or f"{assignment.name}: {run.submission}", run.verdicts)
    console.print(f"[dim]sandbox: {describe_defences(run.defences)}[/dim]")
    return run


def _progress() -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=err_console, transient=True)


@main.command()
@click.argument("assignment")
@click.argument("submission_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--results", type=click.Path(dir_okay=False, path_type=Path), default=Path("results.json"),
              show_default=True, help="Where to write Gradescope's results.json.")
@set_option
@click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto", show_default=True,
              help="Device of the GPU checks.")
@click.option("--jobs", type=click.IntRange(min=1), default=_default_jobs, show_default="up to 4",
              help="Checks run in parallel.")
def grade(assignment: str, submission_dir: Path, results: Path, settings: tuple[str, ...], device: str,
          jobs: int) -> None:
    """Grade a submission folder against the reference; write results.json."""
    bound, variant = _load(assignment, settings)
    run_grading(bound, variant, submission_dir, results=results, jobs=jobs)
    console.print(f"results written to {results}")


@main.command()
@click.argument("assignment")
@click.argument("submission_dir", required=False, default=".",
                type=click.Path(exists=True, file_okay=False, path_type=Path))
@set_option
def check(assignment: str, submission_dir: Path, settings: tuple[str, ...]) -> None:
    """Run the public checks on your own work (no results.json).

    With a student bundle installed, its recorded checks; in the course's own
    checkout, the same public cases against the reference.
    """
    try:
        public = public_checks(assignment, _settings(settings))
        grader = public.grader(jobs=_default_jobs())
    except AssignmentError as exc:
        raise click.UsageError(str(exc)) from None
    except HarnessFault as exc:
        raise click.ClickException(f"harness fault: {exc}") from None
    with grader:
        run_grading(public.assignment, public.variant, submission_dir, results=None, jobs=_default_jobs(),
                    visible_only=True, grader=grader)


@main.command("student-bundle")
@click.argument("assignment")
@click.option("-o", "--output", required=True, type=click.Path(path_type=Path), metavar="DIR_OR_ZIP",
              help="A new folder, or a file ending in .zip, to write the bundle to.")
@set_option
def student_bundle(assignment: str, output: Path, settings: tuple[str, ...]) -> None:
    """Write the students' bundle: starter files, handout, and the public checks to run locally."""
    bound, variant = _load(assignment, settings)
    try:
        with err_console.status(f"recording the public checks of {assignment} from the reference"):
            bundle = build_bundle(bound, variant, output)
    except FileExistsError as exc:
        raise click.UsageError(str(exc)) from None
    except OSError as exc:
        raise click.UsageError(f"cannot write the bundle to {output}: {exc.strerror or exc}") from None
    except (AssignmentError, HarnessFault) as exc:
        raise click.ClickException(str(exc)) from None
    console.print(f"wrote {bundle.path} ({human_bytes(bundle.size_bytes)}): {len(bundle.files)} files, "
                  f"students install it with: python -m pip install wheels/{bundle.wheel}")


@main.command()
@click.option("-o", "--output", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("lmgrade-demo"), show_default=True, help="Folder for the demo's files and results.")
@click.option("--assignment", "only", multiple=True, metavar="NAME",
              help="Demonstrate only this assignment (repeatable; default: every one).")
def demo(out_dir: Path, only: tuple[str, ...]) -> None:
    """The whole pipeline on built-in data: generate, grade three submissions per assignment, report."""
    names = list(only) or list(catalog.assignment_folders())
    totals = {}
    for name in names:
        bound, variant = _load(name, ())
        spec = bound.spec
        console.rule(f"{name}: generate the starter files")
        starter = out_dir / name / "starter"
        for path in templates.generate(bound, variant, starter):
            console.print(f"wrote {path}")
        reference = out_dir / name / "submissions" / "reference"
        reference.mkdir(parents=True, exist_ok=True)
        for filename in spec.files:
            shutil.copyfile(spec.reference_folder() / filename, reference / filename)
        shown = [bug for bug in catalog.bugs(name).values() if bug.demo]
        flawed = write_flawed(spec.reference_folder(), spec.files, out_dir / name / "submissions" / "flawed", shown)
        # One grader for the three: the expected values are computed once, the sandbox started once.
        try:
            grader = Grader(bound, variant, LiveReference(spec), secret=course_secret(), jobs=_default_jobs(),
                            protected=[(out_dir / name / "results").resolve()])
        except HarnessFault as exc:
            raise click.ClickException(f"harness fault: {exc}") from None
        with grader:
            for label, folder in (("starter", starter), ("reference", reference), ("flawed", flawed)):
                console.rule(f"{name}: grade the {label} submission")
                results = out_dir / name / "results" / f"{label}.json"
                run = run_grading(bound, variant, folder, results=results, jobs=_default_jobs(),
                                  title=f"{name}: {label} submission", grader=grader)
                totals[(name, label)] = (run.score, run.max_score, results)
    console.rule("summary")
    for (name, label), (score, maximum, results) in totals.items():
        console.print(f"{name:>12} {label:>10}: {score:.4g} / {maximum:g}   ({results})")


@main.command()
@click.argument("assignment")
@set_option
@click.option("--jobs", type=click.IntRange(min=1), default=_default_jobs, show_default="up to 4",
              help="Sandboxed runs in parallel.")
@click.option("--max", "max_mutants", type=click.IntRange(min=1), default=None,
              help="Grade a seeded sample of this many mutants instead of all of them.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the --max sample.")
@click.option("-o", "--output", "report_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the whole report as JSON here.")
def mutants(assignment: str, settings: tuple[str, ...], jobs: int, max_mutants: int | None, seed: int,
            report_path: Path | None) -> None:
    """Grade every single-point mutant of the reference: what do the checks miss?

    Without --set, a mutant that survives the default variant is graded in
    every other variant too, so code only another variant runs is covered.
    """
    from .mutants import run_mutants

    bound, variant = _load(assignment, settings)
    others = [] if settings else [_load(assignment, tuple(f"{k}={v}" for k, v in other.items()))
                                  for other in catalog.variant_settings(assignment)[1:]]
    try:
        with _progress() as progress:
            task = progress.add_task(f"mutants of {assignment}", total=None)
            report = run_mutants(bound, variant, jobs=jobs, max_mutants=max_mutants, seed=seed,
                                 other_variants=others, on_start=lambda n: progress.update(task, total=n),
                                 on_result=lambda r: progress.advance(task))
    except (HarnessFault, AssignmentError) as exc:
        raise click.ClickException(str(exc)) from None
    print_mutants_report(report)
    if report_path:
        report_path.parent.mkdir(parents=True, exist_ok=True)
        report_path.write_text(json.dumps(report.as_dict(), indent=2) + "\n", encoding="utf-8")
        console.print(f"report written to {report_path}")


def print_mutants_report(report) -> None:
    def table(title: str, tallies: dict) -> Table:
        t = Table(title=title, title_justify="left")
        for column in ("", "mutants", "equivalent", "killed", "survived", "score", "killed with a named mistake"):
            t.add_column(column, justify="left" if not column else "right")
        for key, tally in tallies.items():
            named = f"{tally.named}/{tally.killed}" if tally.killed else "-"
            t.add_row(key, str(tally.total), str(tally.equivalent), str(tally.killed),
                      str(tally.counted - tally.killed), f"{100 * tally.score:.1f}%", named)
        return t

    sampled = f" (a sample of {len(report.results)} of {report.made})" if len(report.results) < report.made else ""
    console.print(table(f"{report.assignment}: mutation score by file{sampled}",
                        report.tally(lambda r: r.mutant.file)))
    console.print(table("by function", dict(sorted(report.tally(lambda r: f"{r.mutant.file} {r.mutant.function}").items()))))
    overall = report.tally().get("all")
    if overall:
        console.print(f"mutation score: {overall.killed} killed of {overall.counted} "
                      f"({overall.total} made, {overall.equivalent} equivalent) = {100 * overall.score:.1f}%")
    if report.survivors:
        console.print(Text(f"\n{len(report.survivors)} survivor(s), not on the equivalent list:", style="bold"))
        for result in report.survivors:
            console.print(Text("  " + result.mutant.diff()))
    if report.killed_but_listed:
        console.print(Text("\nlisted as equivalent, yet killed (remove them from the list):", style="bold"))
        for result in report.killed_but_listed:
            console.print(Text("  " + result.mutant.diff()))
    if report.unused_equivalents:
        console.print(Text("\non the equivalent list, but no such mutant any more:", style="bold"))
        for entry in report.unused_equivalents:
            console.print(Text("  " + entry))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""pytest runs a student bundle's public checks, one test per check.

Loaded by the bundle's ``pytest.ini`` (``-p lmgrade.course.bundle.pytest_plugin``),
which also names the assignment. The first test grades every public check on
the files of the folder with the grader `lmgrade check` uses (the same
sandbox, the same recorded expected values, checks that compose others
judged as there); each test then fails with its check's feedback, and the
run ends with the same table. With ``-v`` (the bundle's default) each check's name is
printed as it starts, so a slow one shows what is running.
"""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import pytest
from rich.console import Console
from rich.text import Text

from ...core.errors import HarnessFault
from ...core.selection import Selection
from ...declare.assignment import AssignmentError
from ...grading.grader import Grader
from ...reports.results import Verdict
from ...reports.terminal import describe_defences, print_report
from ...submissions.submitted_files import locate, missing_hint
from .public import PublicChecks, public_checks

ASSIGNMENT_INI, SUBMISSION_INI = "lmgrade_assignment", "lmgrade_submission"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(ASSIGNMENT_INI, "the assignment whose public checks the tests run")
    parser.addini(SUBMISSION_INI, "the folder of the files to check, relative to the ini file", default=".")


class _Run:
    """The public checks, the folder they grade, and the verdicts so far."""

    def __init__(self, config: pytest.Config):
        self.public: PublicChecks = public_checks(Selection(config.getini(ASSIGNMENT_INI)))
        root = Path(config.inipath).parent if config.inipath else Path(config.rootpath)
        files = self.public.assignment.spec.files
        folder = (root / config.getini(SUBMISSION_INI)).resolve()
        if not folder.is_dir():
            raise pytest.UsageError(
                f"{folder} ({SUBMISSION_INI} in {config.inipath}) is not a folder: nothing to check"
            )
        self.submission, located = locate(folder, files)
        # What `lmgrade check` says once above its table: where the files were found, what is missing,
        # what could not be imported. A check that points to it ("see above") carries it in its failure.
        self.said = [text for text in (located, missing_hint(self.submission, files)) if text]
        self.grader: Grader | None = None
        self.graded: dict[str, Verdict] | None = None
        self.verdicts: dict[int, Verdict] = {}

    @property
    def note(self) -> str:
        return "\n\n".join(self.said)

    def _import_failed(self, message: str) -> None:
        if message not in self.said:
            self.said.append(message)

    def grade(self, name: str) -> Verdict:
        if self.graded is None:  # the sandbox starts with the first test, not at collection
            self.grader = self.public.grader(jobs=1)
            # Every check at once, as `lmgrade check` grades them: a check that composes another is
            # judged knowing whether that one failed (see autograder/declare/composition.py).
            self.graded = {
                v.check.name: v for v in self.grader.grade(self.submission, on_import_failure=self._import_failed)
            }
        verdict = self.graded[name]
        if "(see above)" in verdict.output and self.said:
            verdict = dataclasses.replace(verdict, output=f"{self.note}\n\n{verdict.output}")
        self.verdicts[verdict.number] = verdict
        return verdict

    def close(self) -> None:
        if self.grader is not None:
            self.grader.close()


_RUN = pytest.StashKey[_Run]()


def pytest_configure(config: pytest.Config) -> None:
    if not config.getini(ASSIGNMENT_INI):
        return
    try:
        config.stash[_RUN] = _Run(config)
    except (AssignmentError, HarnessFault) as exc:
        raise pytest.UsageError(str(exc)) from None


def pytest_unconfigure(config: pytest.Config) -> None:
    run = config.stash.get(_RUN, None)
    if run is not None:
        run.close()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    run = metafunc.config.stash.get(_RUN, None)
    if run is not None and "public_check" in metafunc.fixturenames:
        names = [check.name for check in run.public.assignment.checks]
        metafunc.parametrize("public_check", names, ids=names, indirect=True)


@pytest.fixture
def public_check(request: pytest.FixtureRequest) -> Verdict:
    """The verdict of one public check on the folder's files."""
    try:
        return request.config.stash[_RUN].grade(request.param)
    except HarnessFault as exc:
        pytest.fail(f"harness fault: {exc}", pytrace=False)


def require_pass(verdict: Verdict) -> None:
    """Fail the test with the check's feedback unless it earned every point."""
    if not verdict.passed:
        # The heading of this check's feedback in `lmgrade check`'s report, then the same feedback.
        heading = f"{verdict.number}. {verdict.check.name} ({verdict.score:.4g}/{verdict.max_score:g})"
        pytest.fail(f"{heading}\n{verdict.output}", pytrace=False)


def pytest_terminal_summary(terminalreporter, exitstatus, config: pytest.Config) -> None:
    run = config.stash.get(_RUN, None)
    if run is None or not run.verdicts:
        return
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        width=config.get_terminal_writer().fullwidth,
        highlight=False,
        force_terminal=terminalreporter.hasmarkup,
    )
    if run.note:
        console.print(Text(run.note))  # what the submission holds: never rich markup
    verdicts = [run.verdicts[n] for n in sorted(run.verdicts)]
    print_report(console, f"{run.public.assignment.name}: {run.submission}", verdicts, details=False)
    defences = next((v.defences for v in verdicts if v.defences), {})
    console.print(f"[dim]sandbox: {describe_defences(defences)}[/dim]")
    if run.public.not_run_here():
        console.print(Text(run.public.not_run_here()))
    terminalreporter.section("public checks")
    terminalreporter.write(buffer.getvalue())

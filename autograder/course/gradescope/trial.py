"""`lmgrade gradescope --try`: the zip just built, installed and run on one submission as Gradescope runs it.

The zip is installed by its own setup.sh into a temporary virtual
environment that reuses this interpreter's libraries (`local.install`), a
temporary folder is laid out as Gradescope's /autograder with the
submission in it, and run_autograder grades it there; what it wrote in
results.json is printed. Everything is removed afterwards.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ...core.errors import HarnessFault
from ...core.plural import counted
from ...reports.tables import print_whole
from .config import TIMEOUT_MARGIN_S
from .layout import CONFIG_NAME, Layout
from .local import LocalInstall, SetupFailed, install


@dataclass
class Tried:
    """One submission graded by an installed zip's run_autograder."""

    document: dict | None  # results.json as run_autograder left it; None where it left none that reads as JSON
    output: str  # what run_autograder printed (on Gradescope: results/stdout, which only instructors see)
    status: int | None  # run_autograder's exit status; None where it ran past Gradescope's timeout
    timeout_s: float  # Gradescope's timeout, as the zip was built for it
    setup_s: float  # how long setup.sh took
    run_s: float  # how long run_autograder took


def install_for_trial(zip_path: Path, workdir: Path) -> LocalInstall:
    """The zip installed by its setup.sh into `workdir`/venv, reusing this interpreter's libraries."""
    try:
        return install(zip_path, workdir, Path(workdir) / "venv", reuse_this_environment=True)
    except SetupFailed as exc:
        raise HarnessFault(f"the zip's setup.sh failed here, as it would building Gradescope's image: {exc}") from None


def place_submission(submission: Path, folder: Path) -> None:
    """Put `submission` in `folder` as a student's upload arrives: a folder's files, or the one file as it is."""
    submission = Path(submission)
    if submission.is_dir():
        shutil.copytree(submission, folder, dirs_exist_ok=True)
    else:
        shutil.copy2(submission, folder / submission.name)


def timeout_of(zip_path: Path) -> float:
    """Gradescope's timeout the zip was built for: its time budget and the margin kept back from it."""
    with zipfile.ZipFile(zip_path) as zf:
        return float(json.loads(zf.read(CONFIG_NAME))["time_budget_s"]) + TIMEOUT_MARGIN_S


def run_submission(installed: LocalInstall, submission: Path) -> Tried:
    """Grade `submission` with the installed zip's run_autograder in a fresh root; stopped at Gradescope's
    timeout, as Gradescope stops it."""
    layout = installed.new_root({})
    place_submission(submission, layout.submission)
    timeout_s = timeout_of(installed.zip_path)
    started = time.perf_counter()
    proc = installed.start(layout)
    try:
        output, _ = proc.communicate(timeout=timeout_s)
        status: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # its session: the supervisor, the grading process, the sandbox
        output, _ = proc.communicate()
        status = None
    return Tried(_results(layout), output, status, timeout_s, installed.setup_s, time.perf_counter() - started)


def _results(layout: Layout) -> dict | None:
    try:
        document = json.loads(layout.results.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return document if isinstance(document, dict) and isinstance(document.get("tests"), list) else None


def try_zip(zip_path: Path, submission: Path) -> Tried:
    """Install the zip in a temporary folder and grade `submission` with it; the folder is removed after."""
    with tempfile.TemporaryDirectory(prefix="lmgrade-try-") as workdir:
        return run_submission(install_for_trial(Path(zip_path), Path(workdir)), Path(submission))


def results_table(document: dict) -> Table:
    """results.json's tests as Gradescope lists them: name, score, visibility; the total last."""
    table = Table(title=Text("results.json"), title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("test", overflow="fold")
    table.add_column("score", justify="right")
    table.add_column("visibility")
    for number, test in enumerate(document["tests"], start=1):
        table.add_row(
            str(number),
            Text(str(test.get("name", ""))),
            f"{float(test.get('score', 0)):.4g} / {float(test.get('max_score', 0)):g}",
            Text(str(test.get("visibility", "visible"))),
        )
    maximum = sum(float(t.get("max_score", 0)) for t in document["tests"])
    table.add_section()
    table.add_row("", "total", f"{float(document.get('score', 0)):.4g} / {maximum:g}", "")
    return table


def print_tried(console: Console, tried: Tried) -> None:
    """What the submission got: results.json's tests, its top output and each test that lost points, with
    the time setup.sh and run_autograder took. Raises HarnessFault where Gradescope would show no score."""
    if tried.status is None:
        raise HarnessFault(
            f"run_autograder ran past Gradescope's timeout ({tried.timeout_s:g} s), where Gradescope stops it and "
            f"scores 0. Its output:\n{tried.output}"
        )
    if tried.document is None:
        raise HarnessFault(
            f"run_autograder (exit status {tried.status}) left no valid results.json, where Gradescope says "
            f'"The autograder failed to execute correctly". Its output:\n{tried.output}'
        )
    document = tried.document
    console.print(
        Text(
            f"\ntried: setup.sh took {tried.setup_s:.1f} s, run_autograder {tried.run_s:.1f} s "
            f"(exit status {tried.status}), {counted(len(document['tests']), 'test')}"
        )
    )
    print_whole(console, results_table(document))
    if document.get("output"):
        console.print(Text("\noutput (above the tests):", style="bold"))
        console.print(Text(str(document["output"])))
    for number, test in enumerate(document["tests"], start=1):
        if float(test.get("score", 0)) < float(test.get("max_score", 0)):
            console.print(Text(f"\n{number}. {test.get('name', '')}", style="bold"))
            console.print(Text(str(test.get("output", ""))))

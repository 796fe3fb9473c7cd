"""What `run_autograder` runs: grade one submission, and leave a valid results.json whatever happens.

`grade_submission` already keeps results.json valid from before the first
check to the last, replacing it atomically as checks finish, so even a
SIGKILL of everything leaves valid JSON. Two things it cannot do from inside
its own process: say why the checks still open were never graded when that
process dies (out of memory, a crash of the harness), and stop in time:
Gradescope replaces the results of a run it kills at its timeout with a
zero. So grading runs in a child process (`grade.py`), and this supervisor,
which loads neither the assignment nor torch and so stays small:

- writes a results.json with every check at zero before anything else;
- makes the zip's folder (the course secret, the wheel) root's alone and the
  results folder unwritable to others (the sandbox's Landlock rules grant
  nothing under the Gradescope root anyway; this holds without Landlock too),
  and grades nothing if it cannot;
- gives the child the zip's time budget, and kills its whole session when
  the budget runs out or when the supervisor is told to stop;
- when the child did not finish, gives every check it left ungraded zero
  with the reason, and says so on top.
"""

from __future__ import annotations

import json
import os
import select
import signal
import stat
import sys
import time
import traceback
from pathlib import Path

from ...core.atomic import TEMPORARY_PREFIX, write_atomically
from ...core.errors import HarnessFault
from ...reports.gradescope import NOT_GRADED, results_json
from ...reports.results import HARNESS_FAULT_NOTE
from .config import ZipConfig
from .layout import Layout

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
TIME_BUDGET_NOTE = (
    "Grading stopped at the autograder's time limit before every check finished: the checks "
    "not graded score 0 here. Please tell the course staff (your score is not final)."
)


class Stopped(Exception):
    """The supervisor was told to stop (the signal's name)."""


def protect(layout: Layout) -> None:
    """The zip's folder readable by root alone; nobody else may write into the results folder."""
    for folder, _, names in os.walk(layout.source):
        for path in [folder, *(os.path.join(folder, n) for n in names)]:
            mode = os.lstat(path).st_mode
            if not stat.S_ISLNK(mode):
                os.chmod(path, stat.S_IMODE(mode) & 0o700)
    layout.results_folder.mkdir(parents=True, exist_ok=True)
    os.chmod(layout.results_folder, stat.S_IMODE(layout.results_folder.stat().st_mode) & ~0o022)


def provisional(config: ZipConfig, output: str = "") -> dict:
    """Every check of the zip at zero, "not graded"."""
    return results_json(list(enumerate(config.checks, start=1)), {}, output=output)


def _signal_name(number: int) -> str:
    # Imported when needed: the supervisor starts without the sandbox's imports (numpy among them).
    from ...sandbox.pool import signal_name

    return signal_name(number)


def describe_exit(status: int) -> str:
    if status < 0:
        hint = " (out of memory?)" if -status == signal.SIGKILL else ""
        return f"the grading process was killed by {_signal_name(-status)}{hint}"
    return f"the grading process failed (exit status {status})"


def start_grading() -> int:
    """The grading process (grade.py's `main`), forked from this one in a session of its own: no second
    interpreter to start, and what it imports (the assignment, torch) stays out of the supervisor."""
    sys.stdout.flush()
    sys.stderr.flush()
    parent = os.getpid()
    child = os.fork()
    if child:
        return child
    status = 1
    try:
        os.setsid()
        from .grade import main as grade

        status = grade(["--parent", str(parent)])
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)  # never back into the supervisor's own code


def wait_for(pid: int, timeout_s: float) -> int | None:
    """The exit status of child `pid` (minus the signal that killed it), or None after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    if hasattr(os, "pidfd_open"):  # Linux: woken when it exits
        fd = os.pidfd_open(pid)
        try:
            if not select.select([fd], [], [], max(0.0, deadline - time.monotonic()))[0]:
                return None
        finally:
            os.close(fd)
        return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.01)


def grade_in_child(time_budget_s: float) -> tuple[str, str] | None:
    """Run grade.py; None when it finished, else (why not, the note for the student)."""
    child = start_grading()
    finished = False

    def stop(signum, _frame):
        raise Stopped(_signal_name(signum))

    for sig in STOP_SIGNALS:
        signal.signal(sig, stop)
    try:
        status = wait_for(child, time_budget_s)
        if status is None:
            return f"grading ran out of the autograder's time budget ({time_budget_s:g} s)", TIME_BUDGET_NOTE
        finished = True
        return None if status == 0 else (describe_exit(status), HARNESS_FAULT_NOTE)
    except Stopped as exc:
        return f"the autograder was stopped ({exc})", HARNESS_FAULT_NOTE
    finally:
        # Nothing may interrupt what is left: stopping the child, writing the results.
        for sig in STOP_SIGNALS:
            signal.signal(sig, signal.SIG_IGN)
        if not finished:
            try:
                os.killpg(child, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(child, 0)


def close_ungraded(results: Path, config: ZipConfig, reason: str, note: str) -> None:
    """What the child left: the checks it did not grade get zero with `reason`, and a note on top."""
    try:
        document = json.loads(results.read_text(encoding="utf-8"))
        if not isinstance(document.get("tests"), list):
            raise ValueError("no tests")
    except (OSError, ValueError):
        document = provisional(config)
    for test in document["tests"]:
        if test.get("output") == NOT_GRADED:
            test["output"] = f"not graded: {reason}"
    # The child may have said it failed already: once is enough.
    earlier = document.get("output", "").replace(HARNESS_FAULT_NOTE, "").strip()
    document["output"] = "\n".join(part for part in (note, f"({reason})", earlier) if part)
    document["score"] = round(sum(t.get("score", 0.0) for t in document["tests"]), 6)
    write_atomically(results, document)


def main() -> int:
    layout = Layout.from_environment()
    try:
        config = ZipConfig.load(layout.config)
    except HarnessFault as exc:
        print(f"lmgrade: {exc}", file=sys.stderr)
        write_atomically(layout.results, results_json([], {}, output=f"{HARNESS_FAULT_NOTE}\n({exc})"))
        return 0
    write_atomically(layout.results, provisional(config))
    print(
        f"lmgrade {config.lmgrade_version} grading {config.title} "
        f"(wheel sha256 {config.wheel_sha256[:12]}, time budget {config.time_budget_s:g} s)",
        flush=True,
    )
    if config.public_secret:
        print(
            "WARNING: this autograder was built without LMGRADE_SECRET: every student can compute its hidden inputs",
            flush=True,
        )
    try:
        protect(layout)
    except OSError as exc:  # student code must never run beside a readable secret
        unfinished = f"the autograder could not lock its own files away ({exc})", HARNESS_FAULT_NOTE
    else:
        unfinished = grade_in_child(config.time_budget_s)
    if unfinished:
        reason, note = unfinished
        print(f"lmgrade: {reason}", file=sys.stderr, flush=True)
        close_ungraded(layout.results, config, reason, note)
    for leftover in layout.results_folder.glob(f"{TEMPORARY_PREFIX}*.json"):  # a write the child was killed in
        leftover.unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The sandboxed child: locks itself down, imports the submission, runs cases.

Runs in a process freshly forked by its run's supervisor (`server.py`), which
the fork server forked for this run alone: nothing of another run, another
submission's answers among them, was ever in its memory. It never returns: it
ends with ``os._exit``. What it tells the parent goes through one pipe as
frames (`protocol.py`): HELLO with the defences in force, written before any
student code runs; CASE_START and CASE_RESULT for every case; DONE.

Its folder (``workdir``) is the only place it may write: the copy of the
submission (its current folder), a temporary folder and a home, which the
usual environment variables point to, so `tempfile`, caches and writes next
to the code all work. The supervisor removes the folder after the run; the
child's own IPC namespace goes with its last process.
"""

from __future__ import annotations

import fcntl
import os
import signal
import sys
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..boundary import wire
from ..boundary.protocol import CASE_RESULT, CASE_START, DONE, HELLO, SAFE_ENV_KEYS, pack_frame, write_all
from ..core.expected_only import answer_as_a_submission
from ..core.explanations import explain_answers
from ..core.scenario_arguments import call_scenario
from ..submissions.loader import load_files
from . import devices, guards, landlock, privileges, stand_in_channel, stopwatch
from .limits import Limits, apply_rlimits

RESULT_FD = 3
PRIVATE_FOLDERS = ("tmp", "home/.cache", "home/.config")


def _close_all_but(kept: set[int]) -> None:
    """Close every descriptor of this process but `kept`."""
    low = 0
    for fd in sorted(kept):
        if fd > low:  # never an empty range: os.closerange(n, n) may close everything from n up
            os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 1 << 16)


def send(kind: int, index: int, payload: bytes = b"") -> None:
    write_all(RESULT_FD, pack_frame(kind, index, payload))


def _installation_folders() -> list[tuple[str, str]]:
    """The grading machine's own folders, longest first, with what feedback shows in their place: where its
    Python and its libraries are installed say nothing to a student, and are nothing of theirs to see."""
    import sysconfig

    found = {}
    for key in ("purelib", "platlib", "stdlib", "platstdlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            found[path] = "<libraries>" if key.endswith("lib") and "std" not in key else "<python>"
    for path in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix):
        found.setdefault(path, "<python>")
    found.setdefault(str(Path(__file__).resolve().parents[1]), "<lmgrade>")
    return sorted(((f.rstrip(os.sep), name) for f, name in found.items() if len(f) > 1), key=lambda t: -len(t[0]))


_FOLDERS = _installation_folders()


def without_machine_paths(text: str) -> str:
    """`text` with the grading machine's installation folders named by what they are."""
    for folder, name in _FOLDERS:
        text = text.replace(folder, name)
    return text


def describe_exception(exc: BaseException) -> dict:
    tb = traceback.TracebackException.from_exception(exc, limit=-8)
    return {
        "type": type(exc).__name__,
        "message": without_machine_paths(str(exc))[:2000],
        "traceback": without_machine_paths("".join(tb.format()))[-4000:],
    }


def describe_import_error(exc: BaseException, submission: Path) -> dict:
    """An import failure as the student's own Python would show it: their frames only, paths relative.

    `where` is the file, line, the offending line with a caret, and the error,
    the harness's frames and temporary folders left out.
    """
    described = describe_exception(exc)
    root = str(submission) + os.sep

    def relative(filename: str | None) -> str | None:
        return filename[len(root) :] if filename and filename.startswith(root) else None

    lines = []
    if isinstance(exc, SyntaxError) and relative(exc.filename):
        described["file"] = relative(exc.filename)
        lines.append(f'  File "{described["file"]}", line {exc.lineno}')
        if exc.text:
            text = exc.text.rstrip("\n")
            stripped = text.lstrip()
            lines.append(f"    {stripped}")
            if exc.offset:
                lines.append("    " + " " * max(0, exc.offset - 1 - (len(text) - len(stripped))) + "^")
        message = exc.msg
    else:
        for frame in traceback.extract_tb(exc.__traceback__):
            name = relative(frame.filename)
            if name is None:
                continue
            described["file"] = name
            lines.append(f'  File "{name}", line {frame.lineno}, in {frame.name}')
            if frame.line:
                lines.append(f"    {frame.line.strip()}")
        message = without_machine_paths(str(exc).replace(root, ""))
    lines.append(f"{type(exc).__name__}: {message}")
    described["where"] = "\n".join(lines)
    return described


def private_environment(workdir: Path) -> dict[str, str]:
    """Where temporary files, caches and settings go: all inside `workdir`."""
    tmp, home = str(workdir / "tmp"), str(workdir / "home")
    return {
        "HOME": home,
        "TMPDIR": tmp,
        "TMP": tmp,
        "TEMP": tmp,
        "XDG_CACHE_HOME": f"{home}/.cache",
        "XDG_CONFIG_HOME": f"{home}/.config",
        "MPLCONFIGDIR": f"{home}/.config/matplotlib",
        "TORCHINDUCTOR_CACHE_DIR": f"{tmp}/torchinductor",
        "TRITON_CACHE_DIR": f"{tmp}/triton",
    }


def _lock_down(
    workdir: Path,
    reading: int | None,
    lim: Limits,
    user: int | None,
    keep_read_search: bool,
    use_landlock: bool,
    server_pid: int,
    device: str,
    ipc_namespace: bool,
) -> dict:
    cuda = device == "cuda"
    defences: dict[str, Any] = {
        "rlimits": apply_rlimits(lim, os.getuid() if user is None else user, cuda=cuda),
        "device": device,
    }
    namespaces = privileges.isolate_namespaces()
    if ipc_namespace and not namespaces["ipc"]:
        # Where a run gets one, its supervisor leaves the SysV IPC objects to the kernel: without one
        # they would outlive the run, so student code does not run at all.
        raise RuntimeError("the run's own IPC namespace could not be made (unshare CLONE_NEWIPC)")
    defences["network_namespace"] = namespaces["network"]
    defences["ipc_namespace"] = namespaces["ipc"]
    # As an ordinary user that came with a user namespace: ids show as 65534 in it.
    defences["user_namespace"] = (namespaces["network"] or namespaces["ipc"]) and os.geteuid() != 0 and user is None
    if user is not None:
        privileges.drop_privileges(user, keep_read_search)
    # After the last change of credentials, which would clear it.
    privileges.die_with_parent(server_pid)
    defences["no_new_privileges"] = privileges.forbid_new_privileges()
    defences["uid"] = os.getuid()
    defences["read_search_capability"] = user is not None and keep_read_search
    if use_landlock and reading is not None:
        try:
            # CUDA's device files need writes and ioctls, like /dev/null needs writes; its threads name themselves.
            cuda_writes = [Path(p) for p in devices.cuda_write_paths()] if cuda else []
            if cuda:
                # A CUDA run's reading ruleset is its own (the fork server makes one per CUDA run).
                landlock.grant_reading(reading, [Path(p) for p in devices.cuda_own_read_paths()])
            defences["landlock"] = landlock.restrict(reading, write=[workdir, Path("/dev/null"), *cuda_writes])
            os.close(reading)
        except OSError as exc:
            defences["landlock"] = None
            defences["landlock_error"] = str(exc)
    else:
        defences["landlock"] = None
    return defences


def run(
    *,
    scenario: Callable,
    cases: list,
    start: int,
    files: list[str],
    workdir: Path,
    reading: int | None,
    lim: Limits,
    user: int | None,
    keep_read_search: bool,
    use_landlock: bool,
    guarded: list[str],
    result_fd: int,
    output_fd: int,
    device: str = "cpu",
    tick_fds: tuple[int, int] | None = None,
    ipc_namespace: bool = False,
    explain: bool = False,
    question_fds: tuple[int, int] | None = None,
) -> None:
    server_pid = os.getppid()
    try:
        os.setsid()
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_DFL)
        # A write past the file-size limit should raise, not kill silently.
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)

        # Each descriptor the child keeps goes to its fixed number. Out of the way first (above every fixed
        # number): a source may already hold another's target, and the ruleset's number must stay its own.
        def aside(fd: int) -> int:
            return fcntl.fcntl(fd, fcntl.F_DUPFD, 64)

        devnull = aside(os.open(os.devnull, os.O_RDONLY))
        output_fd, result_fd = aside(output_fd), aside(result_fd)
        reading = aside(reading) if reading is not None else None
        wanted = {0: devnull, 1: output_fd, 2: output_fd, RESULT_FD: result_fd}
        if tick_fds is not None:
            wanted.update({stopwatch.TICK_FD: aside(tick_fds[0]), stopwatch.NONCE_FD: aside(tick_fds[1])})
            stopwatch.enabled = True
        if question_fds is not None:  # a stand-in run: its calls are asked of the supervisor
            asked, answered = aside(question_fds[0]), aside(question_fds[1])
            wanted.update({stand_in_channel.QUESTION_FD: asked, stand_in_channel.ANSWER_FD: answered})
            stand_in_channel.enabled = True
        for target, source in wanted.items():
            os.dup2(source, target)
        # Every descriptor but these, and the reading ruleset (`landlock.reading_ruleset`) until it is applied:
        # none of the supervisor's (its pipe to the grading process among them) stays open in the child.
        _close_all_but({*wanted, *([reading] if reading is not None else [])})
        submission = workdir / "submission"
        os.chdir(submission)
        kept = {k: os.environ[k] for k in SAFE_ENV_KEYS if k in os.environ}
        if device == "cuda":
            kept.update(devices.cuda_environment())
        os.environ.clear()
        os.environ.update(
            kept, **private_environment(workdir), OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1"
        )
        # The fork server chose its temporary folder long ago; ours is private.
        tempfile.tempdir = None
        defences = _lock_down(
            workdir, reading, lim, user, keep_read_search, use_landlock, server_pid, device, ipc_namespace
        )
        if device == "cuda":
            defences["gpu_memory"] = devices.bound_gpu_memory(lim)
        defences["forbidden_apis_guarded"] = len(guarded)
        send(HELLO, -1, wire.encode(defences))
    except BaseException as exc:  # the harness itself failed: say so, never run student code
        try:
            send(HELLO, -1, wire.encode({"harness_error": describe_exception(exc)}))
        finally:
            os._exit(70)

    # The submission's answers are judged; the reference's part of an answer (`expected_only`) is not computed.
    answer_as_a_submission()
    # A wrong answer's explanation (`explained`) only where the grader asks: it runs a failed check again for it.
    explain_answers(explain)
    try:
        # Helper modules of the student's own sit beside the submitted files.
        sys.path.insert(0, str(submission))
        modules = load_files(submission, files, keep=True)
        import_error = None
    except BaseException as exc:
        import_error = describe_import_error(exc, submission)
    at_import = sorted(set(guards.calls))

    for index in range(start, len(cases)):
        stopwatch.current_case = stand_in_channel.current_case = index
        send(CASE_START, index)
        if import_error is not None:
            outcome = {"import_error": import_error}
        else:
            guards.calls[:] = at_import
            try:
                outcome = {"ok": call_scenario(scenario, modules, cases[index])}
            except BaseException as exc:
                outcome = {"error": describe_exception(exc)}
            if guards.calls:
                # Also where the submission caught the exception and went on.
                outcome = {"forbidden": sorted(set(guards.calls))}
        try:
            payload = wire.encode(outcome)
        except BaseException as exc:
            payload = wire.encode({"error": describe_exception(exc)})
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:
            pass
        send(CASE_RESULT, index, payload)
    send(DONE, -1)
    os._exit(0)

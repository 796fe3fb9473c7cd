"""The sandboxed child: locks itself down, imports the submission, runs cases.

Runs in a process freshly forked from the fork server. It never returns: it
ends with ``os._exit``. What it tells the parent goes through one pipe as
frames (see `wire.pack_frame`): HELLO with the defences in force, written
before any student code runs; CASE_START and CASE_RESULT for every case; DONE.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import sys
import traceback
from pathlib import Path
from typing import Any, Callable

from .. import wire
from . import landlock, limits as rlimits

HELLO, CASE_START, CASE_RESULT, DONE = 1, 2, 3, 4
RESULT_FD = 3
# All the child keeps of the environment (OpenBLAS needs its CPU type on some machines).
SAFE_ENV_KEYS = ("PATH", "LANG", "LC_ALL", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def send(kind: int, index: int, payload: bytes = b"") -> None:
    _write_all(RESULT_FD, wire.pack_frame(kind, index, payload))


def describe_exception(exc: BaseException) -> dict:
    tb = traceback.TracebackException.from_exception(exc, limit=-8)
    return {"type": type(exc).__name__, "message": str(exc)[:2000],
            "traceback": "".join(tb.format())[-4000:]}


def _lock_down(workdir: Path, read_paths: list[str], lim: rlimits.Limits, user: int | None,
               keep_read_search: bool, use_landlock: bool, server_pid: int) -> dict:
    defences: dict[str, Any] = {"rlimits": rlimits.apply_rlimits(lim, os.getuid() if user is None else user)}
    defences["network_namespace"] = rlimits.isolate_network()
    # As an ordinary user that came with a user namespace: ids show as 65534 in it.
    defences["user_namespace"] = defences["network_namespace"] and os.geteuid() != 0 and user is None
    if user is not None:
        rlimits.drop_privileges(user, keep_read_search)
    # After the last change of credentials, which would clear it.
    rlimits.die_with_parent(server_pid)
    defences["uid"] = os.getuid()
    defences["read_search_capability"] = user is not None and keep_read_search
    if use_landlock:
        try:
            defences["landlock"] = landlock.restrict(read=[Path(p) for p in read_paths],
                                                     write=[workdir, Path("/dev/null")])
        except OSError as exc:
            defences["landlock"] = None
            defences["landlock_error"] = str(exc)
    else:
        defences["landlock"] = None
    return defences


def _import_submission(directory: Path, files: list[str]) -> dict[str, Any]:
    """Import each submitted file under its own name, fresh in this process."""
    sys.path.insert(0, str(directory))
    modules = {}
    for filename in files:
        name = Path(filename).stem
        sys.modules.pop(name, None)
        spec = importlib.util.spec_from_file_location(name, directory / filename)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        modules[name] = module
    return modules


def run(*, scenario: Callable, cases: list, start: int, files: list[str], workdir: Path,
        read_paths: list[str], lim: rlimits.Limits, user: int | None, keep_read_search: bool,
        use_landlock: bool, result_fd: int, output_fd: int) -> None:
    server_pid = os.getppid()
    try:
        os.setsid()
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_DFL)
        # A write past the file-size limit should raise, not kill silently.
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(output_fd, 1)
        os.dup2(output_fd, 2)
        os.dup2(result_fd, RESULT_FD)
        os.closerange(RESULT_FD + 1, 1 << 16)
        os.chdir(workdir)
        kept = {k: os.environ[k] for k in SAFE_ENV_KEYS if k in os.environ}
        os.environ.clear()
        os.environ.update(kept, HOME=str(workdir), TMPDIR=str(workdir),
                          OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
        defences = _lock_down(workdir, read_paths, lim, user, keep_read_search, use_landlock, server_pid)
        send(HELLO, -1, wire.encode(defences))
    except BaseException as exc:  # the harness itself failed: say so, never run student code
        try:
            send(HELLO, -1, wire.encode({"harness_error": describe_exception(exc)}))
        finally:
            os._exit(70)

    try:
        modules = _import_submission(workdir / "submission", files)
        import_error = None
    except BaseException as exc:
        import_error = describe_exception(exc)

    for index in range(start, len(cases)):
        send(CASE_START, index)
        if import_error is not None:
            outcome = {"import_error": import_error}
        else:
            try:
                outcome = {"ok": scenario(modules, cases[index])}
            except BaseException as exc:
                outcome = {"error": describe_exception(exc)}
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

"""The grading process's side of the sandbox: a pool of fork servers.

`SandboxPool.run` runs one check's cases against a submission and returns one
`CaseOutcome` per case. If the child dies part-way (crash, `os._exit`, CPU
limit), the case it was on fails with the reason and a fresh child takes up
the next case, so one bad case costs that case only (a child that dies while
importing the submission, before its first case, is not followed by others
that would die alike); the check's wall-time limit is a budget shared by all
its children, and a case past a time limit (CPU or wall) ends the run, the
cases after it not run: a function that hangs costs its check one limit, not
one per case. A grading that no longer wants its runs (`Cancellation`: the
submission's import hangs, or its grading ran past its budget) ends them at
once.

A fork server serves every submission its grading process grades, at once or
one after the other, and still no child sees another submission: the server
forks a supervisor per run before it reads the request, and only that
supervisor (whose child the run's child is) ever holds the run's submission,
answers and output (`server.py`).
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..boundary import schema, wire
from ..boundary.protocol import (
    CASE_RESULT,
    CASE_START,
    DONE,
    HELLO,
    SAFE_ENV_KEYS,
    RunReply,
    read_message,
    unpack_frames,
    write_message,
)
from ..boundary.schema import CaseOutcome
from ..core.errors import HarnessFault
from . import devices, lease, zygote
from .limits import Limits


class HarnessError(HarnessFault):
    """The sandbox itself failed (not the submission): grading cannot be trusted."""


@dataclass
class Output:
    """What the check's children printed: the first and last bytes, and how many in all."""

    head: str = ""
    tail: str = ""
    total_bytes: int = 0

    def add(self, reply: RunReply) -> None:
        if not self.total_bytes:
            self.head = reply.output_head
        if reply.output_bytes:
            self.tail = reply.output_tail
        self.total_bytes += reply.output_bytes

    @property
    def shortened(self) -> bool:
        return self.total_bytes > len(self.head.encode()) + len(self.tail.encode())


@dataclass
class RunReport:
    outcomes: list[CaseOutcome]
    defences: dict = field(default_factory=dict)
    wall_s: float = 0.0
    output: Output = field(default_factory=Output)
    # Timed runs: (case index, nonce, seconds, fingerprint) of every finished lap.
    laps: list[tuple[int, int, float, list[float]]] = field(default_factory=list)


class Cancellation:
    """One grading's runs, ended at once when `cancel` is called: those under way (their server's input is
    closed, so its supervisor kills the child and the server exits) and any asked for after."""

    def __init__(self):
        self._lock = threading.Lock()
        self._servers: set[_Server] = set()
        self.reason: str | None = None

    @property
    def cancelled(self) -> bool:
        return self.reason is not None

    def cancel(self, reason: str) -> None:
        """End every run of this grading with `reason` (the first reason given stays)."""
        with self._lock:
            if self.reason is None:
                self.reason = reason
            servers = list(self._servers)
        for server in servers:
            server.hang_up()

    def _enter(self, server: _Server) -> bool:
        """Whether `server` may run for this grading (not once cancelled); then it is ended with the rest."""
        with self._lock:
            if self.reason is None:
                self._servers.add(server)
                return True
            return False

    def _leave(self, server: _Server) -> None:
        with self._lock:
            self._servers.discard(server)

    def report(self, n: int) -> RunReport:
        """What a run ended by the cancellation gives: no case run."""
        return RunReport(outcomes=[CaseOutcome("not_run", message=f"not run: {self.reason}") for _ in range(n)])


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def describe_death(reply: RunReply, limits: Limits) -> tuple[str, str]:
    """(kind, message) for a child that did not finish its cases."""
    if reply.killed == "wall":
        return "timeout", f"time limit exceeded: still running after {limits.wall_s:g} s (wall clock)"
    if reply.killed == "result_size":
        return "crashed", "returned more data than the grader accepts"
    if reply.killed == "memory":
        return "crashed", f"memory limit exceeded ({limits.memory_mb} MiB resident)"
    if reply.killed == "processes":
        return "crashed", f"started more than {limits.processes} processes"
    sig = reply.signal
    if sig == signal.SIGXCPU or (sig == signal.SIGKILL and reply.cpu_s >= limits.cpu_s - 0.5):
        return "timeout", f"CPU time limit exceeded ({limits.cpu_s:g} s)"
    if sig is not None:
        hint = " (segmentation fault)" if sig == signal.SIGSEGV else ""
        return "crashed", f"the process was killed by {signal_name(sig)}{hint}"
    return "crashed", (
        f"the process ended with exit status {reply.exit_code} before finishing "
        "(does the code call sys.exit, os._exit or quit?)"
    )


SERVER_BOOTSTRAP = "import sys; sys.path[:0] = [%r]; from lmgrade.sandbox.server import serve; serve()" % str(
    Path(__file__).resolve().parents[2]
)


class _Server:
    """One fork server, holding the lease of its sandbox slot for as long as it lives.

    Started (`warm`: modules it imports at once), then told what it serves (`configure`).
    """

    def __init__(self, env: dict, warm: list[str] = ()):
        # Held while a request is written and while `hang_up` closes the input: never a write to a closed
        # descriptor whose number another file has taken since.
        self._writing = threading.Lock()
        try:
            self.slot = lease.acquire()
        except lease.LeaseError as exc:
            raise HarnessError(str(exc)) from None
        try:
            # Forked from a warm interpreter that imported `warm` once for every grading of this machine.
            where = zygote.place(env, list(warm)) if warm else None
            self.proc = zygote.fork_server(where, self.slot.fd) if where is not None else None
            self.forked_by_zygote = self.proc is not None
            if self.proc is None:
                # Started afresh; once its imports are done, it forks the zygote later gradings find.
                seeding = zygote.seed_arguments(where) if where is not None else []
                self.proc = subprocess.Popen(
                    [sys.executable, "-I", "-c", SERVER_BOOTSTRAP, *seeding, *warm],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    pass_fds=(self.slot.fd,),
                    env=env,
                    close_fds=True,
                    start_new_session=True,
                )
        finally:
            self.slot.release()  # the server holds it now, until it exits

    def configure(self, init: dict) -> int:
        """Tell the server what it serves; returns how many processes it started to get ready."""
        ready, _ = self.request({**init, "slot": self.slot.slot})
        if not ready.get("ready"):
            raise HarnessError(f"sandbox server failed to start: {ready.get('error')}")
        return int(ready.get("processes", 0))

    def request(self, header: dict, blob: bytes = b"", sealed: tuple[dict, bytes] | None = None) -> tuple[dict, bytes]:
        """One run: its request, then (where `sealed`) what its child must never hold, which the run's
        supervisor reads only once the child is forked (a timed run's nonces, a stand-in's record)."""
        try:
            with self._writing:
                write_message(self.proc.stdin.fileno(), header, blob)
                if sealed is not None:
                    write_message(self.proc.stdin.fileno(), *sealed)
        except (OSError, ValueError) as exc:  # ValueError: its input closed by `hang_up`
            raise HarnessError(f"sandbox server is gone ({exc})") from None
        reply = read_message(self.proc.stdout)
        if reply is None:
            raise HarnessError(f"sandbox server exited{self._status()}")
        return reply

    def _status(self) -> str:
        code = self.proc.poll()
        return f" (status {code})" if code is not None and not self.forked_by_zygote else ""

    def hang_up(self) -> None:
        """End the run under way: the server's input closes, its run's supervisor kills the child, and the
        server exits (the run's request then fails, and the server is closed)."""
        with self._writing:
            try:
                self.proc.stdin.close()
            except OSError:
                pass

    def close(self) -> None:
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _server_env() -> dict:
    """A scrubbed environment: no course secret, nothing from the grader's shell."""
    # CUDA's variables reach only the children of CUDA runs (see `devices`).
    keys = (*SAFE_ENV_KEYS, *devices.CUDA_ENV_KEYS, "LMGRADE_SANDBOX_UID")
    env = {k: os.environ[k] for k in keys if k in os.environ}
    env.update(
        OMP_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
        OPENBLAS_NUM_THREADS="1",
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONHASHSEED="0",
    )
    return env


class Prestarted:
    """Fork servers started before their grading is known, importing `modules` (numpy, torch) at once:
    their imports overlap the grading process's own start (loading the checks). A `SandboxPool` given
    them configures them as its own; those it never takes are closed with this."""

    def __init__(self, modules: list[str], jobs: int):
        self.servers: list[_Server] = []
        env = _server_env()
        try:
            for _ in range(max(1, jobs)):
                self.servers.append(_Server(env, list(modules)))
        except BaseException:
            self.close()
            raise

    def take(self) -> _Server | None:
        return self.servers.pop() if self.servers else None

    def close(self) -> None:
        while self.servers:
            self.servers.pop().close()

    def __enter__(self) -> Prestarted:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class SandboxPool:
    """Up to `jobs` fork servers, started on first use and reused for every run.

    At most `jobs` runs are under way at once, whatever the number of threads
    asking: a run waits for a free server.
    """

    def __init__(
        self,
        *,
        preload: list[str],
        forbidden_modules: list[str],
        protected: list[Path],
        jobs: int = 1,
        landlock: bool = True,
        forbidden_apis: dict | None = None,
        prestarted: Prestarted | None = None,
        readable: list[Path] = (),
        warm: list[str] = (),
    ):
        """`protected`: never readable by a child, wherever it lies; `readable`: readable although inside a
        protected folder (the assignment's public scenarios). What else a child reads is in `reads`. `warm`: the
        libraries a server this pool starts imports first, as a prestarted one does (and a zygote keeps)."""
        if not hasattr(os, "fork"):
            raise HarnessError("the sandbox needs fork(): run lmgrade on Linux or macOS (on Windows, in WSL)")
        self.init = {
            "sys_path": [p for p in sys.path if p],
            "preload": list(preload),
            "forbidden_modules": list(forbidden_modules),
            "forbidden_apis": forbidden_apis or {},
            "protected": [str(p) for p in protected],
            "readable": [str(p) for p in readable],
            "landlock": landlock,
        }
        self.jobs = max(1, jobs)
        self._idle: queue.SimpleQueue[_Server] = queue.SimpleQueue()
        self._all: list[_Server] = []
        self._starting: list[queue.SimpleQueue] = []  # servers `start` began: each gets one, or why it failed
        self._lock = threading.Lock()
        self._free = threading.BoundedSemaphore(self.jobs)
        self.started_s: list[float] = []  # one per fork server started: the interpreters this pool began
        self.children = 0  # one per child forked: a run, and one more after each child that died part-way
        # Every process started for this pool's runs: its fork servers and their helpers, then per child its
        # supervisor (one more forked ahead per server), the child and their helpers (the student's own aside).
        self.processes = 0
        self._prestarted = prestarted
        self._warm = list(warm)  # what a server this pool starts itself imports before its set-up

    def start(self) -> None:
        """Start every fork server now, in the background: their imports overlap the grading process's own
        work (loading the plugins, the expected values) instead of waiting for the first runs."""
        with self._lock:
            wanted = self.jobs - len(self._all) - len(self._starting)
            for _ in range(max(0, wanted)):
                done: queue.SimpleQueue = queue.SimpleQueue()
                threading.Thread(target=self._start_into, args=(done,), daemon=True).start()
                self._starting.append(done)

    def _start_into(self, done: queue.SimpleQueue) -> None:
        try:
            done.put(self._new_server())
        except BaseException as exc:  # said by the run that takes this server
            done.put(exc)

    def _new_server(self) -> _Server:
        t0 = time.perf_counter()
        with self._lock:
            server = self._prestarted.take() if self._prestarted is not None else None
        try:
            server = server or _Server(_server_env(), self._warm)
            helpers = server.configure(self.init)
        except BaseException:
            if server is not None:
                server.close()
            raise
        with self._lock:
            self._all.append(server)
            self.started_s.append(time.perf_counter() - t0)
            self.processes += 1 + helpers
        return server

    def _acquire(self) -> _Server:
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            pass
        with self._lock:
            starting = self._starting.pop() if self._starting else None
        if starting is None:
            return self._new_server()
        server = starting.get()
        if isinstance(server, BaseException):
            raise server
        return server

    def close(self) -> None:
        with self._lock:
            starting, self._starting = self._starting, []
        for done in starting:  # a server still starting is closed with the rest, once up
            done.get()
        with self._lock:
            servers, self._all = self._all, []
        for server in servers:
            server.close()

    def __enter__(self) -> SandboxPool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def run(
        self,
        *,
        scenario: str,
        submission: Path,
        files: list[str],
        cases: list,
        limits: Limits,
        device: str = "cpu",
        laps: int = 0,
        explain: bool = False,
        nonces: list[list[int]] | None = None,
        stand_in_record: wire.Encoded | None = None,
        cancellation: Cancellation | None = None,
    ) -> RunReport:
        """Run `cases` in children; `laps` > 0 makes a timed run (`stopwatch`) of at most that many laps, with
        `nonces[case][k]` for a case's k-th lap where given; `explain` computes the answers' `explained` parts
        (`explanations`); `stand_in_record`, each case's record of a stand-in run (`stand_in`), answers the
        child's calls of the stand-in from its supervisor. Nonces and records never reach the child.
        `cancellation`: the grading's, which ends this run (no case run) when cancelled."""
        n = len(cases)
        with self._free:
            if cancellation is not None and cancellation.cancelled:
                return cancellation.report(n)
            server = self._acquire()
            if cancellation is not None and not cancellation._enter(server):
                self._idle.put(server)
                return cancellation.report(n)
            try:
                return self._run(
                    server, scenario, submission, files, cases, limits, device, laps, explain, nonces, stand_in_record
                )
            except HarnessError:
                server.close()
                self._forget(server)
                if cancellation is not None and cancellation.cancelled:
                    return cancellation.report(n)
                raise
            finally:
                if cancellation is not None:
                    cancellation._leave(server)
                if server.proc.poll() is None and not server.proc.stdin.closed:
                    self._idle.put(server)
                elif server in self._all:  # hung up as its run ended: closed, never reused
                    server.close()
                    self._forget(server)

    def _forget(self, server: _Server) -> None:
        with self._lock:
            if server in self._all:
                self._all.remove(server)

    def _run(
        self, server, scenario, submission, files, cases, limits, device, laps, explain, nonces, stand_in_record
    ) -> RunReport:
        n = len(cases)
        report = RunReport(outcomes=[CaseOutcome("not_run", message="not run") for _ in range(n)])
        blob = cases.blob if isinstance(cases, wire.Encoded) else wire.encode(cases)
        deadline = time.monotonic() + limits.wall_s
        start = 0
        while start < n:
            remaining = deadline - time.monotonic()
            if remaining <= 0.05:
                for i in range(start, n):
                    report.outcomes[i].message = "not run: the check's time limit was used up"
                break
            lim = Limits(**{**limits.as_dict(), "wall_s": remaining})
            with self._lock:
                self.children += 1
            header, result = server.request(
                {
                    "scenario": scenario,
                    "submission": str(submission),
                    "files": files,
                    "start": start,
                    "limits": lim.as_dict(),
                    "device": device,
                    "laps": max(0, laps - len(report.laps)),
                    "explain": explain,
                    "stand_in": stand_in_record is not None,
                    "sealed": True,
                },
                blob,
                (
                    {"nonces": nonces, "stand_in": stand_in_record is not None},
                    stand_in_record.blob if stand_in_record else b"",
                ),
            )
            reply = RunReply(**header)
            with self._lock:
                self.processes += reply.processes
            if reply.status == "harness":
                raise HarnessError(reply.detail)
            if reply.status == "rejected":
                for outcome in report.outcomes:
                    outcome.kind, outcome.message = "crashed", reply.detail
                break
            report.wall_s += reply.wall_s
            report.output.add(reply)
            report.laps += [(int(c), int(nonce), float(t), [float(v) for v in fp]) for c, nonce, t, fp in reply.laps]
            done, in_progress = self._take_frames(result, report, n)
            for index, seconds in reply.case_seconds:
                if 0 <= index < n and report.outcomes[index].kind != "not_run":
                    report.outcomes[index].seconds = seconds
            if done:
                break
            kind, message = describe_death(reply, limits)
            tail = reply.output_tail.strip()[-500:]
            printed = f"\nlast output:\n{tail}" if tail else ""
            if in_progress is None:
                # It died before its first case began: while importing the submission, which every child
                # does alike. The cases left are told so, and no more children die the same way (each
                # would be sent the check's cases again, a stand-in's record among them).
                for i in range(start, n):
                    report.outcomes[i] = CaseOutcome(
                        kind, message=f"while importing the submission, {message}{printed}"
                    )
                break
            report.outcomes[in_progress] = CaseOutcome(kind, message=message + printed)
            if kind == "timeout":
                # Past its CPU or wall limit: a case after it would most likely hang alike, each costing the
                # limit again. One limit per check, the same cases not run whichever limit it was.
                for i in range(in_progress + 1, n):
                    report.outcomes[i].message = "not run: the check's time limit was used up"
                break
            start = in_progress + 1
        return report

    @staticmethod
    def _take_frames(result: bytes, report: RunReport, n: int) -> tuple[bool, int | None]:
        frames, _ = unpack_frames(result)
        done, in_progress, hello = False, None, False
        for kind, index, payload in frames:
            if kind == HELLO and not hello:
                hello = True
                try:  # sent by the harness before any student code runs: a malformed one is the sandbox's fault
                    info = schema.hello(payload)
                except schema.MalformedHello as exc:
                    raise HarnessError(f"sandbox child sent unreadable defences ({exc})") from None
                if "harness_error" in info:
                    raise HarnessError(
                        "sandbox child failed before running student code: " + info["harness_error"]["message"]
                    )
                report.defences = info
            elif not hello:
                break  # frames before HELLO are not ours
            elif kind == CASE_START and 0 <= index < n:
                in_progress = index
            elif kind == CASE_RESULT and 0 <= index < n:
                # Decoded against the declared schema (`schema`): whatever the child wrote, an outcome.
                report.outcomes[index] = schema.case_result(payload)
                in_progress = None
            elif kind == DONE:
                done = True
        if not hello:
            raise HarnessError("sandbox child never reported its defences")
        return done, in_progress

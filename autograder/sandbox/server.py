"""The fork server: imports the heavy libraries once; one supervisor per run forks that run's child.

Started by `lmgrade.sandbox.pool` with a scrubbed environment. It imports
numpy (torch where the assignment needs it) and the plugins' scenario modules,
never student code and never the reference. Then it forks a *supervisor*
for the next run, before the request's first byte is read, and waits for it
to answer. The supervisor reads the request, copies the submission into a
fresh folder, forks the child, lets it lock itself down, collects its frames
and output, enforces the wall-time and output limits from this side, reaps it
and everything it started, removes what it left (files, SysV IPC objects),
answers the grading process, and exits; the fork server has forked the next
run's supervisor meanwhile.

So the fork server never holds anything of a run: no request, no submission,
no answer, no output. Every child is forked from a supervisor that holds its
own run's data alone, a copy of a process that never held another
submission's: a child that reads its own memory, or its parent's, finds the
libraries and its own run. Two submissions graded one after the other, or at
once, by one grading process share nothing but the fork server's imports.

It holds its sandbox slot's lease (see `lease.py`) for as long as it lives,
and exits when the grading process goes: its input closes. What it says to
the grading process is in `protocol.py`.
"""

from __future__ import annotations

import gc
import importlib
import importlib.util
import os

# Loaded once here, before any fork, for the children's rlimits (limits.apply_rlimits).
import resource  # noqa: F401
import select
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

from ..boundary import wire
from ..boundary.protocol import (
    CASE_RESULT,
    CASE_START,
    FRAME,
    RunReply,
    read_message,
    read_message_exactly,
    write_message,
)
from ..boundary.stand_in_answers import Answerer
from ..submissions import submitted_files
from . import child, devices, guards, ipc, landlock, privileges, reads, stand_in_channel, zygote
from .limits import Limits
from .stopwatch import Timekeeper

MAX_RESULT_BYTES = 256 * 2**20
_PR_SET_CHILD_SUBREAPER = 36
# How a run's supervisor ends: it answered; the grading process closed our input before a request
# (the end of the grading) or during the run (nobody waits for the answer).
REPLIED, INPUT_CLOSED, GRADER_GONE = 0, 3, 4
ANSWERED = b"A"  # what a supervisor tells the fork server once it has answered


def _chown_tree(path: Path, uid: int, gid: int) -> None:
    os.chown(path, uid, gid)
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            os.chown(os.path.join(root, name), uid, gid, follow_symlinks=False)


def _children() -> list[int]:
    """Our children: listed by the kernel where it can (a file per thread), else found among every process."""
    me = os.getpid()
    try:
        children = []
        for thread in os.listdir(f"/proc/{me}/task"):
            with open(f"/proc/{me}/task/{thread}/children") as f:
                children += [int(pid) for pid in f.read().split()]
        return children
    except FileNotFoundError:  # a kernel without CONFIG_PROC_CHILDREN (or a thread that just ended: scan)
        pass
    children = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                # The command name may contain spaces; the fields after it do not.
                if int(f.read().rsplit(")", 1)[1].split()[1]) == me:
                    children.append(int(pid))
        except (OSError, IndexError, ValueError):
            pass
    return children


def _kill_descendants() -> None:
    """Kill what a child left running: as a subreaper, its orphans are our children."""
    if not os.path.isdir("/proc"):
        return
    for _ in range(20):
        children = _children()
        if not children:
            return
        for pid in children:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        for pid in children:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def _cap_threads() -> None:
    """One thread per child: the pool already runs one child per CPU it may use.

    The environment caps OpenMP and BLAS before the import; torch also keeps
    an inter-op pool, settable only before its first parallel work.
    """
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)
        try:
            torch.set_num_interop_threads(1)
        except RuntimeError:
            pass
        # torch reads /proc/cpuinfo on first use, which the child cannot, and
        # would print an error into the student's output: read it here.
        torch.backends.cpu.get_cpu_capability()


class GraderGone(Exception):
    """The grading process closed our input: it exited or was killed."""


class Sealed:
    """What a run's child must never hold, read from the grading process once, after the child is forked
    (`protocol`): the nonces of a timed run's laps, a stand-in's record of the reference's calls."""

    def __init__(self, grader_fd: int, expected: bool):
        self.grader_fd, self.pending = grader_fd, expected
        self.header: dict = {}
        self.blob = b""

    def take(self) -> Sealed:
        """Read it, where it is still to come (every run reads it, or the next would take it for a request)."""
        if self.pending:
            self.pending = False
            message = read_message_exactly(self.grader_fd)
            if message is None:
                raise GraderGone()
            self.header, self.blob = message
        return self


class _Output:
    """What a child prints: the head and the tail are kept, the middle only counted.

    Printing is never a fault, so there is no limit on it but time.
    """

    KEEP = 4096

    def __init__(self):
        self.head, self.tail, self.total = bytearray(), bytearray(), 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.KEEP - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            del self.tail[: -self.KEEP]

    @staticmethod
    def text(data: bytes) -> str:
        return bytes(data).decode("utf-8", "replace")


class Server:
    def __init__(self, init: dict, grader_fd: int):
        self.grader_fd = grader_fd
        sys.path[:] = init["sys_path"]
        for module in init["preload"]:
            importlib.import_module(module)
        for name in init["forbidden_modules"]:
            loaded = [m for m in sys.modules if m == name or m.startswith(name + ".")]
            if loaded:
                raise RuntimeError(f"preloading imported {loaded[0]}, which student code must not see")
        _cap_threads()
        forbidden = init.get("forbidden_apis") or {}
        self.guarded = guards.install(
            forbidden.get("apis", ()), forbidden.get("also", {}), forbidden.get("operators", {})
        )
        self.forked = 0  # processes started: here, the helpers below; in a run's supervisor, the run's
        self.user = privileges.sandbox_user(init["slot"])
        if self.user is not None:
            # Left by an earlier holder of this slot that died: we own the uid now.
            self.forked += privileges.kill_user_processes(self.user)
            ipc.remove_left_by(self.user)
        # Whether every child gets an IPC namespace of its own; where not, each run's supervisor removes
        # the SysV IPC objects the run made.
        tried = privileges.ipc_namespaces_work.cache_info().currsize
        self.ipc_namespaces = privileges.ipc_namespaces_work()
        self.forked += 0 if tried else 1
        self.use_landlock = init["landlock"] and landlock.abi_version() >= 1
        # An interpreter or a harness under root's home is unreadable to that user: keep
        # the read-search capability alone and let Landlock confine reads.
        # Without Landlock it would open every file to student code: the
        # child then goes without, and an import fails loudly instead.
        needed = (os.path.dirname(os.__file__), sys.executable, str(reads.harness_folder(reads.HARNESS_PACKAGE)))
        self.keep_read_search = (
            self.user is not None and self.use_landlock and not all(privileges.world_readable(p) for p in needed)
        )
        # Each run's folder is made in this one, which holds no other while the run goes on (one run at a
        # time, and what a dead supervisor left is removed before the next): the child reads beneath it.
        self.tmp_root = Path(init.get("tmp_root") or tempfile.gettempdir())
        self.runs_root = Path(tempfile.mkdtemp(prefix="lmgrade-runs-", dir=self.tmp_root))
        self.runs_root.chmod(0o711)
        # The allow-list (`reads`), and the runs' folders. Worked out here, where the libraries are imported: a
        # zygote's fork has their part already (torch's RECORD alone is some ten thousand lines).
        allowed = reads.readable_paths(
            preload=init["preload"],
            protected=[Path(p) for p in init["protected"]],
            public=[Path(p) for p in init["readable"]],
            harness=reads.HARNESS_PACKAGE,
        )
        self.read_paths = [*map(str, allowed), str(self.runs_root), os.devnull]
        # Made once here, applied by every child of a CPU run.
        self.reading = landlock.reading_ruleset([Path(p) for p in self.read_paths]) if self.use_landlock else None
        # Where a child looks for a module it imports first: every folder on the path listed here, where it
        # can be. A child may list only what it may read, and site-packages is not.
        importlib.util.find_spec("_lmgrade_lists_the_import_path")

    def clear_runs_root(self) -> None:
        """Remove what a run whose supervisor died left in the runs' folder: a later child could read it."""
        for entry in os.listdir(self.runs_root):
            shutil.rmtree(self.runs_root / entry, ignore_errors=True)

    def scenario(self, ref: str):
        module, _, qualname = ref.partition(":")
        obj = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
        return obj

    def run(self, req: dict, blob: bytes, sealed: Sealed) -> tuple[RunReply, bytes]:
        lim = Limits(**req["limits"])
        cases = wire.decode(blob, max_document_bytes=wire.MAX_REQUEST_DOCUMENT_BYTES)
        scenario = self.scenario(req["scenario"])
        workdir = Path(tempfile.mkdtemp(prefix="lmgrade-run-", dir=self.runs_root))
        try:
            try:
                submitted_files.copy_files(Path(req["submission"]), workdir / "submission")
            except (OSError, ValueError) as exc:
                # The submission's fault (too large, unreadable files), not the harness's.
                return RunReply("rejected", detail=f"the submission could not be copied: {exc}"), b""
            # The child's private places to write: temporary files, caches, a home.
            for sub in child.PRIVATE_FOLDERS:
                (workdir / sub).mkdir(parents=True)
            if self.user is not None:
                _chown_tree(workdir, self.user, self.user)
            return self._fork_and_collect(scenario, cases, req, lim, workdir, sealed)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    def _fork_and_collect(self, scenario, cases, req, lim, workdir, sealed: Sealed) -> tuple[RunReply, bytes]:
        res_r, res_w = os.pipe()
        out_r, out_w = os.pipe()
        device = req.get("device", "cpu")
        laps = int(req.get("laps") or 0)
        tick_r = tick_w = nonce_r = nonce_w = None
        if laps:
            tick_r, tick_w = os.pipe()
            nonce_r, nonce_w = os.pipe()
        # A stand-in run's child asks its calls of us (`stand_in_channel`); only a sealed run may be one.
        question_r = question_w = answer_r = answer_w = None
        if req.get("stand_in"):
            question_r, question_w = os.pipe()
            answer_r, answer_w = os.pipe()
        reading = self.reading
        if device == "cuda" and self.use_landlock:
            # The driver's files and devices besides: a ruleset of this run's own, made here.
            cuda_paths = [*self.read_paths, *devices.cuda_read_paths(), *devices.cuda_device_files()]
            reading = landlock.reading_ruleset([Path(p) for p in cuda_paths])
        # Without namespaces and as this very uid, only the objects made while the run went on are its own.
        ipc_before = ipc.snapshot() if not self.ipc_namespaces and self.user is None else None
        started = time.monotonic()
        pid = os.fork()
        self.forked += 1
        if pid == 0:
            for fd in (res_r, out_r, tick_r, nonce_w, question_r, answer_w):
                if fd is not None:
                    os.close(fd)
            child.run(
                scenario=scenario,
                cases=cases,
                start=req["start"],
                files=req["files"],
                workdir=workdir,
                reading=reading,
                lim=lim,
                user=self.user,
                keep_read_search=self.keep_read_search,
                use_landlock=self.use_landlock,
                guarded=self.guarded,
                result_fd=res_w,
                output_fd=out_w,
                device=device,
                tick_fds=(tick_w, nonce_r) if laps else None,
                ipc_namespace=self.ipc_namespaces,
                explain=bool(req.get("explain")),
                question_fds=(question_w, answer_r) if question_w is not None else None,
            )
            os._exit(70)  # not reached
        for fd in (res_w, out_w, tick_w, nonce_r, question_w, answer_r):
            if fd is not None:
                os.close(fd)
        # Read now, in this process alone: the child, forked before, never held it.
        sealed.take()
        timekeeper = Timekeeper(laps, nonce_w, sealed.header.get("nonces")) if laps else None
        questions = None
        if question_r is not None:
            record = (
                wire.decode(
                    sealed.blob,
                    max_document_bytes=wire.MAX_REQUEST_DOCUMENT_BYTES,
                    max_array_bytes=wire.MAX_REQUEST_ARRAY_BYTES,
                )
                if sealed.blob
                else []
            )
            questions = stand_in_channel.Questions(answer_w, Answerer(record))
        # CUDA reserves far more address space than it uses: its runs are
        # bounded by resident memory and process count, watched from here.
        watchdog = devices.Watchdog(pid, lim) if device == "cuda" else None
        deadline = started + lim.wall_s
        result, output, killed, gone = bytearray(), _Output(), None, False
        frames = _FrameClock()
        open_fds = {res_r, out_r} | ({tick_r} if laps else set()) | ({question_r} if questions else set())
        status = rusage = None
        # A pidfd turns readable when the child exits, so select wakes at once.
        try:
            exit_fd = os.pidfd_open(pid)
        except (AttributeError, OSError):  # not Linux >= 5.3: poll instead
            exit_fd = None
        while True:
            if status is None:
                reaped, status_, rusage_ = os.wait4(pid, os.WNOHANG)
                if reaped:
                    status, rusage = status_, rusage_
            now = time.monotonic()
            if status is not None and not open_fds:
                break
            if now >= deadline:
                killed = killed or "wall"
                break
            if watchdog is not None and status is None:
                killed = watchdog.verdict()
                if killed:
                    break
            # Once the child has exited, take only what is already buffered:
            # a grandchild may hold the pipes open forever.
            watched = [*open_fds, self.grader_fd]
            if status is None and exit_fd is not None:
                watched.append(exit_fd)
            slice_s = 0.05 if exit_fd is None else (devices.Watchdog.PERIOD_S if watchdog else 1.0)
            timeout = 0 if status is not None else min(slice_s, deadline - now)
            # Answers the child has not read yet: written as its pipe takes them.
            writing = [answer_w] if questions is not None and questions.outgoing else []
            ready, writable, _ = select.select(watched, writing, [], timeout)
            if writable:
                questions.flush()
            if not ready and status is not None:
                break
            if self.grader_fd in ready:
                # The grading process sends nothing while a run is on: this is
                # the end of our input. Nobody waits for this run any more.
                gone = True
                break
            for fd in ready:
                if fd == exit_fd:
                    continue  # reaped at the top of the loop
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    open_fds.discard(fd)
                elif fd == tick_r:
                    timekeeper.feed(chunk)
                elif fd == question_r:
                    questions.feed(chunk)
                    if questions.too_large:
                        killed = "result_size"
                elif fd == out_r:
                    output.add(chunk)
                else:
                    result += chunk
                    frames.feed(result)
                    if len(result) > MAX_RESULT_BYTES:
                        killed = "result_size"
            if killed:
                break
        wall = time.monotonic() - started
        if exit_fd is not None:
            os.close(exit_fd)
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
        if status is None:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
            _, status, rusage = os.wait4(pid, 0)
        if self.user is not None:
            self.forked += privileges.kill_user_processes(self.user)
        _kill_descendants()
        if self.user is not None:
            # The slot's own uid: whatever it holds in SysV IPC is left by this run (or an earlier one).
            ipc.remove_left_by(self.user)
        elif not self.ipc_namespaces:
            ipc.remove_left_by(os.getuid(), before=ipc_before)
        stand_in_fds = {question_r, answer_w} if question_r is not None else set()
        for fd in open_fds | {res_r, out_r} | ({tick_r, nonce_w} if laps else set()) | stand_in_fds:
            try:
                os.close(fd)
            except OSError:
                pass
        if gone:
            raise GraderGone()
        reply = RunReply(
            status="killed" if killed else "exited",
            killed=killed,
            exit_code=os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
            signal=os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
            wall_s=wall,
            cpu_s=rusage.ru_utime + rusage.ru_stime,
            output_head=output.text(output.head),
            output_tail=output.text(output.tail),
            output_bytes=output.total,
            case_seconds=frames.seconds,
            laps=timekeeper.laps if timekeeper else [],
        )
        return reply, bytes(result)


class _FrameClock:
    """How long each case took, from its CASE_START to its CASE_RESULT, on this process's clock.

    Reads only the frames' headers as they arrive; the payloads stay unread.
    """

    def __init__(self):
        self.offset = 0
        self.started: dict[int, float] = {}
        self.seconds: list[list] = []

    def feed(self, result: bytearray) -> None:
        now = time.perf_counter()
        while self.offset + FRAME.size <= len(result):
            kind, index, size = FRAME.unpack_from(result, self.offset)
            if self.offset + FRAME.size + size > len(result):
                break
            self.offset += FRAME.size + size
            if kind == CASE_START:
                self.started[index] = now
            elif kind == CASE_RESULT and index in self.started:
                self.seconds.append([index, now - self.started.pop(index)])


def _supervise(server: Server, grader_fd: int, proto_out: int, fork_server: int, answered_fd: int) -> int:
    """One run, in a process forked for it: wait for the request, read it, run it, answer, and say so on
    `answered_fd`. Returns how it ended."""
    # Killed with the fork server; orphans of the child (daemons it started) become ours, so we reap them.
    privileges.die_with_parent(fork_server)
    _set_subreaper()
    server.forked = 0
    # The request to its last byte and no further: what follows it (`Sealed`) is read after the fork.
    message = read_message_exactly(grader_fd)
    if message is None:
        return INPUT_CLOSED
    request, blob = message
    sealed = Sealed(grader_fd, bool(request.get("sealed")))
    try:
        reply, blob = server.run(request, blob, sealed)
        sealed.take()  # a run refused before its fork still reads it
    except GraderGone:
        return GRADER_GONE
    except Exception as exc:
        reply, blob = RunReply("harness", detail=f"{type(exc).__name__}: {exc}"), b""
        try:
            sealed.take()
        except GraderGone:
            return GRADER_GONE
    # The child and the helpers this run started, and the next run's supervisor, forked once this one answers.
    reply.processes = server.forked + 1
    write_message(proto_out, reply.as_dict(), blob)
    # Everything the run made is gone by now (the reply comes after the clean-up): the next may begin.
    os.write(answered_fd, ANSWERED)
    return REPLIED


def _set_subreaper() -> None:
    prctl = getattr(privileges.libc(), "prctl", None)
    if prctl is not None:  # Linux only; elsewhere the process group is all we can kill
        prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def main() -> None:
    # The protocol keeps its own descriptors; stray prints go to stderr.
    grader_fd = os.dup(0)
    proto_in = os.fdopen(grader_fd, "rb")
    proto_out = os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # What outlives a supervisor comes to us, and is reaped here.
    _set_subreaper()
    # Modules to import before the grading says what it grades (`prestart`): the libraries the
    # assignment preloads, torch among them, imported while the grading process loads its checks.
    seeding = [a for a in sys.argv[1:] if a.startswith("--zygote")]
    warm = [a for a in sys.argv[1:] if not a.startswith("--zygote")]
    for module in warm:
        try:
            importlib.import_module(module)
        except Exception:  # imported again with the rest of the preload, which says what failed
            pass
    if seeding:  # the first fork server on this machine: the zygote, forked while we hold nothing
        zygote.seed(seeding, warm, serve)
    message = read_message(proto_in)
    if message is None:
        return
    try:
        server = Server(message[0], grader_fd)
    except BaseException as exc:
        write_message(proto_out, {"ready": False, "error": f"{type(exc).__name__}: {exc}"})
        return
    # What is here now is what every supervisor and child starts from: kept out of the collector's way,
    # so that their collections do not copy its pages.
    gc.collect()
    gc.freeze()
    # The helpers that made it ready, and the first run's supervisor, forked at once.
    write_message(proto_out, {"ready": True, "processes": server.forked + 1})
    try:
        _fork_per_run(server, grader_fd, proto_out)
    finally:
        shutil.rmtree(server.runs_root, ignore_errors=True)


def _fork_per_run(server: Server, grader_fd: int, proto_out: int) -> None:
    """Fork each run's supervisor before its request comes, and the next once it has answered.

    Forking torch's address space takes milliseconds: done while the grading process judges the last
    answer, not while it waits for the next. Only one supervisor at a time reads our input: the next is
    forked after the last has answered, when it reads nothing more.
    """
    me = os.getpid()
    while True:
        answered_r, answered_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(answered_r)
            code = 70
            try:
                code = _supervise(server, grader_fd, proto_out, me, answered_w)
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        os.close(answered_w)
        said = os.read(answered_r, len(ANSWERED))  # b"" once the supervisor is gone without answering
        os.close(answered_r)
        if said == ANSWERED:
            privileges.reap_ended()  # supervisors that have ended since, and what outlived them
            continue
        _, status = os.waitpid(pid, 0)
        privileges.reap_ended()
        server.clear_runs_root()
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
        if code not in (INPUT_CLOSED, GRADER_GONE):
            # It died before answering: say so; where the request stream stands is unknown, so stop here.
            how = f"exit status {code}" if code is not None else signal_description(os.WTERMSIG(status))
            write_message(proto_out, RunReply("harness", detail=f"the run's supervisor ended ({how})").as_dict())
        return


def signal_description(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def serve() -> None:
    """`main`, then out at once: every run cleaned up after itself, and the interpreter's own shutdown
    (torch's finalisers) would cost the grading that waits for this server up to a second."""
    main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    serve()
